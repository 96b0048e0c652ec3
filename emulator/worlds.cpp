// Accounts and worlds (worlds.h): every account of every world in one index by access
// key, which is how a request finds its world; worlds made and removed; with --state,
// the accounts and the kept worlds saved beside the records (the default world's in
// the state database, each kept world in a database of its own in PATH.worlds/).
#include "emulator/worlds.h"

#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/base/crypto.h"

namespace cloud {

namespace {

Error invalid(const std::string& code, const std::string& message) {
  return make_error(ErrorKind::validation, code, message);
}

// `n` characters of `alphabet`, drawn from getrandom.
std::string random_text(const char* alphabet, size_t n) {
  std::string bytes(n, '\0');
  ssize_t got = ::getrandom(bytes.data(), n, 0);
  for (ssize_t i = got < 0 ? 0 : got; i < static_cast<ssize_t>(n); ++i) bytes[i] = static_cast<char>(::random());
  std::string out;
  size_t size = std::char_traits<char>::length(alphabet);
  for (char b : bytes) out += alphabet[static_cast<unsigned char>(b) % size];
  return out;
}

// A fresh key pair, shaped as AWS's: a 20-character key id, a 40-character secret.
Credentials fresh_credentials() {
  return {"CLW" + random_text("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 17),
          random_text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 40), ""};
}

// Whether `key` may be an access key id: 1 to 128 letters, digits, '_' or '-'.
bool is_key_id(const std::string& key) {
  if (key.empty() || key.size() > 128) return false;
  for (char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// Whether `secret` may be a secret: 1 to 128 printable characters, no space.
bool is_secret(const std::string& secret) {
  if (secret.empty() || secret.size() > 128) return false;
  for (char c : secret)
    if (c <= ' ' || c > '~') return false;
  return true;
}

json accounts_json(const std::vector<Account>& accounts) {
  json out = json::array();
  for (const Account& a : accounts)
    out.push_back({{"account_id", a.id},
                   {"access_key_id", a.credentials.access_key_id},
                   {"secret_access_key", a.credentials.secret_access_key}});
  return out;
}

// Whether `name` may name a world: what fresh_name() makes, or the default's.
bool is_world_name(const std::string& name) {
  if (name.size() != 14 || name.compare(0, 2, "w-") != 0) return false;
  for (size_t i = 2; i < name.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

}  // namespace

std::string Worlds::account_id(const std::string& access_key_id) const {
  if (access_key_id == built_in_key_) return kBuiltInAccountId;
  unsigned long long n = std::strtoull(sha256_hex(access_key_id).substr(0, 15).c_str(), nullptr, 16);
  char digits[16];
  std::snprintf(digits, sizeof digits, "%012llu", n % 1000000000000ULL);
  return digits;
}

Outcome<Credentials> parse_account(const std::string& text, const std::string& where) {
  size_t colon = text.find(':');
  std::string key = text.substr(0, colon), secret = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (colon == std::string::npos || !is_key_id(key) || !is_secret(secret))
    return make_error(ErrorKind::config, "BadAccount",
                      where +
                          ": an account is KEY:SECRET, the key 1 to 128 letters, digits, '_' or '-', the "
                          "secret 1 to 128 printable characters without spaces");
  return Credentials{key, secret, ""};
}

Outcome<std::vector<Credentials>> read_accounts_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error(ErrorKind::config, "BadAccount", "cannot read the accounts file " + path);
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    return make_error(ErrorKind::config, "BadAccount",
                      "the accounts file " + path + " holds secrets, yet others may read it: chmod 600 it");
  std::ifstream in(path);
  if (!in) return make_error(ErrorKind::config, "BadAccount", "cannot read the accounts file " + path);
  std::vector<Credentials> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    auto account = parse_account(line, path + ":" + std::to_string(number));
    if (!account.ok()) return account.error();
    out.push_back(*account);
  }
  return out;
}

World::World(std::string world_name, const std::string& region, const Model& model)
    : name(std::move(world_name)),
      platform(region, model),
      checkpoints(std::make_unique<Checkpoints>(platform, nullptr, "")) {}

Worlds::Worlds(const std::string& region, const Model& model, const Credentials& primary, std::string built_in_key)
    : region_(region), built_in_key_(std::move(built_in_key)), model_(model) {
  main_ = make_world(kDefaultWorld);
  (void)add_account(*main_, primary);  // the first: nothing to clash with
}

std::shared_ptr<World> Worlds::make_world(const std::string& name) {
  auto world = std::make_shared<World>(name, region_, model_);
  worlds_[name] = world;
  return world;
}

std::optional<Caller> Worlds::caller(const std::string& access_key_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_key_.find(access_key_id);
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

Outcome<Account> Worlds::add_account(World& world, Credentials credentials) {
  if (credentials.access_key_id.empty()) credentials = fresh_credentials();
  Account account{account_id(credentials.access_key_id), credentials};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (by_key_.count(credentials.access_key_id))
      return invalid("AccountExists",
                     "an account with the access key " + credentials.access_key_id + " exists already");
    auto held = worlds_.find(world.name);
    if (held == worlds_.end() || held->second.get() != &world)
      return invalid("InvalidArgument", "the world " + world.name + " was removed meanwhile");
    std::vector<std::string>& keys = keys_[&world];
    if (keys.empty()) world.platform.set_owner(account.id);
    keys.push_back(credentials.access_key_id);
    by_key_[credentials.access_key_id] = Caller{held->second, account};
    tell_accounts(world);
  }
  if (auto saved = save_accounts(world); !saved.ok()) return saved.error();
  return account;
}

Outcome<bool> Worlds::remove_account(World& world, const std::string& access_key_id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string>& keys = keys_[&world];
    auto it = std::find(keys.begin(), keys.end(), access_key_id);
    if (it == keys.end())
      return make_error(ErrorKind::validation, "NoSuchAccount",
                        "this world has no account with the access key " + access_key_id);
    if (it == keys.begin())
      return invalid("InvalidArgument", "the account " + access_key_id +
                                            " is the one this world was made with (serve's own, in the default "
                                            "world); it stays");
    std::string id = by_key_.at(access_key_id).account.id;
    if (world.platform.owns(id))
      return invalid("AccountNotEmpty",
                     "the account " + access_key_id +
                         " still owns buckets, objects or other resources (clusters, snapshots, firewall groups...): "
                         "delete them first, or reset the world, or its data would have no owner");
    keys.erase(it);
    by_key_.erase(access_key_id);
    tell_accounts(world);
  }
  return save_accounts(world);
}

// The world's platform told its accounts' ids (those a grant may name); mutex_ held.
void Worlds::tell_accounts(World& world) {
  std::vector<std::string> ids;
  for (const std::string& key : keys_[&world]) ids.push_back(by_key_.at(key).account.id);
  world.platform.set_accounts(std::move(ids));
}

std::vector<Account> Worlds::accounts(const World& world) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Account> out;
  auto keys = keys_.find(&world);
  if (keys != keys_.end())
    for (const std::string& key : keys->second) out.push_back(by_key_.at(key).account);
  return out;
}

std::string Worlds::fresh_name() const {
  std::string name;
  do name = "w-" + random_text("0123456789abcdef", 12);
  while (worlds_.count(name));
  return name;
}

Outcome<Caller> Worlds::create(bool keep) {
  std::shared_ptr<World> world;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    world = make_world(fresh_name());
    world->kept = keep;
  }
  // As the default world is configured (serve's --settle, --min-part-size; its URLs).
  for (const auto& [setting, value] : main_->platform.settings()) (void)world->platform.set_setting(setting, value);
  world->platform.set_endpoints(main_->platform.endpoints());
  if (keep && !state_path_.empty()) {
    auto opened = open_world_db(*world, state_path_ + ".worlds/" + world->name + ".db", nullptr);
    if (!opened.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      worlds_.erase(world->name);
      return opened.error();
    }
  }
  auto account = add_account(*world, {});
  if (!account.ok()) {
    (void)remove(*world);
    return account.error();
  }
  world->platform.load_fixtures();
  return Caller{world, *account};
}

