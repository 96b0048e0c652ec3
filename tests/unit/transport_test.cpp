// Transport tests against a real cpp-httplib server on 127.0.0.1 (any free port). The
// server records what it received so the tests can check that requests go out exactly
// as given (signed headers); slow handlers poll a stop flag so the suite stays quick.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/net/transport.h"

namespace {

using cloud::Headers;
using cloud::HttpRequest;
using cloud::Transport;
using cloud::TransportOptions;

// What the server saw of the last request.
struct Seen {
  std::string method;
  std::string body;
  Headers headers;  // in httplib's order: by name, repeats in arrival order
  int remote_port = -1;
};

// A loopback server on its own thread, with the routes the tests use.
class TestServer {
 public:
  TestServer() {
    add_routes();
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~TestServer() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  int port() const { return port_; }
  Seen last() {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }

 private:
  // Remembers the request and echoes "METHOD\nBODY" with the client's port.
  void echo(const httplib::Request& req, httplib::Response& res) {
    Seen s{req.method, req.body, {}, req.remote_port};
    for (const auto& h : req.headers) s.headers.emplace_back(h.first, h.second);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      seen_ = s;
    }
    res.set_header("X-Remote-Port", std::to_string(req.remote_port));
    res.set_content(req.method + "\n" + req.body, "text/plain");
  }

  void add_routes() {
    auto echo = [this](const httplib::Request& req, httplib::Response& res) { this->echo(req, res); };
    server_.Get("/echo", echo);
    server_.Post("/echo", echo);
    server_.Put("/echo", echo);
    server_.Patch("/echo", echo);
    server_.Delete("/echo", echo);
    server_.Get("/missing", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_header("X-Multi", "one");
      res.set_header("X-Multi", "two");
      res.set_content("no such thing", "text/plain");
    });
    server_.Get("/moved", [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/echo", 302); });
    server_.Get("/slow", [this](const httplib::Request&, httplib::Response& res) {
      for (int i = 0; i < 100 && !stopping_; ++i)  // up to 2 s
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      res.set_content("late", "text/plain");
    });
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  Seen seen_;
};

// A one-shot raw TCP server: keeps the bytes of one request (head and a body of
// Content-Length bytes), sends `answer` (by default a bodiless 200) and closes.
class RawServer {
 public:
  explicit RawServer(std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
      : answer_(std::move(answer)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener_, 1) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve_one(); });
  }
  ~RawServer() {
    ::shutdown(listener_, SHUT_RDWR);  // unblocks accept() if no client came
    thread_.join();
    ::close(listener_);
  }
  int port() const { return port_; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  std::string received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_;
  }

 private:
  void serve_one() {
    int client = ::accept(listener_, nullptr, nullptr);
    if (client < 0) return;
    std::string data = read_request(client);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      received_ = data;
    }
    ssize_t sent = ::send(client, answer_.data(), answer_.size(), MSG_NOSIGNAL);
    (void)sent;
    ::close(client);
  }

  // Reads the head, then as many body bytes as its Content-Length says.
  static std::string read_request(int client) {
    std::string data;
    char buf[4096];
    size_t want = std::string::npos;
    while (data.size() < want) {
      ssize_t n = ::recv(client, buf, sizeof buf, 0);
      if (n <= 0) break;
      data.append(buf, static_cast<size_t>(n));
      size_t end = data.find("\r\n\r\n");
      if (want == std::string::npos && end != std::string::npos) {
        size_t at = data.find("Content-Length: ");
        size_t length = at < end ? std::stoul(data.substr(at + 16)) : 0;
        want = end + 4 + length;
      }
    }
    return data;
  }

  std::string answer_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::string received_;
};

HttpRequest request(std::string method, std::string url, Headers headers = {}, std::string body = {}) {
  return HttpRequest{std::move(method), std::move(url), std::move(headers), std::move(body)};
}

// All values of header `name` (case-insensitive), in order.
std::vector<std::string> values(const Headers& headers, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& h : headers)
    if (cloud::iequals(h.first, name)) out.push_back(h.second);
  return out;
}

// A loopback port nobody listens on: bound, read back, closed.
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

TEST_CASE("transport: GET round trip", "[transport]") {
  TestServer server;
  Transport transport;
  auto r = transport.perform(request("GET", server.url("/echo")));
  REQUIRE(r.ok());
  CHECK(r->status == 200);
  CHECK(r->body == "GET\n");
  CHECK(server.last().method == "GET");
  CHECK(values(server.last().headers, "Content-Length").empty());
}

