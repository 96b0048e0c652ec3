// Signature V4 for both dialects and both variants (Authorization header, presigned
// URL). Output order and spelling follow the conformance suite byte for byte: Host
// first when added, then <prefix>Security-Token, <prefix>Date, lowercase
// <prefix>content-sha256, Authorization; presigned parameters go Algorithm,
// Credential, Date, SignedHeaders, Expires, Security-Token, Signature. Whatever the
// input already carries (date, content hash, token) is reused rather than repeated,
// and Authorization or presigned parameters in the input are dropped, so a verifier
// can re-sign a received request as it is and compare signatures: verification
// (the end of this file) goes through the same canonical-request code as signing.
#include "core/wire/sigv4.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/wire/aws_chunked.h"
#include "core/base/dates.h"
#include "core/base/crypto.h"
#include "core/wire/uri.h"
#include "core/base/utf8.h"

namespace cloud {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

// The header names one dialect adds, spelled as the suite sends them.
struct Names {
  std::string date, token, content_sha;
};

// X-Ext-Date, X-Ext-Security-Token, x-ext-content-sha256 (or the X-Amz- ones).
Names names_for(const Dialect& d) {
  return {d.header_prefix + "Date", d.header_prefix + "Security-Token", to_lower(d.header_prefix) + "content-sha256"};
}

// True when `t` is yyyymmddThhmmssZ with plausible field ranges.
bool valid_time(const std::string& t) {
  if (t.size() != 16 || t[8] != 'T' || t[15] != 'Z') return false;
  for (size_t i = 0; i < 15; ++i)
    if (i != 8 && (t[i] < '0' || t[i] > '9')) return false;
  auto field = [&](size_t at) { return (t[at] - '0') * 10 + (t[at + 1] - '0'); };
  return field(4) >= 1 && field(4) <= 12 && field(6) >= 1 && field(6) <= 31 && field(9) <= 23 && field(11) <= 59 &&
         field(13) <= 60;
}

// The signing time: `given` (a received date) first, then the input's, then now.
Outcome<std::string> pick_time(const std::string& given, const SignInput& in) {
  std::string time = !given.empty() ? given : !in.time.empty() ? in.time : amz_time_now();
  if (!valid_time(time))
    return make_error(ErrorKind::validation, "InvalidTime",
                      "signing time '" + time + "' is not in the form yyyymmddThhmmssZ");
  return time;
}

// Removes '.' and '..' segments and empty segments (repeated slashes); the result
// ends with '/' when the input's last segment named a directory ("/a/", "/a/.").
std::string normalize_path(std::string_view path) {
  std::vector<std::string_view> kept;
  bool names_directory = false;
  for (size_t start = 0; start <= path.size();) {
    size_t end = std::min(path.find('/', start), path.size());
    std::string_view segment = path.substr(start, end - start);
    names_directory = segment.empty() || segment == "." || segment == "..";
    if (segment == "..") {
      if (!kept.empty()) kept.pop_back();
    } else if (!names_directory) {
      kept.push_back(segment);
    }
    start = end + 1;
  }
  std::string out;
  for (std::string_view segment : kept) out.append("/").append(segment);
  if (out.empty() || names_directory) out += '/';
  return out;
}

// Canonical URI: S3-style signs the wire path untouched; otherwise the (normalised)
// wire path is percent-encoded once more, '/' kept.
std::string canonical_path(const SignInput& in, const std::string& wire_path) {
  if (!in.policy.double_encode) return wire_path;
  return uri_encode(in.policy.normalize_path ? normalize_path(wire_path) : wire_path, true);
}

// Canonical query: every pair decoded and re-encoded strictly, sorted by key then value.
std::string canonical_query(const Pairs& wire_pairs) {
  Pairs pairs;
  for (const auto& [key, value] : wire_pairs)
    pairs.emplace_back(uri_encode(uri_decode(key)), uri_encode(uri_decode(value)));
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [key, value] : pairs) out += (out.empty() ? "" : "&") + key + "=" + value;
  return out;
}

// A header value as signed: trimmed, and every run of whitespace inside it, line
// breaks of a multi-line (obs-fold) value included, made one space, as botocore and
// aws-c-auth sign ("value1\n  value2" is "value1 value2"; the older published suite's
// comma form is superseded).
std::string canonical_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  bool pending_space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') {
      pending_space = !out.empty();
    } else {
      if (pending_space) out += ' ';
      pending_space = false;
      out += c;
    }
  }
  return out;
}

struct CanonicalHeaders {
  std::string block;         // "name:value\n" per header, sorted
  std::string signed_names;  // "host;x-ext-date"
};

