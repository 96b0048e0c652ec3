// The event loop on libcurl's multi interface, and the Transport that is a client's
// face of it. A transfer is started (an easy handle from the pool, configured by
// core/net/curl_transfer and added to the Loop's one multi handle), the loop
// (run_once) drives every transfer at once, and each transfer curl reports done
// (curl_multi_info_read: only those) is queued, then finished (removed, turned into an
// HttpResponse or an Error, its handle reset and pooled) and handed to its completion.
// Timers live beside the transfers, ordered by their moment on the loop's one clock,
// so that a back-off or a sleep waits in the same loop and a turn looks at the due
// ones only. A cancelled transfer is removed and its handle pooled at once; nothing
// else refers to it afterwards, so that happens once. Each Transport remembers what it
// started, to abandon it when it goes. The multi handle owns the connection cache, so
// connections stay alive while the Loop lives (the thread's: the process's).
// Thread-safety: a Loop, and the Transports on it, are used by one thread at a time;
// distinct Loops may run on distinct threads (curl_global_init is done once, under
// std::call_once, when the first transfer of the process starts: a run that sends
// nothing never sets curl, or the TLS library under it, up).
#include "core/net/transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/net/curl_transfer.h"
#include "core/net/rate_limit.h"

namespace cloud {

namespace {

struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
using MultiPtr = std::unique_ptr<CURLM, MultiDeleter>;

constexpr size_t kHandedPerHost = 4;  // curl holds at most this many transfers per connection allowed

using Clock = std::chrono::steady_clock;

}  // namespace

// A callback due at a moment of the loop's clock, and the transport it belongs to.
struct Timer {
  double due;
  std::function<void()> fire;
  Owned* owner;
  bool after_interrupt;  // set while the interrupt flag was raised: a clean-up's
  Loop::Pace pace;
  double skip_due;  // the loop's skipped seconds at which skipping has passed it
};

struct Loop::Impl {
  double skipped = 0;                    // the seconds skipped so far (now() adds them)
  int holds = 0;                         // the virtual-time holds alive
  std::function<void(double)> follower;  // told each skip (the embedded emulator's clock)
  double skipped_to = -HUGE_VAL;         // the moment the last skip brought due
  const std::atomic<bool>* interrupt = nullptr;
  bool was_raised = false;  // the interrupt flag, as the last turn saw it
  long max_host_connections = 16;
  MultiPtr multi;
  std::vector<EasyPtr> idle;  // reset handles, ready for the next transfer
  Id last_id = 0;
  std::unordered_map<Id, std::unique_ptr<Transfer>> transfers;
  std::unordered_map<Id, Timer> timers;
  std::set<std::pair<double, Id>> due_order;  // the timers by their moment: the heap
  std::deque<Id> ended;                       // transfers that ended, in the order they did, not handed out yet
  std::deque<Id> waiting_room;                // transfers started but not handed to curl yet, in order
  size_t handed = 0;                          // transfers curl holds

