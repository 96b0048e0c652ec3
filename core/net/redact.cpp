// Redaction and the --debug exchange dump; see redact.h. Bodies are cut before they
// are redacted only with a margin past the shown length, then cut again, so a secret
// straddling the cut is still found whole.
#include "core/net/redact.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <memory>
#include <set>

#include "core/net/range_reader.h"
#include "core/base/pattern.h"
#include "core/wire/uri.h"
#include "core/base/utf8.h"

namespace cloud {

namespace {

// name = value, name: value, "name": "value", name=value in a query string: the
// names of secrets in the spellings the two dialects, JSON and INI files use; a
// signature's name not the end of a longer word (the error code IncompleteSignature
// followed by its message is not one). Bytes: what is redacted need not be UTF-8.
const Pattern& named_secret() {
  static const Pattern re = Pattern::builtin(
      R"((?i)((?:secret_?access_?key|secret[_-]?key|session_?token|security-token|(?:^|[^a-z])signature)["']?\s*[:=]\s*["']?)[^\s&"',;}<>]+)",
      Pattern::Text::bytes);
  return re;
}

// <SecretAccessKey>...</SecretAccessKey> and friends in XML bodies.
const Pattern& xml_secret() {
  static const Pattern re = Pattern::builtin(
      R"((?i)(<(?:secret_?access_?key|session_?token|signature(?:provided)?)>)[^<]*)", Pattern::Text::bytes);
  return re;
}

// The names of fields that hold a credential, whole names, case-insensitive (RE2):
// docs/testing.md lists them. A JSON member, a form or query parameter or an XML
// element of such a name has its value redacted, whatever the value looks like.
const char* const kSecretFieldNames =
    "password|passwd|passphrase|pwd|[a-z0-9_.-]*password|"
    "token|[a-z0-9_.-]*_token|(?:session|access|refresh|id|auth|bearer|security)_?token|"
    "api[_-]?key|[a-z0-9_.-]*secret[a-z0-9_.-]*|private[_-]?key|credentials?|"
    "authorization|signature";

// A field name users add (redact_fields): literal but for '*', any run of name characters.
std::string field_name_pattern(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '*' ? std::string("[a-z0-9_.-]*") : Pattern::quote(std::string(1, c));
  return out;
}

// The patterns of the secret fields' values: JSON ("name": "value" or a number or a
// literal), form and query (name=value at the start of a line, after '?' or '&'; not
// after a blank, where an Authorization header's Credential= names the access key id,
// which stays), XML (<name>value). An empty or already redacted value is left. Rebuilt
// when users add names.
struct FieldPatterns {
  Pattern json, form, xml;
  explicit FieldPatterns(const std::string& names)
      : json(Pattern::builtin(
            R"re((?i)("(?:)re" + names + R"re()"\s*:\s*)(?:"(?:[^"\\]|\\.)*"|[-+0-9.eE]+|true|false))re",
            Pattern::Text::bytes)),
        form(Pattern::builtin(R"re((?im)((?:^|[?&])(?:)re" + names + R"re()=)[^&\s"'<>]+)re", Pattern::Text::bytes)),
        xml(Pattern::builtin(R"re((?i)(<(?:)re" + names + R"re()>)[^<]+)re", Pattern::Text::bytes)) {}
};

// The names users added, and the patterns of all names, compiled at the first redact()
// (not at start: a process that redacts nothing pays nothing for them, about 2.6M
// instructions) and again after names were added; redact() may run on any thread.
struct SecretFields {
  std::mutex mutex;
  std::set<std::string> added;
  std::shared_ptr<const FieldPatterns> patterns;  // null until needed
};

SecretFields& secret_fields() {
  static SecretFields f;
  return f;
}

std::shared_ptr<const FieldPatterns> field_patterns() {
  SecretFields& f = secret_fields();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (!f.patterns) {
    std::string all = kSecretFieldNames;
    for (const std::string& name : f.added) all += "|" + field_name_pattern(name);
    f.patterns = std::make_shared<FieldPatterns>(all);
  }
  return f.patterns;
}

// Whether `name` may name a field to redact: letters, digits, '_', '-', '.', '*'.
bool is_field_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '*';
  });
}

