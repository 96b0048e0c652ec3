// The catalog API's resources: service-mesh-enabled clusters of the container platform
// (meshplatform), keyed by resource group and cluster name. Records are JSON documents
// shaped as the spec's result sample, so an answer is a copy of the record; the
// resource group is the key, not a field (state() adds it to each listed record).
// An upgrade shows the cluster `configuring` and settles to `running` after
// `mesh_upgrade` seconds; when is kept in a side map, never in the record.
// GetMeshplatformCluster (cloudlua's own read operation: the vendor publishes no model
// of this API) answers the record as it is, which MeshClusterRunning polls.
// Decisions: a version left out of the request means GetMeshplatformServerConfig's
// defaultConfig.serviceMeshVersion, which this emulator fixes at kDefaultMeshVersion;
// only a cluster already `configuring` refuses an upgrade (the spec's move is from any).
#include <string>
#include <utility>

#include "emulator/service.h"

namespace cloud {

namespace {

const char* const kDefaultMeshVersion = "1.22.3";

using ClusterKey = std::pair<std::string, std::string>;  // resource group, cluster name

class CatalogService : public Service {
 public:
  explicit CatalogService(PlatformContext& context) : Service("catalog", context) {}

  // rg-1/mesh-1, running, mesh 1.21.0.
  void load_fixtures() override {
    add_cluster({{"resourceGroupName", "rg-1"}, {"name", "mesh-1"}, {"status", "running"}, {"version", "1.21.0"}});
  }

  // seed{ mesh_clusters = { { resourceGroupName =, name =, status =, version = } } }:
  // `version` is the mesh version; fields left out get plausible values.
  void seed(const json& fixtures) override {
    for (const json& c : fixtures.value("mesh_clusters", json::array())) add_cluster(c);
  }

  void settle() override {
    for (auto it = configuring_.begin(); it != configuring_.end();) {
      if (!ctx_.clock.reached(it->second)) {
        ++it;
        continue;
      }
      clusters_[it->first]["status"] = "running";
      it = configuring_.erase(it);
    }
  }

  json state() const override {
    json out = json::array();
    for (const auto& [key, c] : clusters_) {
      json listed = c;
      listed["resourceGroupName"] = key.first;
      out.push_back(listed);
    }
    return {{"mesh_clusters", out}};
  }

  void reset() override {
    clusters_.clear();
    configuring_.clear();
    next_ip_ = 0;
  }

  // Keyed by resource group, then cluster name (JSON keys are strings, not pairs).
  json record() const override {
    json clusters = json::object(), configuring = json::object();
    for (const auto& [key, c] : clusters_) clusters[key.first][key.second] = c;
    for (const auto& [key, due] : configuring_) configuring[key.first][key.second] = due;
    return {{"mesh_clusters", clusters}, {"configuring", configuring}, {"next_ip", next_ip_}};
  }

  void restore_record(const json& dumped) override {
    clusters_.clear();
    configuring_.clear();
    for (const auto& [group, named] : dumped.at("mesh_clusters").items())
      for (const auto& [name, c] : named.items()) clusters_[{group, name}] = c;
    for (const auto& [group, named] : dumped.at("configuring").items())
      for (const auto& [name, due] : named.items()) configuring_[{group, name}] = due.get<double>();
    next_ip_ = dumped.at("next_ip").get<unsigned>();
  }

  // The handler table: one row per operation of the API (checked against the model).
  Handlers handlers() override {
    return {{"GetMeshplatformCluster", handler(this, &CatalogService::get_cluster)},
            {"UpgradeMeshplatformServiceMeshVersion", handler(this, &CatalogService::upgrade_mesh)}};
  }

 private:
  // A private address of the platform's network, distinct per call.
  std::string next_address() {
    unsigned n = next_ip_++;
    return "10.100." + std::to_string(n / 250) + "." + std::to_string(n % 250 + 4);
  }

  // One server of a node group, with its network interface and its disk.
  json instance(const std::string& id, const json& group, const std::string& firewall) {
    json place = {{"region", group["region"]}, {"availabilityZone", group["availabilityZone"]}};
    json volume = place;
    volume.update({{"volumeId", id + "-vol"},
                   {"volumeUniqueId", ctx_.uuid()},
                   {"type", group["volumeType"]},
                   {"size", group["volumeSize"]}});
    json out = place;
    out.update(
        {{"instanceId", id},
         {"instanceUniqueId", ctx_.uuid()},
         {"instanceType", group["instanceType"]},
         {"securityGroupName", firewall},
         {"networkInterfaces", json::array({{{"networkId", "net-COMMON_PRIVATE"}, {"ipAddress", next_address()}}})},
         {"volumes", json::array({volume})}});
    return out;
  }

