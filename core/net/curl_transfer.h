// One HTTP exchange on a curl easy handle, with the caller's headers exactly: its
// state (Transfer), the handle's options, the callbacks that take the answer in (into
// memory within its budget, or to a file) and give a body out (from memory or a file
// range, under the rate limit), and the response or Error it ends with. The loop
// (core/net/transport) owns the handles and the multi handle; this room never waits.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "core/base/error.h"
#include "core/base/limits.h"
#include "core/net/file_sink.h"
#include "core/net/range_reader.h"
#include "core/net/transport_options.h"
#include "core/wire/http.h"

namespace cloud {

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using EasyPtr = std::unique_ptr<CURL, EasyDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

using Owned = std::unordered_set<std::uint64_t>;  // what one Transport started and has not seen end

// One request in flight: its easy handle, header list, buffers and outcome.
struct Transfer {
  std::uint64_t id = 0;                       // Loop::Id
  Owned* owner = nullptr;                     // the transport's set of what it started
  const TransportOptions* options = nullptr;  // the transport's (it abandons its transfers when it goes)
  double started = 0;                         // on the steady clock: its time-out counts from here
  HttpRequest owned;                          // kept here while curl sends it
  const HttpRequest* request = &owned;
  std::function<void(Outcome<HttpResponse>)> completion;  // Loop::Completion
  std::optional<Error> failure;                           // ended before or beside curl (setup, multi handle)
  bool added = false;                                     // attached to the multi handle
  std::uint64_t max_body = 0;                             // TransportOptions::max_response_bytes
  EasyPtr easy;
  SlistPtr headers;
  HttpResponse response;
  char error_buffer[CURL_ERROR_SIZE] = {};
  bool done = false;
  bool interrupted = false;
  bool after_interrupt = false;  // started while the interrupt flag was raised: a clean-up's
  Transfer() = default;
  Transfer(const Transfer&) = delete;  // curl holds pointers into it
  Transfer& operator=(const Transfer&) = delete;
  bool too_large = false;  // the answer passed max_body: aborted
  CURLcode result = CURLE_OK;
  RangeReader reader;                            // the request body's file range, when it has one
  std::unique_ptr<FileSink> sink;                // where a 2xx answer's body goes, when asked
  long status = 0;                               // of the last status line received
  std::optional<std::uint64_t> declared_length;  // the answer's Content-Length
  std::string file_error;                        // reading the body file or writing the answer failed
  int file_errno = 0;                            // the errno of a failed write of the answer
  BufferBudget* budget = nullptr;                // TransportOptions::budget, resolved
  std::uint64_t held = 0;                        // room taken from it for response.body
  bool budget_spent = false;                     // the budget had no room for the answer: aborted
  bool out_of_memory = false;                    // an allocation failed in a callback: aborted
  bool paused = false;                           // paused by the rate limit: the loop resumes it
  size_t memory_sent = 0;                        // of an in-memory body sent through on_read (rate limit)
  ~Transfer() { release_room(); }
  // Gives the body's room back to the budget (when the body goes with the Transfer).
  void release_room() {
    if (budget && held) budget->give(held);
    held = 0;
  }
};

// Initialises libcurl once per process; it is never cleaned up (process lifetime).
void global_init_once();
// "host:port" of a URL, for error messages (never the path or query: they may hold
// presigned credentials).
std::string host_port(const std::string& url);
// The header list to send: the caller's headers exactly (null: out of memory).
SlistPtr build_header_list(const Headers& given);
// Applies every option of one transfer to its (freshly reset) easy handle.
CURLcode configure(Transfer& t, const TransportOptions& o, long timeout_ms);
// Opens the file a body is read from and the one an answer is written to, if any.
std::optional<Error> open_body_files(Transfer& t);
// The response or the Error a transfer ended with, before its handle is detached.
Outcome<HttpResponse> transfer_outcome(Transfer& t);

}  // namespace cloud
