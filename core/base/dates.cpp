// Dates read and written by hand, not with strptime/strftime: those follow the locale
// (day and month names), accept more than they should (strptime's fields take any
// number of digits and skip spaces) and strptime's names cost a tenth of a listing.
// Days from and to the civil calendar by the proleptic Gregorian rules.
#include "core/base/dates.h"

#include <cstdio>

namespace cloud {

namespace {

constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr const char* kWeekdays[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};  // from 1970-01-01
constexpr std::int64_t kDay = 86400;

struct Civil {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
};

bool leap(int year) { return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0); }

int days_in_month(int year, int month) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap(year) ? 29 : days[month - 1];
}

// Days from 1970-01-01 to year-month-day (March-based years: February ends each).
std::int64_t days_from_civil(int year, int month, int day) {
  std::int64_t y = year - (month <= 2 ? 1 : 0);
  std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  std::int64_t year_of_era = y - era * 400;
  std::int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  std::int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

// The civil date and time of `seconds` since 1970.
Civil civil_from_seconds(std::int64_t seconds) {
  std::int64_t days = seconds / kDay, rest = seconds % kDay;
  if (rest < 0) rest += kDay, --days;
  std::int64_t z = days + 719468;
  std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  std::int64_t day_of_era = z - era * 146097;
  std::int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  std::int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  std::int64_t mp = (5 * day_of_year + 2) / 153;
  Civil c;
  c.day = static_cast<int>(day_of_year - (153 * mp + 2) / 5 + 1);
  c.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  c.year = static_cast<int>(year_of_era + era * 400 + (c.month <= 2 ? 1 : 0));
  c.hour = static_cast<int>(rest / 3600), c.minute = static_cast<int>(rest / 60 % 60),
  c.second = static_cast<int>(rest % 60);
  return c;
}

const char* example(DateForm form) {
  switch (form) {
    case DateForm::iso: return "RFC 3339, e.g. 2026-11-28T07:04:18Z";
    case DateForm::http: return "an HTTP date, e.g. Sat, 28 Nov 2026 07:04:18 GMT";
    case DateForm::sigv4: return "yyyymmddThhmmssZ, e.g. 20261128T070418Z";
  }
  return "";
}

Error bad_date(std::string_view text, DateForm form, const std::string& why) {
  return make_error(ErrorKind::validation, "InvalidDate",
                    "'" + std::string(text) + "' is not a date: " + why + " (expected " + example(form) + ")");
}

// Reads text[at, at + n) as a decimal number into `out`; false when any is not a digit.
bool digits(std::string_view text, size_t at, size_t n, int& out) {
  if (at + n > text.size()) return false;
  out = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    out = out * 10 + (text[i] - '0');
  }
  return true;
}

bool is(std::string_view text, size_t at, char c) { return at < text.size() && text[at] == c; }
bool is_either(std::string_view text, size_t at, char a, char b) { return is(text, at, a) || is(text, at, b); }

// The fields' ranges; "" when all hold, else what is wrong.
std::string out_of_range(const Civil& c) {
  auto says = [](const char* name, int value, const char* range) {
    return std::string(name) + " " + std::to_string(value) + " is not " + range;
  };
  if (c.month < 1 || c.month > 12) return says("month", c.month, "1 to 12");
  if (c.day < 1 || c.day > days_in_month(c.year, c.month))
    return says("day", c.day, "in the month") + " (" + std::to_string(days_in_month(c.year, c.month)) + " days)";
  if (c.hour > 23) return says("hour", c.hour, "0 to 23");
  if (c.minute > 59) return says("minute", c.minute, "0 to 59");
  if (c.second > 60) return says("second", c.second, "0 to 60");
  return "";
}

std::int64_t seconds_of(const Civil& c) {
  return days_from_civil(c.year, c.month, c.day) * kDay + c.hour * 3600 + c.minute * 60 + c.second;
}

// "2026-11-28T07:04:18" then an optional fraction, then Z or +hh:mm / -hh:mm.
Outcome<std::int64_t> parse_iso(std::string_view t) {
  Civil c;
  if (!digits(t, 0, 4, c.year) || !is(t, 4, '-') || !digits(t, 5, 2, c.month) || !is(t, 7, '-') ||
      !digits(t, 8, 2, c.day) || !is_either(t, 10, 'T', 't') || !digits(t, 11, 2, c.hour) || !is(t, 13, ':') ||
      !digits(t, 14, 2, c.minute) || !is(t, 16, ':') || !digits(t, 17, 2, c.second))
    return bad_date(t, DateForm::iso, "not in the form yyyy-mm-ddThh:mm:ss");
  size_t at = 19;
  if (is(t, at, '.')) {
    size_t end = at + 1;
    while (end < t.size() && t[end] >= '0' && t[end] <= '9') ++end;
    if (end == at + 1) return bad_date(t, DateForm::iso, "a '.' without digits after it");
    at = end;
  }
  int offset = 0;
  if (is_either(t, at, 'Z', 'z')) {
    ++at;
  } else if (is_either(t, at, '+', '-')) {
    int hours = 0, minutes = 0;
    if (!digits(t, at + 1, 2, hours) || !is(t, at + 3, ':') || !digits(t, at + 4, 2, minutes) || hours > 23 ||
        minutes > 59)
      return bad_date(t, DateForm::iso, "an offset not in the form +hh:mm");
    offset = (hours * 3600 + minutes * 60) * (t[at] == '-' ? -1 : 1);
    at += 6;
  } else {
    return bad_date(t, DateForm::iso, "no Z or offset after the time");
  }
  if (at != t.size()) return bad_date(t, DateForm::iso, "text after the date");
  std::string range = out_of_range(c);
  if (!range.empty()) return bad_date(t, DateForm::iso, range);
  return seconds_of(c) - offset;
}

