// UTF-8, read one way (see utf8.h).
#include "core/base/utf8.h"

namespace cloud {

size_t utf8_sequence(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = byte(0);
  const size_t n = c < 0x80                 ? 1
                   : c >= 0xC2 && c <= 0xDF ? 2
                   : c >= 0xE0 && c <= 0xEF ? 3
                   : c >= 0xF0 && c <= 0xF4 ? 4
                                            : 0;
  if (n == 0 || i + n > s.size()) return 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (c == 0xE0) low = 0xA0;              // no overlong three-byte form
  if (c == 0xED) high = 0x9F;             // no surrogate
  if (c == 0xF0) low = 0x90;              // no overlong four-byte form
  if (c == 0xF4) high = 0x8F;             // nothing past U+10FFFF
  if (n > 1 && (byte(1) < low || byte(1) > high)) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  return n;
}

long long utf8_length(std::string_view s) {
  long long count = 0;
  for (size_t i = 0; i < s.size(); ++count) {
    const size_t n = utf8_sequence(s, i);
    if (n == 0) return -1;
    i += n;
  }
  return count;
}

}  // namespace cloud
