// The platform's state as records and back (what `serve --state` and snapshots save
// and read), its settings, its clock, the save that runs before a change is answered,
// the state database it goes to, and the JSON state file of earlier versions imported.
// All on virtual time except where the wall clock is the point.
#include <catch2/catch.hpp>
#include <dirent.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <fstream>
#include <set>
#include <vector>

#include "core/base/crypto.h"
#include "core/model/validate.h"
#include "emulator/held_records.h"
#include "emulator/service.h"
#include "emulator/state_db.h"
#include "emulator/state_import.h"

using namespace cloud;

namespace {

const char* const kBackup = "0123456789abcdef0123456789abcdef";
const std::string kBinary("\0\x01\xfe\xff bytes \x80", 13);

std::unique_ptr<Platform> platform(bool fixtures = true) {
  auto p = std::make_unique<Platform>("jp-east-1", Model::builtin());
  p->set_real_time(false);
  if (fixtures) p->load_fixtures();
  return p;
}

// One call as the HTTP layer makes it: arguments validated and normalised first.
HandlerResult call(Platform& p, const std::string& name, const json& args) {
  const Operation& op = *Model::builtin().find(name);
  auto valid = validate_input(op, args);
  INFO(name << " " << args.dump(-1, ' ', false, json::error_handler_t::replace));
  REQUIRE(valid.ok());
  return p.handle(op, *valid);
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
  call_ok(p, "UploadPart",
          {{"Bucket", "kept"}, {"Object", "big"}, {"uploadId", upload}, {"partNumber", 1}, {"body", kBinary}});
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
  // Padding only at the end, at most two; no white space; the standard alphabet only.
  for (const char* bad : {"ab=c", "a===", "====", "ab c", " abc", "abc\n", "ab-_"})
    CHECK_FALSE(unbase64(bad).has_value());
  CHECK_FALSE(unbase64(std::string("Zm9v\0AAA", 8)).has_value());
  CHECK(unbase64("Zm8=") == std::string("fo"));
  CHECK(unbase64("Zg==") == std::string("f"));
  CHECK(unbase64("+/+/") == std::string("\xfb\xff\xbf", 3));
}

TEST_CASE("Settings: defaults, changes, and unknown names refused with the nearest or the known ones listed") {
  auto p = platform();
  auto typo = p->set_setting("firewall_setle", 1);
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message == "no setting named 'firewall_setle'; did you mean 'firewall_settle'?");
  auto unknown = p->set_setting("zzzzzz", 1);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == "UnknownSetting");
  for (const PlatformSetting& s : platform_settings()) CHECK(unknown.error().message.find(s.name) != std::string::npos);
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
  double stopped = clock.now();
  CHECK(stopped >= before);
  CHECK(clock.now() == stopped);  // virtual: it moves only when advanced
  clock.set_real(true);
  CHECK(clock.now() >= before);
  CHECK(clock.advanced() == 100);
}

TEST_CASE("What falls due after 30 s has come after advances adding up to 30 s") {
  Clock clock(false);
  clock.resume(0.1234567891, 0);  // a start with fractions of a second, as real time leaves it
  double due = clock.now() + 30;
  for (double step : {9.0, 1.0, 0.1, 19.9}) {
    CHECK_FALSE(clock.reached(due));
    clock.advance(step);
  }
  CHECK(clock.reached(due));
}

TEST_CASE("The records carry every resource, the bytes and the pending transitions") {
  auto p = platform();
  std::string upload = busy_platform(*p);
  HeldRecords held;
  REQUIRE(p->save_records_to(held).ok());

  auto q = platform(false);
  REQUIRE(q->restore_records_from(held).ok());
  CHECK(q->state() == p->state());
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "bin/ary"}})["Body"] == kBinary);

  // the upload goes on: its part's ETag still matches, the part size setting too
  json listed = {{{"PartNumber", 1}, {"ETag", "\"" + hex(md5(kBinary)) + "\""}}};
  json parts_args = {{"Bucket", "kept"}, {"Object", "big"}, {"uploadId", upload}};
  CHECK(call_ok(*q, "ListParts", parts_args) == call_ok(*p, "ListParts", parts_args));  // LastModified kept
  call_ok(*q, "CompleteMultipartUpload",
          {{"Bucket", "kept"}, {"Object", "big"}, {"uploadId", upload}, {"Part", listed}});
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
  auto p = std::make_unique<Platform>("jp-east-1", Model::builtin());
  p->load_fixtures();
  call_ok(*p, "RestoreInstance", {{"backupId", kBackup}, {"instanceId", "code-1"}});
  HeldRecords held;
  REQUIRE(p->save_records_to(held).ok());
  auto restored = [&](double down) {
    HeldRecords h = held;
    h.header()["saved_at"] = h.header()["saved_at"].get<double>() - down;
    auto q = std::make_unique<Platform>("jp-east-1", Model::builtin());
    REQUIRE(q->restore_records_from(h).ok());
    return find(q->state(), "instances", "instanceId", "code-1")["state"];
  };
  CHECK(restored(30) == "RESTORING");
  CHECK(restored(61) == "RUNNING");
}

