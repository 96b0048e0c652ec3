// The cassette of record and replay (core/net/cassette.h) on its own: lines written by
// hand, replayed through a Transport that never sends. Matching is on the canonical
// query and body (order and encoding of either do not matter), in order; a miss names
// the nearest line and each differing field; a recorded failure replays as that error;
// a download is written to its file; malformed lines are named by file:line.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/net/cassette.h"
#include "core/client/client.h"
#include "emulator/emulator.h"

namespace {

namespace fs = std::filesystem;
using cloud::CallKey;
using cloud::Cassette;
using cloud::HttpResponse;
using cloud::Outcome;

// A fresh folder holding `lines` as storage.jsonl; removed when the test ends.
struct Folder {
  fs::path path;
  explicit Folder(const std::string& lines) {
    path =
        fs::temp_directory_path() / ("cassette-test-" + std::to_string(getpid()) + "-" + std::to_string(counter()++));
    fs::create_directories(path);
    std::ofstream(path / "storage.jsonl") << lines;
  }
  ~Folder() { fs::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

const char* const kLines =
    R"({"api":"storage","body":"","headers":{"content-type":"application/xml"},"method":"GET","operation":"ListObjectsV2","path":"/bkt","query":"list-type=2&max-keys=2&prefix=a%20b","response":"<first/>","status":200})"
    "\n"
    R"({"api":"storage","body":"","headers":{},"method":"GET","operation":"ListObjectsV2","path":"/bkt","query":"list-type=2&max-keys=2&prefix=a%20b","response":"<second/>","status":200})"
    "\n"
    R"({"api":"storage","body":"{\"a\":1,\"name\":\"x\"}","headers":{},"method":"POST","operation":"Create","path":"/v1/things","query":"","response":"{}","status":201})"
    "\n"
    R"({"api":"storage","body":"","error":{"code":"Timeout","kind":"timeout","message":"no answer"},"method":"GET","operation":"Slow","path":"/slow","query":""})"
    "\n"
    R"({"api":"storage","body":"","headers":{"content-length":"4"},"method":"GET","operation":"GetObject","path":"/bkt/k","query":"","response_base64":"AAEC/w==","status":200})"
    "\n";

// Replays one call through `transport` and runs the loop until it ends.
Outcome<HttpResponse> replay(Cassette& cassette, cloud::Transport& transport, const CallKey& key,
                             cloud::BodyFiles files = {}) {
  std::optional<Outcome<HttpResponse>> out;
  cloud::HttpRequest request{key.method, "http://replay.invalid" + key.path, {}, key.body, files};
  cassette.start(transport, key, request, {}, "", [&out](Outcome<HttpResponse> r) { out = std::move(r); });
  CHECK_FALSE(out);  // completed from the loop, as a transfer is
  while (!out) transport.run_once(0.1);
  return std::move(*out);
}

CallKey key(std::string operation, std::string method, std::string path, std::string query, std::string body = "") {
  return CallKey{
      "storage", std::move(operation), std::move(method), "", std::move(path), std::move(query), std::move(body), "",
      0};
}

}  // namespace

TEST_CASE("cassette: calls match on the canonical query and body, in order", "[cassette]") {
  Folder folder(kLines);
  auto cassette = Cassette::open(Cassette::Mode::replay, folder.path.string());
  REQUIRE(cassette.ok());
  cloud::Transport transport;
  // the same pairs in another order, a space encoded otherwise: the first line, then the second
  auto first =
      replay(**cassette, transport, key("ListObjectsV2", "GET", "/bkt", "prefix=a%20b&max-keys=2&list-type=2"));
  REQUIRE(first.ok());
  CHECK(first->body == "<first/>");
  CHECK(cloud::header_value(first->headers, "Content-Type") == "application/xml");
  auto second =
      replay(**cassette, transport, key("ListObjectsV2", "GET", "/bkt", "list-type=2&max-keys=2&prefix=a%20b"));
  REQUIRE(second.ok());
  CHECK(second->body == "<second/>");
  auto third =
      replay(**cassette, transport, key("ListObjectsV2", "GET", "/bkt", "list-type=2&max-keys=2&prefix=a%20b"));
  REQUIRE_FALSE(third.ok());
  CHECK(third.error().kind == cloud::ErrorKind::config);
  CHECK(third.error().code == "NoRecordedCall");
  CHECK(third.error().message.find("replayed already") != std::string::npos);
  // a JSON body with its keys in another order matches
  CHECK(replay(**cassette, transport, key("Create", "POST", "/v1/things", "", R"({"name":"x","a":1})")).ok());
  CHECK((*cassette)->unused().size() == 2);
}

TEST_CASE("cassette: a miss names the nearest recorded call and each differing field", "[cassette]") {
  Folder folder(kLines);
  auto cassette = Cassette::open(Cassette::Mode::replay, folder.path.string());
  REQUIRE(cassette.ok());
  cloud::Transport transport;
  auto miss =
      replay(**cassette, transport, key("Create", "POST", "/v1/things", "", R"({"a":1,"name":"y","extra":true})"));
  REQUIRE_FALSE(miss.ok());
  const cloud::Error& e = miss.error();
  CHECK(e.code == "NoRecordedCall");
  CHECK(e.message.find("the nearest is storage.jsonl:3 (Create POST /v1/things)") != std::string::npos);
  REQUIRE(e.fields.size() == 2);
  CHECK(e.fields[0].path == "body.name");
  CHECK(e.fields[0].problem == R"(recorded "x", sent "y")");
  CHECK(e.fields[1].path == "body.extra");
  CHECK(e.fields[1].problem == R"(recorded (none), sent "true")");
  auto unknown = replay(**cassette, transport, key("DeleteBucket", "DELETE", "/bkt", ""));
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message.find("DeleteBucket was not recorded (storage.jsonl)") != std::string::npos);
}

