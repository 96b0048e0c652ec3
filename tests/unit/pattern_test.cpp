// core/base/pattern: RE2 behind a small handle. Whole-text matches with their groups,
// replacement and search (redaction), UTF-8 characters or bytes, errors as values; and
// the model's patterns, which are RE2 full matches.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "core/base/pattern.h"

using namespace cloud;

using Groups = std::vector<std::string>;

TEST_CASE("pattern: the whole text must match, groups are captured", "[pattern]") {
  Outcome<Pattern> p = Pattern::compile(R"(([a-z]+)-(\d+)?)");
  REQUIRE(p.ok());
  CHECK(p->full_match("abc-12"));
  CHECK_FALSE(p->full_match("abc-12x"));
  CHECK_FALSE(p->full_match("xabc-12 "));
  CHECK_FALSE(p->full_match("abc-12\n"));  // no line break slips past the end
  Groups groups;
  REQUIRE(p->full_match("abc-12", &groups));
  CHECK(groups == Groups{"abc", "12"});
  REQUIRE(p->full_match("abc-", &groups));
  CHECK(groups == Groups{"abc", ""});  // a group that took no part is empty
  CHECK(p->expression() == R"(([a-z]+)-(\d+)?)");
}

TEST_CASE("pattern: replace every match, find every match", "[pattern]") {
  Pattern secret = Pattern::builtin(R"((?i)(key=)\w+)");
  std::string text = "KEY=abc&x=1&key=def";
  CHECK(secret.replace_all(text, R"(\1***)") == 2);
  CHECK(text == "KEY=***&x=1&key=***");
  CHECK(Pattern::builtin(R"(sig=(\d+))").find_all("sig=1 sig=22 sig=") == Groups{"1", "22"});
  // Empty matches move on by one character instead of matching in place for ever.
  CHECK(Pattern::builtin("(a*)").find_all("bab") == Groups{"", "a", "", ""});
}

TEST_CASE("pattern: characters are UTF-8 code points, or bytes when asked", "[pattern]") {
  const std::string e_acute = "\xc3\xa9";
  CHECK(Pattern::builtin(".").full_match(e_acute));
  CHECK_FALSE(Pattern::builtin(".", Pattern::Text::bytes).full_match(e_acute));
  CHECK(Pattern::builtin("..", Pattern::Text::bytes).full_match(e_acute));
  CHECK(Pattern::builtin("[^/]+", Pattern::Text::bytes).full_match("\xff\xfe"));
}

TEST_CASE("pattern: quoted text matches itself only", "[pattern]") {
  const std::string literal = "/v1/a.b*(c)+[d]{e}?|^$\\";
  Pattern p = Pattern::builtin(Pattern::quote(literal));
  CHECK(p.full_match(literal));
  CHECK_FALSE(p.full_match("/v1/aXb*(c)+[d]{e}?|^$\\"));
}

TEST_CASE("pattern: one RE2 cannot compile is an error naming it", "[pattern]") {
  Outcome<Pattern> p = Pattern::compile("^(?!-)[a-z]+$");  // lookahead: not in RE2
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().kind == ErrorKind::config);
  CHECK(p.error().code == "InvalidPattern");
  CHECK_THAT(p.error().message, Catch::StartsWith("bad pattern '^(?!-)[a-z]+$': "));
}

TEST_CASE("model patterns: a pattern RE2 cannot compile names the file and the key", "[model][pattern]") {
  auto bad = Model::load({{"bad.json", R"({"api":"x","operations":{"A":{"input":{
      "n": { "type": "string", "pattern": "^(?!-)[a-z]+$" } }}}})"}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "ModelError");
  CHECK_THAT(bad.error().message, Catch::Contains("bad.json") && Catch::Contains("operations.A.input.n") &&
                                      Catch::Contains("bad pattern '^(?!-)[a-z]+$'"));
}

namespace {

// Every pattern in the inputs under `shape`, by expression.
void collect_patterns(const Shape& shape, std::map<std::string, const Pattern*>& found, int depth = 0) {
  if (depth > 16) return;  // shapes do not nest deeper; a cycle would
  if (shape.pattern) found.emplace(shape.pattern->expression(), &*shape.pattern);
  for (const Member& m : shape.members) collect_patterns(*m.shape, found, depth + 1);
  if (shape.member) collect_patterns(*shape.member, found, depth + 1);
}

}  // namespace

