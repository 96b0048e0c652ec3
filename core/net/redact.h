// Keeping secrets out of what people and logs see, above all the --debug wire dumps and
// recordings. One function, `redact`, decides what is secret; everything shown passes
// through it: signatures (Authorization and presigned URLs), session tokens (headers
// and query parameters of either dialect), secret keys in any common spelling, the
// value of every field named like a credential (password, token, api_key, *secret*...:
// redact.cpp's list, and the names users add) in JSON, form, query and XML text, and
// any literal secret the caller knows (the configured secret key and token, also in
// their percent-encoded form), and the value of every header named like a credential
// (is_secret_header, redact_header). Access key ids are not secret and stay visible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/wire/http.h"

namespace cloud {

inline constexpr const char* kRedacted = "<redacted>";

// Literal secrets shorter than this are not searched for in text: they would match
// ordinary words. Their named forms (secret_access_key = x) are still redacted.
inline constexpr size_t kMinSecretLength = 8;

// `text` with every secret replaced by kRedacted: `known_secrets` and the remembered
// ones as given and percent-encoded, secrets by name, the password of a URL's user
// info. Every text that leaves the process passes through here.
std::string redact(std::string_view text, const std::vector<std::string>& known_secrets = {});

// `text` as a terminal may show it: every control character but line feed and tab
// (ESC, the rest of C0, DEL, and C1 whether a raw byte or UTF-8) and every byte that
// is not valid UTF-8, written as Lua writes it in a string and cloud.pretty shows it:
// \027, \r, \u{9B}, \255. Text from outside (a server's error code and message, an
// HTML page's title, headers, an object key) then cannot move the cursor, clear the
// screen, set the window title or write the clipboard (OSC 52). Every text shown on
// a terminal goes through here, at the edge: error descriptions, --debug dumps, the
// errors a script or the REPL reports, progress lines (cloud.printable).
std::string printable(std::string_view text);

// Remembers a secret this process holds (every client's secret key and session token),
// so that every later redact() replaces it, whichever client it belongs to. Empty and
// short ones are ignored.
void remember_secret(const std::string& secret);

// Adds the field names of `list` (comma-separated; letters, digits, '_', '-', '.', and
// '*' for any run of those) to the names whose values every later redact() removes,
// case-insensitive, in every client (the setting redact_fields). Names that are not
// such are skipped: settings refuse them first (bad_field_name).
void remember_secret_fields(const std::string& list);

// The first name of `list` that cannot name a field for remember_secret_fields, if any.
std::optional<std::string> bad_field_name(const std::string& list);

// The error with its texts redacted (code, message, request id, field problems), so
// that an error whose answer echoed the request is clean in every field it has.
void redact_error(Error& error, const std::vector<std::string>& known_secrets);

// The signatures a request carries (Authorization header, presigned URL): secrets of
// its exchange, since an answer may echo them in free text.
std::vector<std::string> request_signatures(const HttpRequest& request);

// Whether a header's value is a credential by its name: Authorization,
// Proxy-Authorization, Cookie, Set-Cookie, or one of the name's words (the parts
// between '-', '_', '.'; any case) is secret, token, password, passwd, passphrase, key
// or apikey, and the next word is not "id", which names a key rather than holding it
// (X-My-Secret, X-Api-Key, x-amz-security-token; not X-Monkey, X-Tokens-Left,
// X-Kms-Key-Id). The one rule for --debug and recordings (docs/configuration.md).
bool is_secret_header(std::string_view name);

// A header's value as it may leave the process (--debug, a recording): kRedacted for a
// secret header's (is_secret_header), but an Authorization keeps its scheme ("Bearer
// <redacted>") and, when the client signed it, its credential scope and signed headers
// (the Signature redacted); any other value through redact().
std::string redact_header(std::string_view name, std::string_view value,
                          const std::vector<std::string>& known_secrets = {});

// What --debug prints for one HTTP exchange, curl -v style: "* " a title line, "> "
// the request (method, URL, headers, body), "< " the answer (status, headers, body)
// or the error that stood for it. Bodies longer than `body_limit` bytes are cut,
// binary ones summarised, ones kept in files named (path, offset, length). Header
// values as redact_header gives them. Everything goes through `redact`, with the
// request's own signatures added to the known secrets (an answer may echo them), then
// `printable`.
struct ExchangeInfo {
  std::string label;  // "UpdateSnapshot", or "request" for cloud.request
  int attempt = 1;
  double seconds = 0;                // from sending to the end of the answer
  std::vector<std::string> secrets;  // known secrets: secret key, session token
  size_t body_limit = 2048;
};

std::string describe_exchange(const HttpRequest& request, const Outcome<HttpResponse>& response,
                              const ExchangeInfo& info);

}  // namespace cloud
