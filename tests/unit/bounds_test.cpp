// Hostile or mistaken input meets a bound, never a crash or an exhausted memory:
// documents nested past kMaxDepth in every converter (a server's JSON or XML answer,
// Lua tables as arguments, JSON pushed to Lua, bodies the emulator reads), answers
// past the response limit, `file =` on what is not a regular file or is too large,
// and bodies the emulator refuses before reading them.
#include <arpa/inet.h>
#include <fcntl.h>
#include <lua.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/base/limits.h"
#include "emulator_harness.h"
#include "lua/binding.h"
#include "lua/convert.h"
#include "lua/session.h"
#include "scripted_server.h"

namespace {

using cloud::ErrorKind;
using cloud::json;
using cloud::kMaxDepth;

constexpr int kHostileDepth = 100000;

// `levels` JSON arrays, one inside the other, around `inner`.
std::string nested_arrays(int levels, const std::string& inner = "") {
  return std::string(levels, '[') + inner + std::string(levels, ']');
}

// `levels` XML elements <a>, one inside the other.
std::string nested_elements(int levels) {
  std::string out;
  for (int i = 0; i < levels; ++i) out += "<a>";
  for (int i = 0; i < levels; ++i) out += "</a>";
  return out;
}

cloud::ClientConfig config_for(const std::string& api, const std::string& url) {
  cloud::ClientConfig c;
  c.endpoints[api] = url;
  c.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  return c;
}

const json kUpdate = {{"SnapshotName", "snap-1"}, {"snapshot", {{"description", "x"}}}};

// `object` with `key` set to `value`.
json with(json object, const std::string& key, const json& value) {
  object[key] = value;
  return object;
}

// A server answering every request 200 with `body` in `type`.
ScriptedServer answering(const std::string& body, const std::string& type) {
  return ScriptedServer(
      [body, type](int, const httplib::Request&, httplib::Response& res) { res.set_content(body, type.c_str()); });
}

// A Lua state with the `cloud` module of a session whose client has `config`.
class LuaCloud {
 public:
  explicit LuaCloud(const cloud::ClientConfig& config) : L_(luaL_newstate()) {
    luaL_openlibs(L_);
    auto session = std::make_shared<cloud::Session>();
    session->config.client = config;
    session->client = cloud::make_client(config).value();
    cloud::open_cloud(L_, session);
  }
  ~LuaCloud() { lua_close(L_); }
  lua_State* state() { return L_; }

  // Runs `code` and returns its results as strings (tostring of each).
  std::vector<std::string> run(const std::string& code) {
    int top = lua_gettop(L_);
    int rc = luaL_dostring(L_, code.c_str());
    INFO((rc == LUA_OK ? "" : luaL_tolstring(L_, -1, nullptr)));
    REQUIRE(rc == LUA_OK);
    std::vector<std::string> out;
    for (int i = top + 1; i <= lua_gettop(L_); ++i) {
      out.push_back(luaL_tolstring(L_, i, nullptr));
      lua_pop(L_, 1);
    }
    lua_settop(L_, top);
    return out;
  }