// The names of a comma-separated list, trimmed, empty ones dropped.
std::vector<std::string> field_names_of(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, end - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) out.push_back(name);
    start = end + 1;
  }
  return out;
}

void replace_all(std::string& text, const std::string& secret) {
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + std::strlen(kRedacted)))
    text.replace(at, secret.size(), kRedacted);
}

// The secrets remember_secret() was given; redact() may run on any thread.
struct Remembered {
  std::mutex mutex;
  std::set<std::string> secrets;
};

Remembered& remembered() {
  static Remembered r;
  return r;
}

// Literal secrets, the known and the remembered, as given and percent-encoded (as in
// a presigned URL), longest first so that a secret containing another is replaced whole.
std::vector<std::string> literal_forms(const std::vector<std::string>& known) {
  std::vector<std::string> all = known;
  {
    std::lock_guard<std::mutex> lock(remembered().mutex);
    all.insert(all.end(), remembered().secrets.begin(), remembered().secrets.end());
  }
  std::vector<std::string> forms;
  for (const std::string& s : all)
    if (s.size() >= kMinSecretLength) forms.push_back(s), forms.push_back(uri_encode(s));
  std::sort(forms.begin(), forms.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return forms;
}

// "scheme://user:password@host" -> "scheme://user:<redacted>@host" wherever a URL
// appears; the user info ends at the last '@' before the path.
void mask_url_passwords(std::string& text) {
  for (size_t at = text.find("://"); at != std::string::npos; at = text.find("://", at + 3)) {
    size_t start = at + 3;
    size_t end = std::min(text.find_first_of("/?# \t\r\n\"'<>", start), text.size());
    size_t sign = text.rfind('@', end - 1);
    size_t colon = text.find(':', start);
    if (sign == std::string::npos || sign < start || colon >= sign) continue;
    text.replace(colon + 1, sign - colon - 1, kRedacted);
  }
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", s);
  return buf;
}

// Text is shown as it is; anything with control bytes (other than tab and line
// breaks) is summarised instead.
bool looks_binary(std::string_view body) {
  return std::any_of(body.begin(), body.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 && c != '\n' && c != '\r' && c != '\t';
  });
}

// Every line of `text` prefixed with `mark`.
void add_lines(std::string& out, const std::string& mark, const std::string& text) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out += mark + line + "\n";
    start = end + 1;
  }
}

void add_body(std::string& out, const std::string& mark, const std::string& body, const ExchangeInfo& info) {
  if (body.empty()) return;
  const size_t margin = 1024;
  std::string_view head(body.data(), std::min(body.size(), info.body_limit + margin));
  out += mark.substr(0, 1) + "\n";  // a bare "<" or ">" line between headers and body
  if (looks_binary(head.substr(0, std::min(head.size(), info.body_limit)))) {
    out += mark + "(" + std::to_string(body.size()) + " bytes of binary data)\n";
    return;
  }
  std::string shown = redact(head, info.secrets);
  bool cut = body.size() > info.body_limit;
  if (cut) shown.resize(std::min(shown.size(), info.body_limit));
  add_lines(out, mark, shown);
  if (cut) out += mark + "... (cut: " + std::to_string(body.size()) + " bytes in all)\n";
}

// A body kept in a file is named, not read: "(5000 bytes from '/tmp/x' at offset 1000)".
void add_file_body(std::string& out, const std::string& mark, const std::string& what, const ExchangeInfo& info) {
  out += mark.substr(0, 1) + "\n" + mark + "(" + redact(what, info.secrets) + ")\n";
}

// The words of a header's name, lower-cased: the parts between '-', '_' and '.'.
std::vector<std::string> name_words(std::string_view name) {
  std::vector<std::string> words(1);
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') words.emplace_back();
    else words.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return words;
}

// The headers, one a line, each value as it may leave the process (redact_header).
void add_headers(std::string& out, const std::string& mark, const Headers& headers, const ExchangeInfo& info) {
  for (const Header& h : headers) out += mark + h.first + ": " + redact_header(h.first, h.second, info.secrets) + "\n";
}