TEST_CASE("cassette: a recorded failure replays as that error, a download is written to its file", "[cassette]") {
  Folder folder(kLines);
  auto cassette = Cassette::open(Cassette::Mode::replay, folder.path.string());
  REQUIRE(cassette.ok());
  cloud::Transport transport;
  auto slow = replay(**cassette, transport, key("Slow", "GET", "/slow", ""));
  REQUIRE_FALSE(slow.ok());
  CHECK(slow.error().kind == cloud::ErrorKind::timeout);
  CHECK(slow.error().code == "Timeout");
  cloud::BodyFiles files;
  files.download_to = (folder.path / "object.bin").string();
  auto got = replay(**cassette, transport, key("GetObject", "GET", "/bkt/k", ""), files);
  REQUIRE(got.ok());
  CHECK(got->body_file == files.download_to);
  std::ifstream in(files.download_to, std::ios::binary);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == std::string("\x00\x01\x02\xff", 4));
}

TEST_CASE("cassette: malformed lines and missing folders are named", "[cassette]") {
  auto missing = Cassette::open(Cassette::Mode::replay, "/nonexistent/cassette");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == "NoCassette");
  Folder bad(std::string(kLines) + "\n" +
             R"({"api":"storage","body":"","method":"GET","operation":"X","path":"/","query":"","status":"200"})"
             "\n");
  auto opened = Cassette::open(Cassette::Mode::replay, bad.path.string());
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.error().code == "MalformedCassette");
  CHECK(opened.error().message ==
        (bad.path / "storage.jsonl").string() + ":7: 'status' must be an integer from 100 to 599 (got \"200\")");
}

TEST_CASE("cassette: a client with record and replay both set is refused", "[cassette]") {
  cloud::ClientConfig config;
  config.record = "a";
  config.replay = "b";
  auto opened = cloud::open_cassette(config, {"storage"});
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.error().code == "RecordAndReplay");
}