  static double real_now();
  double now() const { return real_now() + skipped; }
  bool skips(const Timer& t) const;
  bool skip_to_next_timer();
  CURLM* multi_handle();
  EasyPtr acquire();
  void release(EasyPtr easy);
  size_t most_handed() const { return kHandedPerHost * static_cast<size_t>(std::max(1L, max_host_connections)); }
  std::optional<Error> attach(Transfer& t);
  void admit();
  Id start(HttpRequest request, Completion done, const TransportOptions& options, Owned* owner);
  Id add_timer(double seconds, std::function<void()> fire, Pace pace, Owned* owner);
  void end_transfer(Transfer& t);
  void collect_finished();
  bool interrupted() const;
  bool note_interrupt();
  void interrupt_all();
  void wait(double timeout);
  double resume_paused();
  void hand_out_ended();
  void fire_due_timers(bool all);
  void detach(Transfer& t);
  Outcome<HttpResponse> finish(Transfer& t);
  Outcome<HttpResponse> finish_guarded(Transfer& t);
};

double Loop::Impl::real_now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// Whether a timer's time is skipped rather than waited for, now.
bool Loop::Impl::skips(const Timer& t) const { return t.pace == Pace::skipped || (t.pace == Pace::clock && holds > 0); }

// Skips the time to the earliest timer when nothing else could end sooner: no transfer
// runs, nothing has ended, and that timer is one whose time is skipped. It skips what
// the timer asked for less what was skipped since (not less the real time that went
// by meanwhile), so a follower advances by exactly the seconds waited for. Returns
// whether it skipped. A follower that throws stays behind; nothing crosses the loop.
bool Loop::Impl::skip_to_next_timer() {
  if (!transfers.empty() || !ended.empty() || due_order.empty()) return false;
  const Timer& next = timers.at(due_order.begin()->second);
  if (!skips(next) || next.due <= now()) return false;
  double seconds = std::max(0.0, next.skip_due - skipped);
  skipped += seconds;
  skipped_to = next.due;
  try {
    if (follower && seconds > 0) follower(seconds);
  } catch (const std::exception&) {}
  return true;
}

// The multi handle, made (and curl set up) for the first transfer; null when curl fails.
CURLM* Loop::Impl::multi_handle() {
  if (multi) return multi.get();
  global_init_once();
  multi.reset(curl_multi_init());
  if (multi) curl_multi_setopt(multi.get(), CURLMOPT_MAX_HOST_CONNECTIONS, max_host_connections);
  return multi.get();
}

// An easy handle from the pool, or a new one when the pool is empty.
EasyPtr Loop::Impl::acquire() {
  if (idle.empty()) return EasyPtr(curl_easy_init());
  EasyPtr easy = std::move(idle.back());
  idle.pop_back();
  return easy;
}

// Resets a handle (its session and DNS caches survive) and keeps it for reuse.
void Loop::Impl::release(EasyPtr easy) {
  if (!easy) return;
  curl_easy_reset(easy.get());
  if (idle.size() < most_handed()) idle.push_back(std::move(easy));
}

// Sets a transfer up: takes a handle, configures it and adds it to the multi handle,
// with what is left of its time-out. Returns the Error that ends it before anything
// is sent.
std::optional<Error> Loop::Impl::attach(Transfer& t) {
  const TransportOptions& options = *t.options;
  t.max_body = options.max_response_bytes;
  t.budget = options.budget ? options.budget : &process_buffer_budget();
  for (const Header& h : t.request->headers)
    if (!header_value_ok(h.first) || !header_value_ok(h.second))
      return make_error(ErrorKind::validation, "InvalidHeader",
                        "header '" + h.first + "' holds a line break or control character; nothing was sent");
  long timeout_ms = options.timeout_ms;
  if (timeout_ms > 0) {
    timeout_ms -= static_cast<long>((real_now() - t.started) * 1000);
    if (timeout_ms <= 0)
      return make_error(ErrorKind::timeout, "Timeout",
                        "timed out talking to " + host_port(t.request->url) + ": no connection came free within " +
                            std::to_string(options.timeout_ms) + " ms");
  }
  if (std::optional<Error> e = open_body_files(t)) return e;
  if (!multi_handle()) return make_error(ErrorKind::transport, "TransportError", "curl_multi_init failed");
  t.easy = acquire();
  t.headers = build_header_list(t.request->headers);
  if (!t.easy || !t.headers) return make_error(ErrorKind::transport, "TransportError", "out of memory");
  if (CURLcode rc = configure(t, options, timeout_ms); rc != CURLE_OK)
    return make_error(ErrorKind::transport, "TransportSetup",
                      std::string("cannot set up transfer: ") + curl_easy_strerror(rc));
  if (CURLMcode mc = curl_multi_add_handle(multi.get(), t.easy.get()); mc != CURLM_OK)
    return make_error(ErrorKind::transport, "TransportError", curl_multi_strerror(mc));
  t.added = true;
  ++handed;
  return std::nullopt;
}

// Hands curl the transfers waiting their turn, in order, while it holds fewer than
// most_handed(): curl walks every transfer it holds on each turn, and each holds an
// easy handle and its buffers, so a thousand tasks would cost every turn a thousand
// (with 16 connections to a host, 1,008 of them would only wait in curl's queue).
void Loop::Impl::admit() {
  while (handed < most_handed() && !waiting_room.empty()) {
    auto it = transfers.find(waiting_room.front());
    waiting_room.pop_front();
    if (it == transfers.end() || it->second->done) continue;  // cancelled, or interrupted meanwhile
    Transfer& t = *it->second;
    if (std::optional<Error> failed = attach(t)) {
      t.failure = std::move(failed);
      end_transfer(t);
    }
  }
}

// Takes the request and attaches it (or records why it cannot be), or queues it
// behind the transfers waiting their turn; returns its id.
Loop::Id Loop::Impl::start(HttpRequest request, Completion done, const TransportOptions& options, Owned* owner) {
  auto t = std::make_unique<Transfer>();
  t->owned = std::move(request);
  t->completion = std::move(done);
  t->owner = owner;
  t->options = &options;
  t->started = real_now();
  t->after_interrupt = interrupted();
  t->id = ++last_id;
  if (handed >= most_handed() || !waiting_room.empty()) {
    waiting_room.push_back(t->id);
  } else if (std::optional<Error> failed = attach(*t)) {
    t->failure = std::move(failed);
    end_transfer(*t);  // its completion runs from the next run_once, like any other
  }
  owner->insert(t->id);
  Id id = t->id;
  transfers.emplace(id, std::move(t));
  return id;
}

Loop::Id Loop::Impl::add_timer(double seconds, std::function<void()> fire, Pace pace, Owned* owner) {
  Id id = ++last_id;
  double due = now() + seconds;
  timers.emplace(id, Timer{due, std::move(fire), owner, interrupted(), pace, skipped + seconds});
  due_order.emplace(due, id);
  if (owner) owner->insert(id);
  return id;
}

// Marks a transfer ended and queues it for the next hand-out, once.
void Loop::Impl::end_transfer(Transfer& t) {
  if (t.done) return;
  t.done = true;
  ended.push_back(t.id);
}

// True when the caller's interrupt flag is raised.
bool Loop::Impl::interrupted() const { return interrupt && interrupt->load(std::memory_order_relaxed); }

// Queues every transfer that curl reports as done, with its result code: only those.
void Loop::Impl::collect_finished() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    void* owner = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &owner);
    auto* t = static_cast<Transfer*>(owner);
    if (t->done) continue;
    t->result = msg->data.result;
    end_transfer(*t);
  }
}