// A value redacted as "name: value", so that a name redact() knows (Signature:,
// session_token:) takes its value with it; kRedacted should the name itself change.
std::string redacted_value(std::string_view name, std::string_view value,
                           const std::vector<std::string>& known_secrets) {
  std::string prefix = std::string(name) + ": ";
  std::string line = redact(prefix + std::string(value), known_secrets);
  return line.compare(0, prefix.size(), prefix) == 0 ? line.substr(prefix.size()) : std::string(kRedacted);
}

// Whether a header carries credentials after its scheme: "Bearer abc", "Basic dXNlcg==".
bool authorization_header(const std::string& lower) {
  return lower == "authorization" || lower == "proxy-authorization";
}

// An Authorization the client signed ("EXT4-HMAC-SHA256 Credential=..."): its only
// secret is the Signature, which redact() removes; the rest says how it was signed.
bool signed_authorization(std::string_view value) {
  static const Pattern re = Pattern::builtin(R"((?s)[A-Z0-9]+-HMAC-SHA256 Credential=.*)", Pattern::Text::bytes);
  return re.full_match(value);
}

// The signatures a request carries (Authorization header, presigned URL, a streamed
// body's chunks), so that an answer echoing one in free text is redacted too.
std::vector<std::string> signatures_in(const HttpRequest& request) {
  static const Pattern re = Pattern::builtin(R"((?i)signature=([0-9a-f]{16,}))", Pattern::Text::bytes);
  std::string where = request.url;
  for (const Header& h : request.headers) where += "\n" + h.second;
  std::vector<std::string> found = re.find_all(where);
  if (request.files.stream)
    found.insert(found.end(), request.files.stream->signatures.begin(), request.files.stream->signatures.end());
  return found;
}

// Whether an ASCII byte is shown as it is: printable, a line feed or a tab.
bool shown_as_is(unsigned char c) { return (c >= 0x20 && c != 0x7F) || c == '\n' || c == '\t'; }

}  // namespace

std::string printable(std::string_view text) {
  if (std::all_of(text.begin(), text.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u < 0x80 && shown_as_is(u);
      }))
    return std::string(text);
  std::string out;
  char code[16];
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_sequence(text, i);
    if (n == 1 && shown_as_is(c)) {
      out += static_cast<char>(c);
    } else if (n == 1 && c == '\r') {
      out += "\\r";
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {  // U+0080..U+009F: C1
      std::snprintf(code, sizeof code, "\\u{%X}", static_cast<unsigned>(static_cast<unsigned char>(text[i + 1])));
      out += code;
    } else if (n > 1) {
      out.append(text, i, n);
    } else {  // a control character, or a byte of no valid UTF-8
      std::snprintf(code, sizeof code, "\\%03u", static_cast<unsigned>(c));
      out += code;
    }
    i += n > 0 ? n : 1;
  }
  return out;
}

std::string redact(std::string_view text, const std::vector<std::string>& known_secrets) {
  std::string out(text);
  mask_url_passwords(out);
  for (const std::string& form : literal_forms(known_secrets)) replace_all(out, form);
  named_secret().replace_all(out, std::string("\\1") + kRedacted);
  xml_secret().replace_all(out, std::string("\\1") + kRedacted);
  std::shared_ptr<const FieldPatterns> fields = field_patterns();
  fields->json.replace_all(out, std::string("\\1\"") + kRedacted + "\"");
  fields->form.replace_all(out, std::string("\\1") + kRedacted);
  fields->xml.replace_all(out, std::string("\\1") + kRedacted);
  return out;
}

std::optional<std::string> bad_field_name(const std::string& list) {
  for (const std::string& name : field_names_of(list))
    if (!is_field_name(name)) return name;
  return std::nullopt;
}

