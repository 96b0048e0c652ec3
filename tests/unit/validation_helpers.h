// Shared by the validation tests (model_test.cpp, limits_test.cpp): valid arguments
// for each operation, and checks that a changed copy of them passes or fails with a
// given problem at a given field path. Arguments are changed through JSON pointers
// (list indexes 0-based); field paths in problems are Lua's (1-based).
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/validate.h"

namespace validation_helpers {

using namespace cloud;

inline const Operation& op(const std::string& name) {
  const Operation* o = Model::builtin().find(name);
  INFO("operation " << name);
  REQUIRE(o != nullptr);
  return *o;
}

inline const Member& input_member(const std::string& op_name, const std::string& member) {
  const Member* m = op(op_name).input->find_member(member);
  INFO(op_name << "." << member);
  REQUIRE(m != nullptr);
  return *m;
}

inline std::string rep(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// The spec's instanceType values, as its RestoreInstance table lists them.
inline const std::vector<std::string> kSpecInstanceTypes = {
    "c-large",           "c-large8",          "e-large",           "e-large8",          "e-large16",
    "e-large24",         "e-large32",         "e-extra-large8",    "e-extra-large16",   "e-extra-large24",
    "e-extra-large32",   "e-extra-large48",   "e-double-large16",  "e-double-large24",  "e-double-large32",
    "e-double-large48",  "e-double-large64",  "e-double-large96",  "h2-large",          "h2-large8",
    "h2-large16",        "h2-large24",        "h2-large32",        "h2-extra-large8",   "h2-extra-large16",
    "h2-extra-large24",  "h2-extra-large32",  "h2-extra-large48",  "h2-double-large16", "h2-double-large24",
    "h2-double-large32", "h2-double-large48", "h2-double-large64", "h2-double-large96"};

// A copy of `args` with the value at JSON pointer `at` (list indexes 0-based) set.
inline json with(json args, const std::string& at, json value) {
  args[json::json_pointer(at)] = std::move(value);
  return args;
}

// A copy of `args` without the value at JSON pointer `at`.
inline json without(json args, const std::string& at) {
  json::json_pointer p(at);
  args[p.parent_pointer()].erase(p.back());
  return args;
}

// Arguments for a failure message; bytes that are not UTF-8 are shown replaced.
inline std::string show(const json& args) { return args.dump(-1, ' ', false, json::error_handler_t::replace); }

// Validation of `args` succeeds.
inline void passes(const std::string& name, const json& args) {
  Outcome<json> r = validate_input(op(name), args);
  INFO(name << " " << show(args) << "\n" << (r.ok() ? "" : r.error().describe()));
  CHECK(r.ok());
}

// Validation fails with exactly one problem, at `path`, whose text contains `text`.
inline void fails(const std::string& name, const json& args, const std::string& path, const std::string& text) {
  Outcome<json> r = validate_input(op(name), args);
  INFO(name << " " << show(args));
  REQUIRE_FALSE(r.ok());
  INFO(r.error().describe());
  REQUIRE(r.error().fields.size() == 1);
  CHECK(r.error().fields[0].path == path);
  CHECK_THAT(r.error().fields[0].problem, Catch::Contains(text));
}

// True when `e` reports a problem at `path` whose text contains `text`.
inline bool reports(const Error& e, const std::string& path, const std::string& text) {
  for (const FieldProblem& f : e.fields)
    if (f.path == path && f.problem.find(text) != std::string::npos) return true;
  return false;
}

// ---------------------------------------------------------------- valid base arguments

inline json complete_args() {
  return R"({ "Bucket": "bkt", "Object": "dir/file.bin", "uploadId": "u-1",
              "Part": [ { "ETag": "\"e1\"", "PartNumber": 1 }, { "ETag": "\"e2\"", "PartNumber": 2 } ] })"_json;
}

inline json upload_part_args() {
  return R"({ "Bucket": "bkt", "Object": "dir/file.bin", "partNumber": 1, "uploadId": "u-1", "body": "bytes" })"_json;
}

inline json rules_args() {
  return R"({ "FirewallGroupName": "fw-1", "rules": [
              { "protocol": "TCP", "port": 22, "cidrIp": "10.0.0.0/8", "description": "ssh" },
              { "protocol": "ICMP", "cidrIp": "192.168.1.1", "description": "ping" } ] })"_json;
}

inline json instance_args() {
  return R"({ "backupId": "0123456789abcdef0123456789abcdef", "instanceId": "codehost-1",
              "instanceType": "e-large", "firewallGroupName": "fw-1", "parameterGroupName": "pg-1",
              "diskSize": 100, "availabilityZone": "east-11", "description": "restored",
              "networkConfig": { "networkId": "net-1", "privateAddress": "192.168.0.10/24" },
              "objectStorageConfig": { "account": "acct01", "region": "jp-east-1",
                "bucketUseObjects": { "lfs": "lfs-bucket", "packages": "pkg-bucket", "containerRegistry": "cr-bucket" } } })"_json;
}

inline json restore_cluster_args() {
  return R"({ "SnapshotName": "snap-1", "cluster": { "name": "cluster-1", "description": "restored",
              "locations": ["east-11"], "addonsConfig": { "httpLoadBalancing": { "disabled": false } },
              "firewallGroup": "fw-1", "networkConfig": { "networkId": "net-COMMON_PRIVATE" },
              "tags": [ { "key": "env", "value": "qa" } ] } })"_json;
}

inline json update_snapshot_args() {
  return R"({ "SnapshotName": "snap-1", "snapshot": { "name": "snap-2", "expirationTime": "2026-12-31T23:59:59Z",
              "description": "nightly", "tags": [ { "key": "env", "value": "qa" } ] } })"_json;
}

inline json upgrade_args() {
  return R"({ "ResourceGroupName": "rg-1", "ClusterName": "mesh-1", "version": "1.20.1" })"_json;
}

inline const char* const kPlainNameRule = "lowercase letters, digits and hyphen, not starting or ending with a hyphen";

}  // namespace validation_helpers
