// The platform's whole state as one document and back (what `serve --state` writes
// and reads), its settings, its clock, and the save hook that runs before a change is
// answered, and the state file it goes to. All on virtual time except where the wall
// clock is the point.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdlib>

#include "core/crypto.h"
#include "core/validate.h"
#include "emulator/service.h"
#include "emulator/state_file.h"

using namespace cloud;

namespace {

const char* const kBackup = "0123456789abcdef0123456789abcdef";
const std::string kBinary("\0\x01\xfe\xff bytes \x80", 13);

std::unique_ptr<Platform> platform(bool fixtures = true) {
  auto p = std::make_unique<Platform>("jp-east-1");
  p->set_real_time(false);
  if (fixtures) p->load_fixtures();
  return p;
}

// One call as the HTTP layer makes it: arguments validated and normalised first.
HandlerResult call(Platform& p, const std::string& name, const json& args) {
  auto valid = validate_input(*Model::builtin().find(name), args);
  INFO(name << " " << args.dump(-1, ' ', false, json::error_handler_t::replace));
  REQUIRE(valid.ok());
  return p.handle(name, *valid);
}

json call_ok(Platform& p, const std::string& name, const json& args) {
  HandlerResult r = call(p, name, args);
  INFO(name << " refused: " << r.error.code << ": " << r.error.message);
  REQUIRE(r.ok);
  return r.result;
}

// Something in every service, with a transition pending in each that has them.
std::string busy_platform(Platform& p) {
  p.set_setting("min_part_size", 1);
  call_ok(p, "CreateBucket", {{"Bucket", "kept"}});
  call_ok(p, "PutObject", {{"Bucket", "kept"}, {"Object", "bin/ary"}, {"Body", kBinary}});
  std::string upload = call_ok(p, "CreateMultipartUpload", {{"Bucket", "kept"}, {"Object", "big"}})["UploadId"];
  call_ok(p, "UploadPart", {{"Bucket", "kept"}, {"Object", "big"}, {"uploadId", upload}, {"partNumber", 1}, {"body", kBinary}});
  call_ok(p, "AuthorizeFirewallRules",
          {{"FirewallGroupName", "fw-1"}, {"rules", {{{"protocol", "TCP"}, {"port", 443}, {"cidrIp", "10.0.0.1"}}}}});
  call_ok(p, "RestoreInstance", {{"backupId", kBackup}, {"instanceId", "code-1"}});
  call_ok(p, "RestoreClusterFromSnapshot", {{"SnapshotName", "snap-1"}, {"cluster", {{"name", "restored"}}}});
  call_ok(p, "UpgradeMeshplatformServiceMeshVersion", {{"ResourceGroupName", "rg-1"}, {"ClusterName", "mesh-1"}});
  return upload;
}

json find(const json& state, const std::string& list, const std::string& field, const std::string& value) {
  for (const json& r : state[list])
    if (r.value(field, "") == value) return r;
  FAIL("no " << field << " = " << value << " in " << list);
  return {};
}

}  // namespace

TEST_CASE("unbase64 reverses base64 and refuses what is not base64") {
  for (const std::string& bytes : {std::string(), std::string("f"), std::string("fo"), std::string("foo"), kBinary})
    CHECK(unbase64(base64(bytes)) == bytes);
  CHECK_FALSE(unbase64("abc").has_value());
  CHECK_FALSE(unbase64("ab!?").has_value());
}

TEST_CASE("Settings: defaults, changes, and unknown names refused with the known ones listed") {
  auto p = platform();
  auto unknown = p->set_setting("firewall_setle", 1);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == "UnknownSetting");
  for (const Setting& s : platform_settings()) CHECK(unknown.error().message.find(s.name) != std::string::npos);
  auto negative = p->set_setting("mesh_upgrade", -1);
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.error().message.find("negative") != std::string::npos);
  REQUIRE(p->set_setting("mesh_upgrade", 0).ok());
  call_ok(*p, "UpgradeMeshplatformServiceMeshVersion", {{"ResourceGroupName", "rg-1"}, {"ClusterName", "mesh-1"}});
  CHECK(find(p->state(), "mesh_clusters", "name", "mesh-1")["status"] == "running");  // settled at once
}

TEST_CASE("The clock keeps its time when real time is switched on or off") {
  Clock clock(true);
  clock.advance(100);
  double before = clock.now();
  clock.set_real(false);
  CHECK(clock.now() >= before);
  CHECK(clock.now() < before + 1);
  clock.set_real(true);
  CHECK(clock.now() >= before);
  CHECK(clock.advanced() == 100);
}

