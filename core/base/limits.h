// The bounds that keep a hostile or mistaken document from exhausting the stack or
// the memory: one depth for every converter that recurses (Lua <-> JSON, XML -> JSON,
// the emulator's reading of bodies), the largest body the platform takes, the
// largest answer kept in memory, and the budget every answer being received in the
// process draws from. Client and emulator read them from here.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace cloud {

// Levels of nested tables, JSON arrays and objects, or XML elements; the outermost
// counts as one. Deeper documents are refused, never walked.
constexpr int kMaxDepth = 200;

// The largest part or object the platform takes in one request: 5 GiB.
constexpr std::uint64_t kMaxBodyBytes = std::uint64_t{5} << 30;

// The largest answer the client keeps in memory (TransportOptions may lower it).
constexpr std::uint64_t kMaxResponseBytes = std::uint64_t{1} << 30;

// What the process may hold at once of answers being received, all transfers of all
// clients together (the setting max_buffer_bytes): sixteen tasks reading endless
// answers share it, where each alone could take kMaxResponseBytes.
constexpr std::uint64_t kMaxBufferedBytes = std::uint64_t{1} << 30;

// Bytes of memory drawn from a limit by many transfers at once, on any thread: a
// transfer takes room before it grows a buffer and gives it back when the buffer goes.
class BufferBudget {
 public:
  explicit BufferBudget(std::uint64_t limit) : limit_(limit) {}
  // Takes `bytes` of room; false, and nothing taken, when that would pass the limit.
  bool take(std::uint64_t bytes);
  void give(std::uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  std::uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  std::uint64_t limit() const { return limit_.load(std::memory_order_relaxed); }
  void set_limit(std::uint64_t limit) { limit_.store(limit, std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> used_{0};
  std::atomic<std::uint64_t> limit_;
};

// The process's budget, kMaxBufferedBytes until the session sets max_buffer_bytes.
BufferBudget& process_buffer_budget();

// "5 GiB", "64 MiB", "10 KiB" for whole multiples, else "1234 bytes".
std::string size_text(std::uint64_t bytes);

}  // namespace cloud
