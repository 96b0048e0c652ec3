// Reading and durably replacing the state file with POSIX calls: write(2) to a
// temporary file in the same directory (a rename is atomic only within one file
// system), fsync(2) it, rename(2) it over the old one, then fsync(2) the directory so
// that the rename itself survives a crash.
#include "emulator/state_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cloud {

namespace {

Error file_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::config, "StateFile", what + " " + path + ": " + std::strerror(errno));
}

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// All of `bytes` to `fd`, however many write(2) calls it takes.
bool write_all(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool fsync_directory(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// The whole of `fd`'s file.
bool read_all(int fd, std::string& out) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

Outcome<json> read_state_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return json();
  if (fd < 0) return file_error("cannot open the state file", path);
  std::string text;
  bool read = read_all(fd, text);
  ::close(fd);
  if (!read) return file_error("cannot read the state file", path);
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded())
    return make_error(ErrorKind::config, "BadStateFile", "the state file " + path + " is not JSON");
  return doc;
}

Outcome<bool> write_state_file(const std::string& path, const json& state) {
  std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return file_error("cannot create", temporary);
  bool written = write_all(fd, state.dump()) && ::fsync(fd) == 0;
  int saved_errno = errno;
  ::close(fd);
  errno = saved_errno;
  if (!written) return file_error("cannot write", temporary);
  if (::rename(temporary.c_str(), path.c_str()) != 0) return file_error("cannot rename " + temporary + " to", path);
  if (!fsync_directory(directory_of(path))) return file_error("cannot flush the directory of", path);
  return true;
}

}  // namespace cloud
