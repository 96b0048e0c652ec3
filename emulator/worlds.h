// Accounts and worlds. An account is an access key pair with a 12-digit id, as AWS's;
// it owns the buckets and other resources it makes. A world is a platform of its own:
// its accounts, resources, clock, faults and checkpoints, seen by no other world. A
// serve holds the default world (the one aws-cli and rclone users reach with the keys
// they were given) and any number made through the control plane, each answering
// with a fresh key pair of its own: a request lands in the world of the key it is
// signed with (caller()), so no port or header tells worlds apart and every S3 tool
// reaches one unchanged (docs/design.md, "Worlds").
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/wire/sigv4.h"
#include "emulator/checkpoints.h"
#include "emulator/faults.h"
#include "emulator/service.h"
#include "emulator/state_db.h"

namespace cloud {

inline constexpr const char* kDefaultWorld = "default";

struct Account {
  std::string id;  // 12 digits
  Credentials credentials;
};

// "KEY:SECRET" as an account's key pair; an error saying what is allowed otherwise
// (`where`: "--account", "FILE:3").
Outcome<Credentials> parse_account(const std::string& text, const std::string& where);
// The key pairs of an accounts file: a KEY:SECRET a line; blank lines and lines that
// start with '#' are skipped. A file others may read is refused (it holds secrets).
Outcome<std::vector<Credentials>> read_accounts_file(const std::string& path);

// A platform of its own, with what goes with it.
struct World {
  World(std::string name, const std::string& region, const Model& model);
  const std::string name;
  Platform platform;
  Faults faults;
  std::unique_ptr<StateDatabase> db;  // with --state, for the default world and the kept ones
  std::unique_ptr<Checkpoints> checkpoints;
  bool kept = false;  // saved with --state, and made again at the next start
};

// Who sent a request: the world its key reaches and the account of the key. The
// world is held for as long as the request is served, even when it is removed meanwhile.
struct Caller {
  std::shared_ptr<World> world;
  Account account;
};

class Worlds {
 public:
  // The default world, its first account `primary` (serve's key pair); `built_in_key`
  // is the built-in test key's id (public, so never loaded beyond loopback: open_state).
  Worlds(const std::string& region, const Model& model, const Credentials& primary, std::string built_in_key);
  // The account id of an access key: the built-in key's is kBuiltInAccountId, any
  // other key's 12 digits of its SHA-256, so that a key has the same id on every serve.
  std::string account_id(const std::string& access_key_id) const;
  World& main() { return *main_; }
  // The default world, held as a request holds its world (made once, never replaced).
  std::shared_ptr<World> main_held() const { return main_; }

  // The one look-up of a request's access key: its world and account; nullopt when no
  // world has the key.
  std::optional<Caller> caller(const std::string& access_key_id) const;

  // An account of `world` with `credentials` (a fresh pair when the key is empty); a
  // key any world has already is AccountExists. Saved when the world is kept.
  Outcome<Account> add_account(World& world, Credentials credentials);
  // Removes the account of `access_key_id` from `world`: not its first (the one the
  // world was made with), nor one that still owns buckets or objects (AccountNotEmpty: its
  // resources would be left without an owner).
  Outcome<bool> remove_account(World& world, const std::string& access_key_id);
  std::vector<Account> accounts(const World& world) const;
  // The accounts of `world` saved again (a checkpoint restored brings back its own).
  Outcome<bool> save_accounts(World& world);

  // A new world with a fresh account; `keep`: saved with --state (world_folder()).
  Outcome<Caller> create(bool keep);
  // Removes `world` (never the default one), its saved state with it.
  Outcome<bool> remove(World& world);
  std::vector<std::string> names() const;
  // Runs `fn` on every world (stopping or resuming faults).
  void each(const std::function<void(World&)>& fn);

  // With --state: the default world's database, then every kept world found in
  // `state_path`.worlds/ (made again, its accounts with it); from then on accounts
  // and kept worlds are saved there. A saved account of the built-in test key, which is
  // public, is left out unless `built_in_allowed` (serve on loopback).
  Outcome<bool> open_state(const std::string& state_path, std::unique_ptr<StoreLock>* lock, bool built_in_allowed);

 private:
  Outcome<bool> open_world_db(World& world, const std::string& path, std::unique_ptr<StoreLock>* lock);
  std::shared_ptr<World> make_world(const std::string& name);
  void tell_accounts(World& world);
  std::string fresh_name() const;
  const std::string region_;
  const std::string built_in_key_;
  const Model& model_;
  mutable std::mutex mutex_;
  std::shared_ptr<World> main_;
  std::map<std::string, std::shared_ptr<World>> worlds_;   // by name, the default one too
  std::map<std::string, Caller> by_key_;                   // every account of every world, by access key
  std::map<const World*, std::vector<std::string>> keys_;  // each world's keys, in the order they came
  std::string state_path_;                                 // "": nothing saved
  bool built_in_allowed_ = true;
};

}  // namespace cloud
