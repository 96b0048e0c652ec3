// The emulator's connections. cpp-httplib parses the requests and writes the answers;
// this file owns the sockets they travel on. httplib 0.11 reads each request through
// a stream of its own (what it had read ahead of the next request is lost with it),
// asks poll() before every read and every write, looks both addresses up for every
// request, sends an answer's head and body apart, and notices a stop only between
// requests. Here a connection keeps one stream for its whole life: input is read
// ahead into a buffer the connection keeps, reads and sends block on the socket
// itself (its time-outs set on it), the addresses are looked up once, an answer's
// writes leave in one send, and a stop ends every wait for input at once.
#pragma once

#include <httplib.h>

#include <functional>
#include <mutex>
#include <set>
#include <string>

namespace cloud {

struct ConnectionLimits {
  int read_ms = 5000;   // the longest wait for more of a request
  int write_ms = 5000;  // the longest wait for room to send
};

// One client connection, read and written through buffers. Writes are held until
// flush(), a read that has to wait for input, or more than kHeldBytes: an answer
// of less leaves in one send. shutdown(SHUT_RD) on the socket ends its reads and
// waits for input; an answer being sent still goes out.
class Connection final : public httplib::Stream {
 public:
  static constexpr size_t kHeldBytes = 64 << 10;

  // Sets the limits on the socket (SO_RCVTIMEO, SO_SNDTIMEO).
  Connection(int sock, ConnectionLimits limits);

  // Whether a request is waiting: input read ahead, or arriving within `ms`.
  bool wait_for_request(int ms);
  // Sends what is held; false when the connection failed.
  bool flush();

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

  const int sock_;
  const ConnectionLimits limits_;
  std::string in_;  // read ahead: in_[in_at_, in_end_) not yet taken
  size_t in_at_ = 0, in_end_ = 0;
  std::string out_;   // written, not yet sent
  bool failed_ = false;
  struct Address {
    bool known = false;
    std::string ip;
    int port = 0;
  };
  mutable Address local_, remote_;
};

// httplib's server with the connections above: each served until the client ends it,
// it stays idle longer than the keep-alive time-out, end_connections() is called, or
// an answer says Connection: close. An answer says so when `read_whole` says its
// request was not read whole (httplib answers some requests it cannot take before
// reading their bodies: what is left of one must not be read as the next request).
// `read_whole` is asked just before each answer's head is written.
class ConnectionServer : public httplib::Server {
 public:
  using ReadWhole = std::function<bool(const httplib::Request&)>;
  explicit ConnectionServer(ReadWhole read_whole);

  // Ends every connection's wait for input, now and from now on (call after stop()).
  void end_connections();

 private:
  bool process_and_close_socket(socket_t sock) override;
  // Adds a connection to those end_connections() ends; false once it has been called.
  bool enter(int sock);
  void leave(int sock);

  std::mutex mutex_;
  std::set<int> open_;  // the sockets of the connections being served
  bool ending_ = false;
};

}  // namespace cloud
