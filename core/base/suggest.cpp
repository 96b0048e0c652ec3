// The edit distance and the nearest-name rule behind every "did you mean", and the one
// wording of an unknown field, name or option (suggest.h).
#include "core/base/suggest.h"

#include <algorithm>
#include <cctype>

namespace cloud {

namespace {

bool same_letter(char x, char y) {
  return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
}

}  // namespace

size_t edit_distance(const std::string& a, const std::string& b) {
  // d[i][j]: the distance between the first i letters of a and the first j of b.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same_letter(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same_letter(a[i - 1], b[j - 2]) && same_letter(a[i - 2], b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);  // two letters swapped: one edit
    }
  }
  return d[a.size()][b.size()];
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

std::string unknown_field(const std::string& key, const std::vector<std::string>& known, const std::string& otherwise,
                          Named named) {
  std::string text = named == Named::by_path ? "unknown field" : "unknown field '" + key + "'";
  if (auto near = nearest_name(key, known)) return text + ", did you mean '" + *near + "'?";
  return otherwise.empty() ? text : text + " (" + otherwise + ")";
}

std::string suggested(const std::string& text, const std::string& typed, const std::vector<std::string>& known,
                      const std::string& otherwise) {
  if (auto near = nearest_name(typed, known)) return text + "; did you mean '" + *near + "'?";
  return otherwise.empty() ? text : text + "; " + otherwise;
}

std::string unknown_option(const std::string& typed, const std::vector<std::string>& known) {
  return suggested("unknown option '" + typed + "'", typed, known);
}

std::string unknown_name(const std::string& kind, const std::string& typed, const std::vector<std::string>& known,
                         const std::string& otherwise) {
  return suggested("no " + kind + " named '" + typed + "'", typed, known, otherwise);
}

}  // namespace cloud
