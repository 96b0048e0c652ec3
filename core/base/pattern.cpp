// Patterns over RE2; see pattern.h.
#include "core/base/pattern.h"

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

namespace {

// The RE2 form of the set that starts at glob[i] ('['); i is left on its ']'. "" when
// the set is not closed. A set never matches '/': a '/' in it is left out, and a
// negated set gets one.
std::string glob_set(std::string_view glob, size_t& i) {
  std::string out = "[";
  size_t j = i + 1;
  bool negated = j < glob.size() && (glob[j] == '!' || glob[j] == '^');
  if (negated) out += '^', ++j;
  size_t first = j;
  for (; j < glob.size() && (glob[j] != ']' || j == first); ++j) {
    char c = glob[j];
    if (c == '/') continue;
    if (c == '\\' || c == '[' || c == ']' || c == '^') out += '\\';
    out += c;
  }
  if (j >= glob.size()) return "";
  i = j;
  return out + (negated ? "/]" : "]");
}

// The RE2 form of a glob's body (after its leading '/', if any); "" when malformed.
std::string glob_body(std::string_view glob, std::string& problem) {
  std::string out;
  for (size_t i = 0; i < glob.size(); ++i) {
    char c = glob[i];
    if (c == '*' && i + 1 < glob.size() && glob[i + 1] == '*') {
      bool dirs = i + 2 < glob.size() && glob[i + 2] == '/';
      out += dirs ? "(?:.*/)?" : ".*";
      i += dirs ? 2 : 1;
    } else if (c == '*') {
      out += "[^/]*";
    } else if (c == '?') {
      out += "[^/]";
    } else if (c == '[') {
      std::string set = glob_set(glob, i);
      if (set.empty()) return problem = "a '[' without its ']'", "";
      out += set;
    } else if (c == '\\') {
      if (++i == glob.size()) return problem = "a '\\' at the end", "";
      out += Pattern::quote(glob.substr(i, 1));
    } else {
      out += Pattern::quote(glob.substr(i, 1));
    }
  }
  return out;
}

}  // namespace

Outcome<Pattern> Pattern::glob(std::string_view glob) {
  bool rooted = !glob.empty() && glob[0] == '/';
  std::string problem;
  std::string body = glob_body(rooted ? glob.substr(1) : glob, problem);
  if (!problem.empty())
    return make_error(ErrorKind::config, "InvalidGlob", "bad glob '" + std::string(glob) + "': " + problem);
  if (!glob.empty() && glob.back() == '/') body += ".*";
  return compile(std::string("(?s)") + (rooted ? "" : "(?:.*/)?") + body, Text::bytes);  // (?s): '.' matches a newline
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