TEST_CASE("cassette: every field of a hostile line is a MalformedCassette naming file, line and field", "[cassette]") {
  const std::string base = R"("api":"storage","body":"","method":"GET","operation":"X","path":"/","query":"")";
  struct Hostile {
    std::string line;
    std::string problem;  // what the message says after "file:2: "
  };
  const Hostile table[] = {
      {"[1,2]", "the line must be a JSON object (got [1,2])"},
      {"\"text\"", "the line must be a JSON object (got \"text\")"},
      {"{nope", "not valid JSON"},
      {R"({"body":"","method":"GET","operation":"X","path":"/","query":"","status":200})", "'api' must be a string"},
      {R"({"api":7,"body":"","method":"GET","operation":"X","path":"/","query":"","status":200})",
       "'api' must be a string (got 7)"},
      {R"({"api":"storage","body":{},"method":"GET","operation":"X","path":"/","query":"","status":200})",
       "'body' must be a string (got {})"},
      {R"({"api":"storage","body":"","method":null,"operation":"X","path":"/","query":"","status":200})",
       "'method' must be a string (got null)"},
      {R"({"api":"storage","body":"","method":"GET","operation":["X"],"path":"/","query":"","status":200})",
       "'operation' must be a string (got [\"X\"])"},
      {R"({"api":"storage","body":"","method":"GET","operation":"X","path":1.5,"query":"","status":200})",
       "'path' must be a string (got 1.5)"},
      {R"({"api":"storage","body":"","method":"GET","operation":"X","path":"/","query":false,"status":200})",
       "'query' must be a string (got false)"},
      {"{" + base + "}", "'status' must be given (or 'error')"},
      {"{" + base + R"(,"status":"200"})", "'status' must be an integer from 100 to 599 (got \"200\")"},
      {"{" + base + R"(,"status":-1})", "'status' must be an integer from 100 to 599 (got -1)"},
      {"{" + base + R"(,"status":99})", "'status' must be an integer from 100 to 599 (got 99)"},
      {"{" + base + R"(,"status":600})", "'status' must be an integer from 100 to 599 (got 600)"},
      {"{" + base + R"(,"status":200.5})", "'status' must be an integer from 100 to 599 (got 200.5)"},
      {"{" + base + R"(,"status":1e300})", "'status' must be an integer from 100 to 599 (got 1e+300)"},
      {"{" + base + R"(,"status":99999999999999999999999})",
       "'status' must be an integer from 100 to 599 (got 9.999999999999999e+22)"},
      {"{" + base + R"(,"status":18446744073709551615})",
       "'status' must be an integer from 100 to 599 (got 18446744073709551615)"},
      {"{" + base + R"(,"status":200,"headers":[]})", "'headers' must be an object (got [])"},
      {"{" + base + R"(,"status":200,"headers":{"etag":5}})", "'headers.etag' must be a string (got 5)"},
      {"{" + base + R"(,"status":200,"response":{"a":1}})", "'response' must be a string (got {\"a\":1})"},
      {"{" + base + R"(,"status":200,"response_base64":12})", "'response_base64' must be a string (got 12)"},
      {"{" + base + R"(,"status":200,"response_base64":"!!"})", "'response_base64' is not base64"},
      {"{" + base + R"(,"error":"boom"})", "'error' must be an object of kind, code and message (got \"boom\")"},
      {"{" + base + R"(,"error":{"code":"X"}})", "'error.kind' must be a string"},
      {"{" + base + R"(,"error":{"kind":"transport"}})", "'error.code' must be a string"},
      {"{" + base + R"(,"error":{"kind":"transport","code":1}})", "'error.code' must be a string (got 1)"},
      {"{" + base + R"(,"error":{"kind":"transport","code":"X","message":{}}})",
       "'error.message' must be a string (got {})"},
      {"{" + base + R"(,"error":{"kind":"boom","code":"X"}})",
       "'error.kind' must be one of validation, api, transport, timeout, config, waiter, io (got \"boom\")"},
      {std::string(300, '[') + std::string(300, ']'), "the line is nested more than 200 levels deep"},
      {"{" + base.substr(0, base.find("\"body\":\"\"")) + "\"body\":\"" + std::string(300, '[') + "\"" +
           base.substr(base.find("\"body\":\"\"") + 9) + R"(,"status":200})",
       "'body' is nested more than 200 levels deep"},
  };
  const std::string good = "{" + base + R"(,"status":200})" + "\n";
  for (const Hostile& h : table) {
    INFO(h.line);
    Folder bad(good + h.line + "\n");
    auto opened = Cassette::open(Cassette::Mode::replay, bad.path.string());
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.error().code == "MalformedCassette");
    CHECK(opened.error().kind == cloud::ErrorKind::config);
    CHECK(opened.error().message == (bad.path / "storage.jsonl").string() + ":2: " + h.problem);
  }
}

