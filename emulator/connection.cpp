// The emulator's connections (connection.h): a stream over a socket that keeps its
// read-ahead, times and counts each request's head, and a server that accepts on
// httplib's thread, holds connections between requests in the event loop
// (connection_loop.h) and serves their requests on a pool of worker threads.
#include "emulator/connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <vector>

namespace cloud {

namespace {

constexpr size_t kReadAhead = 64 << 10;

int to_ms(time_t sec, time_t usec) { return static_cast<int>(sec * 1000 + usec / 1000); }

// The address `get` (getsockname or getpeername) gives for `sock`, as httplib writes it.
void address_of(int sock, int (*get)(int, sockaddr*, socklen_t*), std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t size = sizeof a;
  ip.clear();
  port = 0;
  if (get(sock, reinterpret_cast<sockaddr*>(&a), &size) != 0) return;
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

}  // namespace

Connection::Connection(int sock, ConnectionLimits limits) : sock_(sock), limits_(limits) {
  timeval read{limits.read_ms / 1000, (limits.read_ms % 1000) * 1000};
  timeval write{limits.write_ms / 1000, (limits.write_ms % 1000) * 1000};
  ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &read, sizeof read);
  ::setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &write, sizeof write);
}

// Whether `events` came on the socket within `ms`.
bool Connection::poll_for(short events, int ms) const {
  pollfd fd{sock_, events, 0};
  int n;
  while ((n = ::poll(&fd, 1, ms)) < 0 && errno == EINTR) {}
  return n > 0;
}

// A request's head begins: it must end within head_ms, head_lines and head_bytes.
void Connection::begin_head() {
  cut_ = Cut::none;
  in_head_ = true;
  head_deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits_.head_ms);
  head_bytes_ = head_lines_ = line_bytes_ = 0;
  last_ = 0;
  head_text_.clear();
  head_start_ = scanned_ = in_at_;
  scanned_lines_ = 0;
}

// The head has ended: the connection is busy with the request until its next wait.
void Connection::end_head() { in_head_ = false; }

// Looks at the bytes come since the last look for the line "\r\n" alone that ends the
// head (httplib's end of the headers, after the request line), counting lines and bytes.
bool Connection::head_ready() {
  const char* data = in_.data();
  while (scanned_ < in_end_) {
    const void* found = std::memchr(data + scanned_, '\n', in_end_ - scanned_);
    if (!found) {
      scanned_ = in_end_;
      break;
    }
    size_t at = static_cast<size_t>(static_cast<const char*>(found) - data);
    scanned_ = at + 1;
    ++scanned_lines_;
    if (at >= head_start_ + 2 && data[at - 1] == '\r' && data[at - 2] == '\n') return true;
  }
  return in_end_ - head_start_ > limits_.head_bytes || scanned_lines_ > limits_.head_lines + 1;
}

void Connection::end_to_make_room() {
  ending_ = true;
  ::shutdown(sock_, SHUT_RD);
}

// Appends what the loop received; the buffer starts over when all it held was taken.
void Connection::take_in(const char* bytes, size_t size) {
  if (in_at_ == in_end_ && !in_head_) in_at_ = in_end_ = 0;
  if (in_.size() < in_end_ + size) in_.resize(in_end_ + size);
  std::memcpy(&in_[in_end_], bytes, size);
  in_end_ += size;
}

bool Connection::await_input(int ms) { return flush() && poll_for(POLLIN, ms) && read_ahead() > 0; }

void Connection::rest() {
  if (in_at_ == in_end_) std::string().swap(in_), in_at_ = in_end_ = 0;
  if (out_.empty()) std::string().swap(out_);
  std::string().swap(head_text_);
}