Outcome<bool> Worlds::remove(World& world) {
  if (&world == main_.get())
    return invalid("InvalidArgument", "the default world is the one serve's own accounts reach; it is never removed");
  std::shared_ptr<World> held;  // the world lives on while requests in flight hold it
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = worlds_.find(world.name);
    if (it == worlds_.end()) return true;
    held = it->second;
    for (const std::string& key : keys_[&world]) by_key_.erase(key);
    keys_.erase(&world);
    worlds_.erase(it);
  }
  if (!held->db) return true;
  // Its database, bytes and checkpoints: made by serve for this world, and only those.
  std::string path = state_path_ + ".worlds/" + held->name + ".db";
  return held->platform.exclusive([&]() -> Outcome<bool> {
    held->db->close();
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ignored);
    std::filesystem::remove_all(path + ".bytes", ignored);
    std::filesystem::remove_all(path + ".snapshots", ignored);
    return true;
  });
}

std::vector<std::string> Worlds::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out{kDefaultWorld};
  for (const auto& [name, world] : worlds_)
    if (name != kDefaultWorld) out.push_back(name);
  return out;
}

void Worlds::each(const std::function<void(World&)>& fn) {
  std::vector<std::shared_ptr<World>> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, world] : worlds_) all.push_back(world);
  }
  for (const auto& world : all) fn(*world);
}

