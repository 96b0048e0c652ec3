// The client pipeline against the emulator and against a scripted loopback server:
// a whole call, nothing sent when validation fails, the error kinds, and the retry
// policy (in the loop's virtual time, so no test waits for back-off).
#include <catch2/catch.hpp>
#include <httplib.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/client/client.h"
#include "emulator/emulator.h"
#include "scripted_server.h"

namespace {

using cloud::Client;
using cloud::ClientConfig;
using cloud::ErrorKind;
using cloud::json;

ClientConfig config_for(const std::string& api, const std::string& url) {
  ClientConfig c;
  c.endpoints[api] = url;
  c.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  return c;
}

// A client whose sleeps are recorded instead of slept: on a loop of its own, in
// virtual time, the seconds it skips noted.
struct FakeSleepClient {
  cloud::Loop loop;
  std::vector<double> sleeps;
  std::shared_ptr<void> virtual_time = loop.hold_virtual_time();
  Client client;
  explicit FakeSleepClient(ClientConfig c) : client(on_loop(std::move(c), loop)) {
    loop.follow([this](double s) { sleeps.push_back(s); });
  }
  static ClientConfig on_loop(ClientConfig c, cloud::Loop& loop) {
    c.transport.loop = &loop;
    return c;
  }
};

const json kUpdate = {{"SnapshotName", "snap-1"}, {"snapshot", {{"description", "from C++"}}}};

json restore_args() { return {{"backupId", std::string(32, 'a')}, {"instanceId", "code-1"}}; }

}  // namespace

TEST_CASE("UpdateSnapshot end to end against the emulator") {
  cloud::Emulator emulator;
  REQUIRE(emulator.start().ok());
  ClientConfig config;
  for (const auto& [api, url] : emulator.endpoints()) config.endpoints[api] = url;
  config.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  Client client(config);

  auto r = client.call("update_snapshot", kUpdate);
  REQUIRE(r.ok());
  CHECK(r->result["snapshot"]["description"] == "from C++");
  CHECK(r->result["snapshot"]["status"] == "AVAILABLE");
  CHECK(r->meta.status == 200);
  CHECK(r->meta.attempts == 1);
  CHECK_FALSE(r->meta.request_id.empty());

  SECTION("a wrong secret is refused with SignatureDoesNotMatch") {
    config.credentials.secret_access_key = "wrong";
    auto e = Client(config).call("UpdateSnapshot", kUpdate);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().kind == ErrorKind::api);
    CHECK(e.error().code == "SignatureDoesNotMatch");
    CHECK(e.error().status == 403);
    CHECK(e.error().describe().find("wrong") == std::string::npos);
  }
  SECTION("the aws dialect is verified too") {
    config.dialect = &cloud::Dialect::aws();
    CHECK(Client(config).call("UpdateSnapshot", kUpdate).ok());
  }
}

TEST_CASE("Nothing is sent when validation fails") {
  ScriptedServer server([](int, const httplib::Request&, httplib::Response& res) { res.status = 404; });
  Client client(config_for("cluster", server.url()));
  auto e = client.call("UpdateSnapshot", {{"SnapshotName", "snap-1"}, {"snapshot", {{"name", "Not_Valid"}}}});
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().kind == ErrorKind::validation);
  REQUIRE(e.error().fields.size() == 1);
  CHECK(e.error().fields[0].path == "snapshot.name");
  CHECK(server.count() == 0);
  CHECK_FALSE(client.call("UpdateSnapshot", kUpdate).ok());  // valid: sent, answered 404
  CHECK(server.count() == 1);
}

TEST_CASE("Missing endpoint or credentials are config errors") {
  ClientConfig c;
  auto e = Client(c).call("UpdateSnapshot", kUpdate);
  CHECK(e.error().kind == ErrorKind::config);
  CHECK(e.error().code == "NoEndpoint");
  CHECK(e.error().operation == "UpdateSnapshot");
  c.endpoints["cluster"] = "http://127.0.0.1:9";
  e = Client(c).call("UpdateSnapshot", kUpdate);
  CHECK(e.error().code == "NoCredentials");
}

