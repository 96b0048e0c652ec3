// Snapshots: names checked here, then either a folder per snapshot taken and restored
// by the state database (state_db.cpp) under the platform's lock, or the platform's
// dump held in memory. A folder is made under a hidden name and renamed into place,
// so that a crash leaves a whole snapshot or none (a hidden leftover is removed by the
// next snapshot of that name).
#include "emulator/snapshots.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "emulator/state_db.h"

namespace cloud {

namespace {

constexpr size_t kMaxNameLength = 64;

// Bytes by name, in memory: a snapshot's without a database. A blob never changes once
// made, so the snapshot shares it with the platform rather than copying it.
class HeldBytes : public ByteStore {
 public:
  SharedBytes put(const std::string& name, const SharedBytes& bytes) override { return named_[name] = bytes; }
  SharedBytes get(const std::string& name) const override {
    auto it = named_.find(name);
    if (it == named_.end()) throw std::runtime_error("no bytes named " + name + " in the snapshot");
    return it->second;
  }

 private:
  std::map<std::string, SharedBytes> named_;
};

// The entries of folder `dir` but "." and ".."; none when it cannot be read.
std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.emplace_back(e->d_name);
  ::closedir(d);
  return out;
}

// Removes the folder `dir` and what is in it, two levels deep (a snapshot's layout).
void remove_folder(const std::string& dir) {
  for (const std::string& e : entries_of(dir)) {
    std::string path = dir + "/" + e;
    for (const std::string& f : entries_of(path)) ::unlink((path + "/" + f).c_str());
    if (::rmdir(path.c_str()) != 0) ::unlink(path.c_str());
  }
  ::rmdir(dir.c_str());
}

bool is_folder(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Error snapshot_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::config, "SnapshotFailed", what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Outcome<bool> check_snapshot_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= kMaxNameLength && std::isalnum(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_');
  if (ok) return true;
  return make_error(ErrorKind::validation, "InvalidSnapshotName",
                    "invalid snapshot name '" + name.substr(0, kMaxNameLength + 1) + "': 1 to 64 letters, digits, '.', '-' "
                    "or '_', starting with a letter or a digit");
}

struct Snapshots::Held {
  json document;
  HeldBytes bytes;
};

Snapshots::Snapshots(Platform& platform, StateDatabase* db, std::string folder)
    : platform_(platform), db_(db), folder_(std::move(folder)) {}

Snapshots::~Snapshots() = default;

Outcome<bool> Snapshots::take(const std::string& name) {
  if (auto valid = check_snapshot_name(name); !valid.ok()) return valid;
  std::lock_guard<std::mutex> lock(mutex_);
  if (db_) return take_folder(name);
  auto held = std::make_unique<Held>();
  held->document = platform_.dump(held->bytes);
  held_[name] = std::move(held);
  return true;
}

// Made as ".<name>.new", then renamed into place; one of that name before goes to
// ".<name>.old" and is removed once the new one is in place.
Outcome<bool> Snapshots::take_folder(const std::string& name) {
  if (::mkdir(folder_.c_str(), 0700) != 0 && errno != EEXIST) return snapshot_error("cannot create", folder_);
  std::string made = folder_ + "/." + name + ".new", old = folder_ + "/." + name + ".old", path = folder_ + "/" + name;
  remove_folder(made);
  Outcome<bool> taken = platform_.exclusive([&] { return db_->snapshot_to(made); });
  if (!taken.ok()) {
    remove_folder(made);
    return taken;
  }
  remove_folder(old);
  if (is_folder(path) && ::rename(path.c_str(), old.c_str()) != 0) return snapshot_error("cannot replace", path);
  if (::rename(made.c_str(), path.c_str()) != 0) return snapshot_error("cannot put in place", path);
  remove_folder(old);
  return true;
}

Outcome<bool> Snapshots::restore(const std::string& name) {
  if (auto valid = check_snapshot_name(name); !valid.ok()) return valid;
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> known = names_locked();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    std::string list;
    for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
    return make_error(ErrorKind::validation, "NoSuchSnapshot",
                      "no snapshot named '" + name + "' (snapshots: " + (list.empty() ? "none" : list) + ")");
  }
  if (db_) return platform_.reload_records([&] { return db_->restore_from(folder_ + "/" + name); });
  const Held& held = *held_.at(name);
  return platform_.restore(held.document, held.bytes);
}

std::vector<std::string> Snapshots::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_locked();
}

std::vector<std::string> Snapshots::names_locked() const {
  std::vector<std::string> out;
  if (!db_) {
    for (const auto& [name, held] : held_) out.push_back(name);
    return out;
  }
  for (const std::string& e : entries_of(folder_))
    if (e[0] != '.' && check_snapshot_name(e).ok() && is_folder(folder_ + "/" + e)) out.push_back(e);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace cloud
