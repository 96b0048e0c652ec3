// The cluster API's resources: snapshots and the clusters restored from them. Records
// are JSON documents shaped as the spec's result samples, so an answer is a copy of
// the record. A restore shows the cluster, its pools and nodes PROVISIONING (empty IP
// addresses) and the snapshot RESTORING; after `cluster_provision` seconds all are
// RUNNING with addresses and the snapshot AVAILABLE again. When that happens is kept
// in a side map, never in the records. The snapshot is found again by its nrn, which
// survives a rename by UpdateSnapshot meanwhile.
#include <optional>
#include <string>

#include "emulator/service.h"

namespace cloud {

namespace {

class ClusterService : public Service {
 public:
  explicit ClusterService(PlatformContext& context) : Service("cluster", context) {}

  void load_fixtures() override {
    for (const char* name : {"snap-1", "snap-2"}) add_snapshot({{"name", name}});
    snapshots_["snap-1"]["description"] = "nightly";
  }

  // seed{ snapshots = { { name = "snap-1", status = "CREATING", cluster = { ... } }, ... },
  // clusters = { { name = "c1", status = "ERROR" } } }: fields left out get plausible
  // values (a cluster: RUNNING, as restored from the default snapshot); a seeded status
  // stays as given.
  void seed(const json& fixtures) override {
    for (const json& s : fixtures.value("snapshots", json::array())) add_snapshot(s);
    for (const json& c : fixtures.value("clusters", json::array())) add_cluster(c);
  }

  void settle() override {
    for (auto it = provisioning_.begin(); it != provisioning_.end();) {
      if (!ctx_.clock.reached(it->second.due)) {
        ++it;
        continue;
      }
      finish_restore(it->first, it->second.snapshot_nrn);
      it = provisioning_.erase(it);
    }
  }

  json state() const override {
    json snapshots = json::array(), clusters = json::array();
    for (const auto& [name, s] : snapshots_) snapshots.push_back(s);
    for (const auto& [name, c] : clusters_) clusters.push_back(c);
    return {{"snapshots", snapshots}, {"clusters", clusters}};
  }

  void reset() override {
    snapshots_.clear();
    clusters_.clear();
    provisioning_.clear();
    next_node_ = 0;
  }

  json record() const override {
    json provisioning = json::object();
    for (const auto& [name, p] : provisioning_) provisioning[name] = {{"due", p.due}, {"snapshot_nrn", p.snapshot_nrn}};
    return {
        {"snapshots", snapshots_}, {"clusters", clusters_}, {"provisioning", provisioning}, {"next_node", next_node_}};
  }

  void restore_record(const json& dumped) override {
    snapshots_ = dumped.at("snapshots").get<std::map<std::string, json>>();
    clusters_ = dumped.at("clusters").get<std::map<std::string, json>>();
    provisioning_.clear();
    for (const auto& [name, p] : dumped.at("provisioning").items())
      provisioning_[name] = {p.at("due").get<double>(), p.at("snapshot_nrn").get<std::string>()};
    next_node_ = dumped.at("next_node").get<unsigned>();
  }

  // The handler table: one row per operation of the API (checked against the model).
  Handlers handlers() override {
    return {{"GetCluster", handler(this, &ClusterService::get_cluster)},
            {"GetSnapshot", handler(this, &ClusterService::get_snapshot)},
            {"RestoreClusterFromSnapshot", handler(this, &ClusterService::restore_cluster)},
            {"UpdateSnapshot", handler(this, &ClusterService::update_snapshot)}};
  }

 private:
  json default_snapshot(const std::string& name) {
    return {
        {"name", name},
        {"cluster",
         {{"name", "prod-cluster"},
          {"kubernetesVersion", "1.29.4"},
          {"nodePools", json::array({{{"name", "pool-1"}, {"instanceType", "e-large"}, {"nodeCount", 3}}})}}},
        {"expirationTime", ctx_.clock.iso8601(30 * 24 * 3600)},
        {"description", ""},
        {"resourceVersion", "1"},
        {"createTime", ctx_.clock.iso8601()},
        {"status", "AVAILABLE"},
        {"nrn", ctx_.nrn("cluster", "snapshot")},
        {"tags", json::array()},
    };
  }

  void add_snapshot(const json& given) {
    std::string name = given.value("name", ctx_.next_id("snap-"));
    json s = default_snapshot(name);
    s.merge_patch(given);
    snapshots_[name] = s;
  }