TEST_CASE("transport: bodies go out and come back exactly", "[transport]") {
  TestServer server;
  Transport transport;
  std::string body(1536 * 1024, 'x');  // big enough that curl would add Expect
  body[10] = '\0';
  body[11] = '\xff';
  for (const char* method : {"POST", "PUT", "PATCH"}) {
    auto r = transport.perform(request(method, server.url("/echo"), {}, body));
    REQUIRE(r.ok());
    CHECK(r->status == 200);
    CHECK(r->body == std::string(method) + "\n" + body);
    Seen seen = server.last();
    CHECK(seen.method == method);
    CHECK(seen.body == body);
    CHECK(values(seen.headers, "Expect").empty());
    CHECK(values(seen.headers, "Content-Type").empty());
    CHECK(values(seen.headers, "Content-Length") == std::vector<std::string>{std::to_string(body.size())});
  }
}

TEST_CASE("transport: empty bodies", "[transport]") {
  TestServer server;
  Transport transport;
  auto put = transport.perform(request("PUT", server.url("/echo")));
  REQUIRE(put.ok());
  CHECK(server.last().method == "PUT");
  CHECK(values(server.last().headers, "Content-Length") == std::vector<std::string>{"0"});
  auto del = transport.perform(request("DELETE", server.url("/echo")));
  REQUIRE(del.ok());
  CHECK(del->body == "DELETE\n");
  CHECK(values(server.last().headers, "Content-Length").empty());
}

TEST_CASE("transport: request headers arrive exactly as given", "[transport]") {
  TestServer server;
  Transport transport;
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  Headers given = {{"Host", host},
                   {"X-Ext-Date", "20240102T030405Z"},
                   {"X-Repeat", "first"},
                   {"X-Repeat", "second"},
                   {"Content-Length", "5"}};
  auto r = transport.perform(request("POST", server.url("/echo"), given, "hello"));
  REQUIRE(r.ok());
  Seen seen = server.last();
  CHECK(seen.body == "hello");
  CHECK(values(seen.headers, "Host") == std::vector<std::string>{host});
  CHECK(values(seen.headers, "X-Repeat") == std::vector<std::string>{"first", "second"});
  CHECK(values(seen.headers, "Content-Length") == std::vector<std::string>{"5"});
  // Nothing curl would invent: no Expect, Accept, Content-Type, User-Agent, encodings.
  // (httplib adds its own REMOTE_ADDR-style entries; they are not on the wire.)
  std::vector<std::string> names;
  for (const auto& h : seen.headers)
    if (h.first.find('_') == std::string::npos) names.push_back(cloud::to_lower(h.first));
  const std::vector<std::string> expected = {"content-length", "host", "x-ext-date", "x-repeat", "x-repeat"};
  CHECK(names == expected);
}

TEST_CASE("transport: the request head on the wire, byte for byte", "[transport]") {
  RawServer raw;
  Transport transport;
  const std::string host = "127.0.0.1:" + std::to_string(raw.port());
  Headers given = {{"Host", host},
                   {"X-Ext-Date", "20240102T030405Z"},
                   {"x-repeat", "first"},
                   {"X-Repeat", "second"},
                   {"X-Empty", ""}};
  auto r = transport.perform(request("POST", raw.url("/p%20q?a=1"), given, "hello"));
  REQUIRE(r.ok());
  CHECK(r->status == 200);
  CHECK(raw.received() ==
        "POST /p%20q?a=1 HTTP/1.1\r\n"
        "Host: " +
            host +
            "\r\n"
            "X-Ext-Date: 20240102T030405Z\r\n"
            "x-repeat: first\r\n"
            "X-Repeat: second\r\n"
            "X-Empty:\r\n"
            "Content-Length: 5\r\n"
            "\r\n"
            "hello");
}

TEST_CASE("transport: the path goes out as given with its dot segments", "[transport]") {
  // The signature covers this exact path: libcurl must not remove `.` and `..`.
  for (const char* target : {"/b/a/../k", "/b/./c/./d", "/b/x/..", "/b/..", "/b/x/../?uploads"}) {
    INFO(target);
    RawServer raw;
    Transport transport;
    REQUIRE(transport.perform(request("GET", raw.url(target))).ok());
    CHECK(raw.received().rfind(std::string("GET ") + target + " HTTP/1.1\r\n", 0) == 0);
  }
}

TEST_CASE("transport: a given Content-Type is kept", "[transport]") {
  TestServer server;
  Transport transport;
  auto r = transport.perform(request("POST", server.url("/echo"), {{"Content-Type", "application/json"}}, "{}"));
  REQUIRE(r.ok());
  CHECK(values(server.last().headers, "Content-Type") == std::vector<std::string>{"application/json"});
}