// Whether the interrupt flag is raised. Once it is seen lowered again, what was
// started while it was raised (a clean-up's) becomes interruptible like the rest.
bool Loop::Impl::note_interrupt() {
  const bool raised = interrupted();
  if (was_raised && !raised) {
    for (auto& [id, t] : transfers) t->after_interrupt = false;
    for (auto& [id, timer] : timers) timer.after_interrupt = false;
  }
  was_raised = raised;
  return raised;
}

// Ends every transfer started before the interrupt flag was raised as "Interrupted"
// (Ctrl-C; those timers all fire this turn).
void Loop::Impl::interrupt_all() {
  for (auto& [id, t] : transfers)
    if (!t->done && !t->after_interrupt) {
      t->interrupted = true;
      end_transfer(*t);
    }
}

// Drives the multi handle, waiting up to `timeout` seconds (and at most kPollSeconds, to
// look at the interrupt flag) unless a transfer ends or a timer falls due sooner. A
// failing multi handle ends every transfer with its error.
void Loop::Impl::wait(double timeout) {
  admit();
  timeout = std::min(timeout, resume_paused());
  int running = 0;
  CURLMcode mc = multi ? curl_multi_perform(multi.get(), &running) : CURLM_OK;  // none before the first transfer
  if (mc == CURLM_OK && multi) collect_finished();
  const double start = now();
  const bool timer_due = !due_order.empty() && due_order.begin()->first <= start;
  if (mc == CURLM_OK && !timer_due && !skip_to_next_timer() && ended.empty()) {
    double until = start + timeout;
    if (!due_order.empty()) until = std::min(until, due_order.begin()->first);
    // Rounded up: a timer 0.8 ms away is waited for, not turned past with a sleep of 0.
    double ms = std::ceil((until - start) * 1000.0);
    int wait_ms = static_cast<int>(std::clamp(ms, 0.0, kPollSeconds * 1000.0));
    if (multi && !transfers.empty()) mc = curl_multi_poll(multi.get(), nullptr, 0, wait_ms, nullptr);
    else std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    if (mc == CURLM_OK && multi) mc = curl_multi_perform(multi.get(), &running);
    if (mc == CURLM_OK && multi) collect_finished();
  }
  if (mc != CURLM_OK)
    for (auto& [id, t] : transfers)
      if (!t->done) {
        t->failure = make_error(ErrorKind::transport, "TransportError", curl_multi_strerror(mc));
        end_transfer(*t);
      }
}

