// The emulator's connections. cpp-httplib parses the requests and writes the answers;
// this file owns the sockets they travel on and the threads that serve them. httplib
// 0.11 reads each request through a stream of its own (what it had read ahead of the
// next request is lost with it), asks poll() before every read and every write, looks
// both addresses up for every request, sends an answer's head and body apart, notices
// a stop only between requests, gives a request's head all the time and all the lines
// a client likes, and keeps a thread on each connection for its whole life. Here a
// connection keeps one stream for its whole life: input is read ahead into a buffer
// the connection keeps, reads and sends block on the socket itself (its time-outs set
// on it), the addresses are looked up once, an answer's writes leave in one send, a
// stop ends every wait for input at once, and a head must come whole within a time
// and a size (ConnectionLimits). Between
// requests, and while a head arrives, a connection is held by no thread: an event loop
// (connection_loop.h) waits on it, and hands it to a pool of worker threads once a
// whole head is in (or its limits are passed); a worker serves that request with
// httplib, and goes on with the next one itself when it follows at once.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <memory>
#include <mutex>
#include <string>

#include "emulator/connection_loop.h"
#include "emulator/serve_limits.h"

namespace cloud {

// Why a request was cut short by its connection: it stalled (its head took longer
// than head_ms, a read waited past read_ms, or the server ended it to make room), or
// its head outgrew head_lines or head_bytes.
enum class Cut { none, timed_out, head_too_large };

// One client connection, read and written through buffers. Writes are held until
// flush(), a read that has to wait for input, or more than kHeldBytes: an answer
// of less leaves in one send. shutdown(SHUT_RD) on the socket ends its reads and
// waits for input; an answer being sent still goes out. A request's head (what
// httplib reads a byte at a time, up to a line "\r\n" alone) is counted and timed.
class Connection final : public httplib::Stream, public Held {
 public:
  static constexpr size_t kHeldBytes = 64 << 10;

  // Sets the read and write limits on the socket (SO_RCVTIMEO, SO_SNDTIMEO).
  Connection(int sock, ConnectionLimits limits);

  // What the event loop asks of a connection it holds (connection_loop.h).
  void take_in(const char* bytes, size_t size) override;
  bool has_input() const override { return in_at_ < in_end_; }
  void begin_head() override;
  bool in_head() const override { return in_head_; }
  // Each byte read ahead is looked at once.
  bool head_ready() override;
  std::chrono::steady_clock::time_point head_deadline() const override { return head_deadline_; }
  void expire_head() override { head_deadline_ = std::chrono::steady_clock::now(); }
  void end_to_make_room() override;
  void rest() override;

  // Sends what is held, then waits up to `ms` for input and reads it ahead; false
  // when none came.
  bool await_input(int ms);
  // Sends what is held; false when the connection failed.
  bool flush();
  // The head of the request being served as it came (request line and header lines),
  // within the head's limits: httplib keeps only its own reading of the headers.
  const std::string& head_text() const { return head_text_; }
  // Why the request being served was cut short, if it was; cleared by begin_head().
  Cut cut() const { return cut_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return sock_; }

 private:
  bool poll_for(short events, int ms) const;
  bool send_all(const char* more, size_t more_size);
  ssize_t receive(char* into, size_t size);
  ssize_t read_ahead();
  // Kept out of read(), whose fast path then saves and restores no registers.
  [[gnu::noinline]] ssize_t read_more(char* ptr, size_t size);
  void end_head();
  bool count_head_byte(char c);
  bool wait_in_head();