TEST_CASE("restore refuses records the platform did not save, and changes nothing then") {
  auto p = platform();
  json before = p->state();
  HeldRecords held;
  REQUIRE(p->save_records_to(held).ok());
  RecordStore::Saved good = **held.load();
  RecordStore::Saved not_records = good, wrong_format = good, missing = good, bad_bytes = good, wrong_type = good;
  RecordStore::Saved far_clock = good, no_clock = good;
  not_records.header = "not records";
  far_clock.header["clock"]["advanced"] = 1e308;  // as an unbounded advance once left it: year 0000 on every date
  no_clock.header["clock"]["now"] = -1e308;
  wrong_format.header["format"] = 99;
  missing.records.erase("devops");
  bad_bytes.objects["storage"].push_back({"demo-bucket", "k", "\"x\"", "x", "v-none", "{}", "", -1, "{}"});
  wrong_type.records["cluster"]["service"][""]["snapshots"] = "snap-1";
  for (const RecordStore::Saved& saved :
       {not_records, wrong_format, missing, bad_bytes, wrong_type, far_clock, no_clock}) {
    auto r = p->restore_records(saved, held.bytes());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "BadStateFile");
    CHECK(p->state() == before);
  }
}

// What is written to stderr while it lives (fd 2 sent to a file, then put back).
struct CapturedStderr {
  std::string path = "/tmp/cloudlua-state-test-stderr-" + std::to_string(::getpid());
  int saved = -1;
  CapturedStderr() {
    std::fflush(stderr);
    saved = ::dup(2);
    FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f);
    ::dup2(::fileno(f), 2);
    std::fclose(f);
  }
  ~CapturedStderr() { release(), ::unlink(path.c_str()); }
  void release() {
    if (saved < 0) return;
    std::fflush(stderr);
    ::dup2(saved, 2), ::close(saved), saved = -1;
  }
  std::string text() {
    release();
    std::string out;
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      char buf[4096];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
      std::fclose(f);
    }
    return out;
  }
};

// Records held in memory, the saves counted, with a switch to fail.
struct MemoryStore : HeldRecords {
  size_t saves = 0;
  bool fail = false;
  Outcome<bool> save(const json& header, const std::map<std::string, StateRecords>& changes) override {
    if (fail) return make_error(ErrorKind::config, "StateFile", "disk full");
    ++saves;
    return HeldRecords::save(header, changes);
  }
};

TEST_CASE("The record store is given each change before it is answered, and only changes") {
  auto p = platform();
  MemoryStore sink;
  REQUIRE(p->keep_records_in(&sink).ok());
  CHECK(sink.saves == 1);  // the platform as it was taken up
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", kBinary}});
  REQUIRE(sink.saves == 2);
  auto q = platform(false);
  REQUIRE(q->restore_records_from(sink).ok());
  CHECK(q->state() == p->state());  // the saved document already holds the change
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}})["Body"] == kBinary);

  call_ok(*p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}});
  call_ok(*p, "HeadObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}});
  CHECK(call(*p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "none"}}).error.code == "NoSuchKey");
  CHECK(call(*p, "CreateBucket", {{"Bucket", "demo-bucket"}}).error.code == "BucketAlreadyOwnedByYou");
  CHECK(sink.saves == 2);  // reads and refusals change nothing
}

