// The operations of cloud.emulator, each a short function from its arguments (JSON)
// to its answer (JSON), found by name in one table; arguments are checked here, once,
// for Lua and for HTTP alike.
#include "emulator/control.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "core/base/suggest.h"
#include "core/model/validate.h"
#include "emulator/emulator.h"
#include "emulator/service.h"
#include "emulator/worlds.h"

namespace cloud {

namespace {

// What a control operation acts on: the emulator, and the caller's world and account.
struct Here {
  Emulator& e;
  const Caller& caller;
  World& world;
};
using Control = std::function<Outcome<json>(Here&, const json&)>;

Error invalid(const std::string& message) { return make_error(ErrorKind::validation, "InvalidArgument", message); }

// The model's operation names, for "did you mean".
std::vector<std::string> operation_names() {
  std::vector<std::string> names;
  for (const Operation* op : Model::builtin().operations()) names.push_back(op->name);
  return names;
}

// An error naming the first member of `t` that is not one of `known`, with the nearest
// known name or else the list (core/base/suggest's wording).
std::optional<Error> unknown_member(const json& t, std::initializer_list<const char*> known) {
  std::vector<std::string> names(known.begin(), known.end());
  std::string list;
  for (const std::string& k : names) list += (list.empty() ? "" : ", ") + k;
  for (auto it = t.begin(); it != t.end(); ++it)
    if (std::find(names.begin(), names.end(), it.key()) == names.end())
      return invalid(unknown_field(it.key(), names, "known: " + list));
  return std::nullopt;
}

// A name seed{} takes: the member `field` of an entry of `kind` (for buckets, an entry
// may be the name itself), and the request member that names that resource on the
// platform, whose rule in the model (CreateBucket's for a bucket) it must pass.
struct SeededName {
  const char* kind;
  const char* field;
  const char* operation;
  const char* member;
};
constexpr SeededName kSeededNames[] = {
    {"buckets", "name", "CreateBucket", "Bucket"},
    {"firewall_groups", "firewallGroupName", "GetFirewallGroup", "FirewallGroupName"},
    {"backups", "backupId", "RestoreInstance", "backupId"},
    {"instances", "instanceId", "GetInstance", "InstanceId"},
    {"snapshots", "name", "GetSnapshot", "SnapshotName"},
    {"clusters", "name", "GetCluster", "ClusterName"},
    {"mesh_clusters", "resourceGroupName", "GetMeshplatformCluster", "ResourceGroupName"},
    {"mesh_clusters", "name", "GetMeshplatformCluster", "ClusterName"},
};

// The problems of the names `t` seeds, each with its path (`buckets[2]`, 1-based as Lua
// counts), checked as the platform checks them in a request (validate_value).
std::vector<FieldProblem> seeded_name_problems(const json& t) {
  std::vector<FieldProblem> problems;
  for (const SeededName& n : kSeededNames) {
    const json& entries = t.contains(n.kind) ? t[n.kind] : json();
    if (!entries.is_array()) {  // none, or an empty Lua table ({}): nothing to check
      if (!entries.is_null() && !(entries.is_object() && entries.empty()))
        problems.emplace_back(n.kind, "expected a list");
      continue;
    }
    const Member* rule = Model::builtin().find(n.operation)->input->find_member(n.member);
    for (size_t i = 0; i < entries.size(); ++i) {
      std::string path = std::string(n.kind) + "[" + std::to_string(i + 1) + "]";
      const json& entry = entries[i];
      if (entry.is_object() && entry.contains(n.field))
        validate_value(*rule->shape, entry[n.field], path + "." + n.field, problems, Checker::server);
      else if (!entry.is_object() && std::string(n.kind) == "buckets")
        validate_value(*rule->shape, entry, path, problems, Checker::server);
      else if (!entry.is_object()) problems.emplace_back(path, "expected a table of the resource's fields");
    }
  }
  return problems;
}

// Every name checked first (all problems reported at once); nothing is seeded when one is wrong.
Outcome<json> seed(Here& h, const json& t) {
  if (auto bad = unknown_member(
          t, {"buckets", "firewall_groups", "backups", "instances", "snapshots", "clusters", "mesh_clusters"}))
    return *bad;
  std::vector<FieldProblem> problems = seeded_name_problems(t);
  if (!problems.empty()) {
    std::string message = "nothing was seeded: a name must pass the platform's rule for it";
    for (const FieldProblem& p : problems) message += "; " + p.path + ": " + p.problem;
    Error error = invalid(message);
    error.fields = std::move(problems);
    return error;
  }
  if (Outcome<bool> seeded = h.world.platform.seed(t, h.caller.account.id); !seeded.ok()) return seeded.error();
  return json::object();
}

Outcome<json> advance(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {"seconds"})) return *bad;
  const json& seconds = t.contains("seconds") ? t["seconds"] : json();
  if (!seconds.is_number()) return invalid("seconds must be a number");
  auto moved = h.world.platform.advance(seconds.get<double>());
  if (!moved.ok()) return moved.error();
  return json::object();
}

