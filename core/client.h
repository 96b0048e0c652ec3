// The client: one path for every operation — validate -> serialise -> sign -> send
// (with retries) -> parse. It knows nothing of Lua; the binding hands it JSON values
// and gets JSON values back.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/model.h"
#include "core/sigv4.h"
#include "core/transport.h"

namespace cloud {

struct RetryPolicy {
  int max_attempts = 3;          // 1: no retries
  double base_delay = 0.2;       // seconds; doubled per attempt, with full jitter
  double max_delay = 5.0;
  double invalid_part_delay = 3.0;  // the spec: wait a few seconds, then repeat
  bool retry_non_idempotent = false;  // resend restores even after they may have arrived
};

struct ClientConfig {
  std::string profile = "default";
  std::string region = "jp-east-1";
  const Dialect* dialect = &Dialect::ext();
  Credentials credentials;
  std::map<std::string, std::string> endpoints;  // api -> base URL
  std::map<std::string, std::string> services;   // api -> signing service (default: the model's)
  TransportOptions transport;
  RetryPolicy retry;
  // When set (--debug), called with every HTTP exchange as describe_exchange shows
  // it, secrets redacted, once per attempt.
  std::function<void(const std::string& text)> debug;
  bool quiet_emulator = false;  // the session's: no line on stderr when the embedded emulator serves
};

// What came back besides the result: the HTTP status and headers, the request id,
// how many attempts it took and how long it all took.
struct Meta {
  long status = 0;
  Headers headers;
  std::string request_id;
  int attempts = 0;
  double elapsed = 0;  // seconds
};

struct CallResult {
  json result;
  Meta meta;
};

// A request outside the model (cloud.request): signed and sent as given.
struct RawRequest {
  std::string api;
  std::string method = "GET";
  std::string path = "/";
  std::map<std::string, std::string> query;
  Headers headers;
  std::string body;
};

struct RawResult {
  HttpResponse response;
  Meta meta;
};

class Client {
 public:
  explicit Client(ClientConfig config, const Model& model = Model::builtin());

  Outcome<CallResult> call(const std::string& operation, const json& args);
  Outcome<RawResult> request(const RawRequest& raw);

  const ClientConfig& config() const { return config_; }
  const Model& model() const { return model_; }
  Transport& transport() { return transport_; }

  // Tests replace sleeping (retry back-off) with a fake clock.
  void set_sleeper(std::function<void(double seconds)> sleeper) { sleep_ = std::move(sleeper); }

 private:
  struct Attempt;
  Outcome<HttpRequest> build_request(const Api& api, const std::string& method, const std::string& path,
                                     const std::string& query, Headers headers, std::string body,
                                     const BodyFiles& files);
  Outcome<HttpResponse> send_with_retries(const Operation* op, const Api& api, const std::string& method,
                                          const std::string& path, const std::string& query, const Headers& headers,
                                          const std::string& body, const BodyFiles& files, Meta& meta,
                                          std::vector<std::string>& secrets);
  bool should_retry(const Operation* op, const Outcome<HttpResponse>& outcome, const Api& api, int attempt,
                    double& delay) const;
  std::vector<std::string> secrets_of(const HttpRequest& request) const;
  std::string endpoint_of(const std::string& api) const;
  std::string service_of(const Api& api) const;

  ClientConfig config_;
  const Model& model_;
  Transport transport_;
  std::function<void(double)> sleep_;
};

}  // namespace cloud