TEST_CASE("5xx answers are retried with growing jittered back-off") {
  ScriptedServer server([](int n, const httplib::Request&, httplib::Response& res) {
    res.status = n < 3 ? 503 : 200;
    res.set_content(n < 3 ? R"({"code":"ServiceUnavailable"})" : R"({"snapshot":{"name":"snap-1"}})",
                    "application/json");
  });
  FakeSleepClient c(config_for("cluster", server.url()));
  auto r = c.client.call("UpdateSnapshot", kUpdate);
  REQUIRE(r.ok());
  CHECK(r->meta.attempts == 3);
  REQUIRE(c.sleeps.size() == 2);
  CHECK(c.sleeps[0] <= 0.2);  // full jitter below base * 2^0
  CHECK(c.sleeps[1] <= 0.4);  // and below base * 2^1
}

TEST_CASE("Retries stop at the attempt limit and report the last error") {
  ScriptedServer server([](int, const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content(R"({"code":"InternalError","message":"try later"})", "application/json");
  });
  ClientConfig config = config_for("cluster", server.url());
  config.retry.max_attempts = 4;
  FakeSleepClient c(config);
  auto e = c.client.call("UpdateSnapshot", kUpdate);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().code == "InternalError");
  CHECK(e.error().message == "try later");
  CHECK(server.count() == 4);
}

TEST_CASE("A restore is never resent once it may have reached the server") {
  ScriptedServer server([](int, const httplib::Request&, httplib::Response& res) { res.status = 503; });
  FakeSleepClient c(config_for("devops", server.url()));
  auto e = c.client.call("RestoreInstance", restore_args());
  REQUIRE_FALSE(e.ok());
  CHECK(server.count() == 1);

  SECTION("unless the user opts in") {
    ClientConfig opted = config_for("devops", server.url());
    opted.retry.retry_non_idempotent = true;
    FakeSleepClient o(opted);
    CHECK_FALSE(o.client.call("RestoreInstance", restore_args()).ok());
    CHECK(server.count() == 4);
  }
}

// A name that does not resolve is a wrong endpoint, not a passing failure: no retry.
TEST_CASE("An unresolvable host is tried once, and the error names it and the endpoint setting") {
  FakeSleepClient c(config_for("cluster", "http://nonexistent.invalid/"));
  auto e = c.client.call("GetSnapshot", {{"SnapshotName", "snap-1"}});
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().kind == ErrorKind::transport);
  CHECK(e.error().code == "UnknownHost");
  CHECK(e.error().attempts == 1);
  CHECK(c.sleeps.empty());
  CHECK_THAT(e.error().message,
             Catch::Contains("cannot resolve host nonexistent.invalid") && Catch::Contains("check the endpoint"));
}

TEST_CASE("A refused connection is retried even for a restore: it never arrived") {
  ClientConfig config = config_for("devops", "http://127.0.0.1:9");
  FakeSleepClient c(config);
  auto e = c.client.call("RestoreInstance", restore_args());
  CHECK(e.error().kind == ErrorKind::transport);
  CHECK(e.error().code == "ConnectionFailed");
  CHECK(c.sleeps.size() == 2);
}

