// The devops (code-host) API's resources: firewall groups with their rules, backups,
// and the servers restored from them. Records are JSON documents shaped as the spec's
// result samples, so an answer is a copy of the record; when a transition settles
// (group PROCESSING -> APPLIED, server RESTORING -> RUNNING) is kept in side maps,
// never in the records, so neither answers nor state() show bookkeeping.
// Decisions: new rules are AUTHORIZED at once and the group PROCESSING, as the spec's
// sample shows; a group seeded PROCESSING or with rules AUTHORIZING or REVOKING settles
// like one that took rules (after `firewall_settle` seconds: AUTHORIZING rules become
// AUTHORIZED, REVOKING ones are gone, the group APPLIED or FAILED), so rejections can be
// tested before and the settling after; diskSize defaults to 100 (the spec names no
// default; 100 is the smallest allowed size).
#include <utility>

#include "emulator/service.h"

namespace cloud {

// The spec's table (RestoreInstance): jp-east-1 east-11, jp-east-3 east-31, jp-west-1
// west-12, jp-west-2 jp-west-21; other regions get east-11. Shared by every service.
std::string default_zone(const std::string& region) {
  if (region == "jp-east-3") return "east-31";
  if (region == "jp-west-1") return "west-12";
  if (region == "jp-west-2") return "jp-west-21";
  return "east-11";
}

namespace {

// "2026-01-31 12:00:00 UTC": the code-host API's own time form (not ISO 8601).
std::string codehost_time(const Clock& clock) {
  std::string iso = clock.iso8601();  // 2026-01-31T12:00:00Z
  return iso.substr(0, 10) + " " + iso.substr(11, 8) + " UTC";
}

// Two rules are the same rule when protocol, port and source agree.
bool same_rule(const json& a, const json& b) {
  return a.value("protocol", "") == b.value("protocol", "") && a.value("cidrIp", "") == b.value("cidrIp", "") &&
         a.value("port", json()) == b.value("port", json());
}

class DevopsService : public Service {
 public:
  explicit DevopsService(PlatformContext& context) : Service("devops", context) {}

  // fw-1 (east-11, APPLIED, TCP 22 from 203.0.113.0/24) and one backup.
  void load_fixtures() override {
    add_group({{"firewallGroupName", "fw-1"},
               {"availabilityZone", "east-11"},
               {"state", "APPLIED"},
               {"rules", json::array({{{"protocol", "TCP"},
                                       {"port", 22},
                                       {"cidrIp", "203.0.113.0/24"},
                                       {"description", "ssh from the office"},
                                       {"state", "AUTHORIZED"}}})}});
    add_backup({{"backupId", "0123456789abcdef0123456789abcdef"}});
  }

  // seed{ firewall_groups = { {...} }, backups = { { backupId = } }, instances = { {
  // instanceId =, status = { code =, name = } } } }: fields left out get plausible
  // values (a server: RUNNING, restored from the default backup).
  void seed(const json& fixtures) override {
    for (const json& g : fixtures.value("firewall_groups", json::array())) add_group(g);
    for (const json& b : fixtures.value("backups", json::array())) add_backup(b);
    for (const json& i : fixtures.value("instances", json::array())) add_instance(i);
  }

  void settle() override {
    settle_due(group_due_, [this](const std::string& name) { finish_processing(groups_[name]); });
    settle_due(instance_due_, [this](const std::string& id) { start_instance(instances_[id]); });
  }

  json state() const override {
    return {{"firewall_groups", values(groups_)}, {"backups", values(backups_)}, {"instances", values(instances_)}};
  }

  void reset() override {
    groups_.clear();
    backups_.clear();
    instances_.clear();
    group_due_.clear();
    instance_due_.clear();
    next_ip_ = 0;
  }

  json record() const override {
    return {{"firewall_groups", groups_}, {"backups", backups_},           {"instances", instances_},
            {"group_due", group_due_},    {"instance_due", instance_due_}, {"next_ip", next_ip_}};
  }

  void restore_record(const json& dumped) override {
    groups_ = dumped.at("firewall_groups").get<std::map<std::string, json>>();
    backups_ = dumped.at("backups").get<std::map<std::string, json>>();
    instances_ = dumped.at("instances").get<std::map<std::string, json>>();
    group_due_ = dumped.at("group_due").get<std::map<std::string, double>>();
    instance_due_ = dumped.at("instance_due").get<std::map<std::string, double>>();
    next_ip_ = dumped.at("next_ip").get<unsigned>();
  }

  // The handler table: one row per operation of the API (checked against the model).
  Handlers handlers() override {
    return {{"GetFirewallGroup", handler(this, &DevopsService::get_firewall_group)},
            {"GetInstance", handler(this, &DevopsService::get_instance)},
            {"AuthorizeFirewallRules", handler(this, &DevopsService::authorize_firewall_rules)},
            {"RestoreInstance", handler(this, &DevopsService::restore_instance)}};
  }

