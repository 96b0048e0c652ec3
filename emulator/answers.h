// Answer writing: what every answer of the emulator carries (Date, the request id and
// the support ids derived from it), an error in the API's error body, a handler's
// result as the API's answer (an object's bytes sent from the store a piece at a
// time), and the emulator's headers put into httplib's in the client's dialect.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "core/base/error.h"
#include "core/model/model.h"
#include "emulator/connection.h"
#include "emulator/service.h"

namespace cloud {

// A request refused before its operation ran: the status, code, message and fields of
// its error.
struct Refusal {
  int status;
  std::string code;
  std::string message;
  json details = json::object();
};

// The ids and dates of answers: request ids unique across restarts (the start time and
// a count), or derived from a seed, with Date then the platform's clock.
class Answers {
 public:
  explicit Answers(Platform& platform);
  // A fresh request id ("emu-" and 24 hex digits).
  std::string next_request_id();
  // Repeatable ids and dates from now on, counted from `seed`.
  void set_seed(std::uint64_t seed);
  // Date and the request id; on the storage API also its other support ids.
  void set_common_headers(const Api& api, Headers& head, const std::string& request_id);
  // A request's answer begun: a fresh request id (returned) and the common headers.
  std::string begin(const Api& api, Headers& head);
  // The request failed on the emulator's side: S3's 500 InternalError, and nothing of
  // the failure's own text; the request id already in `head` kept.
  void internal_error(const Api& api, httplib::Response& res, Headers& head);
  // A request refused before it was read (its body, its head): `refusal` with fresh
  // common headers, written in the client's dialect (`aws`: put_headers).
  void refuse(const Api& api, httplib::Response& res, const Refusal& refusal, bool aws);

 private:
  std::string date_now();
  Platform& platform_;
  std::atomic<unsigned long long> requests_{0};
  // When this emulator started, in the request ids: ids stay unique across restarts.
  // A seed replaces it (and restarts the count), and Date headers then come from the
  // platform's clock.
  std::atomic<unsigned> started_;
  std::atomic<bool> seeded_{false};
};

// The API's error body with `status`.
void send_error(const Api& api, httplib::Response& res, int status, const std::string& code, const std::string& message,
                const std::string& request_id, const json& details = json::object());
inline void send_error(const Api& api, httplib::Response& res, const Refusal& r, const std::string& request_id) {
  send_error(api, res, r.status, r.code, r.message, request_id, r.details);
}
// A handler's answer: its error, or its result serialised as the API says (header
// members into `head`), an output payload's bytes sent from the store.
void send_result(const Api& api, const Operation& op, const HandlerResult& r, httplib::Response& res, Headers& head,
                 const std::string& request_id);
// The code of a refused request's validation, as the API's protocol says, and its
// problems as the error's "fields".
std::string validation_code(const Api& api, const Operation& op, const Error& e);
json problems_of(const Error& e);
// The emulator's headers of an answer into httplib's, as x-amz-* for an aws-dialect
// client (`aws`); a header with a control character in it is left out.
void put_headers(httplib::Response& res, Headers head, bool aws);
// The answer to a request its connection cut short (RequestTimeout, or its head too
// large for `limits`).
Refusal cut_short_refusal(Cut why, const ConnectionLimits& limits);

}  // namespace cloud
