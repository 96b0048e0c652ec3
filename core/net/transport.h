// The HTTP transport on libcurl's multi interface, and the event loop it runs on.
// A Loop is one curl multi handle, a timer heap and the one clock: every Transport (every
// client) of a thread runs on the thread's Loop, so one wait covers all their transfers
// and a turn hands back exactly the waits that ended (curl's completed transfers, the
// timers that fell due), each to its own callback; nothing is scanned per turn.
// `Transport::start` adds a transfer and returns at once: it is the one place an
// exchange leaves the process (a request in, one completion out). `perform` is start,
// then the loop until that transfer ends. Easy handles are pooled and reused, and the
// multi handle keeps the connections alive between calls (of every client).
// A Loop is used by one thread at a time; separate Loops may run in parallel.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/base/error.h"
#include "core/wire/http.h"
#include "core/base/limits.h"
#include "core/net/transport_options.h"

namespace cloud {

class Loop;

// The event loop: one curl multi handle (the connection cache), a timer heap and a
// clock. Callbacks run only from run_once; they may start and cancel transfers and
// timers. One multi handle rather than one per client polled in turn: curl_multi_poll
// waits on one multi's sockets, and waiting on several would need select() (at most
// 1,024 descriptors) or curl_multi_waitfds (curl 8.8, newer than Debian 12's).
class Loop {
 public:
  Loop();
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // The calling thread's loop, made on first use.
  static Loop& current();

  using Id = std::uint64_t;  // a transfer or a timer; never 0, never reused
  // The longest one turn waits (run_once caps its timeout to it): how often the
  // interrupt flag is looked at. The one poll interval: the scheduler's turns
  // (lua/tasks.cpp) use it too.
  static constexpr double kPollSeconds = 0.1;
  using Completion = std::function<void(Outcome<HttpResponse>)>;

  // How a timer's time passes. `clock`: as the loop's clock goes (waited for, or at
  // once while time is virtual); `skipped`: at once whenever nothing else runs (a
  // waiter's pause that the emulator's clock follows); `real`: always waited for.
  enum class Pace { clock, skipped, real };
  // Calls `fire` once, from run_once, when `seconds` have passed on the loop's clock.
  Id add_timer(double seconds, std::function<void()> fire, Pace pace = Pace::clock);
  // Abandons a transfer or a timer: its callback is never called, a transfer's easy
  // handle goes back to the pool at once. An id that has already ended is ignored.
  void cancel(Id id);
  // Drives every transfer for up to `timeout` seconds (less when a timer falls due or
  // something ends sooner), then hands each transfer that ended to its completion and
  // fires the timers that are due, earliest first.
  void run_once(double timeout);
  // Runs the loop until `done()` holds: the one "until it ends" of every blocking call.
  void run_until(const std::function<bool()>& done);
  // How many transfers and timers have not ended yet.
  size_t pending() const;

  // Seconds on the loop's clock (only differences mean anything): the steady clock
  // plus every second the loop skipped. Timers, retry back-off, cloud.clock,
  // cloud.sleep and the waiters all read it; a transfer's time-out counts real time.
  double now() const;
  // Virtual time, while a hold lives (`cloudlua test` with the embedded emulator, a
  // session run with --replay): when no transfer is running and the earliest timer
  // is not a `real` one, its time is skipped at once (the clock moves on by it)
  // rather than waited for. Holds nest; the last one to go ends virtual time.
  std::shared_ptr<void> hold_virtual_time();
  // Who follows the seconds the clock skips (the embedded emulator advances by as
  // many), or null; returns the follower it replaces.
  std::function<void(double)> follow(std::function<void(double seconds)> follower);

  // At most this many connections to one host at once (CURLMOPT_MAX_HOST_CONNECTIONS,
  // 16 unless set): further transfers to it wait in curl's queue until one ends. A
  // transfer's timeout counts from `start`, time in the queue included.
  void set_max_host_connections(long n);
  // While *flag is raised, every transfer started before it was raised ends with code
  // "Interrupted" and every such timer falls due at once (Ctrl-C). Transfers and
  // timers started while it is raised run normally (a clean-up's
  // AbortMultipartUpload); once a turn has seen it lowered, they are like the others.
  void set_interrupt_flag(const std::atomic<bool>* flag);

 private:
  friend class Transport;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A client's face of the loop: its options (time-outs, TLS, limits) and the transfers
// and timers it started, which it abandons when it goes.
class Transport {
 public:
  explicit Transport(TransportOptions options = {});
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  using Id = Loop::Id;
  using Completion = Loop::Completion;

  // Starts sending `request` and returns at once. `done` is called exactly once, from
  // run_once, with the whole answer or the Error (kind transport (no connection,
  // reset, TLS, an answer that is not HTTP, memory exhausted), timeout, or api for an
  // answer over max_response_bytes or the budget; an HTTP error status is not an
  // error here) — unless the transfer is cancelled first. Nothing thrown inside
  // (std::bad_alloc) escapes: it ends its transfer with an Error.
  Id start(HttpRequest request, Completion done);
  // Calls `fire` once, from the loop, when `seconds` have passed (Loop::add_timer).
  Id add_timer(double seconds, std::function<void()> fire, Loop::Pace pace = Loop::Pace::clock);
  // Abandons a transfer or timer of this transport (Loop::cancel).
  void cancel(Id id);
  // One turn of the loop (of every transport on it: Loop::run_once).
  void run_once(double timeout);
  // How many of this transport's transfers and timers have not ended yet.
  size_t pending() const;

  // Sends `request` and waits for the whole answer: start, then the loop until it
  // ends (other transfers and timers progress meanwhile).
  Outcome<HttpResponse> perform(HttpRequest request);

  const TransportOptions& options() const;
  Loop& loop() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cloud
