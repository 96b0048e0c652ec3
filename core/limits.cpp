// Sizes as people read them in messages.
#include "core/limits.h"

namespace cloud {

std::string size_text(std::uint64_t bytes) {
  const char* units[] = {"GiB", "MiB", "KiB"};
  for (int i = 0; i < 3; ++i) {
    std::uint64_t unit = std::uint64_t{1} << (10 * (3 - i));
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + " " + units[i];
  }
  return std::to_string(bytes) + " bytes";
}

}  // namespace cloud