// Resumes the transfers the rate limit paused, when the bucket holds tokens again;
// returns how long the loop may wait before looking again (a long time when none is
// paused). A resumed transfer may pause again at once (curl calls its callback here).
double Loop::Impl::resume_paused() {
  if (!rate_limiter().ever() || transfers.empty()) return HUGE_VAL;
  bool any = false;
  for (auto& [id, t] : transfers) any = any || t->paused;
  if (!any) return HUGE_VAL;
  if (double wait = rate_limiter().wait_seconds(); wait > 0) return wait;
  for (auto& [id, t] : transfers)
    if (t->paused && t->added && !t->done) {
      t->paused = false;
      curl_easy_pause(t->easy.get(), CURLPAUSE_CONT);
    }
  return 0.001;
}

// Hands each transfer that ended before this turn's callbacks began to its completion.
// Each is looked up again: an earlier callback may have cancelled it.
void Loop::Impl::hand_out_ended() {
  for (size_t n = ended.size(); n > 0; --n) {
    Id id = ended.front();
    ended.pop_front();
    auto it = transfers.find(id);
    if (it == transfers.end()) continue;
    std::unique_ptr<Transfer> t = std::move(it->second);
    transfers.erase(it);
    t->owner->erase(id);
    Outcome<HttpResponse> out = finish_guarded(*t);
    if (t->completion) t->completion(std::move(out));
  }
}

// Fires the timers due now (`interrupted`: and those set before the interrupt flag
// was raised), earliest first; timers added meanwhile wait for the next turn.
void Loop::Impl::fire_due_timers(bool interrupted) {
  const double limit = std::max(now(), skipped_to);
  skipped_to = -HUGE_VAL;
  std::vector<Id> due;
  for (auto it = due_order.begin(); it != due_order.end(); ++it) {
    if (it->first <= limit) due.push_back(it->second);
    else if (!interrupted) break;
    else if (!timers.at(it->second).after_interrupt) due.push_back(it->second);
  }
  for (Id id : due) {
    auto it = timers.find(id);
    if (it == timers.end()) continue;
    std::function<void()> fire = std::move(it->second.fire);
    if (it->second.owner) it->second.owner->erase(id);
    due_order.erase({it->second.due, id});
    timers.erase(it);
    if (fire) fire();
  }
}

// Detaches a transfer from the multi handle and pools its handle; curl no longer
// refers to it afterwards.
void Loop::Impl::detach(Transfer& t) {
  if (t.added) {
    curl_multi_remove_handle(multi.get(), t.easy.get());
    --handed;
  }
  t.added = false;
  release(std::move(t.easy));
}

// Finishes a transfer: detaches it and turns its result into the response or an Error.
Outcome<HttpResponse> Loop::Impl::finish(Transfer& t) {
  Outcome<HttpResponse> out = transfer_outcome(t);
  detach(t);
  return out;
}

// finish, with what it throws (std::bad_alloc turning an answer into its result)
// made the transfer's Error: nothing thrown leaves run_once.
Outcome<HttpResponse> Loop::Impl::finish_guarded(Transfer& t) {
  try {
    return finish(t);
  } catch (const std::exception&) {
    detach(t);
    return make_error(ErrorKind::transport, "OutOfMemory", "cannot hold an answer: out of memory");
  }
}

Loop::Loop() : impl_(std::make_unique<Impl>()) {}

// Transfers still running are abandoned; easy handles go before the multi handle.
Loop::~Loop() {
  for (auto& [id, t] : impl_->transfers) impl_->detach(*t);
  impl_->transfers.clear();
  impl_->idle.clear();
  impl_->multi.reset();
}

// Made once per thread; it goes when the thread has ended and the last transport on
// it has gone (each holds it: a client kept in a static may outlive the thread's
// thread_local destructors).
namespace {
std::shared_ptr<Loop> thread_loop() {
  static thread_local std::shared_ptr<Loop> loop = std::make_shared<Loop>();
  return loop;
}
}  // namespace

