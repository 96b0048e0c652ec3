// The exclusive creation of temporary files and the part files of downloads
// (files.h). glibc's mkostemps makes a temporary name and opens it with O_CREAT |
// O_EXCL, trying other names while one exists. A part file's lock is flock's: it
// belongs to the open file, is released by the kernel when the process dies (kill -9
// included), and tells a stale part file from a live one without a word between them.
#include "core/files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cloud {

TemporaryFile create_temporary(const std::string& base, const std::string& suffix) {
  TemporaryFile file;
  file.path = base + "XXXXXX" + suffix;
  file.fd = ::mkostemps(file.path.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
  return file;
}

namespace {

// Locks the new file `fd` made at `path`: true when the lock is held and `path` is
// still this file (a download that found it unlocked in the moment between its making
// and its locking may have removed it).
bool lock_as_made(int fd, const std::string& path) {
  struct stat mine {}, named {};
  return ::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &mine) == 0 && ::lstat(path.c_str(), &named) == 0 &&
         mine.st_dev == named.st_dev && mine.st_ino == named.st_ino;
}

// Removes the file at `path` when no download holds it (its lock is free): a part file
// a killed download left. False when a live download holds it.
bool remove_if_stale(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ELOOP;  // gone already; a link is no download's
  bool stale = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (stale) ::unlink(path.c_str());
  ::close(fd);
  return stale;
}

// Gives the new file the mode a new file gets (a temporary file is made 0600).
void set_new_file_mode(int fd) {
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
}

}  // namespace

PartFile create_part(const std::string& target) {
  PartFile part{-1, target + ".cloudlua-part"};
  for (int attempt = 0; attempt < 3; ++attempt) {
    int fd = create_exclusive(part.path);
    if (fd >= 0 && lock_as_made(fd, part.path)) {
      part.fd = fd;
      set_new_file_mode(fd);
      return part;
    }
    if (fd >= 0) ::close(fd);
    else if (errno != EEXIST) return part;                   // the folder refuses: errno says why
    if (fd < 0 && !remove_if_stale(part.path)) break;        // a live download's: a name of our own
  }
  TemporaryFile own = create_temporary(target + ".cloudlua-");
  if (own.fd >= 0) {
    ::flock(own.fd, LOCK_EX | LOCK_NB);
    set_new_file_mode(own.fd);
  }
  return {own.fd, own.path};
}

std::string commit_part(PartFile& part, const std::string& target, bool durable) {
  std::string problem;
  if (durable && ::fsync(part.fd) != 0) problem = "cannot write '" + part.path + "': " + std::strerror(errno);
  if (problem.empty() && ::rename(part.path.c_str(), target.c_str()) != 0)
    problem = "cannot rename '" + part.path + "' to '" + target + "': " + std::strerror(errno);
  if (problem.empty()) part.path.clear();  // renamed: nothing to remove
  discard_part(part);
  return problem;
}

void discard_part(PartFile& part) {
  if (!part.path.empty()) ::unlink(part.path.c_str());  // before the close: the lock keeps it ours
  if (part.fd >= 0) ::close(part.fd);
  part = PartFile{};
}

int create_exclusive(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

}  // namespace cloud
