// Helpers over header lists; names compare case-insensitively as HTTP says.
#include "core/wire/http.h"

#include <algorithm>

namespace cloud {
namespace {

// A byte with its ASCII letter lowered: header names are ASCII, and std::tolower,
// a call per byte that also follows os.setlocale, was 3.5% of serve's time.
char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

}  // namespace

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
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

bool iless(std::string_view a, std::string_view b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](char x, char y) { return ascii_lower(x) < ascii_lower(y); });
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

const std::string* find_header(const Headers& headers, std::string_view name) {
  for (const Header& h : headers)
    if (iequals(h.first, name)) return &h.second;
  return nullptr;
}

std::string header_value(const Headers& headers, std::string_view name) {
  const std::string* value = find_header(headers, name);
  return value ? *value : std::string();
}

bool has_header(const Headers& headers, std::string_view name) { return find_header(headers, name) != nullptr; }

}  // namespace cloud
