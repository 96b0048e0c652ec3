// UTF-8 is read one way: what validation calls text is what printable shows as text.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/net/redact.h"
#include "core/base/utf8.h"
#include "core/model/validate.h"

namespace {

// The problems validation finds in `value` as a string field.
std::vector<cloud::FieldProblem> problems_of(const std::string& value) {
  cloud::Shape text;
  text.type = cloud::ShapeType::string;
  std::vector<cloud::FieldProblem> problems;
  cloud::validate_value(text, value, "Key", problems);
  return problems;
}

}  // namespace

TEST_CASE("UTF-8: counts characters, and an overlong form, a surrogate or a code point past U+10FFFF is not text") {
  CHECK(cloud::utf8_length("") == 0);
  CHECK(cloud::utf8_length("a\xC3\xA4\xE2\x82\xAC\xF0\x9F\x98\x80") == 4);  // a, ä, €, 😀
  for (const std::string& bad : {std::string("\xC0\xAF"),                   // '/' written in two bytes
                                 std::string("\xE0\x80\xAF"),               // and in three
                                 std::string("\xED\xA0\x80"),               // U+D800, a surrogate
                                 std::string("\xF4\x90\x80\x80"),           // U+110000
                                 std::string("\xE2\x82"),                   // cut short
                                 std::string("\x80")}) {                    // a lone continuation byte
    CAPTURE(cloud::printable(bad));
    CHECK(cloud::utf8_length(bad) == -1);
    CHECK(cloud::utf8_sequence(bad, 0) == 0);
    // validation refuses it (it once took overlong forms and surrogates as text) ...
    std::vector<cloud::FieldProblem> problems = problems_of("key" + bad);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].problem == "is not valid UTF-8 text");
    // ... and printable escapes it: never written to a terminal as it is
    CHECK(cloud::printable(bad).find(bad) == std::string::npos);
  }
  CHECK(problems_of("key\xC3\xA4").empty());
}
