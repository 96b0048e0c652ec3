// The bandwidth cap of the whole process (--limit-rate): one token bucket that the
// body bytes of every transfer of every loop draw from, sent and received together.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace cloud {

// The process's bandwidth cap (set_rate_limit): one token bucket that every transfer
// of every Loop draws its body bytes from, sent and received alike. A callback that
// finds the bucket empty pauses its transfer (CURL_WRITEFUNC_PAUSE / READFUNC_PAUSE);
// the loop resumes the paused ones when tokens are back. A callback that finds tokens
// takes what it moves, even past zero (a debt the next ones wait out), so no byte is
// refused and the average over any stretch longer than the burst is the rate.
class RateLimiter {
 public:
  // Sets the rate (0: none) and returns the previous one; the bucket starts empty, so
  // that no burst runs ahead of the rate at the start.
  std::uint64_t set(std::uint64_t rate) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::uint64_t before = rate_;
    rate_ = rate;
    tokens_ = 0;
    last_ = now();
    active_.store(rate != 0, std::memory_order_relaxed);
    if (rate != 0) ever_.store(true, std::memory_order_relaxed);
    return before;
  }
  std::uint64_t rate() {
    std::lock_guard<std::mutex> lock(mutex_);
    return rate_;
  }
  bool active() const { return active_.load(std::memory_order_relaxed); }
  // Whether a cap was ever set (a transfer may be paused only then).
  bool ever() const { return ever_.load(std::memory_order_relaxed); }
  // True when the bucket holds tokens (a transfer may move bytes); false: pause.
  bool ready() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (rate_ == 0) return true;
    refill();
    return tokens_ > 0;
  }
  // Takes the bytes a transfer moved (the bucket may go into debt).
  void spend(std::uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (rate_ != 0) tokens_ -= static_cast<double>(bytes);
  }
  // Seconds until the bucket holds tokens again (0 when it does).
  double wait_seconds() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (rate_ == 0) return 0;
    refill();
    return tokens_ > 0 ? 0 : (1 - tokens_) / static_cast<double>(rate_);
  }

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  // At most a tenth of a second's bytes, at least 256 KiB, saved up while idle: a
  // process the scheduler keeps waiting that long (a loaded machine) loses nothing.
  std::uint64_t burst() const { return std::max<std::uint64_t>(rate_ / 10, 256 * 1024); }
  void refill() {
    double t = now();
    tokens_ = std::min(static_cast<double>(burst()), tokens_ + (t - last_) * static_cast<double>(rate_));
    last_ = t;
  }
  std::mutex mutex_;
  std::uint64_t rate_ = 0;
  double tokens_ = 0;
  double last_ = 0;
  std::atomic<bool> active_{false};
  std::atomic<bool> ever_{false};
};

// The process's one limiter.
RateLimiter& rate_limiter();

// The bandwidth cap of the whole process (--limit-rate): the body bytes of every
// transfer of every loop, sent and received together, at most `bytes_per_second` on
// average (0: no cap). Returns the cap it replaces. A transfer that would pass it is
// paused until the shared token bucket refills (docs/design.md says why so).
std::uint64_t set_rate_limit(std::uint64_t bytes_per_second);
std::uint64_t rate_limit();

}  // namespace cloud