// Lowercased, sorted, repeats joined by ','; `unsigned_name` (lowercase) is left out.
CanonicalHeaders canonical_headers(const Headers& headers, const std::string& unsigned_name) {
  std::vector<std::pair<std::string, std::string>> lowered;  // sorted stably: repeats keep their order
  lowered.reserve(headers.size());
  for (const auto& [name, value] : headers)
    if (std::string key = to_lower(name); key != unsigned_name)
      lowered.emplace_back(std::move(key), canonical_value(value));
  std::stable_sort(lowered.begin(), lowered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  CanonicalHeaders out;
  for (size_t i = 0; i < lowered.size(); ++i) {
    const auto& [name, value] = lowered[i];
    if (i > 0 && lowered[i - 1].first == name) {  // a repeat: its value joins the line above
      out.block.back() = ',';
    } else {
      out.block.append(name).append(1, ':');
      out.signed_names.append(out.signed_names.empty() ? "" : ";").append(name);
    }
    out.block.append(value).append(1, '\n');
  }
  return out;
}

// date/region/service/terminator: what the key and the Credential are scoped to.
std::string credential_scope(const SignInput& in, const std::string& time) {
  return time.substr(0, 8) + "/" + in.region + "/" + in.service + "/" + in.dialect->terminator;
}

// The four-step HMAC chain from the secret to the signing key.
std::string derive_signing_key(const SignInput& in, const std::string& day) {
  std::string key = hmac_sha256(in.dialect->key_prefix + in.credentials.secret_access_key, day);
  key = hmac_sha256(key, in.region);
  key = hmac_sha256(key, in.service);
  return hmac_sha256(key, in.dialect->terminator);
}

// An HMAC keyed with the signing key for `time`'s day, derived once per secret, day,
// region, service and dialect: the chain is the same for every request of a day, so
// the last few keys are kept, each as a keyed MAC context that a signature copies (a
// client uses one or two scopes; the emulator, a few). Shared by the threads of the
// emulator, hence the lock, under which the kept context is also copied.
HmacSha256 signing_mac(const SignInput& in, const std::string& time) {
  struct Entry {
    std::string scope;
    std::unique_ptr<HmacSha256> mac;
  };
  static std::mutex lock;
  static Entry kept[8];
  static size_t next = 0;
  std::string day = time.substr(0, 8);
  std::string scope = in.dialect->key_prefix + in.credentials.secret_access_key + '\n' + day + '\n' + in.region + '\n' +
                      in.service + '\n' + in.dialect->terminator;
  {
    std::lock_guard<std::mutex> hold(lock);
    for (const Entry& e : kept)
      if (e.mac && e.scope == scope) return *e.mac;
  }
  auto mac = std::make_unique<HmacSha256>(derive_signing_key(in, day));
  HmacSha256 copy(*mac);
  std::lock_guard<std::mutex> hold(lock);
  kept[next] = {std::move(scope), std::move(mac)};
  next = (next + 1) % std::size(kept);
  return copy;
}

// The SHA-256 of `body` in hex; that of no bytes, the body of most requests, known.
std::string body_sha256_hex(std::string_view body) {
  return body.empty() ? "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" : sha256_hex(body);
}

// The payload's hash as signed: given for a body sent from a file, else computed.
std::string payload_hash(const SignInput& in) {
  return in.payload_sha256.empty() ? body_sha256_hex(in.body) : in.payload_sha256;
}

// Fills the canonical request, string to sign and signature of `out`.
void compute_signature(const SignInput& in, const std::string& time, const std::string& path, const std::string& query,
                       const CanonicalHeaders& headers, SignOutput& out) {
  out.canonical_request = in.method + "\n" + path + "\n" + query + "\n" + headers.block + "\n" + headers.signed_names +
                          "\n" + payload_hash(in);
  out.string_to_sign = in.dialect->algorithm + "\n" + time + "\n" + credential_scope(in, time) + "\n" +
                       sha256_hex(out.canonical_request);
  out.signature = hex(signing_mac(in, time).sign(out.string_to_sign));
}

// The input headers minus Authorization, with Host from the URL in front when missing.
Headers base_headers(const SignInput& in, const Url& url) {
  Headers headers;
  if (!has_header(in.headers, "Host")) headers.emplace_back("Host", url.authority());
  for (const Header& h : in.headers)
    if (!iequals(h.first, "Authorization")) headers.push_back(h);
  return headers;
}

// Signs into the Authorization header, adding the token, date and hash headers.
Outcome<SignOutput> sign_header_variant(const SignInput& in, const Url& url, Headers headers) {
  const Names names = names_for(*in.dialect);
  Outcome<std::string> time = pick_time(canonical_value(header_value(headers, names.date)), in);
  if (!time) return time.error();
  if (!in.credentials.session_token.empty() && !has_header(headers, names.token))
    headers.emplace_back(names.token, in.credentials.session_token);
  if (!has_header(headers, names.date)) headers.emplace_back(names.date, *time);
  if (in.policy.payload_hash == PayloadHash::header && !has_header(headers, names.content_sha))
    headers.emplace_back(names.content_sha, payload_hash(in));
  CanonicalHeaders canonical = canonical_headers(headers, in.omit_session_token ? to_lower(names.token) : "");
  SignOutput out;
  compute_signature(in, *time, canonical_path(in, url.path), canonical_query(split_query(url.query)), canonical, out);
  out.authorization = in.dialect->algorithm + " Credential=" + in.credentials.access_key_id + "/" +
                      credential_scope(in, *time) + ", SignedHeaders=" + canonical.signed_names +
                      ", Signature=" + out.signature;
  headers.emplace_back("Authorization", out.authorization);
  out.headers = std::move(headers);
  out.url = url.origin() + url.path + (url.query.empty() ? "" : "?" + url.query);
  return out;
}

// True when `key` names one of the presigned parameters of dialect `d`.
bool is_presign_param(std::string_view key, const Dialect& d) {
  static const char* const suffixes[] = {"Algorithm", "Credential",     "Date",     "SignedHeaders",
                                         "Expires",   "Security-Token", "Signature"};
  for (const char* suffix : suffixes)
    if (key == d.query_prefix + suffix) return true;
  return false;
}

// The wire query without any presigned parameters of this dialect (pieces kept as
// they were), and the Date it carried: a received presigned URL is re-signed at its
// own time.
std::string strip_presign_params(std::string_view query, const Dialect& d, std::string& date) {
  std::string kept;
  for (size_t start = 0; start <= query.size();) {
    size_t end = std::min(query.find('&', start), query.size());
    std::string_view piece = query.substr(start, end - start);
    std::string_view key = piece.substr(0, piece.find('='));
    if (key == d.query_prefix + "Date" && key.size() < piece.size()) date = uri_decode(piece.substr(key.size() + 1));
    if (!piece.empty() && !is_presign_param(key, d)) kept.append(kept.empty() ? "" : "&").append(piece);
    start = end + 1;
  }
  return kept;
}

// The presigned parameters before Signature, encoded, in the suite's order.
Pairs presign_params(const SignInput& in, const std::string& time, const std::string& signed_names) {
  const std::string& p = in.dialect->query_prefix;
  Pairs params = {{p + "Algorithm", in.dialect->algorithm},
                  {p + "Credential", in.credentials.access_key_id + "/" + credential_scope(in, time)},
                  {p + "Date", time},
                  {p + "SignedHeaders", signed_names},
                  {p + "Expires", std::to_string(*in.presign_expires)}};
  if (!in.credentials.session_token.empty()) params.emplace_back(p + "Security-Token", in.credentials.session_token);
  for (auto& [key, value] : params) value = uri_encode(value);
  return params;
}

// Signs into the query string: the URL carries credential, date and signature.
Outcome<SignOutput> sign_query_variant(const SignInput& in, const Url& url, Headers headers) {
  std::string received_date;
  std::string query = strip_presign_params(url.query, *in.dialect, received_date);
  Outcome<std::string> time = pick_time(received_date, in);
  if (!time) return time.error();
  CanonicalHeaders canonical = canonical_headers(headers, "");
  Pairs params = presign_params(in, *time, canonical.signed_names);
  Pairs signed_pairs = split_query(query);
  for (const auto& param : params)
    if (!in.omit_session_token || param.first != in.dialect->query_prefix + "Security-Token")
      signed_pairs.push_back(param);
  SignOutput out;
  compute_signature(in, *time, canonical_path(in, url.path), canonical_query(signed_pairs), canonical, out);
  params.emplace_back(in.dialect->query_prefix + "Signature", out.signature);
  for (const auto& [key, value] : params) query += (query.empty() ? "" : "&") + key + "=" + value;
  out.url = url.origin() + url.path + "?" + query;
  out.headers = std::move(headers);
  return out;
}

}  // namespace

