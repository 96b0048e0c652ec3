// The event loop of the emulator's connections (connection_loop.h): libevent's base on a
// thread of its own, one wait per connection held, made once and armed again each time
// the connection comes back, with the idle time or the head's time left as its
// time-out. Other threads hand connections in through a list and a wake-up event.
#include "emulator/connection_loop.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace cloud {

namespace {

constexpr size_t kScratchBytes = 64 << 10;  // what one read in the loop takes at most

// libevent's locks, so that other threads may add and activate events (once a process).
void use_threads() {
  static std::once_flag once;
  std::call_once(once, [] { ::evthread_use_pthreads(); });
}

timeval to_timeval(long long ms) {
  ms = std::max(ms, 0LL);
  return timeval{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
}

}  // namespace

ConnectionLoop::ConnectionLoop(const ConnectionLimits& limits, int idle_ms, Ready ready)
    : limits_(limits), idle_ms_(idle_ms), ready_(std::move(ready)), scratch_(kScratchBytes) {
  use_threads();
  base_ = ::event_base_new();
  if (base_) wake_ = ::event_new(base_, -1, 0, &ConnectionLoop::on_wake, this);
  if (wake_) thread_ = std::thread([this] { ::event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY); });
}

ConnectionLoop::~ConnectionLoop() {
  stop();
  if (wake_) ::event_free(wake_);
  if (base_) ::event_base_free(base_);
}

void ConnectionLoop::close(Held* link) {
  if (link->wait) ::event_free(link->wait);
  if (link->ended) --ended_;
  ::shutdown(link->socket(), SHUT_RDWR);
  ::close(link->socket());
  delete link;
  --open_;
}

void ConnectionLoop::hold(Held* link) {
  if (!link->loop) link->loop = this, ++open_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ending_ && wake_) given_.push_back(link), link = nullptr;
  }
  if (link) return close(link);
  ::event_active(wake_, EV_READ, 0);
}

void ConnectionLoop::end_all() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ending_ = true;
  }
  if (wake_) ::event_active(wake_, EV_READ, 0);
}

void ConnectionLoop::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ending_ = stopping_ = true;
  }
  if (!thread_.joinable()) return;
  ::event_active(wake_, EV_READ, 0);
  thread_.join();
}

void ConnectionLoop::on_wake(int, short, void* self) { static_cast<ConnectionLoop*>(self)->take_held(); }

void ConnectionLoop::on_input(int, short what, void* link) {
  auto* l = static_cast<Held*>(link);
  l->loop->input(l, what);
}

// Takes the connections handed in; once ending, closes them and every one held (and
// leaves the loop when stopping).
void ConnectionLoop::take_held() {
  std::vector<Held*> given;
  bool ending, stopping;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    given.swap(given_);
    ending = ending_, stopping = stopping_;
  }
  for (Held* link : given) ending ? close(link) : wait_for(link);
  if (ending) close_held();
  if (stopping) ::event_base_loopbreak(base_);
}

// A connection comes to the loop: a new one makes room for itself first; one with the
// next request's head already whole goes straight back to the workers.
void ConnectionLoop::wait_for(Held* link) {
  if (!link->wait) link->wait = ::event_new(base_, link->socket(), EV_READ, &ConnectionLoop::on_input, link);
  if (!link->wait) return close(link);
  if (link->fresh) link->fresh = false, make_room();
  Held& c = *link;
  if (c.has_input()) {
    if (!c.in_head()) c.begin_head();
    if (c.head_ready()) return dispatch(link);
  } else {
    c.rest();
  }
  arm(link);
}

// Waits for input on the connection, up to the idle time, or in a head up to the
// read time-out or the head's deadline, whichever comes first.
void ConnectionLoop::arm(Held* link) {
  Held& c = *link;
  long long ms = idle_ms_;
  if (c.in_head()) {
    using namespace std::chrono;
    auto left = duration_cast<milliseconds>(c.head_deadline() - steady_clock::now()).count();
    ms = std::min<long long>(left, limits_.read_ms);
  }
  timeval limit = to_timeval(ms);
  if (::event_add(link->wait, &limit) != 0) return close(link);
  std::list<Held*>& list = c.in_head() ? heads_ : idle_;
  link->where = c.in_head() ? Held::Where::head : Held::Where::idle;
  link->at = list.insert(list.end(), link);
}

// Input came, or the wait's time is up. An idle connection whose input ends, or whose
// time is up, is closed; a head's is served (its request cut short then, as stalled,
// or answered as httplib answers a head that ends half-way).
void ConnectionLoop::input(Held* link, short what) {
  bool idle = link->where == Held::Where::idle;
  let_go(link);
  Held& c = *link;
  if (!(what & EV_READ)) {
    if (idle) return close(link);
    c.expire_head();
    return dispatch(link);
  }
  ssize_t n = ::recv(c.socket(), scratch_.data(), scratch_.size(), MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return arm(link);
  if (n <= 0) return idle ? close(link) : dispatch(link);
  c.take_in(scratch_.data(), static_cast<size_t>(n));
  if (!c.in_head()) c.begin_head();
  if (c.head_ready()) return dispatch(link);
  arm(link);
}

// Takes the connection out of the list it is held in.
void ConnectionLoop::let_go(Held* link) {
  if (link->where == Held::Where::idle) idle_.erase(link->at);
  if (link->where == Held::Where::head) heads_.erase(link->at);
  link->where = Held::Where::out;
}

void ConnectionLoop::dispatch(Held* link) { ready_(link); }

// While more connections are open than the limit (not counting those already ended
// to make room), ends the one idle longest, or else the head that began longest ago
// (its request answered as stalled).
void ConnectionLoop::make_room() {
  while (open_.load() > limits_.connections + ended_.load()) {
    std::list<Held*>& list = idle_.empty() ? heads_ : idle_;
    if (list.empty()) return;
    Held* oldest = list.front();
    ::event_del(oldest->wait);
    let_go(oldest);
    if (&list == &idle_) {
      close(oldest);
      continue;
    }
    oldest->ended = true, ++ended_;
    oldest->end_to_make_room();
    dispatch(oldest);
  }
}

void ConnectionLoop::close_held() {
  for (std::list<Held*>* list : {&idle_, &heads_})
    while (!list->empty()) {
      Held* link = list->front();
      ::event_del(link->wait);
      let_go(link);
      close(link);
    }
}

}  // namespace cloud