  // A cluster from a fixture: one restored from the default snapshot and running.
  void add_cluster(const json& given) {
    std::string name = given.value("name", ctx_.next_id("cluster-"));
    json c = provisioning_cluster({{"name", name}}, default_snapshot("")["cluster"]);
    c["status"] = "RUNNING";
    for (json& pool : c["nodePools"]) start_pool(pool);
    c.merge_patch(given);
    clusters_[name] = c;
    provisioning_.erase(name);
  }

  // GetCluster: the cluster as it is now, { cluster = ... }; an unknown name is the
  // platform's Client.InvalidParameterNotFound.Cluster (the vendor's ClusterDeleted waiter).
  HandlerResult get_cluster(const Operation&, const json& input) {
    return read_record(clusters_, input["ClusterName"], "cluster", "Client.InvalidParameterNotFound.Cluster",
                       "cluster");
  }

  // GetSnapshot: the snapshot as it is now, { snapshot = ... }.
  HandlerResult get_snapshot(const Operation&, const json& input) {
    return read_record(snapshots_, input["SnapshotName"], "snapshot", "SnapshotNotFound", "snapshot");
  }

  // UpdateSnapshot: changes name, expiry, description and tags; the status stays as
  // it was (the spec's sample shows AVAILABLE before and after).
  HandlerResult update_snapshot(const Operation&, const json& input) {
    const std::string name = input["SnapshotName"].get<std::string>();
    auto it = snapshots_.find(name);
    if (it == snapshots_.end())
      return HandlerResult::failure(404, "SnapshotNotFound", "no snapshot named '" + name + "'");
    json changes = input.value("snapshot", json::object());
    std::string new_name = changes.value("name", name);
    if (new_name != name && snapshots_.count(new_name))
      return HandlerResult::failure(409, "SnapshotAlreadyExists", "a snapshot named '" + new_name + "' exists already");
    // Changed in place (copying the record, erasing it and inserting the copy cost
    // a tenth of the request), renamed by moving its node; the answer's copy is the one.
    json tags = changes.contains("tags") ? with_ids(changes["tags"]) : json();
    json& s = it->second;
    for (const char* field : {"name", "expirationTime", "description"})
      if (changes.contains(field) && !changes[field].is_null()) s[field] = changes[field];
    if (!tags.is_null()) s["tags"] = std::move(tags);
    if (new_name != name) {
      auto node = snapshots_.extract(it);
      node.key() = new_name;
      snapshots_.insert(std::move(node));
    }
    json answer = json::object();
    answer["snapshot"] = s;
    return HandlerResult::success(std::move(answer));
  }

  // Tags as the platform returns them: each with an id of its own.
  json with_ids(const json& tags) {
    json out = json::array();
    for (const json& t : tags)
      out.push_back({{"id", ctx_.next_id("tag-")}, {"key", t.value("key", "")}, {"value", t.value("value", "")}});
    return out;
  }

  // ---------------------------------------------------------------- restore

  // One node being provisioned: named after its pool, zones taken in turn.
  static json provisioning_node(const std::string& pool, int index, const json& locations) {
    return {{"name", pool + "-node-" + std::to_string(index + 1)},
            {"availabilityZone", locations[static_cast<size_t>(index) % locations.size()]},
            {"publicIpAddress", ""},
            {"privateIpAddress", ""},
            {"status", "PROVISIONING"}};
  }

  // A node pool of the snapshot's cluster, being provisioned again.
  json provisioning_pool(const json& source, const json& locations) {
    std::string name = source.value("name", "pool-1");
    int count = source.value("nodeCount", 1);
    json nodes = json::array();
    for (int i = 0; i < count; ++i) nodes.push_back(provisioning_node(name, i, locations));
    return {{"name", name},
            {"instanceType", source.value("instanceType", "e-large")},
            {"nodeCount", count},
            {"initialNodeCount", count},
            {"status", "PROVISIONING"},
            {"nodes", nodes},
            {"nrn", ctx_.nrn("cluster", "node-pool")},
            {"tags", json::array()}};
  }