void remember_secret_fields(const std::string& list) {
  std::vector<std::string> names = field_names_of(list);
  std::lock_guard<std::mutex> lock(secret_fields().mutex);
  size_t before = secret_fields().added.size();
  for (const std::string& name : names)
    if (is_field_name(name)) secret_fields().added.insert(name);
  if (secret_fields().added.size() != before) secret_fields().patterns = nullptr;  // remade at the next redact()
}

void remember_secret(const std::string& secret) {
  if (secret.size() < kMinSecretLength) return;
  std::lock_guard<std::mutex> lock(remembered().mutex);
  remembered().secrets.insert(secret);
}

void redact_error(Error& e, const std::vector<std::string>& known_secrets) {
  for (std::string* text : {&e.code, &e.message, &e.request_id}) *text = redact(*text, known_secrets);
  for (FieldProblem& f : e.fields) f.path = redact(f.path, known_secrets), f.problem = redact(f.problem, known_secrets);
}

std::vector<std::string> request_signatures(const HttpRequest& request) { return signatures_in(request); }

bool is_secret_header(std::string_view name) {
  static const std::set<std::string> secret_words{"secret",     "token", "password", "passwd",
                                                  "passphrase", "key",   "apikey"};
  static const std::set<std::string> credential_names{"authorization", "proxy-authorization", "cookie", "set-cookie"};
  if (credential_names.count(to_lower(name))) return true;
  std::vector<std::string> words = name_words(name);
  for (size_t i = 0; i < words.size(); ++i)
    if (secret_words.count(words[i]) && (i + 1 == words.size() || words[i + 1] != "id")) return true;
  return false;
}

std::string redact_header(std::string_view name, std::string_view value,
                          const std::vector<std::string>& known_secrets) {
  if (!is_secret_header(name)) return redacted_value(name, value, known_secrets);
  if (!authorization_header(to_lower(name))) return kRedacted;
  if (signed_authorization(value)) return redact(value, known_secrets);
  size_t space = value.find(' ');
  return space == std::string_view::npos ? std::string(kRedacted)
                                         : redact(value.substr(0, space + 1), known_secrets) + kRedacted;
}

std::string describe_exchange(const HttpRequest& request, const Outcome<HttpResponse>& response,
                              const ExchangeInfo& given) {
  ExchangeInfo info = given;
  for (std::string& signature : signatures_in(request)) info.secrets.push_back(std::move(signature));
  std::string out = "* " + info.label + ", attempt " + std::to_string(info.attempt) + "\n";
  out += "> " + redact(request.method + " " + request.url, info.secrets) + "\n";
  add_headers(out, "> ", request.headers, info);
  add_body(out, "> ", std::string(request.payload()), info);
  if (const auto& range = request.files.upload)
    add_file_body(
        out, "> ",
        std::to_string(range->length) + " bytes from '" + range->path + "' at offset " + std::to_string(range->offset),
        info);
  if (!response.ok()) {
    out += "< no answer after " + format_seconds(info.seconds) + ": " +
           redact(response.error().describe(), info.secrets) + "\n";
    return printable(out);
  }
  const HttpResponse& r = response.value();
  out += "< HTTP " + std::to_string(r.status) + " (" + format_seconds(info.seconds) + ")\n";
  add_headers(out, "< ", r.headers, info);
  add_body(out, "< ", r.body, info);
  if (!r.body_file.empty()) add_file_body(out, "< ", "body written to '" + r.body_file + "'", info);
  return printable(out);
}

// Declared in core/base/error.h: the error as one text for people, through redact and printable.
std::string Error::describe() const {
  std::string out = kind_name(kind);
  out += " error";
  if (!operation.empty()) out += " in " + operation;
  if (status != 0) out += " (HTTP " + std::to_string(status) + ")";
  out += ": ";
  if (!code.empty()) out += code + ": ";
  out += message;
  for (const FieldProblem& f : fields) out += "\n  " + f.path + ": " + f.problem;
  if (!request_id.empty()) out += "\n  request id: " + request_id;
  if (attempts > 1) out += "\n  attempts: " + std::to_string(attempts);
  return printable(redact(out));  // shown to people: never a secret nor a control sequence, whatever the message holds
}

}  // namespace cloud
