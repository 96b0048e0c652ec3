#include "emulator/connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cloud {

namespace {

constexpr size_t kReadAhead = 64 << 10;

// Whether the answer being written on this thread's connection ends it.
thread_local bool answer_closes = false;

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
  while ((n = ::poll(&fd, 1, ms)) < 0 && errno == EINTR) {
  }
  return n > 0;
}

// Waits in recv() itself, not in a poll() before it: one system call per request.
bool Connection::wait_for_request(int ms) {
  if (in_at_ < in_end_) return true;
  if (!flush()) return false;
  if (ms != limits_.read_ms && !poll_for(POLLIN, ms)) return false;
  return read_ahead() > 0;
}

// recv() into `into`, waiting up to the read limit; 0 at the end of the input, -1 on
// failure or time-out.
ssize_t Connection::receive(char* into, size_t size) {
  ssize_t n;
  while ((n = ::recv(sock_, into, size, 0)) < 0 && errno == EINTR) {
  }
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

ssize_t Connection::read(char* ptr, size_t size) {
  if (size == 1 && in_at_ < in_end_) {  // httplib reads a request's head a byte at a time
    *ptr = in_[in_at_++];
    return 1;
  }
  if (in_at_ == in_end_) {
    // The client may wait for what was written (100 Continue) before it sends more.
    if (!flush()) return -1;
    if (size >= kReadAhead) return receive(ptr, size);
    ssize_t n = read_ahead();
    if (n <= 0) return n;
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

ConnectionServer::ConnectionServer(ReadWhole read_whole) {
  // Called for every answer, just before its head is written.
  set_post_routing_handler([read_whole = std::move(read_whole)](const httplib::Request& req, httplib::Response& res) {
    if (read_whole(req)) return;
    if (res.get_header_value("Connection") != "close") res.set_header("Connection", "close");
    answer_closes = true;
  });
}

// shutdown(SHUT_RD): a recv() waiting, or to come, sees the end of the input at once.
void ConnectionServer::end_connections() {
  std::lock_guard<std::mutex> lock(mutex_);
  ending_ = true;
  for (int sock : open_) ::shutdown(sock, SHUT_RD);
}

bool ConnectionServer::enter(int sock) {
  std::lock_guard<std::mutex> lock(mutex_);
  return !ending_ && open_.insert(sock).second;
}

void ConnectionServer::leave(int sock) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_.erase(sock);
}

// httplib's loop over a connection's requests (process_server_socket), with one
// Connection for all of them.
bool ConnectionServer::process_and_close_socket(socket_t sock) {
  bool ok = false;
  if (enter(sock)) {
    Connection c(sock, {to_ms(read_timeout_sec_, read_timeout_usec_), to_ms(write_timeout_sec_, write_timeout_usec_)});
    for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET &&
                                              c.wait_for_request(static_cast<int>(keep_alive_timeout_sec_ * 1000));
         --left) {
      bool closed = false;
      answer_closes = false;
      ok = process_request(c, left == 1, closed, nullptr);
      // Flushed even when the answer was cut short: its head goes out, as httplib sends it.
      if (!c.flush() || !ok || closed || answer_closes) break;
    }
    leave(sock);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace cloud