// Counts a byte of the head as httplib takes it; false (cut_ set) when the head grows
// past its limits. A line "\r\n" alone ends the head (httplib's end of the headers; a
// line ending in "\n" alone it skips, and it is counted here).
bool Connection::count_head_byte(char c) {
  ++head_bytes_;
  head_text_ += c;
  if (c != '\n') {
    ++line_bytes_;
  } else {
    if (line_bytes_ == 1 && last_ == '\r' && head_lines_ > 0) end_head();
    else ++head_lines_;
    line_bytes_ = 0;
  }
  last_ = c;
  if (head_bytes_ <= limits_.head_bytes && head_lines_ <= limits_.head_lines + 1) return true;  // + the request line
  cut_ = Cut::head_too_large;
  return false;
}

// In a head, a wait for more input ends at the head's deadline at the latest; false
// (cut_ set) once it has passed.
bool Connection::wait_in_head() {
  using namespace std::chrono;
  auto left = duration_cast<milliseconds>(head_deadline_ - steady_clock::now()).count();
  if (left >= limits_.read_ms) return true;  // recv()'s own time-out comes first
  if (left > 0 && poll_for(POLLIN, static_cast<int>(left))) return true;
  cut_ = Cut::timed_out;
  return false;
}

// recv() into `into`, waiting up to the read limit; 0 at the end of the input, -1 on
// failure or time-out. A time-out, or an end the server made to make room,
// cuts the request short as stalled.
ssize_t Connection::receive(char* into, size_t size) {
  ssize_t n;
  while ((n = ::recv(sock_, into, size, 0)) < 0 && errno == EINTR) {}
  if ((n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) || (n == 0 && ending_)) cut_ = Cut::timed_out;
  return n;
}

// Reads what has come, up to kReadAhead, into the read-ahead buffer (empty before).
ssize_t Connection::read_ahead() {
  if (in_.size() < kReadAhead) in_.resize(kReadAhead);
  ssize_t n = receive(&in_[0], in_.size());
  in_at_ = 0;
  in_end_ = n > 0 ? static_cast<size_t>(n) : 0;
  return n;
}

// httplib reads a request's head a byte at a time, and a body in blocks: a read of
// more than a byte ends the head, if its blank line did not. A byte of a head's line
// read ahead is taken here, without a call (some 450 a request); the rest in read_more.
ssize_t Connection::read(char* ptr, size_t size) {
  if (size == 1 && in_at_ < in_end_ && in_head_ && in_[in_at_] != '\n' && head_bytes_ < limits_.head_bytes) {
    last_ = *ptr = in_[in_at_++];
    ++head_bytes_, ++line_bytes_;
    head_text_ += last_;
    return 1;
  }
  return read_more(ptr, size);
}

// A read past read()'s fast path: a line's end, a body's block, or input to wait for.
ssize_t Connection::read_more(char* ptr, size_t size) {
  if (size == 1 && in_at_ < in_end_) {
    *ptr = in_[in_at_++];
    return !in_head_ || count_head_byte(*ptr) ? 1 : -1;
  }
  if (in_head_ && size > 1) end_head();
  if (in_at_ == in_end_) {
    // The client may wait for what was written (100 Continue) before it sends more.
    if (!flush() || (in_head_ && !wait_in_head())) return -1;
    if (size >= kReadAhead) return receive(ptr, size);
    ssize_t n = read_ahead();
    if (n <= 0) return n;
    if (size == 1) return read_more(ptr, size);
  }
  size_t taken = std::min(size, in_end_ - in_at_);
  std::memcpy(ptr, in_.data() + in_at_, taken);
  in_at_ += taken;
  return static_cast<ssize_t>(taken);
}

bool Connection::is_readable() const { return in_at_ < in_end_ || poll_for(POLLIN, limits_.read_ms); }

bool Connection::is_writable() const { return !failed_ && poll_for(POLLOUT, limits_.write_ms); }

