// Checkpoints: names checked here, then either a folder per checkpoint taken and restored
// by the state database (state_db.cpp) under the platform's lock, or the platform's
// records held in memory (HeldRecords). A folder is made under a hidden name and renamed into place,
// so that a crash leaves a whole checkpoint or none (a hidden leftover is removed by the
// next checkpoint of that name).
#include "emulator/checkpoints.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "core/base/files.h"
#include "emulator/held_records.h"
#include "emulator/state_db.h"

namespace cloud {

namespace {

constexpr size_t kMaxNameLength = 64;

// Removes the entry `name` of the folder `dir_fd` and, when it is a folder, what is in
// it, `depth` levels deep (a checkpoint's layout is two). Nothing is followed: a link is
// removed as a link (unlinkat), a folder opened with O_NOFOLLOW relative to its parent,
// so a link planted anywhere under the checkpoints folder never leads a removal elsewhere.
void remove_at(int dir_fd, const std::string& name, int depth) {
  if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || (errno != EISDIR && errno != EPERM)) return;
  int fd = depth > 0 ? ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (fd >= 0) {
    for (const std::string& e : folder_entries(fd)) remove_at(fd, e, depth - 1);
    ::close(fd);
  }
  ::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR);
}

// Whether `name` in the folder `dir_fd` is a folder itself (a link to one is not).
bool is_folder_at(int dir_fd, const std::string& name) {
  struct stat st {};
  return ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

Error checkpoint_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::config, "CheckpointFailed", what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Outcome<bool> check_checkpoint_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= kMaxNameLength && std::isalnum(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_');
  if (ok) return true;
  return make_error(ErrorKind::validation, "InvalidCheckpointName",
                    "invalid checkpoint name '" + name.substr(0, kMaxNameLength + 1) +
                        "': 1 to 64 letters, digits, '.', '-' "
                        "or '_', starting with a letter or a digit");
}

Checkpoints::Checkpoints(Platform& platform, StateDatabase* db, std::string folder)
    : platform_(platform), db_(db), folder_(std::move(folder)) {}

Checkpoints::~Checkpoints() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

Outcome<bool> Checkpoints::open() {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_locked();
}

Outcome<bool> Checkpoints::open_locked() const {
  if (!db_ || dir_fd_ >= 0) return true;
  auto fd = open_own_folder(folder_, "the checkpoints folder");
  if (!fd.ok()) return fd.error();
  dir_fd_ = *fd;
  return true;
}

Outcome<bool> Checkpoints::take(const std::string& name) {
  if (auto valid = check_checkpoint_name(name); !valid.ok()) return valid;
  std::lock_guard<std::mutex> lock(mutex_);
  if (db_) return take_folder(name);
  auto held = std::make_unique<HeldRecords>();
  if (auto saved = platform_.save_records_to(*held); !saved.ok()) return saved;
  held_[name] = std::move(held);
  return true;
}

// Made as ".<name>.new", then renamed into place; one of that name before goes to
// ".<name>.old" and is removed once the new one is in place. Every step is relative
// to the folder's descriptor and follows no link.
Outcome<bool> Checkpoints::take_folder(const std::string& name) {
  if (auto opened = open_locked(); !opened.ok()) return opened;
  std::string made = "." + name + ".new", old = "." + name + ".old";
  remove_at(dir_fd_, made, 2);
  Outcome<bool> taken = platform_.exclusive([&] { return db_->checkpoint_to(folder_ + "/" + made); });
  if (!taken.ok()) {
    remove_at(dir_fd_, made, 2);
    return taken;
  }
  remove_at(dir_fd_, old, 2);
  if (is_folder_at(dir_fd_, name) && !commit_rename_at(dir_fd_, name, old))
    return checkpoint_error("cannot replace", folder_ + "/" + name);
  if (!commit_rename_at(dir_fd_, made, name)) return checkpoint_error("cannot put in place", folder_ + "/" + name);
  remove_at(dir_fd_, old, 2);
  return true;
}

Outcome<bool> Checkpoints::restore(const std::string& name) {
  if (auto valid = check_checkpoint_name(name); !valid.ok()) return valid;
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> known = names_locked();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    std::string list;
    for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
    return make_error(ErrorKind::validation, "NoSuchCheckpoint",
                      "no checkpoint named '" + name + "' (checkpoints: " + (list.empty() ? "none" : list) + ")");
  }
  if (db_) return platform_.reload_records([&] { return db_->restore_from(folder_ + "/" + name); });
  return platform_.restore_records_from(*held_.at(name));
}

std::vector<std::string> Checkpoints::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_locked();
}

std::vector<std::string> Checkpoints::names_locked() const {
  std::vector<std::string> out;
  if (!db_) {
    for (const auto& [name, held] : held_) out.push_back(name);
    return out;
  }
  if (!open_locked().ok()) return out;
  for (const std::string& e : folder_entries(dir_fd_))
    if (e[0] != '.' && check_checkpoint_name(e).ok() && is_folder_at(dir_fd_, e)) out.push_back(e);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace cloud