  // A node group (the control plane or a worker pool) with `count` servers.
  json node_group(const std::string& cluster, const std::string& name, const std::string& type, int count) {
    json g = {{"name", name},
              {"region", ctx_.region},
              {"availabilityZone", default_zone(ctx_.region)},
              {"instanceType", type},
              {"volumeType", "standard-flash-storage-a"},
              {"volumeSize", 100},
              {"nodeCount", count},
              {"instances", json::array()}};
    for (int i = 1; i <= count; ++i)
      g["instances"].push_back(instance(cluster + "-" + name + "-" + std::to_string(i), g, cluster + "-fw"));
    return g;
  }

  // The elastic load balancer in front of the control plane, listening on `vip`.
  json load_balancer(const std::string& cluster, const std::string& vip, const json& system) {
    json lb = {{"region", ctx_.region},
               {"availabilityZone", default_zone(ctx_.region)},
               {"id", ctx_.uuid()},
               {"name", cluster + "-cp-lb"},
               {"dnsName", vip}};
    lb["networkInterfaces"] = json::array({{{"networkId", "net-COMMON_PRIVATE"},
                                            {"ipAddress", vip},
                                            {"isVipNetwork", true},
                                            {"systemIpAddresses", system}}});
    return {
        {"type", "elastic-load-balancer"}, {"vip", vip}, {"systemIpAddresses", system}, {"elasticLoadBalancer", lb}};
  }

  // A whole cluster record: control plane of three, one worker pool of two.
  json make_cluster(const std::string& name, const std::string& status, const std::string& mesh_version) {
    std::string vip = next_address();
    json system = json::array({next_address(), next_address()});
    return {{"name", name},
            {"version", "1.29.4"},
            {"keyName", name + "-key"},
            {"initialAccountingType", "pay-per-use"},
            {"meshplatformServiceMeshConfig", {{"enabled", true}, {"version", mesh_version}}},
            {"cloudControllerManagerConfig", {{"useExternalCloudProvider", true}}},
            {"controlPlaneLoadBalancer", load_balancer(name, vip, system)},
            {"controlPlane", node_group(name, "control-plane", "h2-large16", 3)},
            {"nodePools", json::array({node_group(name, "worker-1", "h2-extra-large16", 2)})},
            {"status", status}};
  }

  void add_cluster(const json& given) {
    ClusterKey key{given.value("resourceGroupName", "rg-1"), given.value("name", ctx_.next_id("mesh-"))};
    json c = make_cluster(key.second, given.value("status", "running"), given.value("version", "1.21.0"));
    if (given.contains("enabled")) c["meshplatformServiceMeshConfig"]["enabled"] = given["enabled"];
    clusters_[key] = c;
    configuring_.erase(key);
  }

  // The cluster `input` names by resource group and name, or nullptr.
  json* find_cluster(const json& input, ClusterKey& key) {
    key = {input["ResourceGroupName"].get<std::string>(), input["ClusterName"].get<std::string>()};
    auto it = clusters_.find(key);
    return it == clusters_.end() ? nullptr : &it->second;
  }

  static HandlerResult not_found(const ClusterKey& key) {
    return HandlerResult::failure(404, "ClusterNotFound",
                                  "no cluster named '" + key.second + "' in resource group '" + key.first + "'");
  }

  // GetMeshplatformCluster: the cluster as it is now, not wrapped (as the upgrade answers).
  HandlerResult get_cluster(const Operation&, const json& input) {
    ClusterKey key;
    const json* c = find_cluster(input, key);
    return c ? HandlerResult::success(*c) : not_found(key);
  }

  // UpgradeMeshplatformServiceMeshVersion: the mesh enabled at the requested version,
  // the cluster `configuring` until `mesh_upgrade` seconds have passed; the answer is
  // the whole cluster, not wrapped.
  HandlerResult upgrade_mesh(const Operation&, const json& input) {
    ClusterKey key;
    json* found = find_cluster(input, key);
    if (!found) return not_found(key);
    json& c = *found;
    if (c["status"] == "configuring")
      return HandlerResult::failure(409, "ClusterBusy",
                                    "cluster '" + key.second + "' is configuring; wait until it is running");
    c["meshplatformServiceMeshConfig"] = {{"enabled", true}, {"version", input.value("version", kDefaultMeshVersion)}};
    c["status"] = "configuring";
    configuring_[key] = ctx_.clock.now() + ctx_.setting("mesh_upgrade");
    return HandlerResult::success(c);
  }

  std::map<ClusterKey, json> clusters_;
  std::map<ClusterKey, double> configuring_;  // cluster -> when configuring ends
  unsigned next_ip_ = 0;                      // private addresses handed out so far
};

}  // namespace

std::unique_ptr<Service> make_catalog_service(PlatformContext& context) {
  return std::make_unique<CatalogService>(context);
}

}  // namespace cloud
