// Reading and durably replacing the state file and its byte files: each written whole
// by core/base/files' write_durably (a temporary beside it, flushed, renamed into place, its
// folder flushed), so that a crash leaves the old file or the new one.
#include "emulator/state_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "core/base/files.h"

namespace cloud {

namespace {

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

// The temporary files of `path` are "<path>.XXXXXX.tmp", made by create_temporary.
const char* const kTemporarySuffix = ".tmp";

// What `fill` writes to a file descriptor in `path`, whole and on the disk, or an
// error; never a part of it, and no temporary left behind to fill a full disk further.
Outcome<bool> write_file_durably(const std::string& path, const std::function<bool(int fd)>& fill) {
  std::string problem = write_durably(path, fill);
  if (!problem.empty()) return make_error(ErrorKind::config, "StateFile", problem);
  return true;
}

// Removes what a crash left of the temporary files of `path` ("<path>.XXXXXX.tmp"):
// unlink(2) removes a link planted there, never its target.
void remove_temporaries_of(const std::string& path) {
  std::string dir = directory_of(path), name = path.substr(path.rfind('/') + 1) + ".";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  const size_t size = name.size() + 6 + std::strlen(kTemporarySuffix);
  while (dirent* e = ::readdir(d)) {
    std::string file = e->d_name;
    if (file.size() == size && file.compare(0, name.size(), name) == 0 &&
        file.compare(size - 4, 4, kTemporarySuffix) == 0)
      ::unlink((dir + "/" + file).c_str());
  }
  ::closedir(d);
}

}  // namespace

Error state_file_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::config, "StateFile", what + " " + path + ": " + std::strerror(errno));
}

bool plain_file_name(const std::string& file) {
  if (file.empty() || file[0] == '.') return false;
  for (char c : file)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return false;
  return true;
}

unsigned long long serial_of(const std::string& file) {
  size_t dot = file.rfind('.');
  if (dot == std::string::npos || dot + 1 == file.size()) return 0;
  for (size_t i = dot + 1; i < file.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(file[i]))) return 0;
  return std::strtoull(file.c_str() + dot + 1, nullptr, 10);
}

Outcome<json> read_state_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return json();
  if (fd < 0) return state_file_error("cannot open the state file", path);
  std::string text;
  bool read = read_all(fd, text);
  ::close(fd);
  if (!read) return state_file_error("cannot read the state file", path);
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded())
    return make_error(ErrorKind::config, "BadStateFile", "the state file " + path + " is not JSON");
  return doc;
}

Outcome<bool> write_state_file(const std::string& path, const json& state, const WriteCall& write) {
  std::string text = state.dump();
  auto written = write_file_durably(path, [&](int fd) { return write_all(fd, text.data(), text.size(), write); });
  return written;
}

// ---------------------------------------------------------------- the byte files

// FILE.bytes/: the bytes the services name (an object's version id, a part's id), each
// in a file "<name>.<serial>", the serial above that of every file the folder held at
// start. A name can come back after a crash or a failed save (the id counter goes
// back with the state), but a file name never does, so a file left behind by a
// request that was never acknowledged cannot be taken for the bytes of a later one.
class StateFile::Files : public ByteStore {
 public:
  Files(std::string dir, WriteCall write) : dir_(std::move(dir)), write_(std::move(write)) {}