// The platform's dialect: the spec's default.
const Dialect& Dialect::ext() {
  static const Dialect d{"ext", "EXT4-HMAC-SHA256", "EXT4", "ext4_request", "X-Ext-", "X-Ext-"};
  return d;
}

// AWS's own names, for S3-compatible servers and independent signers.
const Dialect& Dialect::aws() {
  static const Dialect d{"aws", "AWS4-HMAC-SHA256", "AWS4", "aws4_request", "X-Amz-", "X-Amz-"};
  return d;
}

// The dialect a profile names, or nullptr.
const Dialect* Dialect::find(const std::string& name) {
  if (name == ext().name) return &ext();
  if (name == aws().name) return &aws();
  return nullptr;
}

// The signing key of that day and scope (signing_mac's, shared with requests) over
// the policy's base64 text.
std::string policy_signature(const Dialect& d, const Credentials& credentials, const std::string& day,
                             const std::string& region, const std::string& service, std::string_view policy) {
  SignInput in;
  in.dialect = &d;
  in.credentials = credentials;
  in.region = region;
  in.service = service;
  return hex(signing_mac(in, day + "T000000Z").sign(policy));
}

std::string policy_signature_v2(const Credentials& credentials, std::string_view policy) {
  return base64(hmac_sha1(credentials.secret_access_key, policy));
}

