// Regular expressions that no input can crash: compiled once, matched by RE2 in time
// linear in the text and without recursion (libstdc++'s <regex> recurses once per
// character and overflows the stack on a value of some tens of thousands of characters).
// The syntax is RE2's: https://github.com/google/re2/wiki/Syntax. RE2 stays out of this
// header.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"

namespace re2 {
class RE2;
}

namespace cloud {

// A compiled pattern. Copies share the compiled form; one Pattern may be matched from
// many threads at once.
class Pattern {
 public:
  // What one character is: a UTF-8 code point (model patterns: lengths and classes
  // count characters), or one byte (wire text that need not be UTF-8).
  enum class Text { utf8, bytes };

  // `expression` compiled, or a validation error naming what RE2 found wrong in it.
  static Outcome<Pattern> compile(std::string_view expression, Text text = Text::utf8);
  // A pattern written in the code: a bad one is a bug, reported on stderr, and aborts
  // (the unit tests run every such pattern).
  static Pattern builtin(std::string_view expression, Text text = Text::utf8);
  // A path glob (cloud.fs.glob, the tree transfers' include and exclude) as a pattern
  // over the bytes of a '/'-separated relative path: `*` any bytes but '/', `**` any
  // bytes ('/' too; `**/` also none), `?` one byte but '/', `[abc]` `[a-z]` `[!abc]`
  // one byte of (or not of) the set, never '/', `\x` x itself. A glob that starts with
  // '/' matches from the top of the tree, any other also at the start of any folder
  // ("*.tmp" matches "a/b.tmp"); one that ends with '/' matches everything under such
  // a folder. A config error InvalidGlob for an unclosed set or a trailing backslash.
  static Outcome<Pattern> glob(std::string_view glob);
  // `literal` with every special character escaped, so that it matches itself only.
  static std::string quote(std::string_view literal);

  // Whether the whole of `text` matches; `groups`, when given, gets the capturing
  // groups' texts (empty for a group that took no part).
  bool full_match(std::string_view text, std::vector<std::string>* groups = nullptr) const;
  // Every non-overlapping match in `text` replaced by `rewrite` (\1 is the first
  // group); returns how many were replaced.
  int replace_all(std::string& text, std::string_view rewrite) const;
  // The first capturing group of every non-overlapping match, in order.
  std::vector<std::string> find_all(std::string_view text) const;

  const std::string& expression() const;

 private:
  explicit Pattern(std::shared_ptr<const re2::RE2> re) : re_(std::move(re)) {}
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace cloud
