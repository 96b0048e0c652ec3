// The HTTP transport: libcurl's multi interface, one multi handle per Transport, many
// transfers in flight on it. `start` adds a transfer and returns at once; `run_once`
// drives them all and calls each one's completion when it ends, and the timers that
// fall due; `perform` is start, then run_once until that transfer ends. Easy handles
// are pooled and reused, which keeps connections alive between calls.
// A Transport is used by one thread at a time; separate Transports may run in parallel.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/http.h"
#include "core/limits.h"

namespace cloud {

struct TransportOptions {
  long connect_timeout_ms = 10000;
  long timeout_ms = 120000;   // whole transfer
  bool verify_tls = true;
  std::string ca_file;        // empty: the system's
  // A larger answer is refused (ResponseTooLarge) as soon as its Content-Length or
  // its bytes pass this; nothing more of it is read.
  std::uint64_t max_response_bytes = kMaxResponseBytes;
  // What every answer being received draws its memory from, this Transport's with
  // every other's (null: the process's, process_buffer_budget()). When it is spent,
  // the answer that asks for more is refused (ResponseTooLarge). A body's room grows
  // as its bytes arrive, never by what the server declares.
  BufferBudget* budget = nullptr;
  // At most this many connections to one host at once (CURLMOPT_MAX_HOST_CONNECTIONS):
  // further transfers to it wait in curl's queue until one ends. The transfer's
  // timeout_ms counts from `start`, time in the queue included.
  long max_host_connections = 16;
};

class Transport {
 public:
  explicit Transport(TransportOptions options = {});
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  using Id = std::uint64_t;  // a transfer or a timer; never 0, never reused
  using Completion = std::function<void(Outcome<HttpResponse>)>;

  // Starts sending `request` and returns at once. `done` is called exactly once, from
  // run_once, with the whole answer or the Error (kind transport (no connection,
  // reset, TLS, an answer that is not HTTP, memory exhausted), timeout, or api for an
  // answer over max_response_bytes or the budget; an HTTP error status is not an
  // error here) — unless the transfer is cancelled first. Nothing thrown inside
  // (std::bad_alloc) escapes: it ends its transfer with an Error.
  Id start(HttpRequest request, Completion done);
  // Calls `fire` once, from run_once, when `seconds` have passed.
  Id add_timer(double seconds, std::function<void()> fire);
  // Abandons a transfer or a timer: its callback is never called, a transfer's easy
  // handle goes back to the pool at once. An id that has already ended is ignored.
  void cancel(Id id);
  // Drives every transfer for up to `timeout` seconds (less when a timer falls due or
  // something ends sooner), then calls the completions of the transfers that ended and
  // the timers that are due. Callbacks may start and cancel transfers and timers.
  void run_once(double timeout);
  // How many transfers and timers have not ended yet.
  size_t pending() const;

  // Sends `request` and waits for the whole answer: start, then run_once until it
  // ends (other transfers and timers progress meanwhile).
  Outcome<HttpResponse> perform(HttpRequest request);

  // While *flag is true, every transfer ends with code "Interrupted" and every timer
  // falls due at once (Ctrl-C).
  void set_interrupt_flag(const std::atomic<bool>* flag);

  const TransportOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cloud