// Parses the URL, then signs it.
Outcome<SignOutput> sign(const SignInput& in) {
  Outcome<Url> url = parse_url(in.url);
  if (!url) return url.error();
  return sign(in, *url);
}

// Signs into the header or, with presign_expires, the query.
Outcome<SignOutput> sign(const SignInput& in, const Url& url) {
  if (in.dialect == nullptr) {  // a programming slip, not worth a crash: use the default
    SignInput with_default = in;
    with_default.dialect = &Dialect::ext();
    return sign(with_default, url);
  }
  Headers headers = base_headers(in, url);
  if (in.presign_expires) return sign_query_variant(in, url, std::move(headers));
  return sign_header_variant(in, url, std::move(headers));
}

// ---------------------------------------------------------------- streaming bodies

namespace {

// The HMAC, under the scope's signing key, of "<kind>\n<time>\n<scope>\n<previous>\n<hash>".
std::string sign_in_chain(const ChunkScope& scope, const std::string& kind, const std::string& previous,
                          const std::string& hash) {
  SignInput in;
  in.region = scope.region;
  in.service = scope.service;
  in.credentials = scope.credentials;
  in.dialect = scope.dialect;
  std::string to_sign = scope.dialect->algorithm + "-" + kind + "\n" + scope.time + "\n" +
                        credential_scope(in, scope.time) + "\n" + previous + "\n" + hash;
  return hex(signing_mac(in, scope.time).sign(to_sign));
}

}  // namespace

std::string streaming_payload(const Dialect& dialect, bool with_trailer) {
  return "STREAMING-" + dialect.algorithm + "-PAYLOAD" + (with_trailer ? "-TRAILER" : "");
}

std::string chunk_signature(const ChunkScope& scope, const std::string& previous, std::string_view data) {
  return chunk_signature_of_hash(scope, previous, sha256_hex(data));
}

std::string chunk_signature_of_hash(const ChunkScope& scope, const std::string& previous,
                                    const std::string& data_sha256) {
  static const std::string empty_hash = sha256_hex("");
  return sign_in_chain(scope, "PAYLOAD", previous, empty_hash + "\n" + data_sha256);
}

std::string trailer_signature(const ChunkScope& scope, const std::string& previous, const Headers& trailers) {
  std::string canonical;
  for (const auto& [name, value] : trailers) canonical += to_lower(name) + ":" + canonical_value(value) + "\n";
  return sign_in_chain(scope, "TRAILER", previous, sha256_hex(canonical));
}

// ---------------------------------------------------------------- verification