ssize_t Connection::write(const char* ptr, size_t size) {
  if (failed_) return -1;
  if (out_.size() + size <= kHeldBytes) {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  return send_all(ptr, size) ? static_cast<ssize_t>(size) : -1;
}

bool Connection::flush() { return !failed_ && (out_.empty() || send_all(nullptr, 0)); }

// Sends what is held, then `more`, gathered into as few sends as the socket takes.
bool Connection::send_all(const char* more, size_t more_size) {
  iovec parts[2] = {{&out_[0], out_.size()}, {const_cast<char*>(more), more_size}};
  msghdr m{};
  m.msg_iov = out_.empty() ? parts + 1 : parts;
  m.msg_iovlen = (out_.empty() ? 0 : 1) + (more_size ? 1 : 0);
  while (m.msg_iovlen > 0) {
    ssize_t n = ::sendmsg(sock_, &m, MSG_NOSIGNAL);  // blocks up to the write limit
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      failed_ = true;
      return false;
    }
    auto sent = static_cast<size_t>(n);
    for (; m.msg_iovlen > 0 && sent >= m.msg_iov->iov_len; ++m.msg_iov, --m.msg_iovlen) sent -= m.msg_iov->iov_len;
    if (m.msg_iovlen > 0) {
      m.msg_iov->iov_base = static_cast<char*>(m.msg_iov->iov_base) + sent;
      m.msg_iov->iov_len -= sent;
    }
  }
  out_.clear();
  return true;
}

void Connection::get_remote_ip_and_port(std::string& ip, int& port) const {
  if (!remote_.known) address_of(sock_, ::getpeername, remote_.ip, remote_.port), remote_.known = true;
  ip = remote_.ip;
  port = remote_.port;
}

void Connection::get_local_ip_and_port(std::string& ip, int& port) const {
  if (!local_.known) address_of(sock_, ::getsockname, local_.ip, local_.port), local_.known = true;
  ip = local_.ip;
  port = local_.port;
}

bool BodyBudget::take(std::uint64_t bytes) {
  std::uint64_t left = left_.load();
  do {
    if (bytes > left) return false;
  } while (!left_.compare_exchange_weak(left, left - bytes));
  return true;
}

namespace {

// The stack of each thread that serves connections, whatever `ulimit -s` says (the
// default thread stack is that limit). httplib 0.11 reads a Range header with
// libstdc++'s regex engine, which recurses once per character, before anything of the
// emulator's sees the request: a Range of the longest header line httplib takes (8 KiB)
// needs about 4 MiB of stack (measured, -O2), and overflowed a 2 MiB stack; eight times
// that leaves room for builds with larger frames (the sanitizers'). Only the pages a
// thread touches are memory; the rest is address space.
constexpr size_t kWorkerStackBytes = 32u << 20;

// How long a worker waits for the next request on the connection it has just answered
// before giving it back to the loop. A client that keeps sending (a load test, a
// transfer of many parts) sends its next request within this, and the worker's wait
// saves the loop's wake-up and the hand-over to a worker; a quiet client costs the
// worker no more than this.
constexpr int kLingerMs = 5;

// The connection this thread serves, what its answer decided, the body budget its
// request took and the note kept of it, given back and dropped when the request has
// been answered.
struct Serving {
  Connection* connection;
  BodyBudget* budget;
  bool closes = false;         // the answer being written ends the connection
  std::uint64_t reserved = 0;  // of the budget, for the request's body
  std::unique_ptr<RequestNote> note;

  Serving(Connection* c, BodyBudget* b);
  ~Serving();
  void answered() {
    if (budget && reserved) budget->give_back(reserved);
    reserved = 0;
    note.reset();
  }
};

thread_local Serving* serving = nullptr;

Serving::Serving(Connection* c, BodyBudget* b) : connection(c), budget(b) { serving = this; }
Serving::~Serving() {
  answered();
  serving = nullptr;
}

}  // namespace

const std::string* current_request_head() { return serving ? &serving->connection->head_text() : nullptr; }

// The workers: threads that serve the requests whose heads are in, one request (or a
// run of requests that follow at once) a job. A thread is started whenever a job would
// otherwise wait for one, up to `max`, and kept for later jobs: a request that waits
// long (a delay, a slow body) keeps no other waiting while threads are left. Jobs queued
// when it stops still run.
class ConnectionServer::Workers {
 public:
  Workers(size_t max, ConnectionServer& server) : max_(max), server_(server) {}
  ~Workers() { stop(); }