 private:
  // Runs `apply` for every entry of `due` whose time has come, and forgets it.
  template <typename Apply>
  void settle_due(std::map<std::string, double>& due, Apply apply) {
    for (auto it = due.begin(); it != due.end();) {
      if (!ctx_.clock.reached(it->second)) {
        ++it;
        continue;
      }
      apply(it->first);
      it = due.erase(it);
    }
  }

  // The records of a map, in key order, as state() lists them.
  static json values(const std::map<std::string, json>& records) {
    json out = json::array();
    for (const auto& entry : records) out.push_back(entry.second);
    return out;
  }

  // ---------------------------------------------------------------- firewall groups

  // A rule as the platform keeps it: an id, and no port at all for ICMP.
  json make_rule(const json& given, const std::string& state) {
    json r = {{"id", ctx_.next_id("rule-")}, {"protocol", "TCP"}, {"port", 22},
              {"cidrIp", "0.0.0.0/0"},       {"description", ""}, {"state", state}};
    r.merge_patch(given);
    if (r["protocol"] == "ICMP") r.erase("port");
    return r;
  }

  // A group from a fixture; one seeded in motion settles as a group that took rules.
  void add_group(const json& given) {
    std::string name = given.value("firewallGroupName", ctx_.next_id("fw-"));
    json g = {{"region", ctx_.region},  {"availabilityZone", default_zone(ctx_.region)},
              {"description", ""},      {"firewallGroupName", name},
              {"rules", json::array()}, {"state", "APPLIED"}};
    for (const char* field : {"region", "availabilityZone", "description", "state"})
      if (given.contains(field)) g[field] = given[field];
    for (const json& r : given.value("rules", json::array())) g["rules"].push_back(make_rule(r, "AUTHORIZED"));
    groups_[name] = g;
    group_due_.erase(name);
    if (in_motion(g)) group_due_[name] = ctx_.clock.now() + ctx_.setting("firewall_settle");
  }

  // The group or one of its rules is between two settled states.
  static bool in_motion(const json& group) {
    if (group["state"] == "PROCESSING") return true;
    for (const json& r : group["rules"])
      if (r["state"] == "AUTHORIZING" || r["state"] == "REVOKING") return true;
    return false;
  }

  // PROCESSING is over: rules being added are AUTHORIZED, rules being deleted gone;
  // the group FAILED while a rule is in a failed state (spec), else APPLIED.
  static void finish_processing(json& group) {
    json settled = json::array();
    for (json r : group["rules"]) {
      if (r["state"] == "REVOKING") continue;
      if (r["state"] == "AUTHORIZING") r["state"] = "AUTHORIZED";
      settled.push_back(r);
    }
    group["rules"] = settled;
    group["state"] = "APPLIED";
    for (const json& r : group["rules"]) {
      std::string state = r.value("state", "");
      if (state == "AUTH_FAILED" || state == "REVOKE_FAILED") group["state"] = "FAILED";
    }
  }

  // Why the group refuses operations now, or "" (spec, Errors rule 2).
  static std::string busy_reason(const json& group) {
    if (group["state"] == "PROCESSING") return "the firewall group is PROCESSING";
    for (const json& r : group["rules"]) {
      std::string state = r.value("state", "");
      if (state == "AUTHORIZING" || state == "REVOKING") return "rule " + r.value("id", "?") + " is " + state;
    }
    return "";
  }

  // The first requested rule that is already in the group (or twice in the request).
  static const json* duplicate_of(const json& group, const json& rules) {
    for (size_t i = 0; i < rules.size(); ++i) {
      for (const json& existing : group["rules"])
        if (same_rule(existing, rules[i])) return &rules[i];
      for (size_t j = 0; j < i; ++j)
        if (same_rule(rules[j], rules[i])) return &rules[i];
    }
    return nullptr;
  }

  static std::string rule_text(const json& r) {
    std::string port = r.contains("port") ? " port " + r["port"].dump() : "";
    return r.value("protocol", "") + port + " from " + r.value("cidrIp", "");
  }

  // The platform's code for a group it does not know (seen in the vendor's public
  // Terraform provider).
  static constexpr const char* kNoSuchGroup = "Client.InvalidParameterNotFound.FirewallGroup";

  // GetFirewallGroup: the group as it is now, { firewallGroup = ... }.
  HandlerResult get_firewall_group(const Operation&, const json& input) {
    return read_record(groups_, input["FirewallGroupName"], "firewallGroup", kNoSuchGroup, "firewall group");
  }

  // AuthorizeFirewallRules: the new rules AUTHORIZED, the group PROCESSING until
  // `firewall_settle` seconds have passed; the answer is the whole group. The input
  // is validated: at least one rule, each with a protocol and a source (the model).
  HandlerResult authorize_firewall_rules(const Operation&, const json& input) {
    const std::string name = input["FirewallGroupName"].get<std::string>();
    auto it = groups_.find(name);
    if (it == groups_.end()) return read_record(groups_, name, "firewallGroup", kNoSuchGroup, "firewall group");  // 404
    json& group = it->second;
    const json& rules = input.at("rules");
    std::string busy = busy_reason(group);
    if (!busy.empty())
      return HandlerResult::failure(409, "FirewallGroupBusy",
                                    "firewall group '" + name + "' refuses operations: " + busy);
    if (const json* dup = duplicate_of(group, rules))
      return HandlerResult::failure(409, "DuplicateRule",
                                    "firewall group '" + name + "' already has the rule " + rule_text(*dup));
    for (const json& r : rules) group["rules"].push_back(make_rule(r, "AUTHORIZED"));
    group["state"] = "PROCESSING";
    group_due_[name] = ctx_.clock.now() + ctx_.setting("firewall_settle");
    return HandlerResult::success(group);
  }