namespace {

// The parts of "ALG Credential=AK/date/region/service/term, SignedHeaders=a;b, Signature=hex",
// or of the same parameters of a presigned URL (then also its time, lifetime and token).
struct Authorization {
  const Dialect* dialect = nullptr;
  std::string access_key, date, region, service, terminator, signed_headers, signature;
  std::optional<long> expires;  // presigned only
  std::string stamp, token;     // presigned only: <prefix>Date, <prefix>Security-Token
};

// The value after `key` in an Authorization header, up to the next ',' or ' '.
std::string field_after(const std::string& s, const std::string& key) {
  size_t at = s.find(key);
  if (at == std::string::npos) return {};
  at += key.size();
  size_t end = s.find_first_of(", ", at);
  return s.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// `text` cut at every `separator`.
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// Fills the scope of `out` from a Credential value; false when it is not one.
bool parse_credential(const std::string& credential, Authorization& out) {
  std::vector<std::string> scope = split(credential, '/');
  if (!out.dialect || scope.size() != 5 || out.signed_headers.empty() || out.signature.empty()) return false;
  out.access_key = scope[0], out.date = scope[1], out.region = scope[2], out.service = scope[3];
  out.terminator = scope[4];
  return true;
}

// Reads an Authorization header; false when it is not one of either dialect.
bool parse_authorization(const std::string& value, Authorization& out) {
  std::string algorithm = value.substr(0, value.find(' '));
  for (const Dialect* d : {&Dialect::ext(), &Dialect::aws()})
    if (d->algorithm == algorithm) out.dialect = d;
  out.signed_headers = field_after(value, "SignedHeaders=");
  out.signature = field_after(value, "Signature=");
  return parse_credential(field_after(value, "Credential="), out);
}

// The dialect whose <prefix>Algorithm parameter the query carries, or nullptr: the
// request is presigned.
const Dialect* presigned_dialect(const Pairs& query) {
  for (const Dialect* d : {&Dialect::ext(), &Dialect::aws()})
    for (const auto& [key, value] : query)
      if (key == d->query_prefix + "Algorithm") return d;
  return nullptr;
}

// Reads the presigned parameters of dialect `d` from the query; false when one is
// missing or unreadable (the algorithm must be the dialect's, Expires a number).
bool parse_presigned(const Pairs& query, const Dialect& d, Authorization& out) {
  std::map<std::string, std::string> params;
  for (const auto& [key, value] : query)
    if (is_presign_param(key, d)) params[key.substr(d.query_prefix.size())] = uri_decode(value);
  if (params["Algorithm"] != d.algorithm) return false;
  const std::string& expires = params["Expires"];
  if (expires.empty() || expires.size() > 9 || expires.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out.dialect = &d;
  out.expires = std::stol(expires);
  out.stamp = params["Date"];
  out.token = params["Security-Token"];
  out.signed_headers = params["SignedHeaders"];
  out.signature = params["Signature"];
  return parse_credential(params["Credential"], out);
}

// Seconds from `stamp` to `now` (yyyymmddThhmmssZ; `now` empty: the clock's), or
// nullopt when either is unreadable.
std::optional<long> seconds_since(const std::string& stamp, const std::string& now) {
  auto at = parse_date(stamp, DateForm::sigv4);
  auto reference = now.empty() ? Outcome<std::int64_t>(std::time(nullptr)) : parse_date(now, DateForm::sigv4);
  if (!at || !reference) return std::nullopt;
  return static_cast<long>(*reference - *at);
}

// The received headers the signature covers, in the order received.
Headers headers_named(const Headers& received, const std::string& names) {
  Headers out;
  for (const std::string& name : split(names, ';'))
    for (const Header& h : received)
      if (iequals(h.first, name)) out.emplace_back(name, h.second);
  return out;
}

SignatureRefusal refusal(int status, std::string code, std::string message) {
  return SignatureRefusal{status, std::move(code), std::move(message), {}};
}

// A header the check reads (and may quote in its refusal) that is not text.
SignatureRefusal not_text(const std::string& header) {
  SignatureRefusal r = refusal(400, "InvalidArgument", "the " + header + " header is not valid UTF-8 text");
  r.details.emplace_back("ArgumentName", header);
  return r;
}

// The credential scope must name the server's region and service, as a real server
// checks; how a wrong one is refused is the API's (SigningPolicy::wrong_scope).
std::optional<SignatureRefusal> check_scope(const VerifyInput& in, const Authorization& auth) {
  bool malformed = in.policy.wrong_scope == WrongScope::malformed;
  const std::string prefix = "The authorization header is malformed; ";
  if (auth.region != in.region && malformed) {
    SignatureRefusal r = refusal(400, "AuthorizationHeaderMalformed",
                                 prefix + "the region '" + auth.region + "' is wrong; expecting '" + in.region + "'");
    r.details.emplace_back("Region", in.region);
    return r;
  }
  if (auth.region != in.region)
    return refusal(403, "SignatureDoesNotMatch",
                   "Credential should be scoped to a valid region, not '" + auth.region + "' (this endpoint is in '" +
                       in.region + "')");
  if (auth.service != in.service && malformed)
    return refusal(400, "AuthorizationHeaderMalformed",
                   prefix + "incorrect service '" + auth.service + "'. This endpoint belongs to '" + in.service + "'.");
  if (auth.service != in.service)
    return refusal(403, "SignatureDoesNotMatch",
                   "Credential should be scoped to correct service: '" + in.service + "' (got '" + auth.service + "')");
  return std::nullopt;
}

// The SHA-256 of the body as received: the caller's when it hashed the body already
// (the emulator hashes it once with its MD5), else computed here.
std::string received_body_sha256(const VerifyInput& in) {
  return in.body_sha256.empty() ? body_sha256_hex(in.body) : in.body_sha256;
}

// Re-signs what arrived, at its own time and with the key's secret, and compares: in
// the header variant, or (auth.expires set) as the presigned URL it came as.
std::optional<SignatureRefusal> compare_signature(const VerifyInput& in, const Outcome<Url>& url,
                                                  const Authorization& auth, const Credentials& credentials,
                                                  const std::string& stamp) {
  SignInput again;
  again.method = in.method;
  again.headers = headers_named(in.headers, auth.signed_headers);
  again.region = auth.region;
  again.service = auth.service;
  again.credentials = credentials;
  again.credentials.session_token.clear();  // a token sent was signed as a header
  again.time = stamp;
  again.dialect = auth.dialect;
  again.policy = in.policy;
  again.policy.payload_hash = PayloadHash::omitted;  // the header, when sent, was signed as received
  // ... and so was the payload line: the body's hash, UNSIGNED-PAYLOAD or a STREAMING-* value.
  std::string declared = header_value(in.headers, to_lower(auth.dialect->header_prefix) + "content-sha256");
  bool header_signed = in.policy.payload_hash == PayloadHash::header && !declared.empty();
  if (auth.expires) {  // a presigned URL: its token is a parameter, its body is not signed
    again.presign_expires = auth.expires;
    again.credentials.session_token = auth.token;
    again.payload_sha256 = kUnsignedPayload;
  } else {
    again.payload_sha256 = header_signed ? declared : received_body_sha256(in);  // the body itself is never copied
  }
  auto expected = url ? sign(again, *url) : Outcome<SignOutput>(url.error());  // the URL parsed once, by the caller
  if (expected.ok() && constant_time_equal(expected->signature, auth.signature)) return std::nullopt;
  return refusal(403, "SignatureDoesNotMatch",
                 "the request signature does not match the one computed with the secret key of '" + auth.access_key +
                     "'; check the secret key and the signing dialect");
}

// Reads the signature of a request: its Authorization header or, when the query
// carries a dialect's <prefix>Algorithm, its presigned parameters.
std::optional<SignatureRefusal> read_signature(const VerifyInput& in, const Outcome<Url>& url, Authorization& auth) {
  Pairs query = url ? split_query(url->query) : Pairs{};
  if (const Dialect* d = presigned_dialect(query)) {
    if (parse_presigned(query, *d, auth)) return std::nullopt;
    return refusal(400, "AuthorizationQueryParametersError",
                   "the presigned URL's " + d->query_prefix + "* parameters are incomplete or malformed");
  }
  std::string value = header_value(in.headers, "Authorization");
  if (value.empty())
    return refusal(403, "MissingAuthenticationToken", "the request is not signed (no Authorization header)");
  if (utf8_length(value) < 0) return not_text("Authorization");
  if (!parse_authorization(value, auth))
    return refusal(403, "IncompleteSignature",
                   "the Authorization header is malformed: " + value.substr(0, value.find(' ')));
  return std::nullopt;
}

// A presigned URL is good from its Date (within the allowed skew) for Expires seconds,
// at most a week, as S3 checks; the refusals are S3's.
std::optional<SignatureRefusal> check_expiry(const VerifyInput& in, const Authorization& auth) {
  const std::string name = auth.dialect->query_prefix + "Expires";
  if (*auth.expires < 1 || *auth.expires > kMaxPresignSeconds)
    return refusal(400, "AuthorizationQueryParametersError",
                   name + " must be between 1 and a week (in seconds) that is; " + std::to_string(kMaxPresignSeconds));
  std::optional<long> age = seconds_since(auth.stamp, in.now);
  if (!age)
    return refusal(400, "AuthorizationQueryParametersError",
                   "the presigned URL's Date '" + auth.stamp + "' is unreadable");
  if (*age < -kMaxSignatureSkewSeconds) return refusal(403, "AccessDenied", "Request is not valid yet");
  if (*age > *auth.expires) return refusal(403, "AccessDenied", "Request has expired");
  return std::nullopt;
}

// The Date header of an Authorization-signed request must be within 15 minutes of
// the server's time; its stamp, or the refusal.
std::optional<SignatureRefusal> check_header_time(const VerifyInput& in, const Authorization& auth,
                                                  std::string& stamp) {
  std::string date_header = to_lower(auth.dialect->header_prefix) + "date";
  stamp = header_value(in.headers, date_header);
  if (utf8_length(stamp) < 0) return not_text(date_header);
  std::optional<long> age = seconds_since(stamp, in.now);
  if (!age || std::labs(*age) > kMaxSignatureSkewSeconds)
    return refusal(403, "RequestTimeTooSkewed",
                   "the request time '" + stamp + "' is more than 15 minutes from the server's");
  return std::nullopt;
}

}  // namespace

void restore_empty_signed_headers(Headers& headers, const std::string& query) {
  Authorization auth;
  Pairs pairs = split_query(query);
  const Dialect* presigned = presigned_dialect(pairs);
  bool read = presigned ? parse_presigned(pairs, *presigned, auth)
                        : parse_authorization(header_value(headers, "Authorization"), auth);
  if (!read) return;
  for (const std::string& name : split(to_lower(auth.signed_headers), ';'))
    if (!name.empty() && !has_header(headers, name)) headers.emplace_back(name, "");
}

namespace {

// Every header of either dialect's prefix (x-amz-*, x-ext-*: the emulator reads both)
// must be among those signed, as S3 requires of x-amz-*: an unsigned x-amz-copy-source
// would turn a presigned PUT into a copy. Other headers are left as S3 leaves them
// (docs/design.md). The refusal is S3's, naming the headers (at most 1 KiB of names).
std::optional<SignatureRefusal> check_unsigned_headers(const VerifyInput& in, const Authorization& auth) {
  std::vector<std::string> signed_names = split(to_lower(auth.signed_headers), ';');
  std::string unsigned_names;
  for (const Header& h : in.headers) {
    std::string_view name = h.first;  // compared as ASCII without case, lowered only when named
    if (!iequals(name.substr(0, 6), "x-amz-") && !iequals(name.substr(0, 6), "x-ext-")) continue;
    auto is_name = [&](const std::string& s) { return iequals(s, name); };
    if (std::any_of(signed_names.begin(), signed_names.end(), is_name)) continue;
    if (unsigned_names.size() < 1024)
      unsigned_names += (unsigned_names.empty() ? "" : ",") + to_lower(name.substr(0, 200));
  }
  if (unsigned_names.empty()) return std::nullopt;
  SignatureRefusal r = refusal(403, "AccessDenied", "There were headers present in the request which were not signed");
  r.details.emplace_back("HeadersNotSigned", unsigned_names);
  return r;
}

// How a request's body travels, from its <prefix>content-sha256 value.
enum class Payload { plain, signed_chunks, signed_chunks_trailer, unsigned_chunks_trailer };

Payload payload_kind(const std::string& declared, const Dialect& d) {
  if (declared.rfind("STREAMING-", 0) != 0) return Payload::plain;  // a hash or UNSIGNED-PAYLOAD: no names built
  if (declared == streaming_payload(d, false)) return Payload::signed_chunks;
  if (declared == streaming_payload(d, true)) return Payload::signed_chunks_trailer;
  if (declared == kStreamingUnsignedTrailer) return Payload::unsigned_chunks_trailer;
  return Payload::plain;
}

// The <prefix>decoded-content-length header must be given and be the bytes' length.
std::optional<SignatureRefusal> check_decoded_length(const std::optional<std::string>& declared, const Dialect& d,
                                                     std::uint64_t decoded) {
  std::string name = to_lower(d.header_prefix) + "decoded-content-length";
  if (!declared) return refusal(411, "MissingContentLength", "give the " + name + " header of an aws-chunked body");
  if (*declared == std::to_string(decoded)) return std::nullopt;
  SignatureRefusal r =
      refusal(400, "IncompleteBody", "You did not provide the number of bytes specified by the " + name + " header");
  r.details.emplace_back("NumberBytesExpected", declared->substr(0, 20));
  r.details.emplace_back("NumberBytesProvided", std::to_string(decoded));
  return r;
}

// The trailers must be those the <prefix>trailer header (`declared`) named (a stream
// without trailers has none); a signed stream's trailer signature is checked and taken out.
std::optional<SignatureRefusal> check_trailers(const std::string& declared_names, const ChunkScope& scope,
                                               bool signed_trailer, const std::string& last, Headers& trailers) {
  const std::string signature_name = to_lower(scope.dialect->header_prefix) + "trailer-signature";
  std::string signature;
  Headers named;
  for (const Header& t : trailers) {
    if (t.first == signature_name) signature = t.second;
    else named.push_back(t);
  }
  if (signed_trailer && !constant_time_equal(trailer_signature(scope, last, named), signature))
    return refusal(403, "SignatureDoesNotMatch",
                   "the " + signature_name +
                       " of the aws-chunked body does not match "
                       "the one computed with the secret key of '" +
                       scope.credentials.access_key_id + "'");
  if (!signed_trailer && !signature.empty())
    return refusal(400, "MalformedTrailerError", "a " + signature_name + " in a stream whose trailers are not signed");
  std::string declared = to_lower(declared_names);
  std::vector<std::string> expected;
  for (const std::string& name : split(declared, ','))
    if (!canonical_value(name).empty()) expected.push_back(canonical_value(name));
  bool same = expected.size() == named.size();
  for (size_t i = 0; same && i < named.size(); ++i) same = named[i].first == expected[i];
  if (!same)
    return refusal(400, "MalformedTrailerError",
                   "the trailing headers received are not those the " + to_lower(scope.dialect->header_prefix) +
                       "trailer header names ('" + declared.substr(0, 200) + "')");
  trailers = std::move(named);
  return std::nullopt;
}

// What the headers of a streaming body of `kind` say it must be.
StreamCheck::Expected expected_stream(const VerifyInput& in, const Dialect& d, Payload kind) {
  StreamCheck::Expected e;
  e.signed_chunks = kind != Payload::unsigned_chunks_trailer;
  e.signed_trailer = kind == Payload::signed_chunks_trailer;
  std::string prefix = to_lower(d.header_prefix);
  if (has_header(in.headers, prefix + "decoded-content-length"))
    e.decoded_length = header_value(in.headers, prefix + "decoded-content-length");
  e.trailer_names = header_value(in.headers, prefix + "trailer");
  return e;
}

}  // namespace

bool announces_stream(const Headers& headers) {
  for (const Dialect* d : {&Dialect::aws(), &Dialect::ext()})
    if (header_value(headers, to_lower(d->header_prefix) + "content-sha256").rfind("STREAMING-", 0) == 0) return true;
  return false;
}

StreamCheck::StreamCheck(ChunkScope scope, Expected expected, std::string seed)
    : scope_(std::move(scope)), expected_(std::move(expected)), last_(std::move(seed)) {}

bool StreamCheck::feed(std::string_view received, const Output& out) {
  if (refusal_) return false;
  out_ = &out;
  Outcome<bool> read = reader_.feed(received, *this);
  out_ = nullptr;
  if (!read.ok()) refusal_ = refusal(400, read.error().code, read.error().message);
  return read.ok() && *read && !refusal_;
}

// A chunk begins: signed as the stream says (each chunk signed, or none), its hash begun.
bool StreamCheck::chunk_begins(const AwsChunk& chunk, std::uint64_t) {
  std::string number = std::to_string(++number_);
  if (chunk.has_signature != expected_.signed_chunks) {
    refusal_ = refusal(400, "InvalidRequest",
                       "the aws-chunked body is malformed: chunk " + number +
                           (expected_.signed_chunks ? " has no chunk-signature" : " is signed in an unsigned stream"));
    return false;
  }
  chunk_signature_ = chunk.signature;
  return true;
}

bool StreamCheck::chunk_bytes(std::string_view bytes) {
  if (expected_.signed_chunks) chunk_hash_.update(bytes);
  decoded_ += bytes.size();
  return (*out_)(bytes);
}

// A chunk has ended: signed over the one before it, the first over the seed (the
// request's signature); the last chunk's signature is the trailer's seed.
bool StreamCheck::chunk_ends() {
  if (!expected_.signed_chunks) return true;
  std::string expected = chunk_signature_of_hash(scope_, last_, chunk_hash_.hex_digest());
  if (!constant_time_equal(expected, chunk_signature_)) {
    refusal_ = refusal(403, "SignatureDoesNotMatch",
                       "the signature of chunk " + std::to_string(number_) +
                           " of the aws-chunked body does not match "
                           "the one computed with the secret key of '" +
                           scope_.credentials.access_key_id + "'");
    return false;
  }
  last_ = expected;
  return true;
}

std::optional<SignatureRefusal> StreamCheck::finish() {
  if (refusal_) return refusal_;
  Outcome<Headers> trailers = reader_.finish();
  if (!trailers.ok()) return refusal_ = refusal(400, trailers.error().code, trailers.error().message);
  trailers_ = std::move(*trailers);
  if (auto bad = check_decoded_length(expected_.decoded_length, *scope_.dialect, decoded_)) return refusal_ = bad;
  if (auto bad = check_trailers(expected_.trailer_names, scope_, expected_.signed_trailer, last_, trailers_))
    return refusal_ = bad;
  return std::nullopt;
}

namespace {

// A streaming body held whole: checked as one piece, its bytes joined.
std::optional<SignatureRefusal> check_stream(StreamCheck& check, const std::string& body, StreamedBody* streamed) {
  std::string bytes;
  check.feed(body, [&bytes](std::string_view piece) { return bytes.append(piece), true; });
  if (auto bad = check.finish()) return bad;
  if (streamed) *streamed = StreamedBody{true, std::move(bytes), std::move(check.trailers())};
  return std::nullopt;
}

}  // namespace

std::optional<SignatureRefusal> verify_signature(const VerifyInput& in, StreamedBody* streamed,
                                                 std::unique_ptr<StreamCheck>* later) {
  Authorization auth;
  Outcome<Url> url = parse_url(in.url);
  if (auto unreadable = read_signature(in, url, auth)) return unreadable;
  if (in.dialect && auth.dialect != in.dialect)
    return refusal(
        403, "IncompleteSignature",
        "this server accepts " + in.dialect->name + " signatures only (got " + auth.dialect->algorithm + ")");
  if (auto wrong = check_scope(in, auth)) return wrong;
  const Credentials* credentials = in.credentials ? in.credentials(auth.access_key) : nullptr;
  if (!credentials) return refusal(403, "InvalidAccessKeyId", "unknown access key '" + auth.access_key + "'");
  std::string stamp = auth.stamp;
  if (auto late = auth.expires ? check_expiry(in, auth) : check_header_time(in, auth, stamp)) return late;
  std::string hash_header = to_lower(auth.dialect->header_prefix) + "content-sha256";
  std::string declared = header_value(in.headers, hash_header);
  bool hashed = !auth.expires && in.policy.payload_hash == PayloadHash::header;
  Payload kind = hashed ? payload_kind(declared, *auth.dialect) : Payload::plain;
  if (hashed && kind == Payload::plain && declared != kUnsignedPayload && declared != received_body_sha256(in))
    return refusal(400, "ContentSHA256Mismatch",
                   "the " + hash_header + " header does not match the SHA-256 of the body");
  if (auto mismatch = compare_signature(in, url, auth, *credentials, stamp)) return mismatch;
  if (auto exposed = check_unsigned_headers(in, auth)) return exposed;
  if (kind == Payload::plain) return std::nullopt;
  auto check = std::make_unique<StreamCheck>(ChunkScope{auth.dialect, *credentials, auth.region, auth.service, stamp},
                                             expected_stream(in, *auth.dialect, kind), auth.signature);
  if (in.body_follows && later) return *later = std::move(check), std::nullopt;
  return check_stream(*check, in.body, streamed);
}

// Now in UTC as yyyymmddThhmmssZ.
std::string amz_time_now() { return format_date(std::time(nullptr), DateForm::sigv4); }

}  // namespace cloud