  void enqueue(Connection* job) {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(job);
    // A thread that cannot be started leaves the job to the ones there are.
    if (jobs_.size() > idle_ + starting_ && threads_.size() < max_ && start_thread()) return;
    ready_.notify_one();
    count_waiting();
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (pthread_t t : threads_) ::pthread_join(t, nullptr);
    threads_.clear();
  }

  // The jobs no thread is free to take, or being started for.
  size_t waiting() const { return waiting_.load(); }

 private:
  void count_waiting() {
    size_t taken = idle_ + starting_;
    waiting_ = jobs_.size() > taken ? jobs_.size() - taken : 0;
  }

  // A thread running work() on a stack of kWorkerStackBytes (std::thread cannot
  // choose its stack); false when none could be started.
  bool start_thread() {
    pthread_attr_t attr;
    if (::pthread_attr_init(&attr) != 0) return false;
    pthread_t t;
    bool started = ::pthread_attr_setstacksize(&attr, kWorkerStackBytes) == 0 &&
                   ::pthread_create(&t, &attr, &Workers::run, this) == 0;
    ::pthread_attr_destroy(&attr);
    if (started) threads_.push_back(t), ++starting_;
    return started;
  }

  static void* run(void* workers) {
    static_cast<Workers*>(workers)->work();
    return nullptr;
  }

  void work() {
    bool started = true;
    for (;;) {
      Connection* job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (started) --starting_, started = false;
        ++idle_;
        count_waiting();
        ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        --idle_;
        if (jobs_.empty()) return;
        job = jobs_.front();
        jobs_.pop_front();
        count_waiting();
      }
      server_.serve(job);
    }
  }

  const size_t max_;
  ConnectionServer& server_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Connection*> jobs_;
  std::vector<pthread_t> threads_;
  size_t idle_ = 0;
  size_t starting_ = 0;  // threads started that have not yet come for a job
  std::atomic<size_t> waiting_{0};
  bool stopping_ = false;
};

// What httplib's accept loop hands its connections to: each goes to the event loop at
// once, on the accepting thread. Its shutdown, once httplib has stopped accepting,
// stops the loop and the workers.
class ConnectionServer::Accepted : public httplib::TaskQueue {
 public:
  explicit Accepted(ConnectionServer& server) : server_(server) {}
  void enqueue(std::function<void()> job) override { job(); }
  void shutdown() override { server_.stop_serving(); }

 private:
  ConnectionServer& server_;
};

ConnectionServer::ConnectionServer(ReadWhole read_whole) {
  new_task_queue = [this] { return start_serving(); };
  // Called for every answer, just before its head is written.
  set_post_routing_handler(
      [this, read_whole = std::move(read_whole)](const httplib::Request& req, httplib::Response& res) {
        Cut cut = serving ? serving->connection->cut() : Cut::none;
        if (cut != Cut::none) answer_cut_short(cut, req, res);
        else if (read_whole(req)) return;
        if (res.get_header_value("Connection") != "close") res.set_header("Connection", "close");
        if (serving) serving->closes = true;
      });
}

ConnectionServer::~ConnectionServer() { stop_serving(); }

void ConnectionServer::set_limits(const ConnectionLimits& limits) {
  limits_ = limits;
  set_read_timeout(limits.read_ms / 1000, (limits.read_ms % 1000) * 1000);
  set_write_timeout(limits.write_ms / 1000, (limits.write_ms % 1000) * 1000);
}

// The answer to a request cut short: the handler's (S3's RequestTimeout, or the
// head's size refused), in place of httplib's bare 400.
void ConnectionServer::answer_cut_short(Cut why, const httplib::Request& req, httplib::Response& res) const {
  res.headers.clear();
  res.body.clear();
  res.status = 400;
  if (cut_short_) cut_short_(why, req, res);
  res.headers.erase("Content-Length");
  res.set_header("Content-Length", std::to_string(res.body.size()));
}

