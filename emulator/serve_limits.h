// What the emulator's connections may take of time, memory and threads (docs/emulator.md,
// "Limits"): every byte from a socket is hostile, and a client that sends slowly, much or
// nothing must not keep the others waiting. Tests shorten them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/limits.h"

namespace cloud {

struct ConnectionLimits {
  int read_ms = 5000;            // the longest wait for more of a request (a stalled body: RequestTimeout)
  int write_ms = 5000;           // the longest wait for room to send
  int head_ms = 15000;           // a request's head, from its first byte to its blank line, at any pace
  size_t head_lines = 100;       // header lines of one request
  size_t head_bytes = 64 << 10;  // its request line and header lines together
  size_t threads = 256;          // requests served at once, per API (a thread each)
  size_t connections = 4096;     // connections open at once, per API (idle ones ended first to make room)
  // The declared bodies of the requests being read and served, all APIs together: the
  // largest body and 1 GiB beside it.
  std::uint64_t bodies_bytes = kMaxBodyBytes + (std::uint64_t{1} << 30);
};

}  // namespace cloud
