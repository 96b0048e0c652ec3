// Helpers over header lists; names compare case-insensitively as HTTP says.
#include "core/http.h"

#include <cctype>

namespace cloud {

bool header_value_ok(std::string_view value) {
  for (char c : value) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\t') || u == 0x7F) return false;
  }
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string header_value(const Headers& headers, std::string_view name) {
  for (const Header& h : headers)
    if (iequals(h.first, name)) return h.second;
  return {};
}

bool has_header(const Headers& headers, std::string_view name) {
  for (const Header& h : headers)
    if (iequals(h.first, name)) return true;
  return false;
}

}  // namespace cloud