bool ConnectionServer::reserve_body(std::uint64_t bytes) {
  Serving* s = serving;
  if (!s || !s->budget || bytes <= s->reserved) return true;
  if (!s->budget->take(bytes - s->reserved)) return false;
  s->reserved = bytes;
  return true;
}

std::unique_ptr<RequestNote>* ConnectionServer::request_note() { return serving ? &serving->note : nullptr; }

// The limits, with the read and write time-outs set on httplib (set_limits() sets
// them too; a test may set them apart).
ConnectionLimits ConnectionServer::connection_limits() const {
  ConnectionLimits limits = limits_;
  limits.read_ms = to_ms(read_timeout_sec_, read_timeout_usec_);
  limits.write_ms = to_ms(write_timeout_sec_, write_timeout_usec_);
  return limits;
}

// Called by httplib as it starts listening, on its thread: a loop and workers for this
// listen.
httplib::TaskQueue* ConnectionServer::start_serving() {
  stop_serving();
  ConnectionLimits limits = connection_limits();
  const int idle_ms = static_cast<int>(std::min<time_t>(keep_alive_timeout_sec_, INT_MAX / 1000) * 1000);
  workers_ = std::make_unique<Workers>(limits.threads, *this);
  auto loop = std::make_unique<ConnectionLoop>(limits, idle_ms,
                                               [this](Held* c) { workers_->enqueue(static_cast<Connection*>(c)); });
  std::lock_guard<std::mutex> lock(mutex_);
  loop_ = std::move(loop);
  if (ending_) loop_->end_all();
  return new Accepted(*this);  // deleted by httplib after its shutdown()
}

// The loop first (no connection is handed to the workers after it), then the workers,
// who finish what they serve; a connection they give back is closed.
void ConnectionServer::stop_serving() {
  if (loop_) loop_->stop();
  if (workers_) workers_->stop();
}

// Ends every connection held by the loop, and the reading side of every one served, so
// that a read waiting, or to come, sees the end of the input at once.
void ConnectionServer::end_connections() {
  std::lock_guard<std::mutex> lock(mutex_);
  ending_ = true;
  if (loop_) loop_->end_all();
  for (Connection* c : busy_) ::shutdown(c->socket(), SHUT_RD);
}

bool ConnectionServer::enter(Connection* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  return !ending_ && busy_.insert(c).second;
}

void ConnectionServer::leave(Connection* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  busy_.erase(c);
}

// httplib's accept loop gives each connection to the event loop.
bool ConnectionServer::process_and_close_socket(socket_t sock) {
  loop_->hold(new Connection(sock, connection_limits()));
  return true;
}

// On a worker: the connection's request, and those that follow at once; then back to
// the loop, or closed.
void ConnectionServer::serve(Connection* c) {
  bool keep = enter(c);
  if (keep) {
    while ((keep = answer(*c)) && next_request(*c)) {}
    leave(c);
  }
  keep ? c->loop->hold(c) : c->loop->close(c);
}

// Serves the request whose head has come (httplib reads it from the connection's
// stream); whether the connection may serve another.
bool ConnectionServer::answer(Connection& c) {
  Serving here(&c, budget_.get());
  bool closed = false;
  bool last = ++c.answered >= keep_alive_max_count_;
  bool ok = process_request(c, last, closed, nullptr);
  // What the request held (its body's share of the budget) is given back before the
  // answer's held bytes go out, so that a client that has read its answer finds it
  // free (given back after, a PUT sent at once on another connection could be
  // refused SlowDown meanwhile).
  here.answered();
  // Flushed even when the answer was cut short: its head goes out, as httplib sends it.
  return c.flush() && ok && !closed && !here.closes && !last && svr_sock_ != INVALID_SOCKET;
}

// Whether the worker goes on with the connection's next request itself: its head is
// whole in what was read ahead, or arrives whole within kLingerMs while no other
// request waits for a worker. Otherwise the loop waits for it.
bool ConnectionServer::next_request(Connection& c) {
  if (!c.has_input() && (workers_->waiting() > 0 || !c.await_input(kLingerMs))) return false;
  c.begin_head();
  return c.head_ready();
}

}  // namespace cloud
