// URL parsing and percent-encoding for the signer and the serialisers. parse_url
// keeps the path and query exactly as they go on the wire (SigV4 signs what is sent),
// accepts raw spaces and UTF-8 in the path (the conformance vectors carry them), drops
// a fragment (never sent) and refuses what no request could use: other schemes, user
// info, a missing host, a bad port, control characters.
#include "core/wire/uri.h"

#include <cctype>

#include "core/wire/http.h"

namespace cloud {
namespace {

// The validation error every parse_url failure becomes.
Error bad_url(std::string_view url, const std::string& what) {
  return make_error(ErrorKind::validation, "InvalidURL", "invalid URL '" + std::string(url) + "': " + what);
}

// The port a scheme implies when the URL names none.
int default_port(const std::string& scheme) { return scheme == "https" ? 443 : 80; }

// RFC 3986 unreserved characters: the only ones SigV4 leaves unencoded.
bool is_unreserved(unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~'; }

// 0-15 for a hex digit of either case, -1 otherwise.
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Characters a registered name may hold (RFC 3986 reg-name; ':' only inside [...]).
bool is_host_char(unsigned char c) {
  return std::isalnum(c) || std::string_view("-._~%!$&'()*+,;=").find(static_cast<char>(c)) != std::string_view::npos;
}

// "" when `host` is a usable registered name or bracketed IPv6 literal, else the problem.
std::string check_host(const std::string& host) {
  if (host.empty()) return "no host";
  bool literal = host.front() == '[';
  for (size_t i = literal ? 1 : 0; i < host.size() - (literal ? 1 : 0); ++i) {
    unsigned char c = static_cast<unsigned char>(host[i]);
    if (!is_host_char(c) && !(literal && c == ':')) return "host '" + host + "' holds a character hosts cannot";
  }
  return {};
}

// Position of the first ASCII control character, or npos.
size_t find_control(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return i;
  }
  return std::string_view::npos;
}

// "" when `digits` is a usable port (empty means the default), else what is wrong.
std::string parse_port(std::string_view digits, int& port) {
  port = 0;
  if (digits.empty()) return {};
  if (digits.size() > 5) return "port '" + std::string(digits) + "' is out of range";
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return "port '" + std::string(digits) + "' is not a number";
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return "port '" + std::string(digits) + "' is out of range";
  return {};
}

// Splits authority into host and port; "" on success, else what is wrong.
std::string parse_authority(std::string_view authority, Url& url) {
  if (authority.find('@') != std::string_view::npos) return "user info (user@host) is not supported";
  size_t host_end = authority.find(':');
  if (!authority.empty() && authority[0] == '[') {  // IPv6 literal: the port follows ']'
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return "unterminated IPv6 literal";
    host_end = close + 1 < authority.size() ? close + 1 : std::string_view::npos;
    if (host_end != std::string_view::npos && authority[host_end] != ':')
      return "unexpected text after the IPv6 literal";
  }
  url.host = std::string(authority.substr(0, host_end));
  if (std::string problem = check_host(url.host); !problem.empty()) return problem;
  if (host_end == std::string_view::npos) return {};
  return parse_port(authority.substr(host_end + 1), url.port);
}

}  // namespace

// host[:port]: what the Host header carries; the port only when it is not the default.
std::string Url::authority() const {
  if (port == 0 || port == default_port(scheme)) return host;
  return host + ":" + std::to_string(port);
}

// scheme://host[:port], the URL without path and query.
std::string Url::origin() const { return scheme + "://" + authority(); }

// Splits an absolute http(s) URL into its parts, path and query left as on the wire.
Outcome<Url> parse_url(std::string_view text) {
  if (text.empty()) return bad_url(text, "it is empty");
  if (size_t at = find_control(text); at != std::string_view::npos)
    return bad_url(text, "control character at offset " + std::to_string(at));
  size_t sep = text.find("://");
  if (sep == std::string_view::npos) return bad_url(text, "no scheme (expected http:// or https://)");
  Url url;
  url.scheme = to_lower(text.substr(0, sep));
  if (url.scheme != "http" && url.scheme != "https")
    return bad_url(text, "scheme '" + url.scheme + "' is not http or https");
  std::string_view rest = text.substr(sep + 3);
  rest = rest.substr(0, rest.find('#'));  // the fragment never goes on the wire
  size_t authority_end = rest.find_first_of("/?");
  if (std::string problem = parse_authority(rest.substr(0, authority_end), url); !problem.empty())
    return bad_url(text, problem);
  std::string_view target = authority_end == std::string_view::npos ? "" : rest.substr(authority_end);
  size_t q = target.find('?');
  url.path = std::string(target.substr(0, q));
  if (url.path.empty()) url.path = "/";
  if (q != std::string_view::npos) url.query = std::string(target.substr(q + 1));
  return url;
}

// Percent-encodes all but the unreserved characters (and '/' with keep_slash).
std::string uri_encode(std::string_view s, bool keep_slash) {
  static const char digits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (is_unreserved(c) || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 0x0f];
    }
  }
  return out;
}

// Decodes %XX escapes; '+' is not a space here (SigV4 treats it as a literal plus).
std::string uri_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    int hi = s[i] == '%' && i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
    int lo = hi >= 0 ? hex_value(s[i + 2]) : -1;
    if (lo >= 0) {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// "a=1&b&c=" -> (a,1) (b,"") (c,""); empty pieces ("a=1&&b") are skipped.
std::vector<std::pair<std::string, std::string>> split_query(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view piece = query.substr(start, end - start);
    size_t eq = piece.find('=');
    if (!piece.empty())
      pairs.emplace_back(std::string(piece.substr(0, eq)),
                         eq == std::string_view::npos ? "" : std::string(piece.substr(eq + 1)));
    start = end + 1;
  }
  return pairs;
}

}  // namespace cloud
