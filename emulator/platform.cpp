// State and behaviour of the emulated platform. Records are kept as JSON documents
// shaped exactly as the spec's result samples, so answering is just copying them out.
#include "emulator/platform.h"

#include <cstdio>
#include <ctime>

namespace cloud {

const std::map<std::string, Platform::Handler> Platform::handlers_ = {
    {"UpdateSnapshot", &Platform::update_snapshot},
};

std::string iso8601_now(long long offset_seconds) {
  std::time_t t = std::time(nullptr) + static_cast<std::time_t>(offset_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Platform::Platform(std::string region) : region_(std::move(region)) {}

bool Platform::serves(const std::string& operation) const { return handlers_.count(operation) > 0; }

HandlerResult Platform::handle(const std::string& operation, const json& input) {
  auto it = handlers_.find(operation);
  if (it == handlers_.end()) return HandlerResult::failure(404, "UnknownOperation", operation);
  std::lock_guard<std::mutex> lock(mutex_);
  return (this->*(it->second))(input);
}

std::string Platform::new_id(const std::string& prefix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%012llx", prefix.c_str(), ++counter_);
  return buf;
}

// nrn:<provider>:<service>:<region>:<account>:<kind>:<uuid>, as the spec shapes it.
std::string Platform::nrn(const std::string& kind) {
  char uuid[40];
  unsigned long long n = ++counter_;
  std::snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012llx", n);
  return "nrn:ext:cluster:" + region_ + ":000000000000:" + kind + ":" + uuid;
}

json Platform::make_snapshot(const std::string& name, const std::string& cluster_name) const {
  return {
      {"name", name},
      {"cluster", {{"name", cluster_name},
                   {"kubernetesVersion", "1.29.4"},
                   {"nodePools", json::array({{{"name", "pool-1"}, {"instanceType", "e-large"}, {"nodeCount", 3}}})}}},
      {"expirationTime", iso8601_now(30 * 24 * 3600)},
      {"description", ""},
      {"resourceVersion", "1"},
      {"createTime", iso8601_now()},
      {"status", "AVAILABLE"},
      {"nrn", ""},
      {"tags", json::array()},
  };
}

void Platform::load_fixtures() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const char* name : {"snap-1", "snap-2"}) {
    json s = make_snapshot(name, "prod-cluster");
    s["nrn"] = nrn("snapshot");
    snapshots_[name] = s;
  }
  snapshots_["snap-1"]["description"] = "nightly";
}

json Platform::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  json snapshots = json::array();
  for (const auto& [name, s] : snapshots_) snapshots.push_back(s);
  return {{"snapshots", snapshots}};
}

void Platform::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  snapshots_.clear();
  counter_ = 0;
}

// UpdateSnapshot: changes name, expiry, description and tags; the status stays
// as it was (the spec's sample shows AVAILABLE before and after).
HandlerResult Platform::update_snapshot(const json& input) {
  const std::string name = input["SnapshotName"].get<std::string>();
  auto it = snapshots_.find(name);
  if (it == snapshots_.end()) return HandlerResult::failure(404, "SnapshotNotFound", "no snapshot named '" + name + "'");
  json changes = input.value("snapshot", json::object());
  std::string new_name = changes.value("name", name);
  if (new_name != name && snapshots_.count(new_name))
    return HandlerResult::failure(409, "SnapshotAlreadyExists", "a snapshot named '" + new_name + "' exists already");
  json s = it->second;
  for (const char* field : {"name", "expirationTime", "description"})
    if (changes.contains(field) && !changes[field].is_null()) s[field] = changes[field];
  if (changes.contains("tags")) {
    s["tags"] = json::array();
    for (const json& t : changes["tags"])
      s["tags"].push_back({{"id", new_id("tag-")}, {"key", t.value("key", "")}, {"value", t.value("value", "")}});
  }
  snapshots_.erase(it);
  snapshots_[new_name] = s;
  return HandlerResult::success({{"snapshot", s}});
}

}  // namespace cloud
