// Checkpoints of the whole platform (emulator/checkpoints.h): in memory without a state
// database; with one, folders whose records survive a restart and whose byte files are
// the state's own, hard-linked. Names are checked; an unknown one is an error that
// changes nothing.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "core/model/validate.h"
#include "emulator/service.h"
#include "emulator/checkpoints.h"
#include "emulator/state_db.h"

using namespace cloud;

namespace {

struct TempDir {
  std::string path = "/tmp/cloudlua-checkpoint-test-" + std::to_string(::getpid());
  TempDir() { REQUIRE(std::system(("rm -rf " + path + " && mkdir -p " + path).c_str()) == 0); }
  ~TempDir() { (void)std::system(("rm -rf " + path).c_str()); }
};

std::unique_ptr<Platform> platform() {
  auto p = std::make_unique<Platform>("jp-east-1", Model::builtin());
  p->set_real_time(false);
  p->load_fixtures();
  return p;
}

HandlerResult call(Platform& p, const std::string& name, const json& args) {
  auto valid = validate_input(*Model::builtin().find(name), args);
  REQUIRE(valid.ok());
  return p.handle(*Model::builtin().find(name), *valid);
}

void put(Platform& p, const std::string& key, const std::string& body) {
  REQUIRE(call(p, "PutObject", {{"Bucket", "demo-bucket"}, {"Object", key}, {"Body", body}}).ok);
}

std::string get(Platform& p, const std::string& key) {
  HandlerResult r = call(p, "GetObject", {{"Bucket", "demo-bucket"}, {"Object", key}});
  return r.ok ? r.result["Body"].get<std::string>() : "<" + r.error.code + ">";
}

// Files in `dir` with more than one link: shared with another folder.
int linked_files(const std::string& dir) {
  std::string list = dir + "/.list";
  REQUIRE(std::system(("find " + dir + " -type f -links +1 | wc -l > " + list).c_str()) == 0);
  FILE* f = std::fopen(list.c_str(), "r");
  int n = -1;
  REQUIRE(std::fscanf(f, "%d", &n) == 1);
  std::fclose(f);
  ::unlink(list.c_str());
  return n;
}

}  // namespace

TEST_CASE("Checkpoint names: what is allowed and a clear error for what is not") {
  for (const char* good : {"a", "base-1", "v1.2_prepared", "0"}) CHECK(check_checkpoint_name(good).ok());
  for (const char* bad : {"", ".hidden", "..", "-x", "a/b", "a b", "é", "x?y"}) {
    auto checked = check_checkpoint_name(bad);
    REQUIRE_FALSE(checked.ok());
    CHECK(checked.error().code == "InvalidCheckpointName");
    CHECK(checked.error().message.find("1 to 64 letters, digits") != std::string::npos);
  }
  CHECK(check_checkpoint_name(std::string(64, 'a')).ok());
  CHECK_FALSE(check_checkpoint_name(std::string(65, 'a')).ok());
}

TEST_CASE("In memory: a change after a checkpoint is gone once it is restored and an unknown name changes nothing") {
  auto p = platform();
  Checkpoints checkpoints(*p, nullptr, "");
  put(*p, "k", "before");
  REQUIRE(checkpoints.take("base").ok());
  put(*p, "k", "after");
  put(*p, "new", "x");
  json changed = p->state();
  auto unknown = checkpoints.restore("nope");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == "NoSuchCheckpoint");
  CHECK(unknown.error().message == "no checkpoint named 'nope' (checkpoints: base)");
  CHECK(p->state() == changed);
  REQUIRE(checkpoints.restore("base").ok());
  CHECK(get(*p, "k") == "before");
  CHECK(get(*p, "new") == "<NoSuchKey>");
  CHECK(checkpoints.names() == std::vector<std::string>{"base"});
  REQUIRE(checkpoints.restore("base").ok());  // a checkpoint is restored as often as asked
  CHECK(get(*p, "k") == "before");
}

