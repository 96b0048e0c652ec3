// The one place where dates are read and written: seconds since 1970-01-01T00:00:00Z
// (UTC, no leap seconds, as time_t) to and from the three forms the APIs use.
//   iso     RFC 3339 / ISO 8601 "2026-11-28T07:04:18Z" (listings' LastModified, the
//           platform's clock); read also with a fraction (".000", dropped) and with an
//           offset ("+02:00"), 't' and 'z' in either case
//   http    RFC 1123 "Sat, 28 Nov 2026 07:04:18 GMT" (Date, Last-Modified headers)
//   sigv4   the SigV4 basic form "20261128T070418Z" (X-Amz-Date)
// Years 0000 to 9999 only; every field is checked against its range (February 29 only
// in a leap year). A text from outside is hostile: longer than kMaxDateText is refused
// before it is read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/error.h"

namespace cloud {

enum class DateForm { iso, http, sigv4 };

// The longest text parse_date reads.
constexpr size_t kMaxDateText = 64;

// `seconds` written in `form`; iso without a fraction. A time outside years 0000 to
// 9999 is clamped to the nearest end of that range.
std::string format_date(std::int64_t seconds, DateForm form);

// `text` in `form` read as seconds; otherwise an Error of kind validation, code
// InvalidDate, that says what was wrong and which form is expected.
Outcome<std::int64_t> parse_date(std::string_view text, DateForm form);
// `text` in whichever of the three forms it is in.
Outcome<std::int64_t> parse_date(std::string_view text);

// The form's name ("iso", "http", "sigv4") and the form named so, if any.
const char* date_form_name(DateForm form);
std::optional<DateForm> date_form_named(std::string_view name);

}  // namespace cloud