TEST_CASE("cassette: recording replaces only its own files, and replaying reads only them", "[cassette]") {
  Folder dir("");  // a storage.jsonl of an earlier recording, empty
  std::ofstream(dir.path / "data.jsonl") << "a user's file\n";
  std::ofstream(dir.path / "endpoints.json") << "{}\n";
  {
    auto recording = Cassette::open(Cassette::Mode::record, dir.path.string());
    REQUIRE(recording.ok());
  }
  CHECK(fs::exists(dir.path / "data.jsonl"));
  CHECK_FALSE(fs::exists(dir.path / "storage.jsonl"));
  CHECK_FALSE(fs::exists(dir.path / "endpoints.json"));
  auto replaying = Cassette::open(Cassette::Mode::replay, dir.path.string());
  REQUIRE(replaying.ok());  // data.jsonl is not a recording, and is not read as one
  CHECK((*replaying)->unused().empty());
}

// The text of `path`, whole.
std::string file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("cassette: an answer header named like a credential is recorded with its name, not its value", "[cassette]") {
  cloud::Emulator emulator;
  REQUIRE(emulator.start().ok());
  Folder dir("");
  cloud::ClientConfig config;
  for (const auto& [api, url] : emulator.endpoints()) config.endpoints[api] = url;
  config.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  config.record = dir.path.string();
  auto recording = cloud::open_cassette(config, {"storage"});
  REQUIRE(recording.ok());
  cloud::Client recorder(config);
  recorder.set_cassette(*recording);
  // the object's metadata comes back as answer headers named like credentials
  REQUIRE(recorder.request({"storage", "PUT", "/taped", {}, {}, ""})->response.status == 200);
  cloud::RawRequest put{"storage",
                        "PUT",
                        "/taped/o",
                        {},
                        {{"X-Ext-Meta-My-Secret", "s3cr3t-value"},
                         {"X-Ext-Meta-Auth-Token", "t0ken-value"},
                         {"X-Ext-Meta-Colour", "blue"}},
                        "x"};
  REQUIRE(recorder.request(put)->response.status == 200);
  auto got = recorder.request({"storage", "GET", "/taped/o", {}, {}, ""});
  REQUIRE(got.ok());
  REQUIRE(cloud::header_value(got->response.headers, "x-ext-meta-my-secret") == "s3cr3t-value");  // the live answer
  std::string recorded = file_text(dir.path / "storage.jsonl");
  CHECK(recorded.find("s3cr3t-value") == std::string::npos);
  CHECK(recorded.find("t0ken-value") == std::string::npos);
  CHECK(recorded.find(R"("x-ext-meta-my-secret":"<redacted>")") != std::string::npos);
  CHECK(recorded.find(R"("x-ext-meta-auth-token":"<redacted>")") != std::string::npos);
  CHECK(recorded.find(R"("x-ext-meta-colour":"blue")") != std::string::npos);
  // replayed, the header is there, its value redacted
  cloud::ClientConfig again;
  again.replay = dir.path.string();
  auto replaying = cloud::open_cassette(again, {"storage"});
  REQUIRE(replaying.ok());
  cloud::Client player(again);
  player.set_cassette(*replaying);
  CHECK(player.request({"storage", "PUT", "/taped", {}, {}, ""}).ok());
  CHECK(player.request(put).ok());
  auto replayed = player.request({"storage", "GET", "/taped/o", {}, {}, ""});
  REQUIRE(replayed.ok());
  CHECK(replayed->response.body == "x");
  CHECK(cloud::header_value(replayed->response.headers, "x-ext-meta-my-secret") == "<redacted>");
  CHECK(cloud::header_value(replayed->response.headers, "x-ext-meta-auth-token") == "<redacted>");
}