TEST_CASE("With a state database: the checkpoint's byte files are hard links and it is restored after a restart") {
  TempDir dir;
  std::string path = dir.path + "/state";
  {
    auto p = platform();
    StateDatabase db(path);
    REQUIRE(open_state(*p, db, path).ok());
    Checkpoints checkpoints(*p, &db, path + ".snapshots");
    put(*p, "k", std::string(1 << 16, 'b'));
    put(*p, "kept", "kept bytes");
    REQUIRE(checkpoints.take("prepared").ok());
    CHECK(linked_files(path + ".snapshots/prepared/bytes") == 2);  // shared with state.bytes/, not copied
    REQUIRE(checkpoints.take("prepared").ok());                    // taken again: replaced
    put(*p, "k", "changed");
    REQUIRE(call(*p, "DeleteObject", {{"Bucket", "demo-bucket"}, {"Object", "kept"}}).ok);
    CHECK(checkpoints.names() == std::vector<std::string>{"prepared"});
  }
  auto q = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*q, db, path).ok());
  Checkpoints checkpoints(*q, &db, path + ".snapshots");
  CHECK(get(*q, "k") == "changed");
  CHECK(checkpoints.restore("unknown").error().code == "NoSuchCheckpoint");
  CHECK(get(*q, "k") == "changed");
  REQUIRE(checkpoints.restore("prepared").ok());
  CHECK(get(*q, "k") == std::string(1 << 16, 'b'));
  CHECK(get(*q, "kept") == "kept bytes");
  put(*q, "later", "y");  // the restored state goes on being saved
  {
    auto r = platform();
    StateDatabase again(path);
    REQUIRE(open_state(*r, again, path).ok());
    CHECK(r->state() == q->state());
    CHECK(get(*r, "kept") == "kept bytes");
    CHECK(get(*r, "later") == "y");
  }
  // The checkpoint keeps its bytes whatever the state does after.
  REQUIRE(call(*q, "DeleteObject", {{"Bucket", "demo-bucket"}, {"Object", "kept"}}).ok);
  REQUIRE(checkpoints.restore("prepared").ok());
  CHECK(get(*q, "kept") == "kept bytes");
  CHECK(get(*q, "later") == "<NoSuchKey>");
}

TEST_CASE("A checkpoint taken with the schema before objects had columns is restored, brought up to this one") {
  TempDir dir;
  std::string path = dir.path + "/state";
  auto p = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*p, db, path).ok());
  Checkpoints checkpoints(*p, &db, path + ".snapshots");
  REQUIRE(call(*p, "CreateBucket", {{"Bucket", "later"}}).ok);
  // a checkpoint of schema 1: a state database written then (tests/data/state_db_v1), as one
  std::string checkpoint = path + ".snapshots/old";
  REQUIRE(std::system(("mkdir -p " + checkpoint + " && cp " CLOUDLUA_SOURCE_DIR "/tests/data/state_db_v1/state " +
                       checkpoint + "/state.db && cp -r " CLOUDLUA_SOURCE_DIR "/tests/data/state_db_v1/state.bytes " +
                       checkpoint + "/bytes")
                          .c_str()) == 0);
  Outcome<bool> restored = checkpoints.restore("old");
  INFO((restored.ok() ? "" : restored.error().message));
  REQUIRE(restored.ok());
  json hello = call(*p, "GetObject", {{"Bucket", "kept"}, {"Object", "hello.txt"}}).result;
  CHECK(hello["Body"] == "hello, state database\n");
  CHECK(call(*p, "HeadBucket", {{"Bucket", "later"}}).error.code == "NoSuchBucket");
  auto q = platform();
  StateDatabase again(path);
  REQUIRE(open_state(*q, again, path).ok());
  CHECK(q->state() == p->state());
  CHECK(call(*q, "GetObject", {{"Bucket", "kept"}, {"Object", "dir/sum"}}).result["Body"] == "with a checksum");
}

namespace {

// A file `name` holding `text` in the folder `dir`.
void write_file(const std::string& dir, const std::string& name, const std::string& text) {
  FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
  REQUIRE(f);
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("A link planted at .NAME.new never makes taking NAME remove what it points to") {
  TempDir dir;
  std::string path = dir.path + "/state", victim = dir.path + "/victim";
  REQUIRE(::mkdir(victim.c_str(), 0700) == 0);
  REQUIRE(::mkdir((victim + "/sub").c_str(), 0700) == 0);
  write_file(victim, "precious", "a user's file");
  write_file(victim + "/sub", "deeper", "another");
  auto p = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*p, db, path).ok());
  Checkpoints checkpoints(*p, &db, path + ".snapshots");
  REQUIRE(checkpoints.open().ok());
  for (const char* planted : {"/.night.new", "/.night.old"})
    REQUIRE(::symlink(victim.c_str(), (path + ".snapshots" + planted).c_str()) == 0);
  REQUIRE(checkpoints.take("night").ok());
  REQUIRE(checkpoints.take("night").ok());  // replaced: the old one goes through .night.old
  CHECK(exists(victim + "/precious"));
  CHECK(exists(victim + "/sub/deeper"));
  CHECK(checkpoints.names() == std::vector<std::string>{"night"});
  // A link in place of a checkpoint is neither listed nor restored.
  REQUIRE(::symlink((path + ".snapshots/night").c_str(), (path + ".snapshots/linked").c_str()) == 0);
  CHECK(checkpoints.names() == std::vector<std::string>{"night"});
  CHECK(checkpoints.restore("linked").error().code == "NoSuchCheckpoint");
}

