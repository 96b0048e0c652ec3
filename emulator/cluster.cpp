// The cluster API's resources: snapshots (and, with RestoreClusterFromSnapshot,
// clusters). Records are JSON documents shaped as the spec's result samples, so an
// answer is a copy of the record.
#include "emulator/service.h"

namespace cloud {

namespace {

class ClusterService : public Service {
 public:
  explicit ClusterService(PlatformContext& context) : ctx_(context) {}

  std::vector<std::string> operations() const override { return {"UpdateSnapshot"}; }

  HandlerResult handle(const std::string& operation, const json& input) override {
    if (operation == "UpdateSnapshot") return update_snapshot(input);
    return HandlerResult::failure(404, "UnknownOperation", operation);
  }

  void load_fixtures() override {
    for (const char* name : {"snap-1", "snap-2"}) add_snapshot({{"name", name}});
    snapshots_["snap-1"]["description"] = "nightly";
  }

  // seed{ snapshots = { { name = "snap-1", cluster = { ... } }, ... } }: fields left
  // out get plausible values.
  void seed(const json& fixtures) override {
    for (const json& s : fixtures.value("snapshots", json::array())) add_snapshot(s);
  }

  json state() const override {
    json snapshots = json::array();
    for (const auto& [name, s] : snapshots_) snapshots.push_back(s);
    return {{"snapshots", snapshots}};
  }

  void reset() override { snapshots_.clear(); }

 private:
  json default_snapshot(const std::string& name) {
    return {
        {"name", name},
        {"cluster", {{"name", "prod-cluster"},
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

  // UpdateSnapshot: changes name, expiry, description and tags; the status stays as
  // it was (the spec's sample shows AVAILABLE before and after).
  HandlerResult update_snapshot(const json& input) {
    const std::string name = input["SnapshotName"].get<std::string>();
    auto it = snapshots_.find(name);
    if (it == snapshots_.end())
      return HandlerResult::failure(404, "SnapshotNotFound", "no snapshot named '" + name + "'");
    json changes = input.value("snapshot", json::object());
    std::string new_name = changes.value("name", name);
    if (new_name != name && snapshots_.count(new_name))
      return HandlerResult::failure(409, "SnapshotAlreadyExists", "a snapshot named '" + new_name + "' exists already");
    json s = it->second;
    for (const char* field : {"name", "expirationTime", "description"})
      if (changes.contains(field) && !changes[field].is_null()) s[field] = changes[field];
    if (changes.contains("tags")) s["tags"] = with_ids(changes["tags"]);
    snapshots_.erase(it);
    snapshots_[new_name] = s;
    return HandlerResult::success({{"snapshot", s}});
  }

  // Tags as the platform returns them: each with an id of its own.
  json with_ids(const json& tags) {
    json out = json::array();
    for (const json& t : tags)
      out.push_back({{"id", ctx_.next_id("tag-")}, {"key", t.value("key", "")}, {"value", t.value("value", "")}});
    return out;
  }

  PlatformContext& ctx_;
  std::map<std::string, json> snapshots_;  // by name
};

}  // namespace

std::unique_ptr<Service> make_cluster_service(PlatformContext& context) {
  return std::make_unique<ClusterService>(context);
}

}  // namespace cloud
