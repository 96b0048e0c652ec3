// core/base/dates: the three forms written and read back, the calendar's edges (leap
// years, the epoch, years 0000 and 9999), offsets and fractions, and bad texts refused
// with what was wrong.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "core/base/dates.h"

using namespace cloud;

namespace {

std::int64_t parsed(const std::string& text) {
  auto r = parse_date(text);
  INFO(text << ": " << (r ? "" : r.error().message));
  REQUIRE(r.ok());
  return *r;
}

std::string refusal(const std::string& text, DateForm form) {
  auto r = parse_date(text, form);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == ErrorKind::validation);
  CHECK(r.error().code == "InvalidDate");
  return r.error().message;
}

}  // namespace

TEST_CASE("dates: the three forms of one time", "[dates]") {
  const std::int64_t t = 1795849458;  // 2026-11-28T07:04:18Z, a Saturday
  CHECK(format_date(t, DateForm::iso) == "2026-11-28T07:04:18Z");
  CHECK(format_date(t, DateForm::http) == "Sat, 28 Nov 2026 07:04:18 GMT");
  CHECK(format_date(t, DateForm::sigv4) == "20261128T070418Z");
  CHECK(format_date(0, DateForm::http) == "Thu, 01 Jan 1970 00:00:00 GMT");
  CHECK(format_date(-1, DateForm::http) == "Wed, 31 Dec 1969 23:59:59 GMT");
}

TEST_CASE("dates: every form reads back what it writes", "[dates]") {
  const std::int64_t times[] = {0,
                                -1,
                                86399,
                                951782400 /* 2000-02-29 */,
                                1795849458,
                                4107542399 /* 2100-02-28T23:59:59 */,
                                -62167219200 /* 0000-01-01 */,
                                253402300799 /* 9999-12-31T23:59:59 */};
  for (std::int64_t t : times)
    for (DateForm form : {DateForm::iso, DateForm::http, DateForm::sigv4}) {
      INFO(t << " as " << date_form_name(form));
      auto r = parse_date(format_date(t, form), form);
      REQUIRE(r.ok());
      CHECK(*r == t);
      CHECK(parsed(format_date(t, form)) == t);  // the form told from the text
    }
}

TEST_CASE("dates: leap years by the Gregorian rules", "[dates]") {
  CHECK(parsed("2024-02-29T00:00:00Z") == parsed("2024-03-01T00:00:00Z") - 86400);
  CHECK(parsed("2000-02-29T12:00:00Z") == 951825600);
  CHECK_THAT(refusal("2023-02-29T00:00:00Z", DateForm::iso), Catch::Contains("day 29 is not in the month (28 days)"));
  CHECK_THAT(refusal("Mon, 29 Feb 2100 00:00:00 GMT", DateForm::http), Catch::Contains("day 29"));
  CHECK_THAT(refusal("19000229T000000Z", DateForm::sigv4), Catch::Contains("day 29"));
  CHECK(parse_date("Tue, 29 Feb 2000 00:00:00 GMT", DateForm::http).ok());
}

TEST_CASE("dates: RFC 3339 fractions and offsets", "[dates]") {
  CHECK(parsed("2026-11-28T07:04:18.000Z") == 1795849458);
  CHECK(parsed("2026-11-28T07:04:18.999999Z") == 1795849458);  // a fraction is dropped
  CHECK(parsed("2026-11-28t07:04:18z") == 1795849458);
  CHECK(parsed("2026-11-28T09:04:18+02:00") == 1795849458);
  CHECK(parsed("2026-11-28T02:34:18.5-04:30") == 1795849458);
}

TEST_CASE("dates: bad texts are refused with what was wrong", "[dates]") {
  CHECK_THAT(refusal("", DateForm::iso), Catch::Contains("not in the form yyyy-mm-ddThh:mm:ss"));
  CHECK_THAT(refusal("2026-13-01T00:00:00Z", DateForm::iso), Catch::Contains("month 13 is not 1 to 12"));
  CHECK_THAT(refusal("2026-11-28T24:00:00Z", DateForm::iso), Catch::Contains("hour 24 is not 0 to 23"));
  CHECK_THAT(refusal("2026-11-28T07:60:00Z", DateForm::iso), Catch::Contains("minute 60"));
  CHECK_THAT(refusal("2026-11-28T07:04:18", DateForm::iso), Catch::Contains("no Z or offset"));
  CHECK_THAT(refusal("2026-11-28T07:04:18Zjunk", DateForm::iso), Catch::Contains("text after the date"));
  CHECK_THAT(refusal("2026-11-28T07:04:18.Z", DateForm::iso), Catch::Contains("without digits"));
  CHECK_THAT(refusal("2026-11-28T07:04:18+2:00", DateForm::iso), Catch::Contains("offset"));
  CHECK_THAT(refusal(" 2026-11-28T07:04:18Z", DateForm::iso), Catch::Contains("expected RFC 3339"));
  CHECK_THAT(refusal("Sat, 28 Nov 2026 07:04:18 UTC", DateForm::http), Catch::Contains("Day, dd Mon yyyy"));
  CHECK_THAT(refusal("Sat, 28 Nvo 2026 07:04:18 GMT", DateForm::http), Catch::Contains("'Nvo' is not a month's name"));
  CHECK_THAT(refusal("Sab, 28 Nov 2026 07:04:18 GMT", DateForm::http), Catch::Contains("'Sab' is not a day's name"));
  CHECK_THAT(refusal("2026-11-28T07:04:18Z", DateForm::sigv4), Catch::Contains("yyyymmddThhmmssZ"));
  CHECK_THAT(refusal("20261128T0704186", DateForm::sigv4), Catch::Contains("yyyymmddThhmmssZ"));
  CHECK_THAT(refusal("+0261128T070418Z", DateForm::sigv4), Catch::Contains("yyyymmddThhmmssZ"));
}

TEST_CASE("dates: a text longer than the bound is refused before it is read", "[dates]") {
  std::string at_bound = "2026-11-28T07:04:18." + std::string(kMaxDateText - 21, '0') + "Z";
  REQUIRE(at_bound.size() == kMaxDateText);
  CHECK(parsed(at_bound) == 1795849458);
  std::string past = "2026-11-28T07:04:18." + std::string(kMaxDateText - 20, '0') + "Z";
  CHECK_THAT(refusal(past, DateForm::iso), Catch::Contains("a date of 65 characters"));
  CHECK_THAT(refusal(std::string(1 << 20, '9'), DateForm::http), Catch::Contains("at most 64"));
}

TEST_CASE("dates: times outside years 0000 to 9999 are written clamped", "[dates]") {
  CHECK(format_date(253402300800, DateForm::iso) == "9999-12-31T23:59:59Z");
  CHECK(format_date(INT64_MIN, DateForm::sigv4) == "00000101T000000Z");
  CHECK(format_date(INT64_MAX, DateForm::http) == "Fri, 31 Dec 9999 23:59:59 GMT");
}

TEST_CASE("dates: forms are named", "[dates]") {
  for (DateForm form : {DateForm::iso, DateForm::http, DateForm::sigv4})
    CHECK(date_form_named(date_form_name(form)) == form);
  CHECK_FALSE(date_form_named("rfc1123").has_value());
}