TEST_CASE("JSON error codes come from the error-type header first, then the body") {
  ScriptedServer server([](int, const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_header("x-amzn-ErrorType", "ValidationException:http://internal/");
    res.set_content(R"({"__type":"com.example#Other","Message":"bad input"})", "application/json");
  });
  auto e = Client(config_for("cluster", server.url())).call("UpdateSnapshot", kUpdate);
  CHECK(e.error().code == "ValidationException");
  CHECK(e.error().message == "bad input");
  CHECK(e.error().status == 400);
}

TEST_CASE("The debug hook sees every attempt, and never a secret, even one the server echoes") {
  // A server that answers with what it received, as some error bodies do.
  ScriptedServer server([](int n, const httplib::Request& req, httplib::Response& res) {
    res.status = n == 1 ? 503 : 200;
    std::string echo = req.get_header_value("Authorization") + " " + req.get_header_value("X-Ext-Security-Token");
    res.set_content(
        n == 1 ? json{{"code", "Unavailable"}, {"message", echo}}.dump() : R"({"snapshot":{"name":"snap-1"}})",
        "application/json");
  });
  ClientConfig config = config_for("cluster", server.url());
  config.credentials.session_token = "FwoGZXIvYXdzEJr-session-token";
  std::vector<std::string> dumps;
  config.debug = [&dumps](const std::string& text) { dumps.push_back(text); };
  FakeSleepClient c(config);
  REQUIRE(c.client.call("UpdateSnapshot", kUpdate).ok());
  REQUIRE(dumps.size() == 2);
  CHECK(dumps[0].rfind("* UpdateSnapshot, attempt 1\n> PUT " + server.url() + "/v1/snapshots/snap-1\n", 0) == 0);
  CHECK(dumps[0].find("< HTTP 503") != std::string::npos);
  CHECK(dumps[1].find("< HTTP 200") != std::string::npos);
  CHECK(dumps[1].find("\"description\":\"from C++\"") != std::string::npos);  // the request body
  for (const std::string& d : dumps) {
    CHECK(d.find(cloud::kEmulatorSecretKey) == std::string::npos);
    CHECK(d.find("FwoGZXIvYXdzEJr") == std::string::npos);
    CHECK(d.find("Signature=<redacted>") != std::string::npos);
  }
}

TEST_CASE("An error whose answer echoes the request holds no token or signature, in any field") {
  // Some servers put the request in their error body: headers, and the signature in free text.
  ScriptedServer server([](int, const httplib::Request& req, httplib::Response& res) {
    std::string auth = req.get_header_value("Authorization");
    std::string signature = auth.substr(auth.find("Signature=") + 10);
    std::string echo = "you sent Authorization: " + auth +
                       "\nX-Ext-Security-Token: " + req.get_header_value("X-Ext-Security-Token") +
                       "\nexpected a signature other than " + signature;
    res.status = 400;
    res.set_content(json{{"code", "BadRequest"}, {"message", echo}}.dump(), "application/json");
  });
  ClientConfig config = config_for("cluster", server.url());
  config.credentials.session_token = "FwoGZXIvYXdzEJr-echoed-session-token";
  auto e = Client(config).call("UpdateSnapshot", kUpdate);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().code == "BadRequest");
  CHECK(e.error().message.find("Credential=CLOUDLUAEMULATORKEY/") != std::string::npos);  // the key id stays
  for (const std::string& shown : {e.error().message, e.error().describe()}) {
    CHECK(shown.find("FwoGZXIvYXdzEJr") == std::string::npos);
    CHECK(shown.find("Signature=<redacted>") != std::string::npos);
    CHECK(shown.find("other than <redacted>") != std::string::npos);
  }
}

TEST_CASE("InvalidPart is waited for (invalid_part_delay, not the back-off) and repeated") {
  const char* invalid_part = "<Error><Code>InvalidPart</Code><Message>not yet</Message></Error>";
  const char* done =
      "<CompleteMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><ETag>\"e-1\"</ETag>"
      "</CompleteMultipartUploadResult>";
  ScriptedServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    res.status = n < 3 ? 400 : 200;
    res.set_content(n < 3 ? invalid_part : done, "application/xml");
  });
  ClientConfig config = config_for("storage", server.url());
  config.retry.invalid_part_delay = 2.5;
  FakeSleepClient c(config);
  json args = {
      {"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u"}, {"Part", {{{"PartNumber", 1}, {"ETag", "\"e\""}}}}};
  auto r = c.client.call("CompleteMultipartUpload", args);
  REQUIRE(r.ok());
  CHECK(r->result["ETag"] == "\"e-1\"");
  CHECK(r->meta.attempts == 3);
  CHECK(c.sleeps == std::vector<double>{2.5, 2.5});

  SECTION("the attempt limit bounds it too, and the error says how many were made") {
    ScriptedServer always([&](int, const httplib::Request&, httplib::Response& res) {
      res.status = 400;
      res.set_content(invalid_part, "application/xml");
    });
    ClientConfig limited = config_for("storage", always.url());
    limited.retry.invalid_part_delay = 2.5;
    limited.retry.max_attempts = 2;
    FakeSleepClient a(limited);
    auto e = a.client.call("CompleteMultipartUpload", args);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().code == "InvalidPart");
    CHECK(e.error().attempts == 2);
    CHECK(always.count() == 2);
    CHECK(a.sleeps == std::vector<double>{2.5});
  }
}

