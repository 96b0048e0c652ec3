// The one pipeline every operation runs through. Retries re-sign each attempt (the
// date moves on) and follow docs/design.md: 5xx (an <Error> in a 200 answer included),
// throttling and connection failures are repeated with jittered exponential back-off,
// InvalidPart after the fixed delay the spec asks for; but a non-idempotent
// request (the restores) is resent only when it cannot have reached the server.
#include "core/client.h"

#include <cctype>
#include <random>
#include <thread>

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

// The request an API call sends, built once: the endpoint's URL extended by the
// wire path and query. Fails (kind config) without an endpoint or credentials.
Outcome<Request> Client::prepare(const Api& api, const std::string& method, const std::string& path,
                                 const std::string& query) const {
  std::string base = endpoint_of(api.name);
  if (base.empty())
    return make_error(ErrorKind::config, "NoEndpoint",
                      "no endpoint configured for the " + api.name + " API (profile '" + config_.profile +
                          "'): set endpoint." + api.name + " in the profile, CLOUDLUA_ENDPOINT_" + to_upper(api.name) +
                          " or --endpoint " + api.name +
                          "=URL (the embedded emulator serves only when no credentials, profile or endpoint are configured)");
  if (config_.credentials.access_key_id.empty() || config_.credentials.secret_access_key.empty())
    return make_error(ErrorKind::config, "NoCredentials",
                      "no credentials for profile '" + config_.profile +
                          "': set access_key_id and secret_access_key (or credentials_file) in the profile, "
                          "CLOUDLUA_ACCESS_KEY_ID and CLOUDLUA_SECRET_ACCESS_KEY, or --access-key and --secret-key");
  Outcome<Url> url = parse_url(base);
  if (!url) return url.error();
  Request request;
  request.api = &api;
  request.label = "request";
  request.method = method;
  request.url = std::move(*url);
  while (!request.url.path.empty() && request.url.path.back() == '/') request.url.path.pop_back();
  request.url.path += path.empty() ? "/" : path;
  request.url.query = query;
  return request;
}

// Signs one attempt (the date moves on between attempts): the HttpRequest to send.
Outcome<HttpRequest> Client::sign_attempt(const Request& request) const {
  SignInput in;
  in.method = request.method;
  in.headers = request.headers;
  in.body = request.body;
  in.region = config_.region;
  in.service = service_of(*request.api);
  in.credentials = config_.credentials;
  in.dialect = config_.dialect;
  bool storage = request.api->protocol == "xml";  // S3-style: path signed as sent, payload hash header
  in.normalize = !storage;
  in.double_encode = !storage;
  in.sign_body = storage;
  auto signed_request = sign(in, request.url);
  if (!signed_request.ok()) return signed_request.error();
  return HttpRequest{request.method, signed_request->url, std::move(signed_request->headers), std::move(in.body)};
}

// The one verdict on an answer (or a failure to get one) after `attempt` attempts:
// its API error, parsed once, and whether and when to try again.
Verdict Client::judge(const Request& request, const Outcome<HttpResponse>& outcome, int attempt) const {
  Verdict v;
  bool error_in_200 = false;
  if (outcome.ok()) {
    const HttpResponse& r = outcome.value();
    error_in_200 = request.op && is_success(r.status) && is_error_in_200(*request.api, *request.op, r);
    if (is_success(r.status) && !error_in_200) return v;
    v.error = parse_error(*request.api, r);
  }
  const RetryPolicy& p = config_.retry;
  if (attempt >= p.max_attempts) return v;
  bool may_resend = request.idempotent || p.retry_non_idempotent;
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  static thread_local std::mt19937 rng{std::random_device{}()};
  v.delay = jitter(rng) * std::min(p.max_delay, p.base_delay * double(1 << std::min(attempt - 1, 16)));
  if (!outcome.ok()) {
    const Error& e = outcome.error();
    bool final = e.code == "Interrupted" || e.code == "ResponseTooLarge" || e.kind == ErrorKind::validation;
    v.retry = !final && (e.code == "ConnectionFailed" || may_resend);  // a refused connection never arrived
    return v;
  }
  if (v.error->code == "InvalidPart") {  // the spec: wait a few seconds, then repeat
    v.delay = p.invalid_part_delay;
    v.retry = may_resend;
    return v;
  }
  // An <Error> in a 200 answer is the platform failing after it took the request:
  // a 5xx in disguise, retried as one (botocore does the same).
  long status = outcome.value().status;
  v.retry = (error_in_200 || status >= 500 || status == 429 || is_throttling(v.error->code)) && may_resend;
  return v;
}

