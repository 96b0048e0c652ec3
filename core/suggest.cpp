// The edit distance and the nearest-name rule behind every "did you mean" (suggest.h).
#include "core/suggest.h"

#include <algorithm>
#include <cctype>

namespace cloud {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_name(const std::string& typed, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_distance = 3;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(typed, c);
    if (d < best_distance && 2 * d < typed.size()) best = c, best_distance = d;
  }
  return best;
}

}  // namespace cloud
