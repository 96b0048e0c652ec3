// The event loop that holds the emulator's connections while no request of theirs is
// being served: idle between requests, or reading a request's head. One thread waits on
// all of them (libevent, epoll beneath), so an idle connection costs its socket and a
// few hundred bytes, not a thread; the head's limits of time and size are kept here,
// so a client that sends slowly or nothing holds no thread either. A connection whose
// head is whole (or past its limits, or whose input ended) is handed to the server's
// workers, and given back to the loop when the request has been answered.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include "emulator/serve_limits.h"

struct event;
struct event_base;

namespace cloud {

class ConnectionLoop;

// A client connection as the loop holds it: what the loop asks of it (Connection,
// connection.h, answers: its input taken in, its request's head begun, looked at and
// timed), and what the loop and the server keep with it. Closed and deleted by
// ConnectionLoop::close().
class Held {
 public:
  virtual ~Held() = default;
  virtual int socket() const = 0;
  // Adds `size` bytes received by the loop to what the connection has read ahead.
  virtual void take_in(const char* bytes, size_t size) = 0;
  virtual bool has_input() const = 0;
  // A request's head begins with the input read ahead, and must end within its limits.
  virtual void begin_head() = 0;
  virtual bool in_head() const = 0;
  // Whether what is read ahead holds the whole head, or more than a head may hold.
  virtual bool head_ready() = 0;
  // When the head begun must be whole (steady clock).
  virtual std::chrono::steady_clock::time_point head_deadline() const = 0;
  // The head's time is up: its next wait for input cuts the request short as stalled.
  virtual void expire_head() = 0;
  // Ended to make room: its reading side shut down, its request cut short as stalled.
  virtual void end_to_make_room() = 0;
  // Lets go of the buffers that hold nothing: an idle connection costs no buffer.
  virtual void rest() = 0;

  ConnectionLoop* loop = nullptr;  // the loop that holds it between requests
  size_t answered = 0;             // requests answered on it
  bool fresh = true;               // not yet held: it may have to make room for itself
  bool ended = false;              // ended by the loop to make room
  event* wait = nullptr;           // the loop's wait on its socket, made at its first hold
  enum class Where { out, idle, head } where = Where::out;
  std::list<Held*>::iterator at;  // its place in the loop's list of idle ones or heads
};

class ConnectionLoop {
 public:
  // Called on the loop's thread with a connection whose request may be served.
  using Ready = std::function<void(Held*)>;
  // Starts the loop's thread; `idle_ms` is how long a connection may stay idle.
  ConnectionLoop(const ConnectionLimits& limits, int idle_ms, Ready ready);
  ~ConnectionLoop();
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;

  // Closes a connection's socket and deletes it. Any thread.
  void close(Held* link);
  // Holds a connection until its next request's head is in: a new one (then counted
  // among those open), or one given back between requests (with what it has read of
  // the next). Any thread.
  void hold(Held* link);
  // Closes every connection held, now and any held from now on. Any thread.
  void end_all();
  // Ends the loop's thread and closes what it holds (end_all() first).
  void stop();

 private:
  static void on_wake(int, short, void* self);
  static void on_input(int sock, short what, void* link);
  void take_held();
  void wait_for(Held* link);
  void arm(Held* link);
  void input(Held* link, short what);
  void let_go(Held* link);
  void dispatch(Held* link);
  void make_room();
  void close_held();

  const ConnectionLimits limits_;
  const int idle_ms_;
  const Ready ready_;
  event_base* base_ = nullptr;
  event* wake_ = nullptr;
  std::thread thread_;
  std::atomic<size_t> open_{0}, ended_{0};  // connections open; of them, ended to make room
  std::mutex mutex_;
  std::vector<Held*> given_;  // held from other threads, not yet taken by the loop
  bool ending_ = false, stopping_ = false;
  // The loop's own (its thread alone): the idle ones and the heads, each oldest first.
  std::list<Held*> idle_, heads_;
  std::vector<char> scratch_;
};

}  // namespace cloud