TEST_CASE("A checkpoints folder that is not this user's own is refused, naming why") {
  TempDir dir;
  std::string path = dir.path + "/state", folder = path + ".snapshots";
  auto p = platform();
  StateDatabase db(path);
  REQUIRE(open_state(*p, db, path).ok());
  SECTION("made by serve: mode 0700") {
    Checkpoints checkpoints(*p, &db, folder);
    REQUIRE(checkpoints.open().ok());
    struct stat st {};
    REQUIRE(::stat(folder.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
  }
  SECTION("writable by others") {
    REQUIRE(::mkdir(folder.c_str(), 0700) == 0);
    REQUIRE(::chmod(folder.c_str(), 0777) == 0);
    Checkpoints checkpoints(*p, &db, folder);
    Outcome<bool> opened = checkpoints.open();
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.error().code == "UnsafeFolder");
    CHECK_THAT(opened.error().message, Catch::Contains(folder) && Catch::Contains("mode 0777"));
    CHECK(checkpoints.take("x").error().code == "UnsafeFolder");
  }
  SECTION("a symbolic link") {
    std::string elsewhere = dir.path + "/elsewhere";
    REQUIRE(::mkdir(elsewhere.c_str(), 0700) == 0);
    REQUIRE(::symlink(elsewhere.c_str(), folder.c_str()) == 0);
    Checkpoints checkpoints(*p, &db, folder);
    Outcome<bool> opened = checkpoints.open();
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.error().code == "UnsafeFolder");
    CHECK_THAT(opened.error().message, Catch::Contains("symbolic link"));
    CHECK(checkpoints.take("x").error().code == "UnsafeFolder");
    CHECK(checkpoints.names().empty());
  }
  SECTION("another user's (checked when the test runs as root, who can give it away)") {
    REQUIRE(::mkdir(folder.c_str(), 0700) == 0);
    if (::geteuid() != 0 || ::chown(folder.c_str(), 65534, 65534) != 0) return;
    Checkpoints checkpoints(*p, &db, folder);
    Outcome<bool> opened = checkpoints.open();
    REQUIRE_FALSE(opened.ok());
    CHECK_THAT(opened.error().message, Catch::Contains("belongs to uid 65534"));
  }
}

TEST_CASE("A checkpoint keeps objects' content headers and metadata, in memory and with a state database") {
  TempDir dir;
  std::string path = dir.path + "/state";
  for (bool on_disk : {false, true}) {
    INFO((on_disk ? "with a state database" : "in memory"));
    auto p = platform();
    std::unique_ptr<StateDatabase> db;
    if (on_disk) {
      db = std::make_unique<StateDatabase>(path);
      REQUIRE(open_state(*p, *db, path).ok());
    }
    Checkpoints checkpoints(*p, db.get(), on_disk ? path + ".snapshots" : "");
    json typed = {{"Bucket", "demo-bucket"},
                  {"Object", "page.html"},
                  {"Body", "<p>"},
                  {"ContentType", "text/html"},
                  {"Metadata", {{"mtime", "1"}}}};
    REQUIRE(call(*p, "PutObject", typed).ok);
    REQUIRE(checkpoints.take("typed").ok());
    put(*p, "page.html", "plain now");
    REQUIRE(checkpoints.restore("typed").ok());
    HandlerResult head = call(*p, "HeadObject", {{"Bucket", "demo-bucket"}, {"Object", "page.html"}});
    REQUIRE(head.ok);
    CHECK(head.result["ContentType"] == "text/html");
    CHECK(head.result["Metadata"] == json({{"mtime", "1"}}));
  }
}