// "Sat, 28 Nov 2026 07:04:18 GMT": 29 characters exactly.
Outcome<std::int64_t> parse_http(std::string_view t) {
  Civil c;
  if (t.size() != 29 || !is(t, 3, ',') || !is(t, 4, ' ') || !digits(t, 5, 2, c.day) || !is(t, 7, ' ') ||
      !is(t, 11, ' ') || !digits(t, 12, 4, c.year) || !is(t, 16, ' ') || !digits(t, 17, 2, c.hour) || !is(t, 19, ':') ||
      !digits(t, 20, 2, c.minute) || !is(t, 22, ':') || !digits(t, 23, 2, c.second) || t.substr(25) != " GMT")
    return bad_date(t, DateForm::http, "not in the form Day, dd Mon yyyy hh:mm:ss GMT");
  bool weekday = false;
  for (const char* name : kWeekdays) weekday = weekday || t.substr(0, 3) == name;
  if (!weekday) return bad_date(t, DateForm::http, "'" + std::string(t.substr(0, 3)) + "' is not a day's name");
  for (int m = 0; m < 12; ++m)
    if (t.substr(8, 3) == kMonths[m]) c.month = m + 1;
  if (c.month == 0) return bad_date(t, DateForm::http, "'" + std::string(t.substr(8, 3)) + "' is not a month's name");
  std::string range = out_of_range(c);
  if (!range.empty()) return bad_date(t, DateForm::http, range);
  return seconds_of(c);
}

// "20261128T070418Z": 16 characters exactly.
Outcome<std::int64_t> parse_sigv4(std::string_view t) {
  Civil c;
  if (t.size() != 16 || !digits(t, 0, 4, c.year) || !digits(t, 4, 2, c.month) || !digits(t, 6, 2, c.day) ||
      !is(t, 8, 'T') || !digits(t, 9, 2, c.hour) || !digits(t, 11, 2, c.minute) || !digits(t, 13, 2, c.second) ||
      !is(t, 15, 'Z'))
    return bad_date(t, DateForm::sigv4, "not in the form yyyymmddThhmmssZ");
  std::string range = out_of_range(c);
  if (!range.empty()) return bad_date(t, DateForm::sigv4, range);
  return seconds_of(c);
}

}  // namespace

std::string format_date(std::int64_t seconds, DateForm form) {
  const std::int64_t first = days_from_civil(0, 1, 1) * kDay, last = days_from_civil(10000, 1, 1) * kDay - 1;
  seconds = seconds < first ? first : seconds > last ? last : seconds;
  Civil c = civil_from_seconds(seconds);
  char buf[40];
  switch (form) {
    case DateForm::iso:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year, c.month, c.day, c.hour, c.minute,
                    c.second);
      break;
    case DateForm::http: {
      std::int64_t days = seconds / kDay - (seconds < 0 && seconds % kDay != 0 ? 1 : 0);
      std::int64_t weekday = (days % 7 + 7) % 7;
      std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kWeekdays[weekday], c.day,
                    kMonths[c.month - 1], c.year, c.hour, c.minute, c.second);
      break;
    }
    case DateForm::sigv4:
      std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02dZ", c.year, c.month, c.day, c.hour, c.minute, c.second);
      break;
  }
  return buf;
}

Outcome<std::int64_t> parse_date(std::string_view text, DateForm form) {
  if (text.size() > kMaxDateText)
    return make_error(ErrorKind::validation, "InvalidDate",
                      "a date of " + std::to_string(text.size()) + " characters is not a date: at most " +
                          std::to_string(kMaxDateText) + " are read (expected " + example(form) + ")");
  switch (form) {
    case DateForm::iso: return parse_iso(text);
    case DateForm::http: return parse_http(text);
    case DateForm::sigv4: return parse_sigv4(text);
  }
  return parse_iso(text);
}

// The form is told by the text's 5th character: '-' in RFC 3339, ',' (the 4th) in an
// HTTP date, else the SigV4 form; the error says what that form expected.
Outcome<std::int64_t> parse_date(std::string_view text) {
  if (text.size() > 4 && text[4] == '-') return parse_date(text, DateForm::iso);
  if (text.size() > 3 && text[3] == ',') return parse_date(text, DateForm::http);
  if (text.size() == 16) return parse_date(text, DateForm::sigv4);
  return parse_date(text, DateForm::iso);
}

const char* date_form_name(DateForm form) {
  switch (form) {
    case DateForm::iso: return "iso";
    case DateForm::http: return "http";
    case DateForm::sigv4: return "sigv4";
  }
  return "iso";
}

std::optional<DateForm> date_form_named(std::string_view name) {
  for (DateForm form : {DateForm::iso, DateForm::http, DateForm::sigv4})
    if (name == date_form_name(form)) return form;
  return std::nullopt;
}

}  // namespace cloud
