// Sizes as people read them in messages, and the process's buffer budget.
#include "core/base/limits.h"

namespace cloud {

std::string size_text(std::uint64_t bytes) {
  const char* units[] = {"GiB", "MiB", "KiB"};
  for (int i = 0; i < 3; ++i) {
    std::uint64_t unit = std::uint64_t{1} << (10 * (3 - i));
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + " " + units[i];
  }
  return std::to_string(bytes) + " bytes";
}

bool BufferBudget::take(std::uint64_t bytes) {
  std::uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit() || used > limit() - bytes) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

BufferBudget& process_buffer_budget() {
  static BufferBudget budget(kMaxBufferedBytes);
  return budget;
}

}  // namespace cloud