TEST_CASE("model patterns: each built-in one means under RE2 what it meant under ECMAScript", "[model][pattern]") {
  // Values each must take and values it must refuse; a pattern added to the model
  // without a line here fails the test.
  const std::map<std::string, std::pair<Groups, Groups>> expected = {
      {"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$",
       {{"a", "a-1", "abc-def-9", "0"}, {"", "-a", "a-", "A", "a_b", "a\n", "\u00e9"}}},
      {"^[a-z0-9]*$", {{"", "0123456789abcdef"}, {"ABC", "a-b", "a\n"}}},
      {"^[A-Za-z0-9]*$", {{"", "Abc123"}, {"a-b", "a b", "\u00e9"}}},
      // S3's bucket names and the text of an XML answer (keys): RE2 from the start
      {"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\\.[a-z0-9-]*[a-z0-9])*",
       {{"abc", "a.b-c", "a.-b", "0-9", "my.bucket.v2"},
        {"ab.", ".ab", "a..b", "a-.b", "ab-", "A-b", "a_b", std::string("a\0b", 3)}}},
      {"[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x{FFFE}\\x{FFFF}]*",
       {{"", "a b\tc\r\nd", "\u00e9\u3042", "\U0001F600"}, {std::string("x\0y", 3), "a\x01", "\x1b[2J", "\uFFFE"}}},
      // a value a header carries (user metadata, content headers): printable ASCII and tab
      {"[\\x20-\\x7e\\t]*",
       {{"", "a b", "x=1; y=\"2\"", "tab\there", "~"}, {"a\nb", "a\rb", "\u00e9", "\x7f", std::string("a\0b", 3)}}},
  };
  std::map<std::string, const Pattern*> found;
  for (const Operation* op : Model::builtin().operations()) collect_patterns(*op->input, found);
  CHECK(found.size() == expected.size());
  for (const auto& [expression, pattern] : found) {
    INFO(expression);
    auto it = expected.find(expression);
    REQUIRE(it != expected.end());
    for (const std::string& good : it->second.first) CHECK(pattern->full_match(good));
    for (const std::string& bad : it->second.second) CHECK_FALSE(pattern->full_match(bad));
  }
}

// Whether `glob` matches `path` (the glob must compile).
static bool glob_matches(const std::string& glob, const std::string& path) {
  Outcome<Pattern> p = Pattern::glob(glob);
  REQUIRE(p.ok());
  return p->full_match(path);
}

TEST_CASE("pattern: globs over relative paths: *, **, ?, sets, rooted and folder globs", "[pattern]") {
  CHECK(glob_matches("*.tmp", "a.tmp"));
  CHECK(glob_matches("*.tmp", "x/y/a.tmp"));  // not rooted: at the start of any folder too
  CHECK_FALSE(glob_matches("*.tmp", "a.tmp/b"));
  CHECK_FALSE(glob_matches("/*.tmp", "x/a.tmp"));
  CHECK(glob_matches("/*.tmp", "a.tmp"));
  CHECK(glob_matches("a/*/c", "a/b/c"));
  CHECK_FALSE(glob_matches("/a/*/c", "a/b/x/c"));
  CHECK(glob_matches("/a/**/c", "a/c"));
  CHECK(glob_matches("/a/**/c", "a/b/x/c"));
  CHECK(glob_matches("/a/**", "a/b/x/c"));
  CHECK(glob_matches("?.txt", "b.txt"));
  CHECK_FALSE(glob_matches("/?.txt", "/.txt"));
  CHECK(glob_matches("[ab].txt", "a.txt"));
  CHECK_FALSE(glob_matches("[ab].txt", "c.txt"));
  CHECK(glob_matches("[!ab].txt", "c.txt"));
  CHECK_FALSE(glob_matches("/x[!ab]y", "x/y"));
  CHECK_FALSE(glob_matches("/x[/a]y", "x/y"));
  CHECK(glob_matches("[]]", "]"));
  CHECK(glob_matches("build/", "build/a/b.o"));
  CHECK(glob_matches("/100%+#.txt", "100%+#.txt"));  // every other byte is itself
  CHECK(glob_matches("/a.b", "a.b"));
  CHECK_FALSE(glob_matches("/a.b", "axb"));
  CHECK(glob_matches("/\\*", "*"));
  CHECK_FALSE(glob_matches("/\\*", "x"));
  CHECK(glob_matches("*", "new\nline"));                // a newline is a byte as any
  CHECK(glob_matches("caf*", std::string("caf\xe9")));  // so is one that is not UTF-8
  Outcome<Pattern> bad = Pattern::glob("a[bc");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "InvalidGlob");
  CHECK(bad.error().message == "bad glob 'a[bc': a '[' without its ']'");
  CHECK(Pattern::glob("a\\").error().message == "bad glob 'a\\': a '\\' at the end");
}