  // ---------------------------------------------------------------- backups and servers

  // A backup from a fixture: what a restore copies (application version, alert address).
  void add_backup(const json& given) {
    std::string id = given.value("backupId", ctx_.next_id("00000000000000000000"));
    json b = {{"backupId", id},
              {"codehostVersion", "16.11.2"},
              {"to", "alerts@example.com"},
              {"createTime", codehost_time(ctx_.clock)}};
    b.merge_patch(given);
    backups_[id] = b;
  }

  // The server record of a restore that has just begun: RESTORING, no global IP yet.
  json restoring_instance(const json& input, const json& backup) {
    const std::string id = input["instanceId"].get<std::string>();
    const std::string host = id + ".codehost." + ctx_.region + ".example.com";
    json empty_buckets = {{"lfs", ""}, {"packages", ""}, {"containerRegistry", ""}};
    return {{"region", ctx_.region},
            {"availabilityZone", input.value("availabilityZone", default_zone(ctx_.region))},
            {"description", input.value("description", "")},
            {"instanceId", id},
            {"diskSize", input.value("diskSize", 100)},
            {"firewallGroupName", input.value("firewallGroupName", "")},
            {"parameterGroupName", input.value("parameterGroupName", "")},
            {"codehostUrl", "https://" + host},
            {"codehostVersion", backup.value("codehostVersion", "16.11.2")},
            {"upgradableCodehostVersions", json::array()},
            {"registryUrl", "https://registry." + host},
            {"instanceType", input.value("instanceType", "e-large")},
            {"publicIpAddress", ""},
            {"networkConfig", input.value("networkConfig", json::object())},
            {"objectStorageConfig",
             input.value("objectStorageConfig",
                         json{{"account", ""}, {"region", ""}, {"bucketUseObjects", empty_buckets}})},
            {"to", backup.value("to", "")},
            {"state", "RESTORING"},
            {"status", {{"code", 200}, {"name", "RESTORING"}}},
            {"createTime", codehost_time(ctx_.clock)}};
  }

  // RestoreInstance: the server RESTORING (status 200) until `instance_restore`
  // seconds have passed; the answer is { instance = ... }. The input is validated:
  // backupId and instanceId are there (the model requires them).
  HandlerResult restore_instance(const Operation&, const json& input) {
    const std::string backup_id = input["backupId"].get<std::string>();
    const std::string id = input["instanceId"].get<std::string>();
    auto backup = backups_.find(backup_id);
    if (backup == backups_.end())
      return HandlerResult::failure(404, "BackupNotFound", "no backup with id '" + backup_id + "'");
    if (instances_.count(id))
      return HandlerResult::failure(409, "InstanceAlreadyExists", "a server named '" + id + "' exists already");
    json instance = restoring_instance(input, backup->second);
    instances_[id] = instance;
    instance_due_[id] = ctx_.clock.now() + ctx_.setting("instance_restore");
    return HandlerResult::success({{"instance", instance}});
  }

  // A server from a fixture: restored from a default backup and running.
  void add_instance(const json& given) {
    std::string id = given.value("instanceId", ctx_.next_id("code-"));
    json instance = restoring_instance({{"instanceId", id}}, json::object());
    start_instance(instance);
    instance.merge_patch(given);
    instances_[id] = instance;
    instance_due_.erase(id);
  }

  // GetInstance: the server as it is now, { instance = ... }.
  HandlerResult get_instance(const Operation&, const json& input) {
    return read_record(instances_, input["InstanceId"], "instance", "Client.InvalidParameterNotFound.Instance",
                       "server");
  }

  // A restored server comes up: RUNNING (status 100) with a global IP address.
  void start_instance(json& instance) {
    instance["state"] = "RUNNING";
    instance["status"] = {{"code", 100}, {"name", "RUNNING"}};
    ++next_ip_;
    instance["publicIpAddress"] = "198.51.100." + std::to_string(next_ip_ % 254 + 1);
  }

  std::map<std::string, json> groups_;          // by firewallGroupName
  std::map<std::string, json> backups_;         // by backupId
  std::map<std::string, json> instances_;       // by instanceId
  std::map<std::string, double> group_due_;     // group -> when PROCESSING ends
  std::map<std::string, double> instance_due_;  // server -> when RESTORING ends
  unsigned next_ip_ = 0;
};

}  // namespace

std::unique_ptr<Service> make_devops_service(PlatformContext& context) {
  return std::make_unique<DevopsService>(context);
}

}  // namespace cloud
