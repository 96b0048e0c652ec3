// The system's media-type table (mime.h). mime.types is a file from outside: it is read
// once, at most kMaxTableBytes of it, and each line is taken apart without trusting its
// shape (a line without extensions, overlong words, odd bytes are passed over).
#include "core/base/mime.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <unordered_map>

namespace cloud {

namespace {

constexpr const char* kTablePath = "/etc/mime.types";
constexpr std::size_t kMaxTableBytes = 4 << 20;  // Debian's is 74 KiB
constexpr std::size_t kMaxWord = 255;            // longer types and extensions are not real

using Table = std::unordered_map<std::string, std::string>;  // extension -> type

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The table of `text`: the first type given for an extension wins, as in mailcap's use.
Table parse(std::string_view text) {
  Table table;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    line = line.substr(0, line.find('#'));
    std::string type;
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      std::size_t start = i;
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      std::string_view word = line.substr(start, i - start);
      if (word.empty() || word.size() > kMaxWord) continue;
      if (type.empty()) {
        if (word.find('/') == std::string_view::npos) break;  // not a type: skip the line
        type = lower(word);
      } else {
        table.emplace(lower(word), type);
      }
    }
  }
  return table;
}

// The extension of `name`'s last path component, lower-cased; "" when it has none.
std::string extension_of(std::string_view name) {
  std::size_t slash = name.find_last_of('/');
  std::string_view base = slash == std::string_view::npos ? name : name.substr(slash + 1);
  std::size_t dot = base.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == base.size()) return "";
  return lower(base.substr(dot + 1));
}

std::string look_up(const Table& table, std::string_view name) {
  auto it = table.find(extension_of(name));
  return it == table.end() ? "" : it->second;
}

const Table& system_table() {
  static const Table table = [] {
    std::ifstream in(kTablePath, std::ios::binary);
    std::string text(kMaxTableBytes, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return parse(text);
  }();
  return table;
}

}  // namespace

std::string media_type_of(std::string_view name) { return look_up(system_table(), name); }

std::string media_type_in(std::string_view table, std::string_view name) { return look_up(parse(table), name); }

}  // namespace cloud
