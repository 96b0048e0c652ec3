// URL pieces and percent-encoding as SigV4 and the APIs need them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/error.h"

namespace cloud {

struct Url {
  std::string scheme;             // "http" or "https"
  std::string host;               // without port; IPv6 literal with brackets
  int port = 0;                   // 0: scheme default
  std::string path;               // as on the wire ("/" when empty)
  std::string query;              // as on the wire, without '?'
  std::string authority() const;  // host[:port], port omitted when default
  std::string origin() const;     // scheme://authority
};

Outcome<Url> parse_url(std::string_view url);

// RFC 3986 encoding: everything but A-Z a-z 0-9 - _ . ~ becomes %XX (uppercase hex).
// With keep_slash, '/' is left as it is (paths).
std::string uri_encode(std::string_view s, bool keep_slash = false);
// %XX decoded; '+' stays '+'. Malformed escapes are kept as they are.
std::string uri_decode(std::string_view s);

// Query string split on '&' and '=' without decoding.
std::vector<std::pair<std::string, std::string>> split_query(std::string_view query);

}  // namespace cloud