TEST_CASE("A change that could not be saved is answered 500, undone, and blocks nothing once saving works") {
  auto p = platform();
  MemoryStore sink;
  REQUIRE(p->keep_records_in(&sink).ok());
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", "kept"}});
  json before = p->state();

  sink.fail = true;
  CapturedStderr log;
  HandlerResult r = call(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k2"}, {"Body", "x"}});
  CHECK_FALSE(r.ok);
  CHECK(r.error.status == 500);
  CHECK(r.error.code == "InternalError");
  CHECK(r.error.message == "We encountered an internal error. Please try again.");  // no detail in the answer
  std::string logged = log.text();
  CHECK(logged.find("not acknowledged") != std::string::npos);  // the detail on the server's stderr
  CHECK(logged.find("disk full") != std::string::npos);
  CHECK(call(*p, "CreateBucket", {{"Bucket", "new"}}).error.status == 500);
  CHECK(call(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", "over"}}).error.status == 500);
  CHECK(p->state() == before);  // not seen by later requests
  CHECK(call(*p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k2"}}).error.code == "NoSuchKey");
  CHECK(call_ok(*p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}})["Body"] == "kept");

  sink.fail = false;  // space is back
  call_ok(*p, "CreateBucket", {{"Bucket", "new"}});
  call_ok(*p, "PutObject", {{"Bucket", "new"}, {"Object", "k3"}, {"Body", "three"}});
  auto q = platform(false);
  REQUIRE(q->restore_records_from(sink).ok());
  CHECK(q->state() == p->state());
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "new"}, {"Object", "k3"}})["Body"] == "three");
  CHECK(call(*q, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k2"}}).error.code == "NoSuchKey");
}

namespace {

// The byte files beside a state file, by name.
std::set<std::string> byte_files(const std::string& state) {
  std::set<std::string> names;
  if (DIR* d = ::opendir((state + ".bytes").c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') names.insert(e->d_name);
    ::closedir(d);
  }
  return names;
}

struct TempDir {
  std::string path = "/tmp/cloudlua-state-test-" + std::to_string(::getpid());
  TempDir() { REQUIRE(std::system(("rm -rf " + path + " && mkdir -p " + path).c_str()) == 0); }
  ~TempDir() { (void)std::system(("rm -rf " + path).c_str()); }
};

}  // namespace

// A copy of the JSON state file of tests/data/state_json_v1 in `dir`: its path.
std::string json_state_in(const TempDir& dir) {
  REQUIRE(std::system(("cp -r " CLOUDLUA_SOURCE_DIR "/tests/data/state_json_v1/. " + dir.path).c_str()) == 0);
  return dir.path + "/state.json";
}

// `document` written in place of the JSON state file at `path`.
void write_json(const std::string& path, const json& document) {
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::string text = document.dump();
  CHECK(std::fwrite(text.data(), 1, text.size(), f) == text.size());
  std::fclose(f);
}

TEST_CASE("The JSON state file's document: none yet, read, errors naming the file") {
  TempDir dir;
  std::string path = dir.path + "/state.json";
  auto none = read_state_file(path);
  REQUIRE(none.ok());
  CHECK(none->is_null());

  path = json_state_in(dir);
  auto back = read_state_file(path);
  REQUIRE(back.ok());
  CHECK(back->value("format", 0) == 1);

  REQUIRE(std::system(("echo '{not json' > " + path).c_str()) == 0);
  auto garbled = read_state_file(path);
  REQUIRE_FALSE(garbled.ok());
  CHECK(garbled.error().code == "BadStateFile");
  CHECK(garbled.error().message.find(path) != std::string::npos);
}

TEST_CASE("A JSON state file saved before parts had a time is imported, its parts dated at the import") {
  TempDir dir;
  std::string path = json_state_in(dir);
  json document = *read_state_file(path);
  for (auto& [id, upload] : document["services"]["storage"]["uploads"].items())
    for (auto& [number, part] : upload["parts"].items()) part = part["id"];
  write_json(path, document);
  REQUIRE(std::system(("echo mine > " + path + ".import").c_str()) == 0);  // a user's file of that name
  auto q = platform(false);
  StateDatabase db(path);
  REQUIRE(open_state(*q, db, path).ok());
  std::ifstream users(path + ".import");
  std::string kept((std::istreambuf_iterator<char>(users)), std::istreambuf_iterator<char>());
  CHECK(kept == "mine\n");  // the import took a name of its own, and left this one alone
  json listed =
      call_ok(*q, "ListParts",
              {{"Bucket", "kept"}, {"Object", "in progress"}, {"uploadId", "1fe0e9ee5480b70a239a958ff8661242"}});
  REQUIRE(listed["Part"].size() == 1);
  CHECK(listed["Part"][0]["Size"] == 8);
  CHECK(listed["Part"][0]["LastModified"].get<std::string>().size() == 20);  // 2026-01-31T12:00:00Z
}

TEST_CASE("A JSON state file naming a byte file outside its folder is refused at its import") {
  TempDir dir;
  std::string path = json_state_in(dir);
  json saved = *read_state_file(path);
  json& object = saved["services"]["storage"]["buckets"]["kept"]["hello.txt"];
  std::string version = object["version_id"];
  REQUIRE(std::system(("echo outside > " + dir.path + "/outside").c_str()) == 0);
  REQUIRE(::symlink((dir.path + "/outside").c_str(), (path + ".bytes/link.9").c_str()) == 0);
  json legacy = saved;  // a state file of an older version names no files: there, the id is the file
  legacy.erase("byte_files");
  legacy["services"]["storage"]["buckets"]["kept"]["hello.txt"]["version_id"] = "../outside";
  std::vector<json> refused = {legacy};
  for (const char* file : {"../outside", "/etc/hostname", "link.9", ".hidden"}) {
    refused.push_back(saved);
    refused.back()["byte_files"][version] = file;
  }
  for (const json& document : refused) {
    INFO(document.value("byte_files", json()).dump());  // the legacy document has none: [] on a const json asserts
    write_json(path, document);
    auto q = platform(false);
    StateDatabase db(path);
    auto opened = open_state(*q, db, path);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.error().code == "BadStateFile");
    CHECK(opened.error().message.find(path) != std::string::npos);
    CHECK(q->state()["buckets"].empty());
    CHECK(is_json_state_file(path));  // left as it was
  }

  // an older version's state file whose ids are the files is taken, its files as they are
  json older = saved;
  older.erase("byte_files");
  for (const auto& [name, file] : saved["byte_files"].items())
    REQUIRE(::rename((path + ".bytes/" + file.get<std::string>()).c_str(), (path + ".bytes/" + name).c_str()) == 0);
  write_json(path, older);
  auto q = platform(false);
  StateDatabase db(path);
  REQUIRE(open_state(*q, db, path).ok());
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "hello.txt"}})["Body"] == "hello, state file\n");
  CHECK(byte_files(path).count(version));
  CHECK(byte_files(path).size() == 3);  // and the link planted, which no record names, is gone
}