  // The cluster record of a restore that has just begun: the snapshot's version and
  // pools, the request's settings (defaults as the model gives them).
  json provisioning_cluster(const json& request, const json& source) {
    json locations = request.value("locations", json::array());
    if (locations.empty()) locations = json::array({default_zone(ctx_.region)});
    json pools = json::array();
    int total = 0;
    for (const json& p : source.value("nodePools", json::array())) {
      pools.push_back(provisioning_pool(p, locations));
      total += pools.back()["nodeCount"].get<int>();
    }
    bool disabled = request.value("/addonsConfig/httpLoadBalancing/disabled"_json_pointer, false);
    std::string version = source.value("kubernetesVersion", "1.29.4");
    return {
        {"name", request["name"]},
        {"description", request.value("description", "")},
        {"kubernetesVersion", version},
        {"initialKubernetesVersion", version},
        {"addonsConfig", {{"httpLoadBalancing", {{"disabled", disabled}}}}},
        {"nodePools", pools},
        {"locations", locations},
        {"networkConfig",
         {{"networkId", request.value("/networkConfig/networkId"_json_pointer, std::string("net-COMMON_PRIVATE"))}}},
        {"firewallGroup", request.value("firewallGroup", "")},
        {"nodeCount", total},
        {"initialNodeCount", total},
        {"createTime", ctx_.clock.iso8601()},
        {"status", "PROVISIONING"},
        {"nrn", ctx_.nrn("cluster", "cluster")},
        {"tags", with_ids(request.value("tags", json::array()))}};
  }

  // Why the restore is refused, or nullopt: the snapshot unknown or busy, the name taken.
  std::optional<HandlerResult> restore_refusal(const std::string& snapshot, const json& request) {
    auto it = snapshots_.find(snapshot);
    if (it == snapshots_.end())
      return HandlerResult::failure(404, "SnapshotNotFound", "no snapshot named '" + snapshot + "'");
    std::string name = request["name"].get<std::string>();
    if (clusters_.count(name))
      return HandlerResult::failure(409, "ClusterAlreadyExists", "a cluster named '" + name + "' exists already");
    std::string status = it->second.value("status", "");
    if (status != "AVAILABLE")
      return HandlerResult::failure(409, "SnapshotNotAvailable",
                                    "snapshot '" + snapshot + "' is " + status + ", not AVAILABLE");
    return std::nullopt;
  }

  // RestoreClusterFromSnapshot: a new cluster PROVISIONING until `cluster_provision`
  // seconds have passed, the snapshot RESTORING meanwhile; answers 201 (the vendor's
  // cluster-service model, hatoba.smithy: the spec shows no status) { cluster = ... }.
  // The input is validated: the cluster and its name are there (the model requires them).
  HandlerResult restore_cluster(const Operation&, const json& input) {
    const std::string snapshot = input["SnapshotName"].get<std::string>();
    const json& request = input.at("cluster");
    if (std::optional<HandlerResult> refused = restore_refusal(snapshot, request)) return *refused;
    json& source = snapshots_[snapshot];
    json cluster = provisioning_cluster(request, source.value("cluster", json::object()));
    std::string name = cluster["name"].get<std::string>();
    clusters_[name] = cluster;
    source["status"] = "RESTORING";
    provisioning_[name] = {ctx_.clock.now() + ctx_.setting("cluster_provision"), source.value("nrn", "")};
    return HandlerResult::success({{"cluster", cluster}}, 201);
  }

  // Provisioning is over: everything RUNNING, nodes addressed, the snapshot free again.
  void finish_restore(const std::string& cluster, const std::string& snapshot_nrn) {
    auto c = clusters_.find(cluster);
    if (c != clusters_.end()) {
      c->second["status"] = "RUNNING";
      for (json& pool : c->second["nodePools"]) start_pool(pool);
    }
    for (auto& [name, s] : snapshots_)
      if (s.value("nrn", "") == snapshot_nrn && s["status"] == "RESTORING") s["status"] = "AVAILABLE";
  }

  void start_pool(json& pool) {
    pool["status"] = "RUNNING";
    for (json& node : pool["nodes"]) {
      unsigned n = next_node_++;
      node["status"] = "RUNNING";
      node["privateIpAddress"] = "10.0." + std::to_string(n / 250) + "." + std::to_string(n % 250 + 4);
      node["publicIpAddress"] = public_address(n);
    }
  }

  // Distinct public addresses from the documentation ranges (RFC 5737), in turn.
  static std::string public_address(unsigned n) {
    static const char* const ranges[] = {"203.0.113.", "198.51.100.", "192.0.2."};
    return ranges[(n / 250) % 3] + std::to_string(n % 250 + 4);
  }

  struct Provisioning {
    double due;                // platform time when the cluster is RUNNING
    std::string snapshot_nrn;  // the snapshot to set AVAILABLE again
  };

  std::map<std::string, json> snapshots_;             // by name
  std::map<std::string, json> clusters_;              // by name
  std::map<std::string, Provisioning> provisioning_;  // by cluster name
  unsigned next_node_ = 0;                            // addresses handed out so far
};

}  // namespace

std::unique_ptr<Service> make_cluster_service(PlatformContext& context) {
  return std::make_unique<ClusterService>(context);
}

}  // namespace cloud
