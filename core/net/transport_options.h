// What a client asks of its transport, as data: time-outs, TLS, the most an answer
// may hold in memory and the budget it draws from, and the loop it runs on.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/limits.h"

namespace cloud {

class Loop;  // core/net/transport.h

struct TransportOptions {
  long connect_timeout_ms = 10000;
  long timeout_ms = 120000;  // whole transfer
  bool verify_tls = true;
  std::string ca_file;  // empty: the system's
  // A larger answer is refused (ResponseTooLarge) as soon as its Content-Length or
  // its bytes pass this; nothing more of it is read.
  std::uint64_t max_response_bytes = kMaxResponseBytes;
  // What every answer being received draws its memory from, this Transport's with
  // every other's (null: the process's, process_buffer_budget()). When it is spent,
  // the answer that asks for more is refused (ResponseTooLarge). A body's room grows
  // as its bytes arrive, never by what the server declares.
  BufferBudget* budget = nullptr;
  // The loop this transport's transfers and timers run on; null: the thread's
  // (Loop::current()), which every client of a session shares.
  Loop* loop = nullptr;
};

}  // namespace cloud
