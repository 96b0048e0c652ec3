// UTF-8, read one way: the validity rule (no overlong forms, no surrogates, nothing past
// U+10FFFF) that the model's character lengths, the signature's headers, the cassette's
// text bodies and the terminal's escaping all share.
#pragma once

#include <cstddef>
#include <string_view>

namespace cloud {

// Length of the valid UTF-8 sequence starting at s[i], 0 when none starts there.
size_t utf8_sequence(std::string_view s, size_t i);

// Number of Unicode characters in UTF-8 text; -1 when the text is not valid UTF-8.
long long utf8_length(std::string_view s);

}  // namespace cloud
