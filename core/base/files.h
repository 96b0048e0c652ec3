// Files on disk, the one home of every way the product makes a file durable: a
// temporary file, an exclusive create, a durable write, a hard link, a folder's flush,
// a commit by rename, the folder a path is in, and the part files of downloads. No
// other file of the product calls rename, mkstemp or fsync (tests/files_home_test.sh,
// which lists the files still to move onto it).
//
// Every file the product creates is made exclusively (O_CREAT | O_EXCL | O_NOFOLLOW: a
// link or a file planted at the name is never followed, opened or truncated). A part
// file is written beneath a destination folder without following any link between the
// two (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or a walk of O_NOFOLLOW opens).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace cloud {

// ---------------------------------------------------------------- paths and durability

// The folder a path is in: "." for a bare name, "/" for a name at the root.
std::string directory_of(const std::string& path);
// The last component of a path (after its last '/').
std::string name_of(const std::string& path);

// fsync(2) of an open file, again when a signal interrupts it; false with errno.
bool flush_file(int fd);
// syncfs(2) of the file system holding an open file or folder: everything written to
// it made durable at once (a batch of downloads, instead of one flush per file);
// false with errno.
bool flush_file_system(int fd);
// Makes a folder's entries (a rename, a new name) survive a crash; false with errno.
bool fsync_directory(const std::string& path);
// rename(2): puts `from` in place of `to` atomically (one file system); false with errno.
bool commit_rename(const std::string& from, const std::string& to);
// link(2): `to` becomes a second name of `from` (never replacing a file); false with errno.
bool hard_link(const std::string& from, const std::string& to);
// renameat(2) within the folder open as `dir_fd`: `from` put in place of `to`, both
// names of that folder's own (no path), so no link on the way is followed.
bool commit_rename_at(int dir_fd, const std::string& from, const std::string& to);

struct TemporaryFile {
  int fd = -1;       // open for writing; -1 when the file could not be made (errno says why)
  std::string path;  // "<base>XXXXXX<suffix>", the Xs six random letters and digits
};

// A new, empty file named `base` + six random characters + `suffix`, open for writing,
// made exclusively and private (mode 0600).
TemporaryFile create_temporary(const std::string& base, const std::string& suffix = "");

// A new, empty file at exactly `path`, open for writing (mode `mode` less the umask):
// O_CREAT | O_EXCL | O_NOFOLLOW, so a file or link already there is an error (EEXIST),
// never opened or followed. -1 with errno on failure.
int create_exclusive(const std::string& path, mode_t mode = 0666);

// Replaces `path` whole with what `fill` writes to a descriptor: a temporary beside it
// ("<path>.XXXXXX.tmp"), flushed, renamed over `path`, then the folder flushed. "" or
// what went wrong (naming the file and the system's reason); never a part of the bytes
// at `path`, and no temporary left behind.
std::string write_durably(const std::string& path, const std::function<bool(int fd)>& fill);

// The names in the folder open as `dir_fd`, but "." and ".."; none when it cannot be
// read. Read through a duplicate of `dir_fd`, from its start: what a sweep relative to
// an opened folder walks (nothing reached by a path, so no link on the way is followed).
std::vector<std::string> folder_entries(int dir_fd);

// ---------------------------------------------------------------- destinations

// The folder `relative` (a '/'-separated path with no "", "." or ".." component; ""
// for `root` itself) beneath the folder `root`, opened (O_DIRECTORY) without following
// a link at any component below `root` (`root` itself is the caller's and is followed).
// With `make`, missing folders are made (mode 0777 less the umask). -1 with errno on
// failure: ELOOP when a component is a link (`problem` then names it), ENOTDIR when one
// is not a folder, EXDEV for a component that would leave `root`.
int open_folder_beneath(const std::string& root, const std::string& relative, bool make, std::string& problem);

// The folder `path` (`beneath` itself or a path under it; anywhere, links followed, when
// `beneath` is empty) opened as open_folder_beneath does; -1 with errno (and `problem`).
int open_folder_at(const std::string& path, const std::string& beneath, bool make, std::string& problem);
// The folder `path` is in, opened as open_folder_at does (nothing made).
int open_folder_of(const std::string& path, const std::string& beneath, std::string& problem);

// ---------------------------------------------------------------- part files

// The part file of a download: the one temporary-file-then-rename mechanism of every
// download (get_object{ file = } through FileSink, download_file and storage.sync
// through cloud.fs.part). It is ".cloudlua-XXXXXXXXXX.part" (ten random letters and
// digits) in the target's folder, made exclusively (another name is drawn while one
// exists), whatever the target's name: a name of up to NAME_MAX bytes can be
// downloaded, and no two downloads, concurrent or not, share a part file. Its folder
// is opened once (open_folder_of: beneath `beneath`, no link followed) and the part
// file is made, committed and removed relative to that folder. commit_part flushes it
// (when durable) and renames it onto the target, after checking that its name is still
// the file it made; discard_part removes it, by the same check. While it is open it is
// locked (flock) and marked with the extended attribute user.cloudlua = "part", which
// only cloudlua writes: what a killed run left is told from a user's file by its name,
// its mark and its free lock together (part_state), never by its name alone.
struct PartFile {
  int fd = -1;         // open for writing; -1 when it could not be made (errno)
  int folder = -1;     // the target's folder, opened without following links
  std::string path;    // the part file's path, for messages and in-place writes
  std::string name;    // its name in `folder`
  std::string target;  // the name of the target in `folder`
  dev_t dev = 0;       // the part file's identity, to check its name before a commit or a removal
  ino_t ino = 0;
  std::string problem;  // why it could not be made (with fd -1)
};
PartFile create_part(const std::string& target, const std::string& beneath = "");
// "" or what went wrong (the part file is then removed).
std::string commit_part(PartFile& part, bool durable);
void discard_part(PartFile& part);

// What the file `path` is to the downloads: not a part file of theirs (a user's file,
// whatever its name), the part file of a download under way (its lock held), or one
// a killed run left (the name and the mark, no lock).
enum class PartState { none, live, stale };
PartState part_state(const std::string& path);
// Removes `path` when it is a stale part file (part_state), reached as open_folder_of
// reaches it; true when removed.
bool remove_stale_part(const std::string& path, const std::string& beneath);

// Opens the existing file `path` for writing, without following a link at its last
// component nor (with `beneath`) between `beneath` and it. -1 with errno (and `problem`).
int open_existing_beneath(const std::string& path, const std::string& beneath, std::string& problem);

}  // namespace cloud
