// Plain HTTP values passed between the serialiser, the signer, the transport and
// the parser. Headers are an ordered list of pairs: repeats and order are kept,
// because signing depends on them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cloud {

using Header = std::pair<std::string, std::string>;
using Headers = std::vector<Header>;

struct HttpRequest {
  std::string method;
  std::string url;  // absolute, as it goes on the wire (path already percent-encoded)
  Headers headers;
  std::string body;
};

struct HttpResponse {
  long status = 0;
  Headers headers;
  std::string body;
};

// The first value of header `name` (case-insensitive), or "" when absent.
std::string header_value(const Headers& headers, std::string_view name);
bool has_header(const Headers& headers, std::string_view name);
bool iequals(std::string_view a, std::string_view b);
// Whether `value` may be a header's value: no line break, NUL or other control
// character but a tab (one with "\r\n" in it would put a header of its own on the wire).
bool header_value_ok(std::string_view value);
std::string to_lower(std::string_view s);

}  // namespace cloud
