// Files on disk (files.h). glibc's mkostemps makes a temporary name and opens it with
// O_CREAT | O_EXCL, trying other names while one exists; a part file draws its name
// from getrandom the same way, relative to its folder's descriptor. A folder beneath a
// destination is opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the
// kernel has it (Linux 5.6; glibc 2.36 has no wrapper, hence syscall), and otherwise by
// a walk, one O_NOFOLLOW | O_DIRECTORY openat per component from the root's descriptor.
#include "core/base/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

namespace cloud {

// ---------------------------------------------------------------- paths and durability

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool flush_file(int fd) {
  int r;
  do r = ::fsync(fd);
  while (r != 0 && errno == EINTR);
  return r == 0;
}

bool flush_file_system(int fd) {
  int r;
  do r = ::syncfs(fd);
  while (r != 0 && errno == EINTR);
  return r == 0;
}

bool fsync_directory(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = flush_file(fd);
  int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

bool commit_rename(const std::string& from, const std::string& to) { return ::rename(from.c_str(), to.c_str()) == 0; }

bool hard_link(const std::string& from, const std::string& to) { return ::link(from.c_str(), to.c_str()) == 0; }

bool commit_rename_at(int dir_fd, const std::string& from, const std::string& to) {
  return ::renameat(dir_fd, from.c_str(), dir_fd, to.c_str()) == 0;
}

TemporaryFile create_temporary(const std::string& base, const std::string& suffix) {
  TemporaryFile file;
  file.path = base + "XXXXXX" + suffix;
  file.fd = ::mkostemps(file.path.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
  return file;
}

int create_exclusive(const std::string& path, mode_t mode) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

namespace {

// "what 'path': reason" from errno.
std::string failure(const char* what, const std::string& path) {
  return std::string(what) + " '" + path + "': " + std::strerror(errno);
}

}  // namespace

std::string write_durably(const std::string& path, const std::function<bool(int fd)>& fill) {
  TemporaryFile made = create_temporary(path + ".", ".tmp");
  if (made.fd < 0) return failure("cannot create", made.path);
  std::string problem;
  if (!fill(made.fd) || !flush_file(made.fd)) problem = failure("cannot write", made.path);
  if (::close(made.fd) != 0 && problem.empty()) problem = failure("cannot write", made.path);
  if (problem.empty() && !commit_rename(made.path, path))
    problem = failure(("cannot rename '" + made.path + "' to").c_str(), path);
  if (problem.empty() && !fsync_directory(directory_of(path))) problem = failure("cannot flush the folder of", path);
  if (!problem.empty()) ::unlink(made.path.c_str());  // gone already when renamed
  return problem;
}

std::vector<std::string> folder_entries(int dir_fd) {
  std::vector<std::string> out;
  int fd = ::dup(dir_fd);
  DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (!d) {
    if (fd >= 0) ::close(fd);
    return out;
  }
  ::rewinddir(d);  // the duplicate shares its position with dir_fd
  while (dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.emplace_back(e->d_name);
  ::closedir(d);
  return out;
}

// ---------------------------------------------------------------- destinations

namespace {

// A root path without its trailing slashes ("/" stays "/").
std::string trimmed(std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

// The components of a relative path ("" and "." left out); false for "..".
bool components(const std::string& relative, std::vector<std::string>& out) {
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string::npos) end = relative.size();
    std::string part = relative.substr(start, end - start);
    if (part == "..") return false;
    if (!part.empty() && part != ".") out.push_back(std::move(part));
    start = end + 1;
  }
  return true;
}

// The problem of a component that could not be opened as a folder (errno set).
std::string component_problem(const std::string& shown, int code) {
  if (code == ELOOP) return "'" + shown + "' is a symbolic link (links in a destination are never followed)";
  if (code == ENOTDIR) return "'" + shown + "' is not a folder";
  return "cannot open the folder '" + shown + "': " + std::strerror(code);
}

// openat2 beneath `root_fd` without links; -1 with errno (ENOSYS where the kernel or a
// seccomp filter lacks it).
int openat2_beneath(int root_fd, const std::string& relative) {
  struct open_how how {};
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, root_fd, relative.c_str(), &how, sizeof how));
}

// The walk: one openat per component, never following a link, making missing folders
// with `make`. Takes `fd` (closed on the way); -1 with errno and `problem` on failure.
int walk_beneath(int fd, const std::string& root, const std::vector<std::string>& parts, bool make,
                 std::string& problem) {
  std::string shown = root;
  for (const std::string& part : parts) {
    shown += (shown == "/" ? "" : "/") + part;
    int next = ::openat(fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && make && (::mkdirat(fd, part.c_str(), 0777) == 0 || errno == EEXIST))
      next = ::openat(fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st {};
    if (next < 0 && errno == ENOTDIR && ::fstatat(fd, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode))
      errno = ELOOP;  // O_DIRECTORY may answer ENOTDIR for a link
    int code = errno;
    ::close(fd);
    if (next < 0) {
      problem = component_problem(shown, code);
      errno = code;
      return -1;
    }
    fd = next;
  }
  return fd;
}

}  // namespace

int open_folder_beneath(const std::string& root, const std::string& relative, bool make, std::string& problem) {
  std::vector<std::string> parts;
  if (!components(relative, parts)) {
    problem = "'" + relative + "' leaves '" + root + "' (a '..' component)";
    errno = EXDEV;
    return -1;
  }
  std::string top = trimmed(root.empty() ? "." : root);
  int root_fd = ::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    problem = component_problem(top, errno);
    return -1;
  }
  if (parts.empty()) return root_fd;
  std::string joined;
  for (const std::string& part : parts) joined += (joined.empty() ? "" : "/") + part;
  int fd = openat2_beneath(root_fd, joined);
  if (fd >= 0) {
    ::close(root_fd);
    return fd;
  }
  return walk_beneath(root_fd, top, parts, make, problem);  // also names the link of an ELOOP
}

int open_folder_at(const std::string& path, const std::string& beneath, bool make, std::string& problem) {
  if (beneath.empty()) return open_folder_beneath(path, "", false, problem);
  std::string root = trimmed(beneath), folder = trimmed(path);
  if (folder == root) return open_folder_beneath(root, "", false, problem);
  std::string prefix = root == "/" ? root : root + "/";
  if (folder.compare(0, prefix.size(), prefix) != 0) {
    problem = "'" + path + "' is not beneath '" + root + "'";
    errno = EXDEV;
    return -1;
  }
  return open_folder_beneath(root, folder.substr(prefix.size()), make, problem);
}

int open_folder_of(const std::string& path, const std::string& beneath, std::string& problem) {
  return open_folder_at(directory_of(path), beneath, false, problem);
}

int open_existing_beneath(const std::string& path, const std::string& beneath, std::string& problem) {
  int folder = open_folder_of(path, beneath, problem);
  if (folder < 0) return -1;
  int fd = ::openat(folder, name_of(path).c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  int code = errno;
  ::close(folder);
  if (fd < 0) problem = code == ELOOP ? component_problem(path, ELOOP) : std::strerror(code);
  errno = code;
  return fd;
}

// ---------------------------------------------------------------- part files

namespace {

const char kPartPrefix[] = ".cloudlua-";
const char kPartSuffix[] = ".part";
const size_t kPartRandom = 10;
const char kMarkName[] = "user.cloudlua";
const char kMarkValue[] = "part";

// Whether `name` has the form of a part file's name.
bool part_name(const std::string& name) {
  const size_t prefix = sizeof kPartPrefix - 1, suffix = sizeof kPartSuffix - 1;
  if (name.size() != prefix + kPartRandom + suffix || name.compare(0, prefix, kPartPrefix) != 0 ||
      name.compare(prefix + kPartRandom, suffix, kPartSuffix) != 0)
    return false;
  for (size_t i = prefix; i < prefix + kPartRandom; ++i)
    if (!std::isalnum(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

// Whether the open file carries the part files' mark.
bool marked(int fd) {
  char value[sizeof kMarkValue] = {};
  ssize_t n = ::fgetxattr(fd, kMarkName, value, sizeof value);
  return n == static_cast<ssize_t>(sizeof kMarkValue - 1) && std::memcmp(value, kMarkValue, sizeof kMarkValue - 1) == 0;
}

// The state of the file `name` of `folder` (the lock tried on `fd` when given back).
PartState state_in(int folder, const std::string& name, int& fd) {
  fd = -1;
  if (!part_name(name)) return PartState::none;
  fd = ::openat(folder, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !marked(fd)) return PartState::none;
  return ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? PartState::stale : PartState::live;
}

// A part file's name: ".cloudlua-" + ten random letters and digits + ".part".
std::string random_part_name() {
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char bytes[10];
  ssize_t got = ::getrandom(bytes, sizeof bytes, 0);
  for (ssize_t i = got < 0 ? 0 : got; i < static_cast<ssize_t>(sizeof bytes); ++i)
    bytes[i] = static_cast<unsigned char>(::random());
  std::string name = kPartPrefix;
  for (unsigned char b : bytes) name += kAlphabet[b % (sizeof kAlphabet - 1)];
  return name + kPartSuffix;
}

// Whether `part.name` in its folder is still the file the part made.
bool still_ours(const PartFile& part) {
  struct stat st {};
  return ::fstatat(part.folder, part.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == part.dev &&
         st.st_ino == part.ino;
}

// A part file made unnamed in `folder` (O_TMPFILE), locked and marked before it has a
// name; -1 where the file system cannot (then create_part names it first).
int unnamed_part(int folder) {
  int fd = ::openat(folder, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  ::fsetxattr(fd, kMarkName, kMarkValue, sizeof kMarkValue - 1, 0);  // a file system without: never removed
  return fd;
}

// Gives the unnamed file `fd` the name `name` in `folder` (through /proc/self/fd, which
// needs no privilege, unlike AT_EMPTY_PATH); fails with EEXIST when the name is taken.
bool name_unnamed(int fd, int folder, const std::string& name) {
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  return ::linkat(AT_FDCWD, self.c_str(), folder, name.c_str(), AT_SYMLINK_FOLLOW) == 0;
}

}  // namespace

// The part is made unnamed, locked and marked, then linked under its random name, so
// that a process killed at any moment leaves nothing or a marked file (stale once the
// lock is gone: removable). Where O_TMPFILE or /proc is missing, the file is created
// by name and marked just after: a kill between the two leaves an unmarked file, which
// is never removed (it could be anybody's).
PartFile create_part(const std::string& target, const std::string& beneath) {
  PartFile part;
  part.target = name_of(target);
  part.folder = open_folder_of(target, beneath, part.problem);
  if (part.folder < 0) return part;
  int unnamed = unnamed_part(part.folder);
  for (int attempt = 0; attempt < 100 && part.fd < 0; ++attempt) {
    part.name = random_part_name();
    if (unnamed >= 0) {
      if (name_unnamed(unnamed, part.folder, part.name)) std::swap(part.fd, unnamed);
      if (part.fd >= 0 || errno == EEXIST) continue;
      ::close(unnamed);  // no /proc here: by name from now on
      unnamed = -1;
    }
    part.fd = ::openat(part.folder, part.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (part.fd < 0 && errno != EEXIST) break;
  }
  if (unnamed >= 0) ::close(unnamed);
  struct stat st {};
  if (part.fd >= 0 && ::flock(part.fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(part.fd, &st) == 0) {
    ::fsetxattr(part.fd, kMarkName, kMarkValue, sizeof kMarkValue - 1,
                0);  // after the lock; a file system without: never removed
    part.dev = st.st_dev;
    part.ino = st.st_ino;
    part.path = directory_of(target) + "/" + part.name;
    return part;
  }
  int code = errno;
  part.problem = std::strerror(code);
  discard_part(part);
  errno = code;
  return part;
}

PartState part_state(const std::string& path) {
  std::string problem;
  int folder = open_folder_of(path, "", problem), fd = -1;
  PartState state = folder < 0 ? PartState::none : state_in(folder, name_of(path), fd);
  if (fd >= 0) ::close(fd);
  if (folder >= 0) ::close(folder);
  return state;
}

bool remove_stale_part(const std::string& path, const std::string& beneath) {
  std::string problem;
  int folder = open_folder_of(path, beneath, problem), fd = -1;
  if (folder < 0) return false;
  PartFile held;  // the stale file as a part: removed by the same identity check
  held.folder = folder;
  held.name = name_of(path);
  bool stale = state_in(folder, held.name, fd) == PartState::stale;
  struct stat st {};
  if (stale && ::fstat(fd, &st) == 0) {
    held.fd = fd, held.dev = st.st_dev, held.ino = st.st_ino;
    discard_part(held);  // closes fd and folder
    return true;
  }
  if (fd >= 0) ::close(fd);
  ::close(folder);
  return false;
}

std::string commit_part(PartFile& part, bool durable) {
  std::string problem;
  if (durable && !flush_file(part.fd)) problem = failure("cannot write", part.path);
  if (problem.empty() && !still_ours(part))
    problem = "'" + part.path + "' was replaced while it was written; nothing committed";
  else if (problem.empty() && ::renameat(part.folder, part.name.c_str(), part.folder, part.target.c_str()) != 0)
    problem = failure(("cannot rename '" + part.path + "' to").c_str(), part.target);
  if (problem.empty()) part.name.clear();  // renamed: nothing to remove
  discard_part(part);
  return problem;
}

void discard_part(PartFile& part) {
  if (part.folder >= 0 && !part.name.empty() && part.fd >= 0 && still_ours(part))
    ::unlinkat(part.folder, part.name.c_str(), 0);
  if (part.fd >= 0) ::close(part.fd);
  if (part.folder >= 0) ::close(part.folder);
  std::string problem = std::move(part.problem);
  part = PartFile{};
  part.problem = std::move(problem);
}

}  // namespace cloud
