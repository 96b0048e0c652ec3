// The emulated platform, split by API: each Service owns the state of its resources
// and the behaviour of its operations, independent of HTTP. Handlers take the parsed,
// validated arguments of a call and return the result document (shaped as the spec's
// samples) or an API error. The Platform serialises every call behind one mutex, so
// services need no locking of their own, and gives them a clock and an id source.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/model.h"

namespace cloud {

// An error the platform answers with: HTTP status, code, message, extra fields
// (XML elements or JSON members of the error body).
struct ApiError {
  int status = 400;
  std::string code;
  std::string message;
  json details = json::object();
};

struct HandlerResult {
  bool ok = true;
  int status = 200;
  json result = json::object();
  ApiError error;

  static HandlerResult success(json result, int status = 200) { return {true, status, std::move(result), {}}; }
  static HandlerResult failure(int status, std::string code, std::string message, json details = json::object()) {
    return {false, status, json::object(), {status, std::move(code), std::move(message), std::move(details)}};
  }
};

// Platform time in seconds. Virtual time (advance()) always counts; real time counts
// too when the clock runs in real mode (`serve`, and sessions outside `cloudlua test`).
class Clock {
 public:
  explicit Clock(bool real = true) : real_(real), start_(std::chrono::steady_clock::now()) {}
  double now() const;
  void advance(double seconds) { offset_ += seconds; }
  void set_real(bool real) { real_ = real; }
  // Wall-clock ISO 8601 UTC of the platform's now plus `later` seconds.
  std::string iso8601(double later = 0) const;

 private:
  bool real_;
  std::chrono::steady_clock::time_point start_;
  double offset_ = 0;
};

// What every service may use: the clock, the region, the APIs' base URLs, fresh ids,
// and numeric settings (transition durations in seconds, the minimum part size...)
// that tests change through cloud.emulator.configure{}.
struct PlatformContext {
  Clock clock;
  std::string region = "jp-east-1";
  std::map<std::string, std::string> endpoints;  // api -> base URL, once serving
  unsigned long long counter = 0;
  std::map<std::string, double> settings;

  std::string next_id(const std::string& prefix);  // prefix + 12 hex digits
  std::string uuid();                               // 8-4-4-4-12 hex
  std::string nrn(const std::string& service, const std::string& kind);
  double setting(const std::string& name, double fallback) const;
};

class Service {
 public:
  virtual ~Service() = default;
  virtual std::vector<std::string> operations() const = 0;
  virtual HandlerResult handle(const std::string& operation, const json& input) = 0;
  virtual void load_fixtures() = 0;            // the documented default set
  virtual void seed(const json& fixtures) = 0; // its part of cloud.emulator.seed{}
  virtual void settle() {}                     // apply transitions that are due
  virtual json state() const = 0;              // its part of cloud.emulator.state()
  virtual void reset() = 0;                    // empty
};

class Platform {
 public:
  explicit Platform(std::string region);

  bool serves(const std::string& operation) const;
  HandlerResult handle(const std::string& operation, const json& input);

  void load_fixtures();
  void seed(const json& fixtures);
  json state();
  void reset();
  void advance(double seconds);
  void set_real_time(bool real);
  void set_setting(const std::string& name, double value);
  void set_endpoints(std::map<std::string, std::string> endpoints);

 private:
  void settle_all();
  mutable std::mutex mutex_;
  PlatformContext context_;
  std::vector<std::unique_ptr<Service>> services_;
  std::map<std::string, Service*> by_operation_;
};

// The services, one per API (emulator/<api>.cpp).
std::unique_ptr<Service> make_cluster_service(PlatformContext& context);
std::unique_ptr<Service> make_storage_service(PlatformContext& context);
std::unique_ptr<Service> make_devops_service(PlatformContext& context);
std::unique_ptr<Service> make_catalog_service(PlatformContext& context);
// The zone a resource lands in when none is given, by region (spec, RestoreInstance).
std::string default_zone(const std::string& region);

}  // namespace cloud