namespace {

// The file `fd` is open on.
std::string path_of(int fd) {
  char buf[4096];
  ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// A disk that fills up: while `full`, every write to a file whose path contains
// `where` fails with ENOSPC (through the state writer's seam).
struct FailingDisk {
  bool full = false;
  std::string where, except;  // except: paths containing it write
  WriteCall call() {
    return [this](int fd, const void* data, size_t size) -> ssize_t {
      std::string path = path_of(fd);
      if (full && path.find(where) != std::string::npos && (except.empty() || path.find(except) == std::string::npos)) {
        errno = ENOSPC;
        return -1;
      }
      return ::write(fd, data, size);
    };
  }
};

}  // namespace

// ---------------------------------------------------------------- the state database

namespace {

// Writes counted by what they wrote: the bytes a change put on the disk outside SQLite.
struct CountingDisk {
  size_t written = 0;
  WriteCall call() {
    return [this](int fd, const void* data, size_t size) -> ssize_t {
      ssize_t n = ::write(fd, data, size);
      if (n > 0) written += static_cast<size_t>(n);
      return n;
    };
  }
};

// A platform restarted on the database in `path`: as `serve --state` opens it.
std::unique_ptr<Platform> restarted(const std::string& path, std::unique_ptr<StateDatabase>& db) {
  auto q = platform();
  db = std::make_unique<StateDatabase>(path);
  REQUIRE(open_state(*q, *db, path).ok());
  return q;
}

}  // namespace

TEST_CASE("The state database: every record and its bytes survive a restart, the fixtures only at first") {
  TempDir dir;
  std::string path = dir.path + "/state";
  auto p = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*p, db, path).ok());
  std::string upload = busy_platform(*p);
  call_ok(*p, "PutObject", {{"Bucket", "kept"}, {"Object", "gone"}, {"Body", "x"}});
  call_ok(*p, "DeleteObject", {{"Bucket", "kept"}, {"Object", "gone"}});
  std::unique_ptr<StateDatabase> again;
  auto q = restarted(path, again);
  CHECK(q->state() == p->state());
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "bin/ary"}})["Body"] == kBinary);
  call_ok(*q, "CompleteMultipartUpload",
          {{"Bucket", "kept"},
           {"Object", "big"},
           {"uploadId", upload},
           {"Part", {{{"PartNumber", 1}, {"ETag", "\"" + hex(md5(kBinary)) + "\""}}}}});
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "big"}})["Body"] == kBinary);
  call_ok(*q, "DeleteBucket", {{"Bucket", "demo-bucket"}});
  std::unique_ptr<StateDatabase> third;
  auto r = restarted(path, third);
  CHECK(r->state() == q->state());
  CHECK(call(*r, "HeadBucket", {{"Bucket", "demo-bucket"}}).error.code == "NoSuchBucket");
}

TEST_CASE("A change to the state database writes its own bytes only, and the bytes it replaces go") {
  TempDir dir;
  std::string path = dir.path + "/state";
  CountingDisk disk;
  auto p = platform();
  StateDatabase db(path, disk.call());
  REQUIRE(open_state(*p, db, path).ok());
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "big"}, {"Body", std::string(1 << 20, 'b')}});
  for (int i = 0; i < 20; ++i)
    call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k" + std::to_string(i)}, {"Body", "five!"}});
  disk.written = 0;
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k0"}, {"Body", "again"}});
  CHECK(disk.written == 5);              // not the 1 MiB object, not the other objects
  CHECK(byte_files(path).size() == 21);  // k0's first bytes went with the change that replaced them
  call_ok(*p, "DeleteObject", {{"Bucket", "demo-bucket"}, {"Object", "big"}});
  CHECK(byte_files(path).size() == 20);
}

TEST_CASE("A change to the state database prepares no statement: they were prepared once, at open") {
  TempDir dir;
  std::string path = dir.path + "/state";
  auto p = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*p, db, path).ok());
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", "first"}});
  std::size_t prepared = StateDatabase::statements_prepared();
  for (int i = 0; i < 10; ++i)
    call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k" + std::to_string(i)}, {"Body", "five!"}});
  call_ok(*p, "DeleteObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}});
  call_ok(*p, "CreateBucket", {{"Bucket", "more"}});
  CHECK(StateDatabase::statements_prepared() == prepared);
  std::unique_ptr<StateDatabase> again;  // and what they saved is all there
  auto q = restarted(path, again);
  CHECK(q->state() == p->state());
}

TEST_CASE("A state database SQLite does not put in WAL mode is refused at open, saying why") {
  TempDir dir;
  StateDatabase memory(":memory:", ::write, dir.path + "/bytes");  // an in-memory database answers "memory"
  auto opened = memory.open();
  REQUIRE_FALSE(opened.ok());
  CHECK_THAT(opened.error().message,
             Catch::Contains("cannot be in WAL mode") && Catch::Contains("'memory'") && Catch::Contains(":memory:"));
  StateDatabase on_disk(dir.path + "/state");  // a file on a local disk is
  CHECK(on_disk.open().ok());
}

TEST_CASE("The state database on a full disk: the change is answered 500 and undone, the next one saved") {
  TempDir dir;
  std::string path = dir.path + "/state";
  FailingDisk disk;
  auto p = platform();
  StateDatabase db(path, disk.call());
  REQUIRE(open_state(*p, db, path).ok());
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", "kept"}});
  disk.full = true, disk.where = ".bytes/";
  CapturedStderr log;
  HandlerResult r = call(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k2"}, {"Body", "lost"}});
  CHECK(r.error.status == 500);
  CHECK(r.error.message.find(path) == std::string::npos);
  CHECK(log.text().find(std::strerror(ENOSPC)) != std::string::npos);
  CHECK(call(*p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k2"}}).error.code == "NoSuchKey");
  CHECK(byte_files(path).size() == 1);  // nothing left to fill the disk further
  disk.full = false;
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k3"}, {"Body", "three"}});
  std::unique_ptr<StateDatabase> again;
  auto q = restarted(path, again);
  CHECK(q->state() == p->state());
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k3"}})["Body"] == "three");
}

TEST_CASE("Saved bytes are read from their file, and an answer sending them outlives the change that removes it") {
  TempDir dir;
  std::string path = dir.path + "/state";
  auto p = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*p, db, path).ok());
  std::string big(3 * Blob::kPiece + 5, 'a');
  big.back() = 'z';
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", big}});
  // a GetObject as the server makes it: the bytes referenced, not in the document
  const Operation& get = *Model::builtin().find("GetObject");
  RequestBody none;
  HandlerResult sending = p->handle(get, {{"Bucket", "demo-bucket"}, {"Object", "k"}}, &none);
  REQUIRE(sending.payload.bytes);
  CHECK(sending.payload.bytes->in_memory() == nullptr);  // the saved bytes left memory: a file
  std::set<std::string> before = byte_files(path);
  call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", "replaced"}});
  CHECK(byte_files(path) != before);           // the first bytes' file is gone
  CHECK(sending.payload.bytes->all() == big);  // the answer still sends them whole
  CHECK(sending.payload.bytes->slice(3 * Blob::kPiece, 5) == "aaaaz");
  CHECK(call_ok(*p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}})["Body"] == "replaced");
}

