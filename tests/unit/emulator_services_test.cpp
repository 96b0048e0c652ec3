// The emulator's devops, cluster and catalog services through the Platform, on virtual
// time only: each operation's first answer as the spec's table of observable moves
// says, each settling transition (unchanged one second before its duration, settled at
// it), each rejection with its status and code, seeded fixtures, defaults, and that
// every answer conforms to the model's output shape (value sets included) with every
// field of the spec's resource tables present and no bookkeeping leaking out.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/validate.h"
#include "emulator/service.h"

using namespace cloud;

namespace {

const char* const kBackup = "0123456789abcdef0123456789abcdef";

// A platform on virtual time with the documented fixture set.
std::unique_ptr<Platform> platform(const std::string& region = "jp-east-1") {
  auto p = std::make_unique<Platform>(region, Model::builtin());
  p->set_real_time(false);
  p->load_fixtures();
  return p;
}

const Operation& op(const std::string& name) {
  const Operation* o = Model::builtin().find(name);
  INFO("operation " << name);
  REQUIRE(o != nullptr);
  return *o;
}

// Every member of every structure in `v` present, except the paths in `may_lack`
// (lists written `rules[]`): the spec's tables list fields, the samples carry them all.
void missing_fields(const Shape& shape, const json& v, const std::string& path, const std::set<std::string>& may_lack,
                    std::vector<std::string>& out) {
  if (shape.type == ShapeType::list && v.is_array())
    for (const json& e : v) missing_fields(*shape.member, e, path + "[]", may_lack, out);
  if (shape.type != ShapeType::structure || !v.is_object()) return;
  for (const Member& m : shape.members) {
    std::string p = path.empty() ? m.name : path + "." + m.name;
    if (!v.contains(m.name)) {
      if (!may_lack.count(p)) out.push_back(p);
    } else {
      missing_fields(*m.shape, v[m.name], p, may_lack, out);
    }
  }
}

// The answer conforms to the model (no unknown field, value sets kept) and is complete.
void require_conforms(const std::string& name, const json& result, const std::set<std::string>& may_lack = {}) {
  std::vector<FieldProblem> problems;
  validate_value(*op(name).output, result, "", problems);
  for (const FieldProblem& f : problems) FAIL_CHECK(name << ": " << f.path << ": " << f.problem);
  std::vector<std::string> missing;
  missing_fields(*op(name).output, result, "", may_lack, missing);
  for (const std::string& m : missing) FAIL_CHECK(name << ": field missing: " << m);
}

// One call as the HTTP layer makes it: arguments validated and normalised first.
HandlerResult call(Platform& p, const std::string& name, const json& args) {
  auto valid = validate_input(op(name), args);
  INFO(name << " arguments: " << args.dump());
  REQUIRE(valid.ok());
  return p.handle(op(name), *valid);
}

// A successful call's answer, checked against the model.
json call_ok(Platform& p, const std::string& name, const json& args, const std::set<std::string>& may_lack = {}) {
  HandlerResult r = call(p, name, args);
  INFO(name << " refused: " << r.error.code << ": " << r.error.message);
  REQUIRE(r.ok);
  CHECK(r.status == (name == "RestoreClusterFromSnapshot" ? 201 : 200));  // 201: the vendor's model
  require_conforms(name, r.result, may_lack);
  return r.result;
}

void require_refused(const HandlerResult& r, int status, const std::string& code) {
  INFO("answer: " << r.result.dump() << " / " << r.error.code << ": " << r.error.message);
  REQUIRE_FALSE(r.ok);
  CHECK(r.error.status == status);
  CHECK(r.error.code == code);
  CHECK_FALSE(r.error.message.empty());
}

// The record named `value` under `field` in state()[list].
json find_in_state(Platform& p, const std::string& list, const std::string& field, const std::string& value) {
  json state = p.state();  // kept: a range-for over a member of a temporary dangles
  for (const json& r : state[list])
    if (r.value(field, "") == value) return r;
  FAIL("no " << field << " = " << value << " in state()." << list);
  return {};
}

json authorize_args(const std::string& group, json rules) {
  return {{"FirewallGroupName", group}, {"rules", std::move(rules)}};
}

json tcp(int port, const std::string& cidr, const std::string& description = "") {
  json r = {{"protocol", "TCP"}, {"port", port}, {"cidrIp", cidr}};
  if (!description.empty()) r["description"] = description;
  return r;
}

json icmp(const std::string& cidr) { return {{"protocol", "ICMP"}, {"cidrIp", cidr}}; }

const std::set<std::string> kIcmpMayLackPort = {"rules[].port"};

json restore_args(const std::string& id, json extra = json::object()) {
  json args = {{"backupId", kBackup}, {"instanceId", id}};
  args.update(extra);
  return args;
}

json restore_cluster_args(const std::string& snapshot, json cluster) {
  return {{"SnapshotName", snapshot}, {"cluster", std::move(cluster)}};
}

json upgrade_args(const std::string& group, const std::string& cluster, const std::string& version = "") {
  json args = {{"ResourceGroupName", group}, {"ClusterName", cluster}};
  if (!version.empty()) args["version"] = version;
  return args;
}

}  // namespace

