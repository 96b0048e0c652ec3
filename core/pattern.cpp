// Patterns over RE2; see pattern.h.
#include "core/pattern.h"

#include <re2/re2.h>

#include <cstdio>
#include <cstdlib>

namespace cloud {

namespace {

re2::StringPiece piece(std::string_view s) { return re2::StringPiece(s.data(), s.size()); }

}  // namespace

Outcome<Pattern> Pattern::compile(std::string_view expression, Text text) {
  RE2::Options options;
  options.set_log_errors(false);  // the error is returned, not logged
  options.set_encoding(text == Text::bytes ? RE2::Options::EncodingLatin1 : RE2::Options::EncodingUTF8);
  auto re = std::make_shared<const RE2>(piece(expression), options);
  if (!re->ok())
    return make_error(ErrorKind::config, "InvalidPattern",
                      "bad pattern '" + std::string(expression) + "': " + re->error());
  return Pattern(std::move(re));
}

Pattern Pattern::builtin(std::string_view expression, Text text) {
  Outcome<Pattern> p = compile(expression, text);
  if (p.ok()) return std::move(p.value());
  std::fprintf(stderr, "cloudlua: internal error: %s\n", p.error().message.c_str());
  std::abort();
}

std::string Pattern::quote(std::string_view literal) { return RE2::QuoteMeta(piece(literal)); }

bool Pattern::full_match(std::string_view text, std::vector<std::string>* groups) const {
  if (!groups) return RE2::FullMatch(piece(text), *re_);
  int n = re_->NumberOfCapturingGroups();
  std::vector<re2::StringPiece> found(static_cast<size_t>(n) + 1);
  if (!re_->Match(piece(text), 0, text.size(), RE2::ANCHOR_BOTH, found.data(), n + 1)) return false;
  groups->clear();
  for (int i = 1; i <= n; ++i) groups->emplace_back(found[i].data() ? found[i].as_string() : std::string());
  return true;
}

int Pattern::replace_all(std::string& text, std::string_view rewrite) const {
  return RE2::GlobalReplace(&text, *re_, piece(rewrite));
}

std::vector<std::string> Pattern::find_all(std::string_view text) const {
  std::vector<std::string> out;
  re2::StringPiece rest = piece(text);
  std::string group;
  for (const char* before = rest.data(); RE2::FindAndConsume(&rest, *re_, &group); before = rest.data()) {
    out.push_back(group);
    if (rest.data() != before) continue;  // an empty match consumes nothing: step past it
    if (rest.empty()) break;
    rest.remove_prefix(1);
  }
  return out;
}

const std::string& Pattern::expression() const { return re_->pattern(); }

}  // namespace cloud