// A completed upload of three parts ("aaa...", "bbb...", "cc"): its object's bytes,
// whole and in ranges across the parts' edges, as GetObject answers them.
void check_joined(Platform& p, const std::string& key, const std::string& whole) {
  CHECK(call_ok(p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", key}})["Body"] == whole);
  for (auto [first, last] : {std::pair<size_t, size_t>{0, 0}, {5, 14}, {9, 10}, {19, 21}, {3, 21}})
    CHECK(call_ok(p, "GetObject",
                  {{"Bucket", "demo-bucket"},
                   {"Object", key},
                   {"Range", "bytes=" + std::to_string(first) + "-" + std::to_string(last)}})["Body"] ==
          whole.substr(first, last - first + 1));
}

std::string complete_three_parts(Platform& p, const std::string& key) {
  p.set_setting("min_part_size", 1);
  std::string upload = call_ok(p, "CreateMultipartUpload", {{"Bucket", "demo-bucket"}, {"Object", key}})["UploadId"];
  json parts = json::array();
  int number = 1;
  for (std::string body : {std::string(10, 'a'), std::string(10, 'b'), std::string("cc")}) {
    json r = call_ok(
        p, "UploadPart",
        {{"Bucket", "demo-bucket"}, {"Object", key}, {"uploadId", upload}, {"partNumber", number}, {"body", body}});
    parts.push_back({{"PartNumber", number++}, {"ETag", r["ETag"]}});
  }
  call_ok(p, "CompleteMultipartUpload",
          {{"Bucket", "demo-bucket"}, {"Object", key}, {"uploadId", upload}, {"Part", parts}});
  return std::string(10, 'a') + std::string(10, 'b') + "cc";
}

TEST_CASE("A completed upload is its parts joined: read whole and across their edges, in memory and from its file") {
  auto p = platform();
  check_joined(*p, "k", complete_three_parts(*p, "k"));  // the parts' bytes, joined in memory
  TempDir dir;
  std::string path = dir.path + "/state";
  auto q = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*q, db, path).ok());
  std::string whole = complete_three_parts(*q, "k");
  CHECK(byte_files(path).size() == 1);  // the object's file, written from the parts' files; theirs gone
  check_joined(*q, "k", whole);
  std::unique_ptr<StateDatabase> again;
  auto r = restarted(path, again);
  check_joined(*r, "k", whole);
}

// The descriptors this process has open.
size_t open_descriptors() {
  size_t n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (d && ::readdir(d)) ++n;
  if (d) ::closedir(d);
  return n;
}

TEST_CASE("An upload of more parts than the process may open files is saved, its parts' files read one at a time") {
  TempDir dir;
  std::string path = dir.path + "/state";
  auto p = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*p, db, path).ok());
  p->set_setting("min_part_size", 1);
  std::string upload = call_ok(*p, "CreateMultipartUpload", {{"Bucket", "demo-bucket"}, {"Object", "k"}})["UploadId"];
  json parts = json::array();
  std::string whole;
  for (int number = 1; number <= 200; ++number) {
    std::string body(3, static_cast<char>('a' + number % 26));
    json r = call_ok(
        *p, "UploadPart",
        {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"uploadId", upload}, {"partNumber", number}, {"body", body}});
    parts.push_back({{"PartNumber", number}, {"ETag", r["ETag"]}});
    whole += body;
  }
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &before) == 0);
  rlimit fewer = before;
  fewer.rlim_cur = open_descriptors() + 50;  // room for the database, not for 200 part files at once
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &fewer) == 0);
  HandlerResult r = call(*p, "CompleteMultipartUpload",
                         {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"uploadId", upload}, {"Part", parts}});
  ::setrlimit(RLIMIT_NOFILE, &before);
  INFO(r.error.code << ": " << r.error.message);
  CHECK(r.ok);
  CHECK(call_ok(*p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}})["Body"] == whole);
}