// The accounts of `world` into its database, when it has one, with the platform held
// still (no change is being saved on the same connection meanwhile).
Outcome<bool> Worlds::save_accounts(World& world) {
  if (!world.db) return true;
  json saved = accounts_json(accounts(world));
  return world.platform.exclusive([&]() { return world.db->put_meta("accounts", saved); });
}

// The database at `path` opened for `world` (its platform restored from it, or saved
// to it whole), its checkpoints beside it, and the accounts it saved added.
Outcome<bool> Worlds::open_world_db(World& world, const std::string& path, std::unique_ptr<StoreLock>* lock) {
  world.db = std::make_unique<StateDatabase>(path);
  auto opened = cloud::open_state(world.platform, *world.db, path, lock);
  if (!opened.ok()) return opened.error();
  world.checkpoints = std::make_unique<Checkpoints>(world.platform, world.db.get(), path + ".snapshots");
  if (auto owned = world.checkpoints->open(); !owned.ok()) return owned.error();
  auto saved = world.db->meta("accounts");
  if (!saved.ok()) return saved.error();
  if (!*saved) return save_accounts(world);  // an earlier version's: the one account it had
  try {
    for (const json& a : **saved) {
      Credentials c{a.at("access_key_id").get<std::string>(), a.at("secret_access_key").get<std::string>(), ""};
      bool refused = c.access_key_id == built_in_key_ && !built_in_allowed_;
      if (!refused && !caller(c.access_key_id)) (void)add_account(world, c);
    }
  } catch (const json::exception&) {
    return make_error(ErrorKind::config, "BadStateFile",
                      "the state database " + path + " holds accounts of another form");
  }
  return save_accounts(world);
}

Outcome<bool> Worlds::open_state(const std::string& state_path, std::unique_ptr<StoreLock>* lock,
                                 bool built_in_allowed) {
  state_path_ = state_path;
  built_in_allowed_ = built_in_allowed;
  auto opened = open_world_db(*main_, state_path, lock);
  if (!opened.ok()) return opened;
  std::string folder = state_path + ".worlds";
  auto fd = open_own_folder(folder, "the worlds folder");
  if (!fd.ok()) return fd.error();
  DIR* dir = ::fdopendir(*fd);
  if (!dir) return ::close(*fd), make_error(ErrorKind::config, "StateFile", "cannot list " + folder);
  std::vector<std::string> found;
  while (dirent* entry = ::readdir(dir)) {
    std::string file = entry->d_name;
    if (file.size() > 3 && file.compare(file.size() - 3, 3, ".db") == 0 &&
        is_world_name(file.substr(0, file.size() - 3)))
      found.push_back(file.substr(0, file.size() - 3));
  }
  ::closedir(dir);
  for (const std::string& name : found) {
    std::shared_ptr<World> world;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      world = make_world(name);
      world->kept = true;
    }
    world->platform.set_endpoints(main_->platform.endpoints());
    auto kept = open_world_db(*world, folder + "/" + name + ".db", nullptr);
    if (!kept.ok()) return kept;
  }
  return true;
}

}  // namespace cloud