 private:
  lua_State* L_;
};

// Calls `call` (Lua code calling an operation) in pcall and returns the error's
// kind, code, message and first field problem ("" when none).
std::vector<std::string> failure(LuaCloud& lua, const std::string& call) {
  return lua.run("local ok, err = pcall(function() return " + call +
                 " end)\n"
                 "assert(not ok, 'the call succeeded')\n"
                 "local field = err.fields and err.fields[1]\n"
                 "return err.kind, err.code, err.message, field and field.path .. ': ' .. field.problem or ''");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A raw request to `url` ("http://127.0.0.1:port"): `head` is sent, nothing more,
// and what comes back until the server closes is returned.
std::string raw_exchange(const std::string& url, const std::string& head) {
  int port = std::stoi(url.substr(url.rfind(':') + 1));
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  timeval wait{30, 0};  // a server that waits for the body fails the test instead of hanging it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::send(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()));
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  return answer;
}

// A temporary folder, removed with what it holds.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/cloudlua-bounds-XXXXXX";
    REQUIRE(::mkdtemp(name));
    path = name;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

// ------------------------------------------------------------------ depth

TEST_CASE("bounds: a JSON answer nested 100,000 levels deep is an api error in Lua, not a crash", "[bounds][depth]") {
  ScriptedServer server = answering(R"({"snapshot":)" + nested_arrays(kHostileDepth) + "}", "application/json");
  LuaCloud lua(config_for("cluster", server.url()));
  auto err =
      failure(lua, R"(cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "x" } })");
  CHECK(err[0] == "api");
  CHECK(err[1] == "DocumentTooDeep");
  CHECK(contains(err[2], "the answer is nested more than 200 levels deep"));
}

TEST_CASE("bounds: a JSON answer of 200 levels is read, one of 201 refused", "[bounds][depth]") {
  // The answer object is the first level, the snapshot the second, the arrays of a
  // member the model does not know (kept as it came) the others.
  ScriptedServer fits =
      answering(R"({"snapshot": {"extra":)" + nested_arrays(kMaxDepth - 2, "7") + "}}", "application/json");
  LuaCloud lua(config_for("cluster", fits.url()));
  std::string walk =
      "local v = r.snapshot.extra; local n = 2; while type(v) == 'table' do v, n = v[1], n + 1 end; return n, v";
  auto r = lua.run(
      R"(local r = cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "x" } } )" +
      walk);
  CHECK(r == std::vector<std::string>{std::to_string(kMaxDepth), "7"});  // 200 tables, then the value

  ScriptedServer deeper =
      answering(R"({"snapshot": {"extra":)" + nested_arrays(kMaxDepth - 1, "7") + "}}", "application/json");
  auto out = cloud::Client(config_for("cluster", deeper.url())).call("UpdateSnapshot", kUpdate);
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().kind == ErrorKind::api);
  CHECK(out.error().code == "DocumentTooDeep");
  CHECK(out.error().operation == "UpdateSnapshot");
}

TEST_CASE("bounds: brackets inside strings do not count as depth, escaped quotes included", "[bounds][depth]") {
  // The quick depth check before parsing skips strings; a string full of brackets
  // after an escaped quote is a value like any other.
  std::string brackets(3 * kMaxDepth, '[');
  ScriptedServer server =
      answering(R"({"snapshot":{"description":"a\"b)" + brackets + R"(","name":"n"}})", "application/json");
  auto out = cloud::Client(config_for("cluster", server.url())).call("UpdateSnapshot", kUpdate);
  REQUIRE(out.ok());
  CHECK(out->result["snapshot"]["description"] == "a\"b" + brackets);
  CHECK(out->result["snapshot"]["name"] == "n");
}

TEST_CASE("bounds: an XML answer nested 100,000 levels deep is an api error", "[bounds][depth]") {
  std::string body = "<CompleteMultipartUploadResult><Bucket>b</Bucket>" + nested_elements(kHostileDepth) +
                     "</CompleteMultipartUploadResult>";
  ScriptedServer server = answering(body, "application/xml");
  json args = {
      {"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u"}, {"Part", {{{"PartNumber", 1}, {"ETag", "\"e\""}}}}};
  auto out = cloud::Client(config_for("storage", server.url())).call("CompleteMultipartUpload", args);
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().kind == ErrorKind::api);
  CHECK(out.error().code == "DocumentTooDeep");
}

TEST_CASE("bounds: Lua tables nested past the limit are a validation error, nothing sent", "[bounds][depth]") {
  ScriptedServer server(
      [](int, const httplib::Request&, httplib::Response& res) { res.set_content("{}", "application/json"); });
  LuaCloud lua(config_for("cluster", server.url()));
  lua.run("deep = 'leaf' for i = 1, 100000 do deep = { deep } end");
  auto err =
      failure(lua, R"(cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = deep } })");
  CHECK(err[0] == "validation");
  CHECK(contains(err[3], "snapshot.description[1][1]"));
  CHECK(contains(err[3], "tables nested more than 200 levels deep"));

  err = failure(lua, R"((function() local t = {} t.me = t return cloud.call("UpdateSnapshot", t) end)())");
  CHECK(err[0] == "validation");
  CHECK(contains(err[3], "me.me.me"));
  CHECK(contains(err[3], "(a table that contains itself?)"));
  CHECK(server.count() == 0);
}

TEST_CASE("bounds: Lua -> JSON takes 200 levels of tables and refuses 201", "[bounds][depth]") {
  lua_State* L = luaL_newstate();
  for (int levels : {kMaxDepth, kMaxDepth + 1}) {
    lua_pushboolean(L, 1);
    for (int i = 0; i < levels; ++i) {
      lua_createtable(L, 1, 0);
      lua_insert(L, -2);
      lua_rawseti(L, -2, 1);
    }
    auto out = cloud::to_json(L, -1);
    lua_pop(L, 1);
    INFO(levels << " levels");
    CHECK(out.ok() == (levels == kMaxDepth));
    if (!out.ok()) CHECK(out.error().kind == ErrorKind::validation);
  }
  lua_close(L);
}

// Pushes the JSON document its light userdata argument points to (a binding: behind
// the edge, lua/binding.h, where push_json raises).
int push_document(lua_State* L) {
  cloud::push_json(L, *static_cast<const json*>(lua_touserdata(L, 1)));
  return 1;
}

