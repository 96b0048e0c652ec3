// The emulated platform's state and the behaviour of each operation, independent of
// HTTP: handlers take the parsed, validated arguments of a call and return the result
// document or an API error. All state sits behind one mutex, so any number of
// server threads may call in at once.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "core/model.h"

namespace cloud {

// An error the platform answers with: HTTP status, code, message, extra fields.
struct ApiError {
  int status = 400;
  std::string code;
  std::string message;
  json details = json::object();
};

struct HandlerResult {
  bool ok = true;
  json result = json::object();
  ApiError error;
  static HandlerResult success(json result) { return {true, std::move(result), {}}; }
  static HandlerResult failure(int status, std::string code, std::string message) {
    return {false, json::object(), {status, std::move(code), std::move(message), json::object()}};
  }
};

class Platform {
 public:
  explicit Platform(std::string region);

  // Runs operation `name` on `input`; false when the emulator does not serve it.
  bool serves(const std::string& operation) const;
  HandlerResult handle(const std::string& operation, const json& input);

  // The documented fixture set (README, "The embedded emulator").
  void load_fixtures();
  // Every resource as one document (cloud.emulator.state()).
  json state() const;
  void reset();

 private:
  using Handler = HandlerResult (Platform::*)(const json& input);
  HandlerResult update_snapshot(const json& input);

  json make_snapshot(const std::string& name, const std::string& cluster_name) const;
  std::string new_id(const std::string& prefix);
  std::string nrn(const std::string& kind) ;

  mutable std::mutex mutex_;
  std::string region_;
  unsigned long long counter_ = 0;
  std::map<std::string, json> snapshots_;  // by name
  static const std::map<std::string, Handler> handlers_;
};

// Current time as ISO 8601 UTC, the form of the spec's samples.
std::string iso8601_now(long long offset_seconds = 0);

}  // namespace cloud
