// Files the product creates for a while: every temporary file, in core and in the
// emulator, comes from create_temporary. It is made under a name never used before,
// exclusively (O_CREAT | O_EXCL: a symbolic link or a file planted at the name is
// never followed, opened or truncated) and private (mode 0600).
#pragma once

#include <string>

namespace cloud {

struct TemporaryFile {
  int fd = -1;       // open for writing; -1 when the file could not be made (errno says why)
  std::string path;  // "<base>XXXXXX<suffix>", the Xs six random letters and digits
};

// A new, empty file named `base` + six random characters + `suffix`, open for writing.
TemporaryFile create_temporary(const std::string& base, const std::string& suffix = "");

// The part file of a download: the one temporary-file-then-rename mechanism of every
// download (get_object{ file = } through FileSink, download_file and storage.sync
// through cloud.fs.part). It is <target>.cloudlua-part, made exclusively, mode 0666
// less the umask, and locked (flock) while it is open, so that a part file a killed
// download left (no lock held) is removed and made anew by the next download of the
// same target, while one a live download holds is left alone: that download then
// writes <target>.cloudlua-XXXXXX instead. commit_part flushes it (when durable),
// closes it and renames it onto the target; discard_part closes and removes it.
struct PartFile {
  int fd = -1;       // open for writing and locked; -1 when it could not be made (errno)
  std::string path;
};
PartFile create_part(const std::string& target);
// "" or what went wrong (the part file is then removed).
std::string commit_part(PartFile& part, const std::string& target, bool durable);
void discard_part(PartFile& part);

// A new, empty file at exactly `path`, open for writing (mode 0666 less the umask):
// O_CREAT | O_EXCL | O_NOFOLLOW, so a file or link already there is an error (EEXIST),
// never opened or followed. For the part file of a download, whose name is known so
// that the next download of the same target finds a stale one. -1 with errno on failure.
int create_exclusive(const std::string& path);

}  // namespace cloud