  // Creates the directory if needed and learns its files and the serials they took;
  // files left half-written by a crash (*.tmp) are removed. `named`: which file holds
  // which bytes, as the state file says.
  Outcome<bool> open(std::map<std::string, std::string> named) {
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) return state_file_error("cannot create", dir_);
    DIR* d = ::opendir(dir_.c_str());
    if (!d) return state_file_error("cannot read", dir_);
    while (dirent* e = ::readdir(d)) {
      std::string file = e->d_name;
      if (file == "." || file == "..") continue;
      if (file.size() > 4 && file.compare(file.size() - 4, 4, ".tmp") == 0) {
        ::unlink((dir_ + "/" + file).c_str());
        continue;
      }
      on_disk_.insert(file);
      next_serial_ = std::max(next_serial_, serial_of(file) + 1);
    }
    ::closedir(d);
    saved_ = std::move(named);
    return true;
  }

  // Bytes the saved document has already are not written again; others go to a new
  // file, a piece at a time. The bytes as the file keeps them.
  SharedBytes put(const std::string& name, const SharedBytes& bytes) override {
    auto kept = saved_.find(name);
    if (kept != saved_.end()) {
      pending_[name] = kept->second;
      return file_blob(dir_ + "/" + kept->second, bytes->size());
    }
    std::string file = name + "." + std::to_string(next_serial_++);
    Outcome<bool> written = make_error(ErrorKind::config, "StateFile", "'" + name + "' cannot name a byte file");
    if (plain_file_name(file))
      written = write_file_durably(dir_ + "/" + file, [&](int fd) { return write_blob(fd, *bytes, write_); });
    if (!written.ok()) {
      pending_.clear();  // the document this was for will not be saved
      throw std::runtime_error(written.error().message);
    }
    on_disk_.insert(file);
    pending_[name] = file;
    unflushed_ = true;
    return file_blob(dir_ + "/" + file, bytes->size());
  }

  // The bytes of `name` as the saved document says, not read; in a state file of an
  // older version, which names no files, the name is the file: it is read, since the
  // first save writes the bytes to a file of the new form and removes it. Never
  // anything outside dir_.
  SharedBytes get(const std::string& name) const override {
    auto kept = saved_.find(name);
    std::string file = kept != saved_.end() ? kept->second : name;
    if (!plain_file_name(file))
      throw std::runtime_error("the byte file '" + file + "' is not a file of " + dir_ +
                               "/ (letters, digits, '.', '-' and '_', not starting with '.')");
    SharedBytes bytes = stored_file(dir_ + "/" + file);
    return kept != saved_.end() ? bytes : memory_blob(bytes->all());
  }

  // Which file holds which bytes, for the document being saved.
  json pending() const { return pending_; }

  // The renames of the files written since the last flush, made durable.
  Outcome<bool> flush() {
    if (unflushed_ && !fsync_directory(dir_)) return state_file_error("cannot flush", dir_);
    unflushed_ = false;
    return true;
  }

  // The document naming pending() is saved: its files hold the bytes from now on, and
  // every other file is garbage.
  void saved() {
    saved_ = std::move(pending_);
    pending_.clear();
    std::set<std::string> named;
    for (const auto& [name, file] : saved_) named.insert(file);
    for (auto it = on_disk_.begin(); it != on_disk_.end();) {
      if (named.count(*it)) {
        ++it;
        continue;
      }
      ::unlink((dir_ + "/" + *it).c_str());
      it = on_disk_.erase(it);
    }
  }

  // The document could not be saved: the last one saved still says where the bytes
  // are. Files written for this one stay until a save no longer names them (FILE may
  // name them already, if only the flush of its directory failed).
  void unsaved() { pending_.clear(); }

 private:
  std::string dir_;
  WriteCall write_;
  std::set<std::string> on_disk_;                  // files in dir_
  std::map<std::string, std::string> saved_;       // name -> file, as the saved document says
  std::map<std::string, std::string> pending_;     // name -> file, for the document being saved
  unsigned long long next_serial_ = 1;
  bool unflushed_ = false;
};

// ---------------------------------------------------------------- the state file

StateFile::StateFile(std::string path, WriteCall write)
    : path_(std::move(path)), write_(write), files_(std::make_unique<Files>(path_ + ".bytes", std::move(write))) {}

StateFile::~StateFile() = default;

ByteStore& StateFile::bytes() { return *files_; }

Outcome<bool> StateFile::open(Platform& platform) {
  remove_temporaries_of(path_);
  auto saved = read_state_file(path_);
  if (!saved.ok()) return saved.error();
  std::map<std::string, std::string> named;
  try {
    if (saved->is_object()) named = saved->value("byte_files", json::object()).get<std::map<std::string, std::string>>();
  } catch (const json::exception&) {
    return make_error(ErrorKind::config, "BadStateFile",
                      "state file " + path_ + ": 'byte_files' is not an object of names to file names");
  }
  auto opened = files_->open(std::move(named));
  if (!opened.ok()) return opened;
  if (saved->is_null()) return true;
  auto taken = platform.restore(*saved, *files_);
  if (!taken.ok()) {
    Error e = taken.error();
    e.message = "state file " + path_ + ": " + e.message;
    return e;
  }
  return true;
}

// The platform's document, with which file holds which bytes; the byte files first.
Outcome<bool> StateFile::save(const json& dumped) {
  json document = dumped;
  document["byte_files"] = files_->pending();
  Outcome<bool> written = files_->flush();
  if (written.ok()) written = write_state_file(path_, document, write_);
  if (!written.ok()) {
    files_->unsaved();
    return written;
  }
  files_->saved();
  return true;
}

}  // namespace cloud