TEST_CASE("Byte files the state database does not name are removed at start, and never reused") {
  TempDir dir;
  std::string path = dir.path + "/state";
  {
    auto p = platform();
    StateDatabase db(path);
    REQUIRE(open_state(*p, db, path).ok());
    call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", "kept"}});
  }
  std::set<std::string> before = byte_files(path);
  REQUIRE(before.size() == 1);
  // what a crash between writing a file and committing leaves: a file no row names
  std::string stray = path + ".bytes/v999999999999.99";
  REQUIRE(std::system(("echo stray > " + stray).c_str()) == 0);
  std::unique_ptr<StateDatabase> again;
  auto q = restarted(path, again);
  CHECK(byte_files(path) == before);
  call_ok(*q, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", "k2"}, {"Body", "new"}});
  for (const std::string& f : byte_files(path)) CHECK(f != "v999999999999.99");
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k2"}})["Body"] == "new");
}

TEST_CASE("A state file of the JSON format is imported into the database on first start, its byte files kept") {
  TempDir dir;
  std::string path = dir.path + "/state.json";
  // written by cloudlua serve --state before the database (tests/data/state_json_v1)
  REQUIRE(std::system(("cp -r " CLOUDLUA_SOURCE_DIR "/tests/data/state_json_v1/. " + dir.path).c_str()) == 0);
  std::set<std::string> files = byte_files(path);
  REQUIRE(files.size() == 3);
  std::unique_ptr<StateDatabase> db;
  auto p = restarted(path, db);
  CHECK_FALSE(is_json_state_file(path));
  CHECK(byte_files(path) == files);  // taken over, not copied
  json body = call_ok(*p, "GetObject", {{"Bucket", "kept"}, {"Object", "bytes/all 256"}})["Body"];
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  CHECK(body == all);
  CHECK(call_ok(*p, "GetObject", {{"Bucket", "kept"}, {"Object", "hello.txt"}})["Body"] == "hello, state file\n");
  call_ok(*p, "CompleteMultipartUpload",
          {{"Bucket", "kept"},
           {"Object", "in progress"},
           {"uploadId", "1fe0e9ee5480b70a239a958ff8661242"},
           {"Part", {{{"PartNumber", 1}, {"ETag", "\"3303e12af474ca11d85ed2966a932992\""}}}}});
  json restored = p->state();
  db.reset();
  auto q = restarted(path, db);  // the database now, not the file
  CHECK(q->state() == restored);
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "in progress"}})["Body"] == "part one");
}

// A state database at `path` with `bodies` (key -> body) put into demo-bucket.
void state_with(const std::string& path, const std::map<std::string, std::string>& bodies) {
  auto p = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*p, db, path).ok());
  for (const auto& [key, body] : bodies)
    call_ok(*p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", key}, {"Body", body}});
}

// Runs `sql` on the database at `path`, as someone editing it between two starts.
void edit_database(const std::string& path, const char* sql) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  CHECK(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
}

// Why a start on the state database at `path` is refused (it must be).
std::string refusal_at_start(const std::string& path) {
  auto q = platform();
  StateDatabase db(path);
  auto opened = open_state(*q, db, path);
  REQUIRE_FALSE(opened.ok());
  return opened.error().message;
}

TEST_CASE("The state database's schema has a version, and a newer one is refused at start") {
  TempDir dir;
  std::string path = dir.path + "/state";
  state_with(path, {});
  CHECK(StateDatabase::schema_version() == 5);
  edit_database(path, "PRAGMA user_version=99");
  std::string why = refusal_at_start(path);
  CHECK(why.find("schema 99") != std::string::npos);
  CHECK(why.find(path) != std::string::npos);
}

TEST_CASE("A state database naming a byte file outside its folder is refused at start") {
  TempDir dir;
  std::string path = dir.path + "/state";
  state_with(path, {{"k", "kept"}});
  REQUIRE(std::system(("echo secret > " + dir.path + "/outside").c_str()) == 0);
  edit_database(path, "UPDATE objects SET file = '../outside'");
  CHECK(refusal_at_start(path).find("../outside") != std::string::npos);
}

// The number of rows `sql` counts in the database at `path`.
long long count_rows(const std::string& path, const char* sql) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(raw, sql, -1, &stmt, nullptr) == SQLITE_OK);
  long long n = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
  return n;
}

// A copy in `dir` of the state database tests/data/state_db_v<schema> (written by
// `cloudlua serve --state` with that schema), checked to be of it: its path.
std::string old_database(const TempDir& dir, int schema) {
  std::string source = std::string(CLOUDLUA_SOURCE_DIR "/tests/data/state_db_v") + std::to_string(schema) + "/.";
  REQUIRE(std::system(("cp -r " + source + " " + dir.path).c_str()) == 0);
  std::string path = dir.path + "/state";
  REQUIRE(count_rows(path, "PRAGMA user_version") == schema);
  return path;
}

// The migrated fixture's platform `p` restarted from `path`: the same state, and its
// three objects read back (hello.txt as the test replaced it, the upload completed into
// "in progress", dir/sum with its checksum).
void reads_back_after_restart(const std::string& path, std::unique_ptr<StateDatabase>& db, Platform& p) {
  json before = p.state();
  db.reset();
  auto q = restarted(path, db);
  CHECK(q->state() == before);
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "hello.txt"}})["Body"] == "replaced");
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "in progress"}})["Body"] == "part one");
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "dir/sum"}})["Body"] == "with a checksum");
}