TEST_CASE("An <Error> in a 200 answer to a completion is retried like a 5xx") {
  ScriptedServer server([](int n, const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content(n == 1 ? "<Error><Code>InternalError</Code><Message>oops</Message></Error>"
                           : "<CompleteMultipartUploadResult><ETag>\"e-1\"</ETag></CompleteMultipartUploadResult>",
                    "application/xml");
  });
  FakeSleepClient c(config_for("storage", server.url()));
  json args = {
      {"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u"}, {"Part", {{{"PartNumber", 1}, {"ETag", "\"e\""}}}}};
  auto r = c.client.call("CompleteMultipartUpload", args);
  REQUIRE(r.ok());
  CHECK(r->meta.attempts == 2);
  CHECK(c.sleeps.size() == 1);
}

TEST_CASE("A completion answered 200 with an empty or cut-short body is an error, not a success") {
  const std::string full =
      "<CompleteMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><ETag>\"e-1\"</ETag>"
      "</CompleteMultipartUploadResult>";
  for (const std::string& body : {std::string(), full.substr(0, 40)}) {
    INFO("body: '" << body << "'");
    ScriptedServer server([&](int, const httplib::Request&, httplib::Response& res) {
      res.status = 200;
      res.set_content(body, "application/xml");
    });
    FakeSleepClient c(config_for("storage", server.url()));
    json args = {
        {"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u"}, {"Part", {{{"PartNumber", 1}, {"ETag", "\"e\""}}}}};
    auto e = c.client.call("CompleteMultipartUpload", args);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().kind == ErrorKind::api);
    CHECK(e.error().code == "MalformedResponse");
    CHECK(e.error().status == 200);
    CHECK(e.error().operation == "CompleteMultipartUpload");
  }
}

TEST_CASE("A raw POST answered 503 is not resent, a raw GET is, and its answer comes back whatever its status") {
  ScriptedServer server([](int n, const httplib::Request&, httplib::Response& res) {
    res.status = n <= 2 ? 503 : 404;  // the POST's answer, the GET's first, then the GET's second
    res.set_content(R"({"code":"Gone"})", "application/json");
  });
  FakeSleepClient c(config_for("cluster", server.url()));
  cloud::RawRequest raw;
  raw.api = "cluster";
  raw.method = "POST";
  raw.path = "/v1/things";
  auto posted = c.client.request(raw);
  REQUIRE(posted.ok());
  CHECK(posted->response.status == 503);
  CHECK(posted->meta.attempts == 1);
  CHECK(server.count() == 1);

  raw.method = "GET";
  auto got = c.client.request(raw);
  REQUIRE(got.ok());
  CHECK(got->response.status == 404);  // the second answer: a 404 is final, returned as it is
  CHECK(got->meta.attempts == 2);
  CHECK(server.count() == 3);
}

TEST_CASE("A raw request goes to the endpoint's own path prefix, with its query, built once") {
  ScriptedServer server([](int, const httplib::Request& req, httplib::Response& res) {
    res.status = 200;
    res.set_content(req.path + "?" + req.get_param_value("a b"), "text/plain");
  });
  auto r = Client(config_for("cluster", server.url() + "/prefix/"))
               .request({"cluster", "GET", "/v1/x", {{"a b", "1&2"}}, {}, ""});
  REQUIRE(r.ok());
  CHECK(r->response.body == "/prefix/v1/x?1&2");
}

TEST_CASE("An API error answer becomes the call's error, parsed once, with its operation, status and request id") {
  ScriptedServer server([](int, const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_header("x-ext-request-id", "req-404");
    res.set_content(R"({"code":"NotFound","message":"no snapshot snap-1"})", "application/json");
  });
  FakeSleepClient c(config_for("cluster", server.url()));
  auto e = c.client.call("UpdateSnapshot", kUpdate);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().kind == ErrorKind::api);
  CHECK(e.error().code == "NotFound");
  CHECK(e.error().message == "no snapshot snap-1");
  CHECK(e.error().operation == "UpdateSnapshot");
  CHECK(e.error().status == 404);
  CHECK(e.error().attempts == 1);
  CHECK(e.error().request_id == "req-404");
  CHECK(c.sleeps.empty());  // a 404 is final
}

