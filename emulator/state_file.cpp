// Reading and durably replacing the state file and its byte files with POSIX calls:
// write(2) to a temporary file in the same directory (a rename is atomic only within
// one file system), fsync(2) it, rename(2) it into place, then fsync(2) the directory
// so that the rename itself survives a crash.
#include "emulator/state_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

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

// `bytes` in `path`, whole and on the disk, or an error; never a part of them.
Outcome<bool> write_file_durably(const std::string& path, const std::string& bytes) {
  std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return file_error("cannot create", temporary);
  bool written = write_all(fd, bytes) && ::fsync(fd) == 0;
  int saved_errno = errno;
  ::close(fd);
  errno = saved_errno;
  if (!written) return file_error("cannot write", temporary);
  if (::rename(temporary.c_str(), path.c_str()) != 0) return file_error("cannot rename " + temporary + " to", path);
  return true;
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
  auto written = write_file_durably(path, state.dump());
  if (!written.ok()) return written;
  if (!fsync_directory(directory_of(path))) return file_error("cannot flush the directory of", path);
  return true;
}

// ---------------------------------------------------------------- the byte files

// FILE.bytes/<name>: written once each (names are unique to their bytes), flushed
// together before the document that names them, removed once a saved document no
// longer names them.
class StateFile::Files : public ByteStore {
 public:
  explicit Files(std::string dir) : dir_(std::move(dir)) {}

  // Creates the directory if needed and learns which byte files it holds; files left
  // half-written by a crash (*.tmp) are removed.
  Outcome<bool> open() {
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) return file_error("cannot create", dir_);
    DIR* d = ::opendir(dir_.c_str());
    if (!d) return file_error("cannot read", dir_);
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) ::unlink((dir_ + "/" + name).c_str());
      else on_disk_.insert(name);
    }
    ::closedir(d);
    return true;
  }

  void put(const std::string& name, const std::string& bytes) override {
    named_.insert(name);
    if (on_disk_.count(name)) return;
    auto written = write_file_durably(dir_ + "/" + name, bytes);
    if (!written.ok()) throw std::runtime_error(written.error().message);
    on_disk_.insert(name);
    unflushed_ = true;
  }

  std::string get(const std::string& name) const override {
    int fd = ::open((dir_ + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    std::string bytes;
    bool read = fd >= 0 && read_all(fd, bytes);
    if (fd >= 0) ::close(fd);
    if (!read) throw std::runtime_error("the bytes " + dir_ + "/" + name + " are missing");
    return bytes;
  }

  // The renames of the files written since the last flush, made durable.
  Outcome<bool> flush() {
    if (unflushed_ && !fsync_directory(dir_)) return file_error("cannot flush", dir_);
    unflushed_ = false;
    return true;
  }

  // After a document is saved: the files it does not name are garbage.
  void forget_unnamed() {
    for (auto it = on_disk_.begin(); it != on_disk_.end();) {
      if (named_.count(*it)) {
        ++it;
        continue;
      }
      ::unlink((dir_ + "/" + *it).c_str());
      it = on_disk_.erase(it);
    }
    named_.clear();
  }

 private:
  std::string dir_;
  std::set<std::string> on_disk_;  // byte files in dir_
  std::set<std::string> named_;    // put() since the last save: what the next document names
  bool unflushed_ = false;
};

// ---------------------------------------------------------------- the state file

StateFile::StateFile(std::string path) : path_(std::move(path)), files_(std::make_unique<Files>(path_ + ".bytes")) {}

StateFile::~StateFile() = default;

ByteStore& StateFile::bytes() { return *files_; }

Outcome<bool> StateFile::open(Platform& platform) {
  auto opened = files_->open();
  if (!opened.ok()) return opened;
  auto saved = read_state_file(path_);
  if (!saved.ok()) return saved.error();
  Outcome<bool> taken = saved->is_null() ? save(platform.dump(*files_)) : platform.restore(*saved, *files_);
  if (!taken.ok()) {
    Error e = taken.error();
    e.message = "state file " + path_ + ": " + e.message;
    return e;
  }
  return true;
}

Outcome<bool> StateFile::save(const json& dumped) {
  auto flushed = files_->flush();
  if (!flushed.ok()) return flushed;
  auto written = write_state_file(path_, dumped);
  if (!written.ok()) return written;
  files_->forget_unnamed();
  return true;
}

}  // namespace cloud