Loop& Loop::current() { return *thread_loop(); }

Loop::Id Loop::add_timer(double seconds, std::function<void()> fire, Pace pace) {
  return impl_->add_timer(seconds, std::move(fire), pace, nullptr);
}

// Removes the transfer or timer; the transfer's handle is detached and pooled here.
void Loop::cancel(Id id) {
  if (auto it = impl_->transfers.find(id); it != impl_->transfers.end()) {
    std::unique_ptr<Transfer> t = std::move(it->second);
    impl_->transfers.erase(it);
    t->owner->erase(id);
    impl_->detach(*t);
  }
  if (auto it = impl_->timers.find(id); it != impl_->timers.end()) {
    if (it->second.owner) it->second.owner->erase(id);
    impl_->due_order.erase({it->second.due, id});
    impl_->timers.erase(it);
  }
}

// One turn: drive the transfers (ending first, while the interrupt flag is raised,
// those started before it was), then hand out what ended and fire what is due.
void Loop::run_once(double timeout) {
  const bool interrupted = impl_->note_interrupt();
  if (interrupted) impl_->interrupt_all();
  impl_->wait(timeout);
  impl_->hand_out_ended();
  impl_->fire_due_timers(interrupted);
}

void Loop::run_until(const std::function<bool()>& done) {
  while (!done()) run_once(kPollSeconds);
}

size_t Loop::pending() const { return impl_->transfers.size() + impl_->timers.size(); }

double Loop::now() const { return impl_->now(); }

// A hold that ends when its last copy goes (the loop must outlive it).
std::shared_ptr<void> Loop::hold_virtual_time() {
  ++impl_->holds;
  return std::shared_ptr<void>(nullptr, [impl = impl_.get()](void*) { --impl->holds; });
}

std::function<void(double)> Loop::follow(std::function<void(double)> follower) {
  std::swap(impl_->follower, follower);
  return follower;
}

void Loop::set_max_host_connections(long n) {
  impl_->max_host_connections = n;
  if (impl_->multi) curl_multi_setopt(impl_->multi.get(), CURLMOPT_MAX_HOST_CONNECTIONS, n);
}

// The flag is only read (relaxed), so a signal handler may set it.
void Loop::set_interrupt_flag(const std::atomic<bool>* flag) { impl_->interrupt = flag; }

struct Transport::Impl {
  Loop* loop;
  std::shared_ptr<Loop> thread_loop;  // holds the thread's loop, when it is that one
  TransportOptions options;
  Owned owned;  // the transfers and timers started here and not ended yet
};

Transport::Transport(TransportOptions options) : impl_(std::make_unique<Impl>()) {
  if (!options.loop) impl_->thread_loop = thread_loop();
  impl_->loop = options.loop ? options.loop : impl_->thread_loop.get();
  impl_->options = std::move(options);
}

// What is still under way is abandoned (its callbacks never run).
Transport::~Transport() {
  Owned owned = std::move(impl_->owned);
  impl_->owned.clear();
  for (Id id : owned) impl_->loop->cancel(id);
}

Transport::Id Transport::start(HttpRequest request, Completion done) {
  return impl_->loop->impl_->start(std::move(request), std::move(done), impl_->options, &impl_->owned);
}

Transport::Id Transport::add_timer(double seconds, std::function<void()> fire, Loop::Pace pace) {
  return impl_->loop->impl_->add_timer(seconds, std::move(fire), pace, &impl_->owned);
}

void Transport::cancel(Id id) {
  if (impl_->owned.count(id)) impl_->loop->cancel(id);
}

void Transport::run_once(double timeout) { impl_->loop->run_once(timeout); }

size_t Transport::pending() const { return impl_->owned.size(); }

// start, then run the loop until this transfer has its outcome.
Outcome<HttpResponse> Transport::perform(HttpRequest request) {
  std::optional<Outcome<HttpResponse>> out;
  start(std::move(request), [&out](Outcome<HttpResponse> r) { out = std::move(r); });
  impl_->loop->run_until([&out] { return out.has_value(); });
  return std::move(*out);
}

const TransportOptions& Transport::options() const { return impl_->options; }
Loop& Transport::loop() const { return *impl_->loop; }

}  // namespace cloud