TEST_CASE("dump and restore carry every record, the bytes and the pending transitions") {
  auto p = platform();
  std::string upload = busy_platform(*p);
  json text = json::parse(p->dump().dump());  // through text, as the state file does

  auto q = platform(false);
  REQUIRE(q->restore(text).ok());
  CHECK(q->state() == p->state());
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "bin/ary"}})["Body"] == kBinary);

  // the upload goes on: its part's ETag still matches, the part size setting too
  json listed = {{{"PartNumber", 1}, {"ETag", "\"" + hex(md5(kBinary)) + "\""}}};
  call_ok(*q, "CompleteMultipartUpload", {{"Bucket", "kept"}, {"Object", "big"}, {"uploadId", upload}, {"Part", listed}});
  // ids go on from where they were: nothing handed out twice
  json fresh = call_ok(*q, "PutObject", {{"Bucket", "kept"}, {"Object", "new"}, {"Body", "x"}});
  json old = call_ok(*p, "HeadObject", {{"Bucket", "kept"}, {"Object", "bin/ary"}});
  CHECK(fresh["VersionId"] != old["VersionId"]);

  // the transitions settle when they would have: group at 10 s, mesh 30, server 60, cluster 120
  q->advance(10);
  json s = q->state();
  CHECK(find(s, "firewall_groups", "firewallGroupName", "fw-1")["state"] == "APPLIED");
  CHECK(find(s, "mesh_clusters", "name", "mesh-1")["status"] == "configuring");
  q->advance(110);
  s = q->state();
  CHECK(find(s, "mesh_clusters", "name", "mesh-1")["status"] == "running");
  CHECK(find(s, "instances", "instanceId", "code-1")["state"] == "RUNNING");
  CHECK(find(s, "clusters", "name", "restored")["status"] == "RUNNING");
  CHECK(find(s, "snapshots", "name", "snap-1")["status"] == "AVAILABLE");
}

TEST_CASE("In real time, what fell due while the platform was down has settled on restore") {
  auto p = std::make_unique<Platform>("jp-east-1");
  p->load_fixtures();
  call_ok(*p, "RestoreInstance", {{"backupId", kBackup}, {"instanceId", "code-1"}});
  json dumped = p->dump();
  auto restored = [&](double down) {
    json d = dumped;
    d["saved_at"] = d["saved_at"].get<double>() - down;
    auto q = std::make_unique<Platform>("jp-east-1");
    REQUIRE(q->restore(d).ok());
    return find(q->state(), "instances", "instanceId", "code-1")["state"];
  };
  CHECK(restored(30) == "RESTORING");
  CHECK(restored(61) == "RUNNING");
}

TEST_CASE("restore refuses what dump did not write, and changes nothing then") {
  auto p = platform();
  json before = p->state();
  json good = p->dump();
  json wrong_format = good, missing = good, bad_bytes = good, wrong_type = good;
  wrong_format["format"] = 99;
  missing["services"].erase("devops");
  bad_bytes["services"]["storage"]["buckets"]["demo-bucket"]["k"] = {
      {"bytes", "!!!!"}, {"etag", "\"x\""}, {"last_modified", "x"}, {"version_id", "v"}};
  wrong_type["services"]["cluster"]["snapshots"] = "snap-1";
  for (const json& d : {json("not a dump"), wrong_format, missing, bad_bytes, wrong_type}) {
    auto r = p->restore(d);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "BadStateFile");
    CHECK(p->state() == before);
  }
}

TEST_CASE("The save hook runs after each change, before it is answered, and only then") {
  auto p = platform();
  std::vector<json> saved;
  bool fail = false;
  p->on_change([&](const json& d) -> Outcome<bool> {
    if (fail) return make_error(ErrorKind::transport, "EIO", "disk full");
    saved.push_back(d);
    return true;
  });
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", "hello"}});
  REQUIRE(saved.size() == 1);
  auto q = platform(false);
  REQUIRE(q->restore(saved.back()).ok());
  CHECK(q->state() == p->state());  // the saved document already holds the change

  call_ok(*p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}});
  call_ok(*p, "HeadObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}});
  CHECK(call(*p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "none"}}).error.code == "NoSuchKey");
  CHECK(call(*p, "CreateBucket", {{"Bucket", "demo-bucket"}}).error.code == "BucketAlreadyOwnedByYou");
  CHECK(saved.size() == 1);  // reads and refusals change nothing

  fail = true;
  HandlerResult r = call(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k2"}, {"Body", "x"}});
  CHECK_FALSE(r.ok);
  CHECK(r.error.status == 500);
  CHECK(r.error.message.find("not acknowledged") != std::string::npos);
  CHECK(r.error.message.find("disk full") != std::string::npos);
}

TEST_CASE("The state file: none yet, written and read back, replaced whole, errors naming the file") {
  std::string dir = "/tmp/cloudlua-state-test-" + std::to_string(::getpid());
  REQUIRE(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()) == 0);
  std::string path = dir + "/state.json";

  auto none = read_state_file(path);
  REQUIRE(none.ok());
  CHECK(none->is_null());

  auto p = platform();
  REQUIRE(write_state_file(path, p->dump()).ok());
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", kBinary}});
  REQUIRE(write_state_file(path, p->dump()).ok());
  auto back = read_state_file(path);
  REQUIRE(back.ok());
  auto q = platform(false);
  REQUIRE(q->restore(*back).ok());
  CHECK(q->state() == p->state());
  CHECK(std::system(("test ! -e " + path + ".tmp").c_str()) == 0);  // no temporary left behind

  REQUIRE(std::system(("echo '{not json' > " + path).c_str()) == 0);
  auto garbled = read_state_file(path);
  REQUIRE_FALSE(garbled.ok());
  CHECK(garbled.error().code == "BadStateFile");
  CHECK(garbled.error().message.find(path) != std::string::npos);

  auto nowhere = write_state_file(dir + "/no/such/dir/state.json", p->dump());
  REQUIRE_FALSE(nowhere.ok());
  CHECK(nowhere.error().message.find("no/such/dir") != std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}
