// The HTTP transport: libcurl, built on the multi interface so that concurrent
// transfers can be added later without redesign. Easy handles are pooled and reused,
// which keeps connections alive between calls. `perform` blocks until its transfer ends.
// A Transport is used by one thread at a time; separate Transports may run in parallel.
#pragma once

#include <atomic>
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
};

class Transport {
 public:
  explicit Transport(TransportOptions options = {});
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Sends `request` and waits for the whole answer. Errors: kind transport (no
  // connection, reset, TLS) or timeout, kind api for an answer over
  // max_response_bytes; an HTTP error status is not an error here.
  Outcome<HttpResponse> perform(const HttpRequest& request);

  // While *flag is true, running transfers abort with code "Interrupted" (Ctrl-C).
  void set_interrupt_flag(const std::atomic<bool>* flag);

  const TransportOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cloud