TEST_CASE("A state database of schema 1 is migrated at start: its objects in columns, read back whole") {
  TempDir dir;
  // written by cloudlua serve --state with schema 1, objects as JSON records (tests/data/state_db_v1)
  std::string path = old_database(dir, 1);
  std::set<std::string> files = byte_files(path);
  std::unique_ptr<StateDatabase> db;
  auto p = restarted(path, db);
  CHECK(count_rows(path, "PRAGMA user_version") == StateDatabase::schema_version());
  CHECK(count_rows(path, "SELECT count(*) FROM objects") == 2);
  CHECK(count_rows(path, "SELECT count(*) FROM records WHERE kind = 'object'") == 0);
  CHECK(byte_files(path) == files);
  CHECK(call_ok(*p, "GetObject", {{"Bucket", "kept"}, {"Object", "hello.txt"}})["Body"] == "hello, state database\n");
  json sum = call_ok(*p, "HeadObject", {{"Bucket", "kept"}, {"Object", "dir/sum"}, {"ChecksumMode", "ENABLED"}});
  CHECK(sum["ChecksumCRC32"] == "vRPIFQ==");
  CHECK(sum["ContentLength"] == 15);
  CHECK(call(*p, "GetObject", {{"Bucket", "kept"}, {"Object", "gone"}}).error.code == "NoSuchKey");
  call_ok(*p, "CompleteMultipartUpload",
          {{"Bucket", "kept"},
           {"Object", "in progress"},
           {"uploadId", "1fe0e9ee5480b70a239a958ff8661242"},
           {"Part", {{{"PartNumber", 1}, {"ETag", "\"3303e12af474ca11d85ed2966a932992\""}}}}});
  call_ok(*p, "PutObject", {{"Bucket", "kept"}, {"Object", "hello.txt"}, {"Body", "replaced"}});
  CHECK(count_rows(path, "SELECT count(size) FROM objects") == 2);  // the objects saved again know their size
  reads_back_after_restart(path, db, *p);
}

TEST_CASE("A state database whose byte file went missing is refused at start, naming it") {
  TempDir dir;
  std::string path = dir.path + "/state";
  state_with(path, {{"k", "kept"}, {"k2", "lost"}});
  std::set<std::string> files = byte_files(path);
  REQUIRE(files.size() == 2);
  std::string lost = *files.rbegin();
  REQUIRE(::unlink((path + ".bytes/" + lost).c_str()) == 0);
  CHECK(refusal_at_start(path).find(lost) != std::string::npos);
}

TEST_CASE("A byte file the database names in another form than <name>.<serial> is kept at start and read") {
  TempDir dir;
  std::string path = dir.path + "/state";
  state_with(path, {{"k", "kept"}});
  std::string file = *byte_files(path).begin();
  REQUIRE(::rename((path + ".bytes/" + file).c_str(), (path + ".bytes/other-form").c_str()) == 0);
  edit_database(path, "UPDATE objects SET file = 'other-form'");
  std::unique_ptr<StateDatabase> db;
  auto q = restarted(path, db);
  CHECK(byte_files(path) == std::set<std::string>{"other-form"});
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}})["Body"] == "kept");
}

TEST_CASE("One owner per state: a second lock on it is refused naming the holder's PID, and taken once it is free") {
  TempDir dir;
  std::string path = dir.path + "/state";
  auto first = StoreLock::take(path);
  REQUIRE(first.ok());
  auto second = StoreLock::take(path);  // another open file description: refused even in this process
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == "StateInUse");
  CHECK_THAT(second.error().message, Catch::Contains("pid " + std::to_string(::getpid())));
  REQUIRE(::link(path.c_str(), (path + "-second-name").c_str()) == 0);  // the lock is the file's, not the name's
  auto by_link = StoreLock::take(path + "-second-name");
  REQUIRE_FALSE(by_link.ok());
  CHECK(by_link.error().code == "StateInUse");
  first->reset();
  auto two_names = StoreLock::take(path);  // free, but a file of two names is refused
  REQUIRE_FALSE(two_names.ok());
  CHECK_THAT(two_names.error().message, Catch::Contains("2 names"));
  REQUIRE(::unlink((path + "-second-name").c_str()) == 0);
  CHECK(StoreLock::take(path).ok());
  CHECK(::access((path + ".lock").c_str(), F_OK) != 0);  // no lock file made beside it
}

TEST_CASE("A record of the state database nested deeper than any document is refused at start, never walked") {
  TempDir dir;
  std::string path = dir.path + "/state";
  state_with(path, {});
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  edit_database(path, ("UPDATE records SET value = '" + deep + "'").c_str());
  CHECK_THAT(refusal_at_start(path), Catch::Contains("nested more than 200 levels deep"));
}

TEST_CASE("A state database of schema 2 is migrated at start: its objects kept, without content headers or metadata") {
  TempDir dir;
  // written by cloudlua serve --state with schema 2, before objects kept their metadata (tests/data/state_db_v2)
  std::string path = old_database(dir, 2);
  std::set<std::string> files = byte_files(path);
  std::unique_ptr<StateDatabase> db;
  auto p = restarted(path, db);
  CHECK(count_rows(path, "PRAGMA user_version") == StateDatabase::schema_version());
  CHECK(count_rows(path, "SELECT count(*) FROM objects WHERE headers = '{}'") == 2);
  CHECK(byte_files(path) == files);
  json hello = call_ok(*p, "GetObject", {{"Bucket", "kept"}, {"Object", "hello.txt"}});
  CHECK(hello["Body"] == "hello, state database v2\n");
  CHECK(hello["ContentType"] == "binary/octet-stream");
  CHECK_FALSE(hello.contains("Metadata"));
  CHECK(call_ok(*p, "HeadObject",
                {{"Bucket", "kept"}, {"Object", "dir/sum"}, {"ChecksumMode", "ENABLED"}})["ChecksumCRC32"] ==
        "vRPIFQ==");
  call_ok(*p, "PutObject",
          {{"Bucket", "kept"},
           {"Object", "typed.html"},
           {"Body", "<p>"},
           {"ContentType", "text/html"},
           {"Metadata", {{"mtime", "1"}}}});
  call_ok(*p, "CompleteMultipartUpload",
          {{"Bucket", "kept"},
           {"Object", "in progress"},
           {"uploadId", "a64817ee30096aedb6760272b84793b5"},
           {"Part", {{{"PartNumber", 1}, {"ETag", "\"3303e12af474ca11d85ed2966a932992\""}}}}});
  db.reset();
  auto q = restarted(path, db);
  json typed = call_ok(*q, "HeadObject", {{"Bucket", "kept"}, {"Object", "typed.html"}});
  CHECK(typed["ContentType"] == "text/html");
  CHECK(typed["Metadata"] == json({{"mtime", "1"}}));
  CHECK(call_ok(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "in progress"}})["Body"] == "part one");
}

