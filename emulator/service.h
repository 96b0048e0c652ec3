// The emulated platform, split by API: each Service owns the state of its resources
// and the behaviour of its operations, independent of HTTP. Handlers take the parsed,
// validated arguments of a call and return the result document (shaped as the spec's
// samples) or an API error. The Platform serialises every call behind one mutex, so
// services need no locking of their own, and gives them a clock and an id source.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
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
// too while the clock runs in real mode (`serve`, and sessions outside `cloudlua test`).
// Switching modes keeps now() where it is, so nothing due jumps.
class Clock {
 public:
  explicit Clock(bool real = true) : real_(real), start_(std::chrono::steady_clock::now()) {}
  double now() const;
  void advance(double seconds) { base_ += seconds, advanced_ += seconds; }
  void set_real(bool real);
  bool real() const { return real_; }
  // Virtual seconds advanced so far (they shift the wall-clock stamps too).
  double advanced() const { return advanced_; }
  // Carries on from a saved clock: now() is `now` from here on, `advanced` as saved.
  void resume(double now, double advanced);
  // Wall-clock ISO 8601 UTC of the platform's now plus `later` seconds.
  std::string iso8601(double later = 0) const;

 private:
  bool real_;
  std::chrono::steady_clock::time_point start_;  // when real time began to count
  double base_ = 0;      // now() when real time began to count
  double advanced_ = 0;
};

// A numeric setting of the platform (cloud.emulator.configure{}): transition durations
// in seconds, the minimum part size in bytes.
struct Setting {
  const char* name;
  double default_value;
  const char* doc;
};

// Every setting there is, with its default; the one list configure{} checks names against.
const std::vector<Setting>& platform_settings();

// What every service may use: the clock, the region, the APIs' base URLs, fresh ids,
// and the settings.
struct PlatformContext {
  Clock clock;
  std::string region = "jp-east-1";
  std::map<std::string, std::string> endpoints;  // api -> base URL, once serving
  unsigned long long counter = 0;
  std::map<std::string, double> settings;        // those changed from their defaults

  std::string next_id(const std::string& prefix);  // prefix + 12 hex digits
  std::string uuid();                               // 8-4-4-4-12 hex
  std::string nrn(const std::string& service, const std::string& kind);
  double setting(const std::string& name) const;    // the value, else the default
};

class Service {
 public:
  virtual ~Service() = default;
  virtual const char* api() const = 0;          // the API it serves: "storage", ...
  virtual std::vector<std::string> operations() const = 0;
  virtual HandlerResult handle(const std::string& operation, const json& input) = 0;
  virtual void load_fixtures() = 0;            // the documented default set
  virtual void seed(const json& fixtures) = 0; // its part of cloud.emulator.seed{}
  virtual void settle() {}                     // apply transitions that are due
  virtual json state() const = 0;              // its part of cloud.emulator.state()
  virtual void reset() = 0;                    // empty
  // Everything needed to carry on after a restart (`serve --state`): records, bytes,
  // pending transitions (platform times) and counters. restore() takes what dump()
  // gave, in place of all it holds.
  virtual json dump() const = 0;
  virtual void restore(const json& dumped) = 0;
};

// Called with the platform's dump() after each change, before the change is answered;
// an error makes the change's answer an error (the change is not acknowledged).
using SaveState = std::function<Outcome<bool>(const json& dumped)>;

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
  // An unknown name or a negative value is refused, naming the known settings.
  Outcome<bool> set_setting(const std::string& name, double value);
  void set_endpoints(std::map<std::string, std::string> endpoints);

  // The whole platform as one document (the clock, ids, settings and every service's
  // dump()), and back. restore() checks the document's form first and changes
  // nothing when it is not one dump() wrote. Time in real mode carries on from the
  // saved clock plus the wall-clock time the platform was down.
  json dump();
  Outcome<bool> restore(const json& dumped);
  void on_change(SaveState save);

 private:
  void settle_all();
  json dump_locked() const;
  void restore_unchecked(const json& dumped);
  HandlerResult saved(HandlerResult r);  // r, or the failure to save the change it made
  mutable std::mutex mutex_;
  PlatformContext context_;
  std::vector<std::unique_ptr<Service>> services_;
  std::map<std::string, Service*> by_operation_;
  SaveState save_;
};

// The services, one per API (emulator/<api>.cpp).
std::unique_ptr<Service> make_cluster_service(PlatformContext& context);
std::unique_ptr<Service> make_storage_service(PlatformContext& context);
std::unique_ptr<Service> make_devops_service(PlatformContext& context);
std::unique_ptr<Service> make_catalog_service(PlatformContext& context);
// The zone a resource lands in when none is given, by region (spec, RestoreInstance).
std::string default_zone(const std::string& region);

}  // namespace cloud