// maintenance = true: what the platform's JSON APIs answer while it is in maintenance
// (503 Server.Maintenance, as the vendor's nifcloud-hatoba-disk-csi-driver tests show
// it); only requests to the JSON APIs match it.
Outcome<Fault> fault_of(const json& t) {
  Fault f;
  bool maintenance = t.value("maintenance", false);
  f.operation = t.value("operation", "");
  f.times = t.value("times", 1);
  f.status = t.value("status", maintenance ? 503 : 0);
  f.code = t.value("code", maintenance ? "Server.Maintenance" : "");
  f.message = t.value("message", maintenance ? "The system is in maintenance now." : "");
  f.json_only = maintenance;
  f.delay = t.value("delay", 0.0);
  f.drop = t.value("drop", false);
  f.error_in_200 = t.value("error_in_200", false);
  f.echo = t.value("echo", false);
  const Operation* op = f.operation.empty() ? nullptr : Model::builtin().find(f.operation);
  if (!f.operation.empty() && !op) return invalid(unknown_name("operation", f.operation, operation_names()));
  if (f.times < 1) return invalid("times must be at least 1");
  if (maintenance && op && op->api == "storage")
    return invalid("maintenance is a fault of the JSON APIs; " + f.operation + " is the storage API's");
  return f;
}

Outcome<json> fault(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {"operation", "times", "status", "code", "message", "delay", "drop", "error_in_200",
                                    "echo", "maintenance"}))
    return *bad;
  try {
    Outcome<Fault> f = fault_of(t);
    if (!f.ok()) return f.error();
    h.world.faults.add(*f);
  } catch (const json::exception& x) {  // a member of the wrong type
    return invalid(x.what());
  }
  return json::object();
}

// Each member in turn: real_time, seed, or a setting (a name that is no setting is
// reported first, whatever its value).
Outcome<json> configure(Here& h, const json& t) {
  Platform& p = h.world.platform;
  for (auto it = t.begin(); it != t.end(); ++it) {
    if (it.key() == "real_time") {
      if (!it->is_boolean()) return invalid("real_time must be a boolean");
      p.set_real_time(it->get<bool>());
      continue;
    }
    if (it.key() == "seed") {
      if (!it->is_number_integer() || it->get<long long>() < 0)
        return invalid("seed must be a whole number, 0 or more");
      if (&h.world == &h.e.worlds().main()) h.e.set_seed(it->get<std::uint64_t>());  // its answers' ids too
      else p.set_seed(it->get<std::uint64_t>());
      continue;
    }
    Outcome<bool> set = p.set_setting(it.key(), it->is_number() ? it->get<double>() : -1);
    if (set.ok()) continue;
    std::string message = set.error().message;
    if (set.error().code == "UnknownSetting") message += ", real_time, seed";
    else if (!it->is_number()) message = it.key() + " must be a number";
    return invalid(message);
  }
  return json::object();
}

Outcome<json> state(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {})) return *bad;
  return h.world.platform.state(h.caller.account.id);
}

// No resources, no faults (not even the fixture set).
Outcome<json> reset(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {})) return *bad;
  if (Outcome<bool> emptied = h.world.platform.reset(); !emptied.ok()) return emptied.error();
  h.world.faults.clear();
  return json::object();
}

Outcome<json> requests(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {})) return *bad;
  return json(h.world.faults.served());
}

// The { name = } of checkpoint and restore.
Outcome<std::string> name_of(const json& t) {
  if (auto bad = unknown_member(t, {"name"})) return *bad;
  if (!t.contains("name") || !t["name"].is_string()) return invalid("name must be a string");
  return t["name"].get<std::string>();
}

Outcome<json> checkpoint(Here& h, const json& t) {
  auto name = name_of(t);
  if (!name.ok()) return name.error();
  auto done = h.world.checkpoints->take(*name);
  if (!done.ok()) return done.error();
  return json::object();
}

// The world's accounts stay as they are: they are not the checkpoint's.
Outcome<json> restore(Here& h, const json& t) {
  auto name = name_of(t);
  if (!name.ok()) return name.error();
  auto done = h.world.checkpoints->restore(*name);
  if (done.ok()) done = h.e.worlds().save_accounts(h.world);
  if (!done.ok()) return done.error();
  return json::object();
}

Outcome<json> checkpoints(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {})) return *bad;
  return json(h.world.checkpoints->names());
}

// The caller's world's accounts: ids and keys, never secrets.
Outcome<json> accounts(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {})) return *bad;
  json out = json::array();
  for (const Account& a : h.e.worlds().accounts(h.world))
    out.push_back({{"account_id", a.id}, {"access_key_id", a.credentials.access_key_id}});
  return out;
}

json account_json(const Account& a) {
  return {{"account_id", a.id},
          {"access_key_id", a.credentials.access_key_id},
          {"secret_access_key", a.credentials.secret_access_key}};
}