// ---------------------------------------------------------------- AuthorizeFirewallRules

TEST_CASE("AuthorizeFirewallRules answers the whole group: new rules AUTHORIZED, group PROCESSING") {
  auto p = platform();
  json g =
      call_ok(*p, "AuthorizeFirewallRules",
              authorize_args("fw-1", {tcp(443, "198.51.100.0/24", "https"), icmp("192.0.2.10")}), kIcmpMayLackPort);
  CHECK(g["firewallGroupName"] == "fw-1");
  CHECK(g["region"] == "jp-east-1");
  CHECK(g["availabilityZone"] == "east-11");
  CHECK(g["state"] == "PROCESSING");
  REQUIRE(g["rules"].size() == 3);
  CHECK(g["rules"][0]["port"] == 22);
  CHECK(g["rules"][0]["state"] == "AUTHORIZED");
  const json& https = g["rules"][1];
  CHECK(https == json{{"id", https["id"]},
                      {"protocol", "TCP"},
                      {"port", 443},
                      {"cidrIp", "198.51.100.0/24"},
                      {"description", "https"},
                      {"state", "AUTHORIZED"}});
  const json& ping = g["rules"][2];
  CHECK_FALSE(ping.contains("port"));  // the ICMP rule carries no port field at all
  CHECK(ping["state"] == "AUTHORIZED");
  CHECK(ping["description"] == "");
  std::set<std::string> ids;
  for (const json& r : g["rules"]) ids.insert(r["id"].get<std::string>());
  CHECK(ids.size() == 3);
  CHECK(https["id"].get<std::string>().rfind("rule-", 0) == 0);
  CHECK(find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-1") == g);
}

TEST_CASE("A firewall group settles PROCESSING -> APPLIED after firewall_settle (default 10 s)") {
  auto p = platform();
  json g = call_ok(*p, "AuthorizeFirewallRules", authorize_args("fw-1", {tcp(443, "198.51.100.7")}));
  json before = p->state();
  p->advance(9);
  CHECK(p->state() == before);
  p->advance(1);
  json settled = find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-1");
  CHECK(settled["state"] == "APPLIED");
  g["state"] = "APPLIED";
  CHECK(settled == g);  // only the state moved
  call_ok(*p, "AuthorizeFirewallRules", authorize_args("fw-1", {icmp("10.0.0.0/8")}), kIcmpMayLackPort);
}

TEST_CASE("firewall_settle is a setting") {
  auto p = platform();
  p->set_setting("firewall_settle", 2);
  call_ok(*p, "AuthorizeFirewallRules", authorize_args("fw-1", {tcp(443, "198.51.100.7")}));
  p->advance(1.5);
  CHECK(find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-1")["state"] == "PROCESSING");
  p->advance(0.5);
  CHECK(find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-1")["state"] == "APPLIED");
}

TEST_CASE("AuthorizeFirewallRules is refused while the group is PROCESSING") {
  auto p = platform();
  call_ok(*p, "AuthorizeFirewallRules", authorize_args("fw-1", {tcp(443, "198.51.100.7")}));
  json before = p->state();
  HandlerResult r = call(*p, "AuthorizeFirewallRules", authorize_args("fw-1", {tcp(22, "198.51.100.8")}));
  require_refused(r, 409, "FirewallGroupBusy");
  CHECK(r.error.message.find("PROCESSING") != std::string::npos);
  CHECK(p->state() == before);  // nothing changed
}

TEST_CASE("AuthorizeFirewallRules is refused while a rule is AUTHORIZING or REVOKING") {
  auto p = platform();
  for (const char* state : {"AUTHORIZING", "REVOKING"}) {
    std::string name = std::string("fw-") + (state[0] == 'A' ? "adding" : "removing");
    p->seed({{"firewall_groups",
              {{{"firewallGroupName", name},
                {"rules", {{{"protocol", "TCP"}, {"port", 22}, {"cidrIp", "10.1.0.0/16"}, {"state", state}}}}}}}});
    HandlerResult r = call(*p, "AuthorizeFirewallRules", authorize_args(name, {tcp(443, "198.51.100.7")}));
    INFO(state);
    require_refused(r, 409, "FirewallGroupBusy");
    CHECK(r.error.message.find(state) != std::string::npos);
  }
}

TEST_CASE("Rules that failed do not block AuthorizeFirewallRules, and the group settles FAILED") {
  auto p = platform();
  p->seed({{"firewall_groups",
            {{{"firewallGroupName", "fw-failed"},
              {"state", "FAILED"},
              {"rules",
               {{{"protocol", "TCP"}, {"port", 22}, {"cidrIp", "10.1.0.0/16"}, {"state", "AUTH_FAILED"}},
                {{"protocol", "ICMP"}, {"cidrIp", "10.2.0.0/16"}, {"state", "REVOKE_FAILED"}}}}}}}});
  json g =
      call_ok(*p, "AuthorizeFirewallRules", authorize_args("fw-failed", {tcp(443, "10.3.0.0/16")}), kIcmpMayLackPort);
  CHECK(g["state"] == "PROCESSING");
  CHECK(g["rules"][0]["state"] == "AUTH_FAILED");
  CHECK(g["rules"][2]["state"] == "AUTHORIZED");
  p->advance(10);  // a rule in a failed state remains: the group settles FAILED (spec)
  CHECK(find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-failed")["state"] == "FAILED");
}

TEST_CASE("A seeded PROCESSING group refuses operations until it settles APPLIED") {
  auto p = platform();
  p->seed({{"firewall_groups", {{{"firewallGroupName", "fw-busy"}, {"state", "PROCESSING"}}}}});
  p->advance(9);
  require_refused(call(*p, "AuthorizeFirewallRules", authorize_args("fw-busy", {tcp(22, "10.0.0.1")})), 409,
                  "FirewallGroupBusy");
  p->advance(1);
  CHECK(find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-busy")["state"] == "APPLIED");
  call_ok(*p, "AuthorizeFirewallRules", authorize_args("fw-busy", {tcp(22, "10.0.0.1")}));
}

TEST_CASE("Seeded rules settle: AUTHORIZING -> AUTHORIZED, REVOKING -> gone") {
  auto p = platform();
  p->seed({{"firewall_groups",
            {{{"firewallGroupName", "fw-moving"},
              {"rules",
               {{{"protocol", "TCP"}, {"port", 22}, {"cidrIp", "10.1.0.0/16"}, {"state", "AUTHORIZING"}},
                {{"protocol", "TCP"}, {"port", 443}, {"cidrIp", "10.2.0.0/16"}, {"state", "REVOKING"}},
                {{"protocol", "ICMP"}, {"cidrIp", "10.3.0.0/16"}}}}}}}});
  json before = find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-moving");
  p->advance(9.5);
  CHECK(find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-moving") == before);
  p->advance(0.5);
  json g = find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-moving");
  CHECK(g["state"] == "APPLIED");
  REQUIRE(g["rules"].size() == 2);
  CHECK(g["rules"][0]["state"] == "AUTHORIZED");
  CHECK(g["rules"][0]["id"] == before["rules"][0]["id"]);
  CHECK(g["rules"][1]["protocol"] == "ICMP");
  CHECK(g["rules"][1]["state"] == "AUTHORIZED");
}

TEST_CASE("AuthorizeFirewallRules on an unknown group is 404 Client.InvalidParameterNotFound.FirewallGroup") {
  auto p = platform();
  require_refused(call(*p, "AuthorizeFirewallRules", authorize_args("fw-nope", {tcp(22, "10.0.0.1")})), 404,
                  "Client.InvalidParameterNotFound.FirewallGroup");
}

TEST_CASE("A rule identical to an existing one is 409 DuplicateRule") {
  auto p = platform();
  json before = p->state();
  require_refused(
      call(*p, "AuthorizeFirewallRules", authorize_args("fw-1", {tcp(443, "10.0.0.1"), tcp(22, "203.0.113.0/24")})),
      409, "DuplicateRule");
  require_refused(call(*p, "AuthorizeFirewallRules", authorize_args("fw-1", {icmp("10.0.0.1"), icmp("10.0.0.1")})), 409,
                  "DuplicateRule");
  CHECK(p->state() == before);  // nothing added, the group still APPLIED
  // the same source on another port, or by another protocol, is a different rule
  call_ok(*p, "AuthorizeFirewallRules", authorize_args("fw-1", {tcp(443, "203.0.113.0/24"), icmp("203.0.113.0/24")}),
          kIcmpMayLackPort);
}

TEST_CASE("Seeded firewall groups get plausible values for what is left out") {
  auto p = platform("jp-west-2");
  p->seed({{"firewall_groups",
            {{{"firewallGroupName", "fw-bare"}, {"rules", {{{"protocol", "ICMP"}, {"cidrIp", "10.0.0.0/8"}}}}}}}});
  json g = find_in_state(*p, "firewall_groups", "firewallGroupName", "fw-bare");
  CHECK(g["region"] == "jp-west-2");
  CHECK(g["availabilityZone"] == "jp-west-21");
  CHECK(g["state"] == "APPLIED");
  CHECK(g["description"] == "");
  CHECK(g["rules"][0]["state"] == "AUTHORIZED");
  CHECK_FALSE(g["rules"][0].contains("port"));
  CHECK(g["rules"][0]["id"].is_string());
  require_conforms("AuthorizeFirewallRules", g, kIcmpMayLackPort);
}

// ---------------------------------------------------------------- RestoreInstance

TEST_CASE("RestoreInstance answers { instance } RESTORING with status 200 and the spec's defaults") {
  auto p = platform();
  json r = call_ok(*p, "RestoreInstance", restore_args("code-1"),
                   {"instance.networkConfig.networkId", "instance.networkConfig.privateAddress"});
  REQUIRE(r.size() == 1);
  const json& i = r["instance"];
  CHECK(i["instanceId"] == "code-1");
  CHECK(i["state"] == "RESTORING");
  CHECK(i["status"] == json{{"code", 200}, {"name", "RESTORING"}});
  CHECK(i["publicIpAddress"] == "");
  CHECK(i["networkConfig"].is_object());
  CHECK(i["networkConfig"].empty());
  CHECK(i["upgradableCodehostVersions"] == json::array());
  CHECK(i["instanceType"] == "e-large");
  CHECK(i["diskSize"] == 100);
  CHECK(i["availabilityZone"] == "east-11");
  CHECK(i["region"] == "jp-east-1");
  CHECK(std::regex_match(i["createTime"].get<std::string>(), std::regex(R"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC)")));
  CHECK(i["codehostUrl"].get<std::string>().rfind("https://code-1.", 0) == 0);
  CHECK(i["registryUrl"].get<std::string>().rfind("https://", 0) == 0);
  CHECK(find_in_state(*p, "instances", "instanceId", "code-1") == i);
}

TEST_CASE("RestoreInstance keeps what the request gives") {
  auto p = platform();
  json given = {{"instanceType", "h2-large"},
                {"diskSize", 300},
                {"availabilityZone", "east-12"},
                {"description", "restored for QA"},
                {"firewallGroupName", "fw-1"},
                {"parameterGroupName", "pg-1"},
                {"networkConfig", {{"networkId", "net-lan-1"}, {"privateAddress", "192.168.0.10/24"}}},
                {"objectStorageConfig",
                 {{"account", "acct1"},
                  {"region", "jp-west-2"},
                  {"bucketUseObjects", {{"lfs", "lfs-b"}, {"packages", "pkg-b"}, {"containerRegistry", "reg-b"}}}}}};
  json i = call_ok(*p, "RestoreInstance", restore_args("code-2", given))["instance"];
  for (auto it = given.begin(); it != given.end(); ++it) {
    INFO(it.key());
    CHECK(i[it.key()] == it.value());
  }
}

TEST_CASE("RestoreInstance's zone defaults by region") {
  for (auto [region, zone] : std::vector<std::pair<std::string, std::string>>{
           {"jp-east-1", "east-11"}, {"jp-east-3", "east-31"}, {"jp-west-1", "west-12"}, {"jp-west-2", "jp-west-21"}}) {
    auto p = platform(region);
    json i = call_ok(*p, "RestoreInstance", restore_args("code-1"),
                     {"instance.networkConfig.networkId", "instance.networkConfig.privateAddress"})["instance"];
    INFO(region);
    CHECK(i["availabilityZone"] == zone);
    CHECK(i["region"] == region);
  }
}

TEST_CASE("A restored server becomes RUNNING (status 100) with a global IP after instance_restore (default 60 s)") {
  auto p = platform();
  json i = call_ok(*p, "RestoreInstance", restore_args("code-1"),
                   {"instance.networkConfig.networkId", "instance.networkConfig.privateAddress"})["instance"];
  p->advance(59);
  CHECK(find_in_state(*p, "instances", "instanceId", "code-1") == i);
  p->advance(1);
  json running = find_in_state(*p, "instances", "instanceId", "code-1");
  CHECK(running["state"] == "RUNNING");
  CHECK(running["status"] == json{{"code", 100}, {"name", "RUNNING"}});
  CHECK(std::regex_match(running["publicIpAddress"].get<std::string>(), std::regex(R"(\d+\.\d+\.\d+\.\d+)")));
  require_conforms("RestoreInstance", {{"instance", running}},
                   {"instance.networkConfig.networkId", "instance.networkConfig.privateAddress"});
}

TEST_CASE("instance_restore is a setting") {
  auto p = platform();
  p->set_setting("instance_restore", 5);
  call_ok(*p, "RestoreInstance", restore_args("code-1"),
          {"instance.networkConfig.networkId", "instance.networkConfig.privateAddress"});
  p->advance(5);
  CHECK(find_in_state(*p, "instances", "instanceId", "code-1")["state"] == "RUNNING");
}

TEST_CASE("RestoreInstance refusals: unknown backup 404, server name in use 409") {
  auto p = platform();
  json other = {{"backupId", "ffffffffffffffffffffffffffffffff"}, {"instanceId", "code-1"}};
  require_refused(call(*p, "RestoreInstance", other), 404, "BackupNotFound");
  call_ok(*p, "RestoreInstance", restore_args("code-1"),
          {"instance.networkConfig.networkId", "instance.networkConfig.privateAddress"});
  json before = p->state();
  require_refused(call(*p, "RestoreInstance", restore_args("code-1")), 409, "InstanceAlreadyExists");
  CHECK(p->state() == before);
}

TEST_CASE("Seeded backups can be restored") {
  auto p = platform();
  p->seed({{"backups", {{{"backupId", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}}}});
  json b = find_in_state(*p, "backups", "backupId", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  CHECK(b["backupId"] == "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  json i =
      call_ok(*p, "RestoreInstance", {{"backupId", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, {"instanceId", "from-seed"}},
              {"instance.networkConfig.networkId", "instance.networkConfig.privateAddress"})["instance"];
  CHECK(i["codehostVersion"] == b["codehostVersion"]);
}

// ---------------------------------------------------------------- RestoreClusterFromSnapshot

TEST_CASE("RestoreClusterFromSnapshot answers { cluster } PROVISIONING with empty node addresses") {
  auto p = platform();
  json r = call_ok(*p, "RestoreClusterFromSnapshot",
                   restore_cluster_args("snap-2", {{"name", "restored-1"},
                                                   {"description", "from snap-2"},
                                                   {"locations", {"east-11", "east-12"}},
                                                   {"firewallGroup", "fw-1"},
                                                   {"tags", {{{"key", "env"}, {"value", "qa"}}}}}));
  REQUIRE(r.size() == 1);
  const json& c = r["cluster"];
  CHECK(c["name"] == "restored-1");
  CHECK(c["status"] == "PROVISIONING");
  CHECK(c["kubernetesVersion"] == "1.29.4");
  CHECK(c["initialKubernetesVersion"] == "1.29.4");
  CHECK(c["addonsConfig"]["httpLoadBalancing"]["disabled"] == false);
  CHECK(c["networkConfig"]["networkId"] == "net-COMMON_PRIVATE");
  CHECK(c["firewallGroup"] == "fw-1");
  CHECK(c["locations"] == json{"east-11", "east-12"});
  CHECK(c["nodeCount"] == 3);
  CHECK(c["initialNodeCount"] == 3);
  CHECK(std::regex_match(c["nrn"].get<std::string>(),
                         std::regex("nrn:[^:]+:cluster:jp-east-1:[^:]+:cluster:[0-9a-f-]+")));
  REQUIRE(c["tags"].size() == 1);
  CHECK(c["tags"][0]["key"] == "env");
  CHECK(c["tags"][0]["id"].is_string());
  REQUIRE(c["nodePools"].size() == 1);
  const json& pool = c["nodePools"][0];
  CHECK(pool["name"] == "pool-1");
  CHECK(pool["instanceType"] == "e-large");
  CHECK(pool["status"] == "PROVISIONING");
  CHECK(pool["nodeCount"] == 3);
  CHECK(pool["initialNodeCount"] == 3);
  CHECK(pool["tags"] == json::array());
  CHECK(std::regex_match(pool["nrn"].get<std::string>(),
                         std::regex("nrn:[^:]+:cluster:jp-east-1:[^:]+:node-pool:[0-9a-f-]+")));
  REQUIRE(pool["nodes"].size() == 3);
  for (const json& n : pool["nodes"]) {
    CHECK(n["status"] == "PROVISIONING");
    CHECK(n["publicIpAddress"] == "");
    CHECK(n["privateIpAddress"] == "");
    CHECK(n["name"].get<std::string>().rfind("pool-1", 0) == 0);
  }
  CHECK(pool["nodes"][0]["availabilityZone"] == "east-11");
  CHECK(pool["nodes"][1]["availabilityZone"] == "east-12");
  CHECK(find_in_state(*p, "snapshots", "name", "snap-2")["status"] == "RESTORING");
  CHECK(find_in_state(*p, "clusters", "name", "restored-1") == c);
}

TEST_CASE("RestoreClusterFromSnapshot defaults: zone of the region, add-on enabled, shared network, no tags") {
  auto p = platform("jp-east-3");
  json c = call_ok(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-1", {{"name", "bare"}}))["cluster"];
  CHECK(c["locations"] == json{"east-31"});
  CHECK(c["addonsConfig"]["httpLoadBalancing"]["disabled"] == false);
  CHECK(c["networkConfig"]["networkId"] == "net-COMMON_PRIVATE");
  CHECK(c["tags"] == json::array());
  CHECK(c["description"] == "");
  json given = call_ok(*p, "RestoreClusterFromSnapshot",
                       restore_cluster_args("snap-2", {{"name", "given"},
                                                       {"addonsConfig", {{"httpLoadBalancing", {{"disabled", true}}}}},
                                                       {"networkConfig", {{"networkId", "net-lan-7"}}}}))["cluster"];
  CHECK(given["addonsConfig"]["httpLoadBalancing"]["disabled"] == true);
  CHECK(given["networkConfig"]["networkId"] == "net-lan-7");
}

TEST_CASE("A restored cluster becomes RUNNING with addresses after cluster_provision (default 120 s)") {
  auto p = platform();
  json c =
      call_ok(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-2", {{"name", "restored-1"}}))["cluster"];
  json before = p->state();
  p->advance(119);
  CHECK(p->state() == before);
  p->advance(1);
  json running = find_in_state(*p, "clusters", "name", "restored-1");
  CHECK(running["status"] == "RUNNING");
  std::set<std::string> addresses;
  for (const json& pool : running["nodePools"]) {
    CHECK(pool["status"] == "RUNNING");
    for (const json& n : pool["nodes"]) {
      CHECK(n["status"] == "RUNNING");
      std::string priv = n["privateIpAddress"], pub = n["publicIpAddress"];
      CHECK(std::regex_match(priv, std::regex(R"(10\.\d+\.\d+\.\d+)")));
      CHECK(std::regex_match(pub, std::regex(R"(203\.0\.113\.\d+)")));
      addresses.insert(priv);
      addresses.insert(pub);
    }
  }
  CHECK(addresses.size() == 6);  // three nodes, all addresses distinct
  CHECK(find_in_state(*p, "snapshots", "name", "snap-2")["status"] == "AVAILABLE");
  CHECK(running["nrn"] == c["nrn"]);
  require_conforms("RestoreClusterFromSnapshot", {{"cluster", running}});
}

TEST_CASE("cluster_provision is a setting") {
  auto p = platform();
  p->set_setting("cluster_provision", 1);
  call_ok(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-2", {{"name", "quick"}}));
  p->advance(1);
  CHECK(find_in_state(*p, "clusters", "name", "quick")["status"] == "RUNNING");
}

TEST_CASE("RestoreClusterFromSnapshot refusals") {
  auto p = platform();
  SECTION("unknown snapshot: 404 SnapshotNotFound") {
    require_refused(call(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-9", {{"name", "x"}})), 404,
                    "SnapshotNotFound");
  }
  SECTION("a cluster name in use: 409 ClusterAlreadyExists") {
    call_ok(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-1", {{"name", "taken"}}));
    require_refused(call(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-2", {{"name", "taken"}})), 409,
                    "ClusterAlreadyExists");
    CHECK(find_in_state(*p, "snapshots", "name", "snap-2")["status"] == "AVAILABLE");
  }
  SECTION("a snapshot RESTORING: 409 SnapshotNotAvailable") {
    call_ok(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-2", {{"name", "first"}}));
    require_refused(call(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-2", {{"name", "second"}})), 409,
                    "SnapshotNotAvailable");
  }
  SECTION("a seeded snapshot CREATING or FAILED: 409 SnapshotNotAvailable") {
    p->seed({{"snapshots",
              {{{"name", "snap-new"}, {"status", "CREATING"}}, {{"name", "snap-bad"}, {"status", "FAILED"}}}}});
    for (const char* s : {"snap-new", "snap-bad"})
      require_refused(call(*p, "RestoreClusterFromSnapshot", restore_cluster_args(s, {{"name", "x"}})), 409,
                      "SnapshotNotAvailable");
  }
}

TEST_CASE("A restore takes every node pool of the snapshot's cluster") {
  auto p = platform();
  p->seed({{"snapshots",
            {{{"name", "snap-big"},
              {"cluster",
               {{"name", "big"},
                {"kubernetesVersion", "1.28.9"},
                {"nodePools",
                 {{{"name", "web"}, {"instanceType", "e-large16"}, {"nodeCount", 2}},
                  {{"name", "db"}, {"instanceType", "e-large32"}, {"nodeCount", 1}}}}}}}}}});
  json c = call_ok(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-big", {{"name", "big-2"}}))["cluster"];
  CHECK(c["kubernetesVersion"] == "1.28.9");
  CHECK(c["nodeCount"] == 3);
  REQUIRE(c["nodePools"].size() == 2);
  CHECK(c["nodePools"][0]["name"] == "web");
  CHECK(c["nodePools"][0]["instanceType"] == "e-large16");
  CHECK(c["nodePools"][0]["nodes"].size() == 2);
  CHECK(c["nodePools"][1]["nodes"][0]["name"].get<std::string>().rfind("db", 0) == 0);
  CHECK(c["nodePools"][0]["nrn"] != c["nodePools"][1]["nrn"]);
}

TEST_CASE("A snapshot renamed while restoring is AVAILABLE again afterwards") {
  auto p = platform();
  call_ok(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-2", {{"name", "restored-1"}}));
  json s =
      call_ok(*p, "UpdateSnapshot", {{"SnapshotName", "snap-2"}, {"snapshot", {{"name", "snap-renamed"}}}})["snapshot"];
  CHECK(s["status"] == "RESTORING");
  p->advance(120);
  CHECK(find_in_state(*p, "snapshots", "name", "snap-renamed")["status"] == "AVAILABLE");
}

// ---------------------------------------------------------------- UpgradeMeshplatformServiceMeshVersion

TEST_CASE("UpgradeMeshplatformServiceMeshVersion answers the whole cluster, configuring") {
  auto p = platform();
  json c = call_ok(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-1", "mesh-1", "1.22.1"));
  CHECK(c["name"] == "mesh-1");
  CHECK(c["status"] == "configuring");
  CHECK(c["meshplatformServiceMeshConfig"] == json{{"enabled", true}, {"version", "1.22.1"}});
  const json& lb = c["controlPlaneLoadBalancer"];
  CHECK(lb["type"] == "elastic-load-balancer");
  CHECK_FALSE(lb["systemIpAddresses"].empty());
  CHECK(lb["elasticLoadBalancer"]["networkInterfaces"][0]["isVipNetwork"] == true);
  std::vector<json> groups = {c["controlPlane"]};
  for (const json& g : c["nodePools"]) groups.push_back(g);
  REQUIRE(groups.size() >= 2);
  for (const json& g : groups) {
    CHECK(g["volumeSize"] == 100);
    CHECK(g["instances"].size() == g["nodeCount"].get<size_t>());
    for (const json& i : g["instances"]) {
      CHECK_FALSE(i["networkInterfaces"].empty());
      CHECK(i["volumes"][0]["size"] == 100);
    }
  }
  json listed = find_in_state(*p, "mesh_clusters", "name", "mesh-1");
  CHECK(listed["resourceGroupName"] == "rg-1");
  listed.erase("resourceGroupName");
  CHECK(listed == c);
}

TEST_CASE("The fixture mesh cluster runs mesh 1.21.0") {
  auto p = platform();
  json c = find_in_state(*p, "mesh_clusters", "name", "mesh-1");
  CHECK(c["resourceGroupName"] == "rg-1");
  CHECK(c["status"] == "running");
  CHECK(c["meshplatformServiceMeshConfig"]["version"] == "1.21.0");
  c.erase("resourceGroupName");
  require_conforms("UpgradeMeshplatformServiceMeshVersion", c);
}

TEST_CASE("A mesh upgrade without a version takes the default service-mesh version 1.22.3") {
  auto p = platform();
  json c = call_ok(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-1", "mesh-1"));
  CHECK(c["meshplatformServiceMeshConfig"]["version"] == "1.22.3");
}

TEST_CASE("A mesh cluster settles configuring -> running after mesh_upgrade (default 30 s)") {
  auto p = platform();
  json c = call_ok(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-1", "mesh-1", "1.22.1"));
  json before = p->state();
  p->advance(29);
  CHECK(p->state() == before);
  require_refused(call(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-1", "mesh-1", "1.22.2")), 409,
                  "ClusterBusy");
  p->advance(1);
  json running = find_in_state(*p, "mesh_clusters", "name", "mesh-1");
  CHECK(running["status"] == "running");
  CHECK(running["meshplatformServiceMeshConfig"]["version"] == "1.22.1");
  call_ok(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-1", "mesh-1", "1.22.2"));
}

TEST_CASE("mesh_upgrade is a setting") {
  auto p = platform();
  p->set_setting("mesh_upgrade", 3);
  call_ok(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-1", "mesh-1"));
  p->advance(3);
  CHECK(find_in_state(*p, "mesh_clusters", "name", "mesh-1")["status"] == "running");
}

TEST_CASE("UpgradeMeshplatformServiceMeshVersion refusals") {
  auto p = platform();
  require_refused(call(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-1", "mesh-9")), 404,
                  "ClusterNotFound");
  require_refused(call(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-9", "mesh-1")), 404,
                  "ClusterNotFound");
  p->seed({{"mesh_clusters", {{{"resourceGroupName", "rg-2"}, {"name", "busy"}, {"status", "configuring"}}}}});
  require_refused(call(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-2", "busy")), 409, "ClusterBusy");
}

TEST_CASE("Seeded mesh clusters are keyed by resource group and name") {
  auto p = platform();
  p->seed({{"mesh_clusters",
            {{{"resourceGroupName", "rg-2"}, {"name", "mesh-1"}, {"status", "warning"}, {"version", "1.20.4"}}}}});
  json c = call_ok(*p, "UpgradeMeshplatformServiceMeshVersion", upgrade_args("rg-2", "mesh-1", "1.21.0"));
  CHECK(c["meshplatformServiceMeshConfig"]["version"] == "1.21.0");
  int named = 0;
  json state = p->state();
  for (const json& m : state["mesh_clusters"]) named += m["name"] == "mesh-1";
  CHECK(named == 2);  // rg-1/mesh-1 untouched beside rg-2/mesh-1
}

// ---------------------------------------------------------------- the platform

TEST_CASE("reset empties every service, state lists every kind of record") {
  auto p = platform();
  json s = p->state();
  for (const char* list : {"firewall_groups", "backups", "instances", "snapshots", "clusters", "mesh_clusters"}) {
    INFO(list);
    REQUIRE(s.contains(list));
    CHECK(s[list].is_array());
  }
  CHECK(s["firewall_groups"].size() == 1);
  CHECK(s["backups"].size() == 1);
  p->reset();
  json after = p->state();
  for (auto it = after.begin(); it != after.end(); ++it) CHECK(it.value().empty());
}

// ---------------------------------------------------------------- read operations

TEST_CASE("GetFirewallGroup answers { firewallGroup } as it is now, PROCESSING then APPLIED") {
  auto p = platform();
  json g = call_ok(*p, "GetFirewallGroup", {{"FirewallGroupName", "fw-1"}})["firewallGroup"];
  CHECK(g["state"] == "APPLIED");
  CHECK(g["rules"].size() == 1);
  call_ok(*p, "AuthorizeFirewallRules", authorize_args("fw-1", {tcp(443, "10.0.0.1")}));
  CHECK(call_ok(*p, "GetFirewallGroup", {{"FirewallGroupName", "fw-1"}})["firewallGroup"]["state"] == "PROCESSING");
  p->advance(10);
  json settled = call_ok(*p, "GetFirewallGroup", {{"FirewallGroupName", "fw-1"}})["firewallGroup"];
  CHECK(settled["state"] == "APPLIED");
  CHECK(settled["rules"].size() == 2);
}

TEST_CASE("GetInstance answers { instance } RESTORING, then RUNNING with status 100") {
  auto p = platform();
  const std::set<std::string> no_lan = {"instance.networkConfig.networkId", "instance.networkConfig.privateAddress"};
  call_ok(*p, "RestoreInstance", restore_args("gitlab-1"), no_lan);
  json i = call_ok(*p, "GetInstance", {{"InstanceId", "gitlab-1"}}, no_lan)["instance"];
  CHECK(i["status"] == json({{"code", 200}, {"name", "RESTORING"}}));
  p->advance(60);
  i = call_ok(*p, "GetInstance", {{"InstanceId", "gitlab-1"}}, no_lan)["instance"];
  CHECK(i["status"] == json({{"code", 100}, {"name", "RUNNING"}}));
  CHECK(i["publicIpAddress"] != "");
}

TEST_CASE("GetCluster answers { cluster } PROVISIONING, then RUNNING") {
  auto p = platform();
  call_ok(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-1", {{"name", "c1"}}));
  CHECK(call_ok(*p, "GetCluster", {{"ClusterName", "c1"}})["cluster"]["status"] == "PROVISIONING");
  p->advance(120);
  CHECK(call_ok(*p, "GetCluster", {{"ClusterName", "c1"}})["cluster"]["status"] == "RUNNING");
}

TEST_CASE("GetSnapshot answers { snapshot }: RESTORING while a restore runs, AVAILABLE after") {
  auto p = platform();
  CHECK(call_ok(*p, "GetSnapshot", {{"SnapshotName", "snap-1"}})["snapshot"]["description"] == "nightly");
  call_ok(*p, "RestoreClusterFromSnapshot", restore_cluster_args("snap-1", {{"name", "c1"}}));
  CHECK(call_ok(*p, "GetSnapshot", {{"SnapshotName", "snap-1"}})["snapshot"]["status"] == "RESTORING");
  p->advance(120);
  CHECK(call_ok(*p, "GetSnapshot", {{"SnapshotName", "snap-1"}})["snapshot"]["status"] == "AVAILABLE");
}

TEST_CASE("The read operations refuse an unknown name with the platform's codes") {
  auto p = platform();
  require_refused(call(*p, "GetCluster", {{"ClusterName", "nope"}}), 404, "Client.InvalidParameterNotFound.Cluster");
  require_refused(call(*p, "GetInstance", {{"InstanceId", "nope"}}), 404, "Client.InvalidParameterNotFound.Instance");
  require_refused(call(*p, "GetFirewallGroup", {{"FirewallGroupName", "nope"}}), 404,
                  "Client.InvalidParameterNotFound.FirewallGroup");
  require_refused(call(*p, "GetSnapshot", {{"SnapshotName", "nope"}}), 404, "SnapshotNotFound");
}