TEST_CASE("transport: status, headers and body of an HTTP error", "[transport]") {
  TestServer server;
  Transport transport;
  auto r = transport.perform(request("GET", server.url("/missing")));
  REQUIRE(r.ok());  // an HTTP error status is still a completed transfer
  CHECK(r->status == 404);
  CHECK(r->body == "no such thing");
  CHECK(values(r->headers, "X-Multi") == std::vector<std::string>{"one", "two"});
  CHECK(cloud::header_value(r->headers, "Content-Type") == "text/plain");
  CHECK(cloud::header_value(r->headers, "Content-Length") == "13");
  for (const auto& h : r->headers) {
    CHECK(h.first.find_first_of(" \r\n:") == std::string::npos);
    CHECK(h.second.find_first_of("\r\n") == std::string::npos);
    CHECK(h.first.rfind("HTTP/", 0) == std::string::npos);
  }
}

TEST_CASE("transport: redirects are not followed, HEAD has no body", "[transport]") {
  TestServer server;
  Transport transport;
  auto moved = transport.perform(request("GET", server.url("/moved")));
  REQUIRE(moved.ok());
  CHECK(moved->status == 302);
  CHECK(cloud::header_value(moved->headers, "Location") == "/echo");
  auto head = transport.perform(request("HEAD", server.url("/echo")));
  REQUIRE(head.ok());
  CHECK(head->status == 200);
  CHECK(head->body.empty());
  CHECK(cloud::header_value(head->headers, "Content-Length") == "5");
}

TEST_CASE("transport: headers of an interim 1xx answer do not mix in", "[transport]") {
  RawServer raw(
      "HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n"
      "HTTP/1.1 201 Created\r\nX-Final:   spaced value \r\nx-lower:v\r\n"
      "Content-Length: 2\r\nConnection: close\r\n\r\nok");
  Transport transport;
  auto r = transport.perform(request("PUT", raw.url("/o"), {}, "data"));
  REQUIRE(r.ok());
  CHECK(r->status == 201);
  CHECK(r->body == "ok");
  CHECK(r->headers ==
        Headers{{"X-Final", "spaced value"}, {"x-lower", "v"}, {"Content-Length", "2"}, {"Connection", "close"}});
}

TEST_CASE("transport: sequential requests reuse one connection", "[transport]") {
  TestServer server;
  Transport transport;
  auto first = transport.perform(request("GET", server.url("/echo")));
  REQUIRE(first.ok());
  int first_port = server.last().remote_port;
  auto second = transport.perform(request("POST", server.url("/echo"), {}, "again"));
  REQUIRE(second.ok());
  CHECK(first_port > 0);
  CHECK(server.last().remote_port == first_port);
  CHECK(cloud::header_value(second->headers, "X-Remote-Port") == std::to_string(first_port));
}

TEST_CASE("transport: connection refused", "[transport]") {
  Transport transport;
  const int port = closed_port();
  auto r =
      transport.perform(request("GET", "http://127.0.0.1:" + std::to_string(port) + "/x?X-Ext-Signature=secret-sig",
                                {{"Authorization", "secret-token"}}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == cloud::ErrorKind::transport);
  CHECK(r.error().code == "ConnectionFailed");
  CHECK_THAT(r.error().message, Catch::Contains("127.0.0.1:" + std::to_string(port)));
  CHECK_THAT(r.error().message, !Catch::Contains("secret"));
}

TEST_CASE("transport: time-out, then the transport still works", "[transport]") {
  TestServer server;
  TransportOptions options;
  options.timeout_ms = 300;
  Transport transport(options);
  auto r = transport.perform(request("GET", server.url("/slow")));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == cloud::ErrorKind::timeout);
  CHECK(r.error().code == "Timeout");
  auto after = transport.perform(request("GET", server.url("/echo")));
  REQUIRE(after.ok());
  CHECK(after->body == "GET\n");
}

TEST_CASE("transport: the interrupt flag aborts a running transfer", "[transport]") {
  TestServer server;
  cloud::Loop loop;  // of its own: the flag dies with this test
  std::atomic<bool> flag{false};
  loop.set_interrupt_flag(&flag);
  cloud::TransportOptions options;
  options.loop = &loop;
  Transport transport(options);
  std::thread interrupter([&flag] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    flag = true;
  });
  auto r = transport.perform(request("GET", server.url("/slow")));
  interrupter.join();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == cloud::ErrorKind::transport);
  CHECK(r.error().code == "Interrupted");
  flag = false;
  auto after = transport.perform(request("GET", server.url("/echo")));
  REQUIRE(after.ok());
  CHECK(after->status == 200);
}