// Sends `request` until its verdict says stop: the last outcome, with the verdict on
// it, the attempts made and the secrets an answer may echo.
Outcome<HttpResponse> Client::send(const Request& request, Meta& meta, std::vector<std::string>& secrets,
                                   Verdict& verdict) {
  for (int attempt = 1;; ++attempt) {
    auto signed_request = sign_attempt(request);
    if (!signed_request.ok()) return signed_request.error();
    meta.attempts = attempt;
    secrets = secrets_of(*signed_request);
    auto sent = std::chrono::steady_clock::now();
    Outcome<HttpResponse> outcome = transport_.perform(*signed_request);
    if (!outcome.ok()) redact_error(outcome.error(), secrets);
    if (config_.debug) {
      ExchangeInfo info{request.label, attempt, seconds_since(sent), secrets};
      config_.debug(describe_exchange(*signed_request, outcome, info));
    }
    verdict = judge(request, outcome, attempt);
    if (!verdict.retry) return outcome;
    sleep_(verdict.delay);
  }
}

namespace {

// Fills in what an error of a call should say: its operation, status, attempts, request id.
void annotate(Error& e, const Request& request, const Meta& meta) {
  if (request.op) e.operation = request.op->name;
  if (meta.status) e.status = meta.status;
  e.attempts = meta.attempts;
  if (e.request_id.empty()) e.request_id = meta.request_id;
}

// Copies the status, headers and request id of an answer into `meta`.
void record_answer(Meta& meta, const HttpResponse& r) {
  meta.status = r.status;
  meta.headers = r.headers;
  meta.request_id = request_id_of(r.headers);
}

}  // namespace

Outcome<CallResult> Client::call(const std::string& name, const json& args) {
  auto start = std::chrono::steady_clock::now();
  const Operation* op = model_.find(name);
  if (!op) return make_error(ErrorKind::validation, "UnknownOperation", "no operation named '" + name + "'");
  const Api& api = *model_.api(op->api);
  auto input = validate_input(*op, args);
  if (!input.ok()) return input.error();
  WireRequest w = serialize_request(api, *op, *input);
  auto request = prepare(api, w.method, w.path, w.query);
  if (!request.ok()) return request.error();
  request->op = op;
  request->label = op->name;
  request->headers = std::move(w.headers);
  request->body = std::move(w.body);
  request->idempotent = op->idempotent;
  CallResult out;
  std::vector<std::string> secrets;
  Verdict verdict;
  auto response = send(*request, out.meta, secrets, verdict);
  out.meta.elapsed = seconds_since(start);
  if (!response.ok()) {
    annotate(response.error(), *request, out.meta);
    if (response.error().code == "ResponseTooLarge")
      response.error().message += pieces_hint(*op, config_.transport.max_response_bytes);
    return response.error();
  }
  record_answer(out.meta, *response);
  Outcome<json> result = verdict.error ? Outcome<json>(std::move(*verdict.error)) : parse_result(api, *op, *response);
  if (!result.ok()) {
    redact_error(result.error(), secrets);  // an error body may echo the request: token, signature
    annotate(result.error(), *request, out.meta);
    return result.error();
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
  auto request = prepare(*api, raw.method, raw.path, encode_query_map(raw.query));
  if (!request.ok()) return request.error();
  request->headers = raw.headers;
  request->body = raw.body;
  request->idempotent = raw.method != "POST" && raw.method != "PATCH";
  RawResult out;
  std::vector<std::string> secrets;
  Verdict verdict;
  auto response = send(*request, out.meta, secrets, verdict);
  out.meta.elapsed = seconds_since(start);
  if (!response.ok()) {
    annotate(response.error(), *request, out.meta);
    return response.error();
  }
  out.response = std::move(response.value());
  record_answer(out.meta, out.response);
  return out;
}

}  // namespace cloud
