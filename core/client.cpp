// The one pipeline every operation runs through. Retries re-sign each attempt (the
// date moves on) and follow docs/design.md: 5xx (an <Error> in a 200 answer included),
// throttling and connection failures are repeated with jittered exponential back-off,
// InvalidPart after the fixed delay the spec asks for; but a non-idempotent
// request (the restores) is resent only when it cannot have reached the server.
#include "core/client.h"

#include <cctype>
#include <random>
#include <thread>

#include "core/body.h"
#include "core/limits.h"
#include "core/protocol.h"
#include "core/redact.h"
#include "core/uri.h"
#include "core/validate.h"

namespace cloud {

namespace {

std::string to_upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool is_success(long status) { return status >= 200 && status < 300; }

bool is_throttling(const std::string& code) {
  return code == "Throttling" || code == "ThrottlingException" || code == "SlowDown" ||
         code == "TooManyRequests" || code == "RequestLimitExceeded";
}

// A 200 answer to the storage API that is an <Error> document, or that is empty or
// cut short where a result document was due, is a failure (S3's known trap).
bool is_error_in_200(const Api& api, const Operation& op, const HttpResponse& r) {
  if (api.protocol != "xml" || op.output_root.empty()) return false;
  return r.body.find("<Error>") != std::string::npos || r.body.find("<Error ") != std::string::npos;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What to do with an object too large to hold at once (GetObject): read it in pieces.
std::string pieces_hint(const Operation& op, std::uint64_t limit) {
  if (op.output_payload.empty() || !op.input->find_member("Range")) return "";
  return "; read the object in pieces with Range, e.g. Range = \"bytes=0-" + std::to_string(limit - 1) +
         "\" for its first " + size_text(limit) + ", then the next piece";
}

std::string encode_query_map(const std::map<std::string, std::string>& query) {
  std::string q;
  for (const auto& [k, v] : query) q += (q.empty() ? "" : "&") + uri_encode(k) + "=" + uri_encode(v);
  return q;
}

}  // namespace

Client::Client(ClientConfig config, const Model& model)
    : config_(std::move(config)), model_(model), transport_(config_.transport),
      sleep_([](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }) {
  remember_secret(config_.credentials.secret_access_key);  // redacted from all output from now on
  remember_secret(config_.credentials.session_token);
}

// What an answer to `request` might echo that must never be shown: the secret key,
// the session token and the request's own signatures.
std::vector<std::string> Client::secrets_of(const HttpRequest& request) const {
  std::vector<std::string> secrets = request_signatures(request);
  secrets.push_back(config_.credentials.secret_access_key);
  secrets.push_back(config_.credentials.session_token);
  return secrets;
}

std::string Client::endpoint_of(const std::string& api) const {
  auto it = config_.endpoints.find(api);
  return it == config_.endpoints.end() ? "" : it->second;
}

std::string Client::service_of(const Api& api) const {
  auto it = config_.services.find(api.name);
  return it == config_.services.end() ? api.service : it->second;
}

// URL, signature and the headers that go with it, for one attempt.
Outcome<HttpRequest> Client::build_request(const Api& api, const std::string& method, const std::string& path,
                                           const std::string& query, Headers headers, std::string body,
                                           const BodyFiles& files) {
  std::string base = endpoint_of(api.name);
  if (base.empty())
    return make_error(ErrorKind::config, "NoEndpoint",
                      "no endpoint configured for the " + api.name + " API (profile '" + config_.profile +
                          "'): set endpoint." + api.name + " in the profile, CLOUDLUA_ENDPOINT_" + to_upper(api.name) +
                          " or --endpoint " + api.name +
                          "=URL (the embedded emulator serves only when no credentials, profile or endpoint are configured)");
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (config_.credentials.access_key_id.empty() || config_.credentials.secret_access_key.empty())
    return make_error(ErrorKind::config, "NoCredentials",
                      "no credentials for profile '" + config_.profile +
                          "': set access_key_id and secret_access_key (or credentials_file) in the profile, "
                          "CLOUDLUA_ACCESS_KEY_ID and CLOUDLUA_SECRET_ACCESS_KEY, or --access-key and --secret-key");
  SignInput in;
  in.method = method;
  in.url = base + path + (query.empty() ? "" : "?" + query);
  in.headers = std::move(headers);
  in.body = std::move(body);
  in.payload_sha256 = files.upload_sha256;
  in.region = config_.region;
  in.service = service_of(api);
  in.credentials = config_.credentials;
  in.dialect = config_.dialect;
  bool storage = api.protocol == "xml";  // S3-style: path signed as sent, payload hash header
  in.normalize = !storage;
  in.double_encode = !storage;
  in.sign_body = storage;
  auto signed_request = sign(in);
  if (!signed_request.ok()) return signed_request.error();
  return HttpRequest{method, signed_request->url, std::move(signed_request->headers), std::move(in.body), files};
}

bool Client::should_retry(const Operation* op, const Outcome<HttpResponse>& outcome, const Api& api, int attempt,
                          double& delay) const {
  const RetryPolicy& p = config_.retry;
  if (attempt >= p.max_attempts) return false;
  bool idempotent = op ? op->idempotent : true;
  bool may_resend = idempotent || p.retry_non_idempotent;
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  static thread_local std::mt19937 rng{std::random_device{}()};
  delay = jitter(rng) * std::min(p.max_delay, p.base_delay * double(1 << std::min(attempt - 1, 16)));
  if (!outcome.ok()) {
    const Error& e = outcome.error();
    if (e.code == "Interrupted" || e.code == "ResponseTooLarge" || e.kind == ErrorKind::validation) return false;
    return e.code == "ConnectionFailed" || may_resend;  // a refused connection never arrived
  }
  const HttpResponse& r = outcome.value();
  bool error_in_200 = op && is_success(r.status) && is_error_in_200(api, *op, r);
  if (is_success(r.status) && !error_in_200) return false;
  std::string code = parse_error(api, r).code;
  if (code == "InvalidPart") {  // the spec: wait a few seconds, then repeat
    delay = p.invalid_part_delay;
    return may_resend;
  }
  // An <Error> in a 200 answer is the platform failing after it took the request:
  // a 5xx in disguise, retried as one (botocore does the same).
  return (error_in_200 || r.status >= 500 || r.status == 429 || is_throttling(code)) && may_resend;
}

Outcome<HttpResponse> Client::send_with_retries(const Operation* op, const Api& api, const std::string& method,
                                                const std::string& path, const std::string& query,
                                                const Headers& headers, const std::string& body,
                                                const BodyFiles& files, Meta& meta, std::vector<std::string>& secrets) {
  for (int attempt = 1;; ++attempt) {
    auto request = build_request(api, method, path, query, headers, body, files);
    if (!request.ok()) return request.error();
    meta.attempts = attempt;
    secrets = secrets_of(*request);
    auto sent = std::chrono::steady_clock::now();
    Outcome<HttpResponse> outcome = transport_.perform(*request);
    if (!outcome.ok()) redact_error(outcome.error(), secrets);
    if (config_.debug) {
      ExchangeInfo info{op && !op->name.empty() ? op->name : "request", attempt, seconds_since(sent), secrets};
      config_.debug(describe_exchange(*request, outcome, info));
    }
    double delay = 0;
    if (!should_retry(op, outcome, api, attempt, delay)) return outcome;
    sleep_(delay);
  }
}

Outcome<CallResult> Client::call(const std::string& name, const json& args) {
  auto start = std::chrono::steady_clock::now();
  const Operation* op = model_.find(name);
  if (!op) return make_error(ErrorKind::validation, "UnknownOperation", "no operation named '" + name + "'");
  const Api& api = *model_.api(op->api);
  auto input = validate_input(*op, args);
  if (!input.ok()) return input.error();
  WireRequest w = serialize_request(api, *op, *input);
  if (w.files.upload) {  // a payload sent from a file: hashed here, read once, then read again as it is sent
    auto hash = sha256_hex_of(*w.files.upload);
    if (!hash.ok()) {
      hash.error().operation = op->name;
      return hash.error();
    }
    w.files.upload_sha256 = std::move(hash.value());
  }
  CallResult out;
  std::vector<std::string> secrets;
  auto response =
      send_with_retries(op, api, w.method, w.path, w.query, w.headers, w.body, w.files, out.meta, secrets);
  out.meta.elapsed = seconds_since(start);
  if (!response.ok()) {
    response.error().operation = op->name;
    response.error().attempts = out.meta.attempts;
    if (response.error().code == "ResponseTooLarge")
      response.error().message += pieces_hint(*op, config_.transport.max_response_bytes);
    return response.error();
  }
  HttpResponse& r = response.value();
  out.meta.status = r.status;
  out.meta.headers = r.headers;
  out.meta.request_id = request_id_of(r.headers);
  Outcome<json> result = is_success(r.status) && !is_error_in_200(api, *op, r) ? parse_result(api, *op, r)
                                                                                : Outcome<json>(parse_error(api, r));
  if (!result.ok()) {
    Error e = std::move(result.error());
    redact_error(e, secrets);  // an error body may echo the request: token, signature
    e.operation = op->name;
    e.status = r.status;
    e.attempts = out.meta.attempts;
    if (e.request_id.empty()) e.request_id = out.meta.request_id;
    return e;
  }
  out.result = std::move(result.value());
  return out;
}

Outcome<RawResult> Client::request(const RawRequest& raw) {
  auto start = std::chrono::steady_clock::now();
  const Api* api = model_.api(raw.api);
  if (!api)
    return make_error(ErrorKind::validation, "UnknownApi",
                      "api must be storage, devops, cluster or catalog (got '" + raw.api + "')");
  RawResult out;
  bool idempotent = raw.method != "POST" && raw.method != "PATCH";
  Operation pseudo;
  pseudo.idempotent = idempotent;
  std::vector<std::string> secrets;
  auto response = send_with_retries(&pseudo, *api, raw.method, raw.path, encode_query_map(raw.query), raw.headers,
                                    raw.body, BodyFiles{}, out.meta, secrets);
  out.meta.elapsed = seconds_since(start);
  if (!response.ok()) {
    response.error().attempts = out.meta.attempts;
    return response.error();
  }
  out.response = std::move(response.value());
  out.meta.status = out.response.status;
  out.meta.headers = out.response.headers;
  out.meta.request_id = request_id_of(out.response.headers);
  return out;
}

}  // namespace cloud