TEST_CASE("bounds: JSON -> Lua raises DocumentTooDeep for a document past the limit", "[bounds][depth]") {
  lua_State* L = luaL_newstate();
  json deep = json::parse(nested_arrays(kHostileDepth));  // nlohmann's parser does not recurse
  lua_pushcfunction(L, cloud::protect<push_document>);
  lua_pushlightuserdata(L, &deep);
  REQUIRE(lua_pcall(L, 1, 1, 0) == LUA_ERRRUN);
  REQUIRE(lua_istable(L, -1));
  lua_getfield(L, -1, "kind");
  lua_getfield(L, -2, "code");
  CHECK(std::string(lua_tostring(L, -2)) == "api");
  CHECK(std::string(lua_tostring(L, -1)) == "DocumentTooDeep");
  lua_close(L);
}

TEST_CASE("bounds: the emulator answers a JSON body nested 100,000 levels deep with 400", "[bounds][depth][emulator]") {
  harness::Running e;
  cloud::Client client(e.client_config());
  cloud::RawRequest raw;
  raw.api = "cluster";
  raw.method = "PUT";
  raw.path = "/v1/snapshots/snap-1";
  raw.headers = {{"Content-Type", "application/json"}};
  raw.body = R"({"snapshot":{"description":)" + nested_arrays(kHostileDepth) + "}}";
  auto r = client.request(raw);
  REQUIRE(r.ok());
  CHECK(r->response.status == 400);
  json body = json::parse(r->response.body);
  CHECK(body["code"] == "SerializationException");
  CHECK(contains(body["message"], "the request body is nested more than 200 levels deep"));
}

TEST_CASE("bounds: the emulator answers an XML body nested 100,000 levels deep with 400 MalformedXML",
          "[bounds][depth][emulator]") {
  harness::Running e;
  cloud::Client client(e.client_config());
  cloud::RawRequest raw;
  raw.api = "storage";
  raw.method = "POST";
  raw.path = "/demo-bucket/k";
  raw.query = {{"uploadId", "u-1"}};
  raw.headers = {{"Content-Type", "application/xml"}};
  raw.body = "<CompleteMultipartUpload><Part>" + nested_elements(kHostileDepth) + "</Part></CompleteMultipartUpload>";
  auto r = client.request(raw);
  REQUIRE(r.ok());
  CHECK(r->response.status == 400);
  CHECK(contains(r->response.body, "<Code>MalformedXML</Code>"));
  CHECK(contains(r->response.body, "the body is nested more than 200 levels deep"));
}

// ------------------------------------------------------------------ memory

TEST_CASE("bounds: a 200 MB answer is refused at the response limit, the rest never read", "[bounds][memory]") {
  const size_t total = 200u << 20, chunk = 64u << 10;
  std::atomic<size_t> sent{0};
  cloud::Outcome<cloud::HttpResponse> out = cloud::HttpResponse{};
  {
    // Streamed without a Content-Length: only the bytes themselves can tell.
    ScriptedServer server([&](int, const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/octet-stream",
                                       [&, total, chunk](size_t offset, httplib::DataSink& sink) {
                                         static const std::string block(chunk, 'x');
                                         if (offset >= total) {
                                           sink.done();
                                           return true;
                                         }
                                         if (!sink.write(block.data(), block.size())) return false;
                                         sent += block.size();
                                         return true;
                                       });
    });
    cloud::TransportOptions options;
    options.max_response_bytes = 1u << 20;
    cloud::Transport transport(options);
    out = transport.perform({"GET", server.url() + "/big", {}, ""});
  }
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().kind == ErrorKind::api);
  CHECK(out.error().code == "ResponseTooLarge");
  CHECK(out.error().status == 200);
  CHECK(contains(out.error().message, "is larger than 1 MiB, the most cloudlua keeps in memory"));
  CHECK(sent < total / 4);  // the transfer stopped: what is left in socket buffers at most
}

TEST_CASE("bounds: a declared Content-Length past the limit is refused before the body, HEAD's is not a body",
          "[bounds][memory]") {
  const size_t total = 200u << 20;
  std::atomic<size_t> sent{0};
  ScriptedServer server([&](int, const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(total, "application/octet-stream", [&](size_t, size_t length, httplib::DataSink& sink) {
      static const std::string block(64u << 10, 'x');
      size_t n = std::min(length, block.size());
      if (!sink.write(block.data(), n)) return false;
      sent += n;
      return true;
    });
  });
  cloud::TransportOptions options;
  options.max_response_bytes = 1u << 20;
  cloud::Transport transport(options);
  auto out = transport.perform({"GET", server.url() + "/big", {}, ""});
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().code == "ResponseTooLarge");
  CHECK(sent < total / 4);

  auto head = transport.perform({"HEAD", server.url() + "/big", {}, ""});
  REQUIRE(head.ok());
  CHECK(head->status == 200);
  CHECK(cloud::header_value(head->headers, "Content-Length") == std::to_string(total));
}