TEST_CASE("An <Error> in a 200 answer that stays is the call's error, not a result") {
  ScriptedServer server([](int, const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content("<Error><Code>InternalError</Code><Message>oops</Message></Error>", "application/xml");
  });
  ClientConfig config = config_for("storage", server.url());
  config.retry.max_attempts = 2;
  FakeSleepClient c(config);
  json args = {
      {"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u"}, {"Part", {{{"PartNumber", 1}, {"ETag", "\"e\""}}}}};
  auto e = c.client.call("CompleteMultipartUpload", args);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().code == "InternalError");
  CHECK(e.error().message == "oops");
  CHECK(e.error().status == 200);
  CHECK(e.error().attempts == 2);
  CHECK(server.count() == 2);
}

// The target of an absolute URL ("/path?query"), for httplib.
static std::string target_of(const std::string& url) { return url.substr(url.find('/', url.find("//") + 2)); }

TEST_CASE("presigned URLs: a PUT and a GET through the URL alone, in both dialects", "[client][presign]") {
  for (const cloud::Dialect* dialect : {&cloud::Dialect::ext(), &cloud::Dialect::aws()}) {
    INFO(dialect->name);
    cloud::Emulator emulator;
    REQUIRE(emulator.start().ok());
    std::string storage;
    for (const auto& [api, url] : emulator.endpoints())
      if (api == "storage") storage = url;
    ClientConfig config = config_for("storage", storage);
    config.dialect = dialect;
    Client client(config);
    REQUIRE(client.call("CreateBucket", {{"Bucket", "bkt"}}).ok());
    json object = {{"Bucket", "bkt"}, {"Object", "dir/a b.txt"}};
    auto put = client.presign("PutObject", object, 900);
    REQUIRE(put.ok());
    CHECK(put->find(dialect->query_prefix + "Algorithm=") != std::string::npos);
    httplib::Client http(storage);
    auto stored = http.Put(target_of(*put).c_str(), "bytes \x01\x02", "application/octet-stream");
    REQUIRE(stored);
    CHECK(stored->status == 200);
    auto get = client.presign("GetObject", object, 60);
    REQUIRE(get.ok());
    auto fetched = http.Get(target_of(*get).c_str());
    REQUIRE(fetched);
    CHECK(fetched->status == 200);
    CHECK(fetched->body == "bytes \x01\x02");
    std::string tampered = target_of(*get);
    tampered.replace(tampered.find("a%20b"), 5, "a%20c");
    auto refused = http.Get(tampered.c_str());
    REQUIRE(refused);
    CHECK(refused->status == 403);
    CHECK(refused->body.find("SignatureDoesNotMatch") != std::string::npos);
  }
}

TEST_CASE("presigned URLs: the model's checks, the lifetime, and only what a URL carries", "[client][presign]") {
  Client client(config_for("storage", "http://127.0.0.1:9"));
  auto missing = client.presign("GetObject", {{"Bucket", "bkt"}}, 900);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::validation);
  REQUIRE(missing.error().fields.size() == 1);
  CHECK(missing.error().fields[0].path == "Object");
  for (long expires : {0L, 604801L}) {
    auto life = client.presign("GetObject", {{"Bucket", "bkt"}, {"Object", "o"}}, expires);
    REQUIRE_FALSE(life.ok());
    CHECK(life.error().code == "InvalidExpires");
  }
  CHECK(client.presign("GetObject", {{"Bucket", "bkt"}, {"Object", "o"}}, 604800).ok());
  auto header = client.presign("GetObject", {{"Bucket", "bkt"}, {"Object", "o"}, {"Range", "bytes=0-1"}}, 900);
  REQUIRE_FALSE(header.ok());
  CHECK(header.error().code == "NotInUrl");
  CHECK(cloud::presigned_object_operation("DELETE") == nullptr);
  CHECK(std::string(cloud::presigned_object_operation("HEAD")) == "HeadObject");
}