  const int sock_;
  const ConnectionLimits limits_;
  std::string in_;  // read ahead: in_[in_at_, in_end_) not yet taken
  size_t in_at_ = 0, in_end_ = 0;
  std::string out_;  // written, not yet sent
  bool failed_ = false;
  bool ending_ = false;  // ended to make room
  Cut cut_ = Cut::none;
  // The head being read: its deadline, bytes, lines, and the line being read.
  bool in_head_ = false;
  std::chrono::steady_clock::time_point head_deadline_;
  size_t head_bytes_ = 0, head_lines_ = 0, line_bytes_ = 0;
  char last_ = 0;
  std::string head_text_;
  // What head_ready() has looked at: where the head starts in in_, the next byte to
  // look at, and the line ends seen.
  size_t head_start_ = 0, scanned_ = 0, scanned_lines_ = 0;
  struct Address {
    bool known = false;
    std::string ip;
    int port = 0;
  };
  mutable Address local_, remote_;
};

// The head of the request this thread serves, as its connection received it; nullptr
// when the request came through no connection (answered without a socket).
const std::string* current_request_head();

// What a server keeps of the request a thread serves from httplib's first look at it
// (Expect: 100-continue, pre-routing) to its handler (ConnectionServer::request_note).
struct RequestNote {
  virtual ~RequestNote() = default;
};

// What the declared bodies of the requests in flight may hold together (shared by the
// servers of every API); a body that does not fit is refused (S3's 503 SlowDown).
class BodyBudget {
 public:
  explicit BodyBudget(std::uint64_t bytes) : left_(bytes) {}
  // Takes `bytes` of the budget; false, and nothing taken, when they do not fit.
  bool take(std::uint64_t bytes);
  void give_back(std::uint64_t bytes) { left_ += bytes; }

 private:
  std::atomic<std::uint64_t> left_;
};

// httplib's server with the connections above: each served until the client ends it,
// it stays idle longer than the keep-alive time-out, end_connections() is called, an
// answer says Connection: close, or another connection needs room. An answer says so
// when `read_whole` says its request was not read whole (httplib answers some requests
// it cannot take before reading their bodies: what is left of one must not be read as
// the next request), or when its request was cut short (then the answer is the
// cut-short handler's). `read_whole` is asked just before each answer's head is
// written. httplib's thread accepts; the event loop holds the connections between
// requests and while their heads arrive; at most limits.threads requests are served
// at once, each on a worker thread started when no other is free. When more than
// limits.connections are open, a new one makes room: the idle ones are ended first,
// the one idle longest first, then those whose heads began longest ago.
class ConnectionServer : public httplib::Server {
 public:
  using ReadWhole = std::function<bool(const httplib::Request&)>;
  // Fills the answer to a request its connection cut short (status, body, headers).
  using CutShort = std::function<void(Cut, const httplib::Request&, httplib::Response&)>;
  explicit ConnectionServer(ReadWhole read_whole);
  ~ConnectionServer() override;

  // The limits of its connections (read and write time-outs set on httplib too); before listening.
  void set_limits(const ConnectionLimits& limits);
  void set_cut_short_handler(CutShort handler) { cut_short_ = std::move(handler); }
  void set_body_budget(std::shared_ptr<BodyBudget> budget) { budget_ = std::move(budget); }
  // Takes `bytes` of the budget for the body of the request this thread is serving,
  // given back when it has been answered; false when they do not fit. True outside a
  // connection (a request served without a socket) and without a budget.
  static bool reserve_body(std::uint64_t bytes);
  // The note kept for the request this thread serves (empty until one is put there),
  // dropped once the request has been answered; nullptr outside a connection (a
  // request served without a socket).
  static std::unique_ptr<RequestNote>* request_note();

  // Ends every connection's wait for input, now and from now on (call after stop()).
  void end_connections();

 private:
  class Workers;
  class Accepted;
  bool process_and_close_socket(socket_t sock) override;
  void answer_cut_short(Cut why, const httplib::Request& req, httplib::Response& res) const;
  ConnectionLimits connection_limits() const;
  // Starts the loop and the workers for one listen; stops them when it ends.
  httplib::TaskQueue* start_serving();
  void stop_serving();
  // A connection's requests, served on a worker thread until it goes back to the loop.
  void serve(Connection* c);
  bool answer(Connection& c);
  bool next_request(Connection& c);
  // Adds a connection to those end_connections() ends; false once it has been called.
  bool enter(Connection* c);
  void leave(Connection* c);

  ConnectionLimits limits_;
  CutShort cut_short_;
  std::shared_ptr<BodyBudget> budget_;
  std::unique_ptr<ConnectionLoop> loop_;
  std::unique_ptr<Workers> workers_;
  std::mutex mutex_;
  std::set<Connection*> busy_;  // the connections being served by the workers
  bool ending_ = false;
};

}  // namespace cloud