TEST_CASE(
    "bounds: get_object past the limit says how to write the object to a file or read it in pieces, and is not retried",
    "[bounds][memory]") {
  harness::Running e;
  cloud::ClientConfig config = e.client_config();
  config.transport.max_response_bytes = 1u << 20;
  cloud::Client client(config);
  json object = {{"Bucket", "demo-bucket"}, {"Object", "big.bin"}};
  REQUIRE(client.call("PutObject", with(object, "Body", std::string((1u << 20) + 1, 'x'))).ok());

  auto whole = client.call("GetObject", object);
  REQUIRE_FALSE(whole.ok());
  CHECK(whole.error().kind == ErrorKind::api);
  CHECK(whole.error().code == "ResponseTooLarge");
  CHECK(whole.error().attempts == 1);
  CHECK(contains(whole.error().message, "larger than 1 MiB"));
  CHECK(contains(whole.error().message,
                 "write it to a file instead, which has no size limit: get_object{ ..., file = path }, "
                 "or cloud.storage.download_file{ Bucket = ..., Object = ..., file = path }"));
  CHECK(contains(whole.error().message, "; or read the object in pieces with Range, e.g. Range = \"bytes=0-1048575\""));

  auto first = client.call("GetObject", with(object, "Range", "bytes=0-1048575"));
  auto rest = client.call("GetObject", with(object, "Range", "bytes=1048576-"));
  REQUIRE(first.ok());
  REQUIRE(rest.ok());
  CHECK(first->result["Body"].get<std::string>().size() == (1u << 20));
  CHECK(rest->result["Body"] == "x");

  TempDir dir;
  auto written = client.call("GetObject", with(object, "file", dir.path + "/big.bin"));  // as the hint says
  REQUIRE(written.ok());
  CHECK(std::filesystem::file_size(dir.path + "/big.bin") == (1u << 20) + 1);
}

TEST_CASE("bounds: file = reads regular files only, and none over the 5 GiB a part or object may hold",
          "[bounds][memory]") {
  harness::Running e;
  LuaCloud lua(e.client_config());
  TempDir dir;
  auto put = [&](const std::string& path) {
    return failure(lua,
                   R"(cloud.storage.put_object{ Bucket = "demo-bucket", Object = "f", file = ")" + path + R"(" })");
  };

  auto err = put("/dev/zero");
  CHECK(err[0] == "validation");
  CHECK(err[3] == "file: cannot read '/dev/zero': a character device, not a regular file");

  std::string fifo = dir.path + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(put(fifo)[3] == "file: cannot read '" + fifo + "': a FIFO, not a regular file");  // and the open did not hang

  CHECK(put(dir.path)[3] == "file: cannot read '" + dir.path + "': Is a directory");

  std::string huge = dir.path + "/huge";  // sparse: no disk is used
  int fd = ::open(huge.c_str(), O_CREAT | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(cloud::kMaxBodyBytes + 1)) == 0);
  ::close(fd);
  CHECK(put(huge)[3] == "file: '" + huge +
                            "': 5368709121 bytes, more than 5 GiB, the most a part or an object may hold "
                            "(send it in parts with offset and length)");

  std::string small = dir.path + "/small";
  fd = ::open(small.c_str(), O_CREAT | O_WRONLY, 0600);
  REQUIRE(::write(fd, "hello", 5) == 5);
  ::close(fd);
  auto r = lua.run(R"(cloud.storage.put_object{ Bucket = "demo-bucket", Object = "f", file = ")" + small +
                   R"(" } return cloud.storage.get_object{ Bucket = "demo-bucket", Object = "f" }.Body)");
  CHECK(r == std::vector<std::string>{"hello"});
}

TEST_CASE("bounds: the emulator refuses a body over 5 GiB before reading it, and one of unknown length",
          "[bounds][memory][emulator]") {
  harness::Running e;
  // Only the head is sent: a server waiting for the 5 GiB would answer nothing.
  std::string answer =
      raw_exchange(e.urls["storage"], "PUT /demo-bucket/k HTTP/1.1\r\nHost: x\r\nContent-Length: 5368709121\r\n\r\n");
  INFO(answer);
  CHECK(answer.rfind("HTTP/1.1 400 ", 0) == 0);
  CHECK(contains(answer, "<Code>EntityTooLarge</Code>"));
  CHECK(contains(answer, "<ProposedSize>5368709121</ProposedSize>"));
  CHECK(contains(answer, "<MaxSizeAllowed>5368709120</MaxSizeAllowed>"));
  CHECK(contains(answer, "Connection: close"));

  answer =
      raw_exchange(e.urls["storage"], "PUT /demo-bucket/k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  INFO(answer);
  CHECK(answer.rfind("HTTP/1.1 411 ", 0) == 0);
  CHECK(contains(answer, "<Code>MissingContentLength</Code>"));
}
