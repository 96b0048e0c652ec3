// The process's one token bucket and the caller's face of it (--limit-rate).
#include "core/net/rate_limit.h"

namespace cloud {

RateLimiter& rate_limiter() {
  static RateLimiter limiter;
  return limiter;
}

std::uint64_t set_rate_limit(std::uint64_t bytes_per_second) { return rate_limiter().set(bytes_per_second); }
std::uint64_t rate_limit() { return rate_limiter().rate(); }

}  // namespace cloud