// An account of the caller's world: the key pair given, or a fresh one; the answer
// holds its secret, the one time it is shown.
Outcome<json> create_account(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {"access_key_id", "secret_access_key"})) return *bad;
  Credentials given;
  if (t.contains("access_key_id") || t.contains("secret_access_key")) {
    if (!t.value("access_key_id", json()).is_string() || !t.value("secret_access_key", json()).is_string())
      return invalid("access_key_id and secret_access_key go together, both strings");
    auto parsed = parse_account(t["access_key_id"].get<std::string>() + ":" + t["secret_access_key"].get<std::string>(),
                                "create_account");
    if (!parsed.ok()) return invalid(parsed.error().message);
    given = *parsed;
  }
  auto made = h.e.worlds().add_account(h.world, given);
  if (!made.ok()) return made.error();
  return account_json(*made);
}

Outcome<json> delete_account(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {"access_key_id"})) return *bad;
  if (!t.value("access_key_id", json()).is_string()) return invalid("access_key_id must be a string");
  auto removed = h.e.worlds().remove_account(h.world, t["access_key_id"].get<std::string>());
  if (!removed.ok()) return removed.error();
  return json::object();
}

// The names of the worlds: "default" first.
Outcome<json> worlds(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {})) return *bad;
  return json(h.e.worlds().names());
}

// A new world ({ keep = true }: saved with serve --state) and its first account: the
// key pair that reaches it.
Outcome<json> create_world(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {"keep"})) return *bad;
  if (t.contains("keep") && !t["keep"].is_boolean()) return invalid("keep must be a boolean");
  auto made = h.e.worlds().create(t.value("keep", false));
  if (!made.ok()) return made.error();
  json out = account_json(made->account);
  out["world"] = made->world->name;
  return out;
}

// The caller's world goes, with all it holds: only who holds one of its keys removes it.
Outcome<json> delete_world(Here& h, const json& t) {
  if (auto bad = unknown_member(t, {})) return *bad;
  auto removed = h.e.worlds().remove(h.world);
  if (!removed.ok()) return removed.error();
  return json::object();
}

const std::map<std::string, Control>& controls() {
  static const std::map<std::string, Control> table = {{"accounts", accounts},
                                                       {"advance", advance},
                                                       {"checkpoint", checkpoint},
                                                       {"checkpoints", checkpoints},
                                                       {"configure", configure},
                                                       {"create_account", create_account},
                                                       {"create_world", create_world},
                                                       {"delete_account", delete_account},
                                                       {"delete_world", delete_world},
                                                       {"fault", fault},
                                                       {"requests", requests},
                                                       {"reset", reset},
                                                       {"restore", restore},
                                                       {"seed", seed},
                                                       {"state", state},
                                                       {"worlds", worlds}};
  return table;
}

// Old names of operations, kept for one release (docs/emulator.md): each runs the
// operation it names; the list of known operations leaves them out.
const std::map<std::string, std::string>& old_names() {
  static const std::map<std::string, std::string> table = {{"snapshot", "checkpoint"}, {"snapshots", "checkpoints"}};
  return table;
}

}  // namespace

json discovery(const Emulator& emulator) {
  const EmulatorOptions& o = emulator.options();
  json apis = json::object();
  for (const auto& [api, url] : emulator.endpoints()) apis[api] = std::stoi(url.substr(url.rfind(':') + 1));
  bool built_in =
      o.credentials.access_key_id == kEmulatorAccessKey && o.credentials.secret_access_key == kEmulatorSecretKey;
  json answer = {{"server", "cloudlua serve"},
                 {"apis", apis},
                 {"region", o.region},
                 {"dialect", o.dialect},
                 {"credentials", built_in ? "built-in" : "own"}};
  if (built_in) answer["access_key_id"] = kEmulatorAccessKey, answer["secret_access_key"] = kEmulatorSecretKey;
  return answer;
}

Outcome<json> run_control(Emulator& emulator, const std::string& operation, const json& args) {
  std::optional<Caller> main = emulator.worlds().caller(emulator.options().credentials.access_key_id);
  return run_control(emulator, *main, operation, args);
}

Outcome<json> run_control(Emulator& emulator, const Caller& caller, const std::string& operation, const json& args) {
  auto old = old_names().find(operation);
  auto it = controls().find(old == old_names().end() ? operation : old->second);
  if (it == controls().end()) {
    std::string known;
    std::vector<std::string> names;
    for (const auto& [name, fn] : controls()) known += (known.empty() ? "" : ", ") + name, names.push_back(name);
    return make_error(ErrorKind::validation, "UnknownControl",
                      unknown_name("control operation", operation, names, "known: " + known));
  }
  if (!args.is_object()) return invalid("the arguments must be a JSON object");
  Here here{emulator, caller, *caller.world};
  return it->second(here, args);
}

}  // namespace cloud
