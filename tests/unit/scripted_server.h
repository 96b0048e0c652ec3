// A loopback HTTP server whose every answer comes from a function the test gives; it
// counts requests. Shared by the tests that need a server saying exactly one thing
// (client_test.cpp, bounds_test.cpp).
#pragma once

#include <httplib.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

class ScriptedServer {
 public:
  using Responder = std::function<void(int n, const httplib::Request&, httplib::Response&)>;
  explicit ScriptedServer(Responder respond) : respond_(std::move(respond)) {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) { respond_(++count_, req, res); };
    server_.Get(".*", handler).Post(".*", handler).Put(".*", handler).Delete(".*", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~ScriptedServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int count() const { return count_; }

 private:
  Responder respond_;
  std::atomic<int> count_{0};
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};