TEST_CASE("The state database keeps an object's content headers and metadata, and an upload's for its object") {
  TempDir dir;
  std::string path = dir.path + "/state";
  json content = {{"ContentType", "text/css"}, {"CacheControl", "no-cache"}, {"Metadata", {{"a", "1"}, {"b", ""}}}};
  std::string id;
  {
    std::unique_ptr<StateDatabase> db;
    auto p = restarted(path, db);
    json put = {{"Bucket", "demo-bucket"}, {"Object", "k"}, {"Body", "x"}};
    put.update(content);
    call_ok(*p, "PutObject", put);
    json start = {{"Bucket", "demo-bucket"}, {"Object", "up"}};
    start.update(content);
    id = call_ok(*p, "CreateMultipartUpload", start)["UploadId"];
    call_ok(*p, "UploadPart",
            {{"Bucket", "demo-bucket"}, {"Object", "up"}, {"uploadId", id}, {"partNumber", 1}, {"body", "one"}});
  }
  std::unique_ptr<StateDatabase> db;
  auto q = restarted(path, db);
  json head = call_ok(*q, "HeadObject", {{"Bucket", "demo-bucket"}, {"Object", "k"}});
  for (const char* m : {"ContentType", "CacheControl", "Metadata"}) CHECK(head[m] == content[m]);
  call_ok(*q, "CompleteMultipartUpload",
          {{"Bucket", "demo-bucket"},
           {"Object", "up"},
           {"uploadId", id},
           {"Part", {{{"PartNumber", 1}, {"ETag", "\"f97c5d29941bfb1b2fdab0874906ab82\""}}}}});
  json made = call_ok(*q, "HeadObject", {{"Bucket", "demo-bucket"}, {"Object", "up"}});
  for (const char* m : {"ContentType", "CacheControl", "Metadata"}) CHECK(made[m] == content[m]);
}

TEST_CASE("A state database of schema 3 is migrated at start: its objects with their metadata and bytes read back") {
  TempDir dir;
  // written by cloudlua serve --state with schema 3 (tests/data/state_db_v3): a bucket
  // with two objects (one with metadata, one with a checksum), one deleted, an upload
  // with a part in progress
  std::string path = old_database(dir, 3);
  std::set<std::string> files = byte_files(path);
  REQUIRE(files.size() == 3);
  std::unique_ptr<StateDatabase> db;
  auto p = restarted(path, db);
  CHECK(count_rows(path, "PRAGMA user_version") == StateDatabase::schema_version());
  CHECK(byte_files(path) == files);
  // an object is its row: the file of its bytes there, none in byte_files (the part's only)
  CHECK(count_rows(path, "SELECT count(file) FROM objects") == 2);
  CHECK(count_rows(path, "SELECT count(*) FROM byte_files") == 1);
  json hello = call_ok(*p, "GetObject", {{"Bucket", "kept"}, {"Object", "hello.txt"}});
  CHECK(hello["Body"] == "hello, state database v3\n");
  CHECK(hello["ContentType"] == "text/plain");
  CHECK(hello["Metadata"] == json({{"origin", "v3"}}));
  CHECK(call_ok(*p, "HeadObject",
                {{"Bucket", "kept"}, {"Object", "dir/sum"}, {"ChecksumMode", "ENABLED"}})["ChecksumCRC32"] ==
        "vRPIFQ==");
  CHECK(call(*p, "GetObject", {{"Bucket", "kept"}, {"Object", "gone"}}).error.code == "NoSuchKey");
  call_ok(*p, "PutObject", {{"Bucket", "kept"}, {"Object", "hello.txt"}, {"Body", "replaced"}});
  call_ok(*p, "CompleteMultipartUpload",
          {{"Bucket", "kept"},
           {"Object", "in progress"},
           {"uploadId", "1fe0e9ee5480b70a239a958ff8661242"},
           {"Part", {{{"PartNumber", 1}, {"ETag", "\"3303e12af474ca11d85ed2966a932992\""}}}}});
  std::set<std::string> now = byte_files(path);  // the replaced object's file and the part's gone, two new ones come
  CHECK(now.size() == 3);
  CHECK(now.count("v000000000015.2"));
  CHECK_FALSE(now.count("v000000000014.1"));
  CHECK_FALSE(now.count("part-000000000018.4"));
  reads_back_after_restart(path, db, *p);
}
