// The one pipeline every operation runs through, as a state machine on the
// transport's loop: prepare (validate, serialise, build the Request once) -> attempt
// (sign, start the transfer) -> verdict on the answer -> (back-off timer -> attempt)
// -> finish (the result or the error, handed to the caller's callback). The blocking
// call() and request() start one and run the loop until it ends; many may be under
// way at once. Retries re-sign each attempt (the
// date moves on) and follow docs/design.md: 5xx (an <Error> in a 200 answer included),
// throttling and connection failures (not a host name that does not resolve) are repeated with jittered exponential back-off,
// InvalidPart after the fixed delay the spec asks for; but a non-idempotent
// request (the restores) is resent only when it cannot have reached the server.
#include "core/client/client.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <set>

#include "core/model/body.h"
#include "core/net/range_reader.h"
#include "core/client/discover.h"
#include "core/base/limits.h"
#include "core/model/protocol.h"
#include "core/net/redact.h"
#include "core/wire/uri.h"
#include "core/model/validate.h"

namespace cloud {

namespace {

std::string to_upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool is_success(long status) { return status >= 200 && status < 300; }

bool is_throttling(const std::string& code) {
  return code == "Throttling" || code == "ThrottlingException" || code == "SlowDown" || code == "TooManyRequests" ||
         code == "RequestLimitExceeded";
}

// A 200 answer that is an <Error> document where a result document was due is a
// failure, on the APIs whose protocol says so (S3's known trap).
bool is_error_in_200(const Api& api, const Operation& op, const HttpResponse& r) {
  if (!api.protocol->error_in_200 || op.output_root.empty()) return false;
  return r.body.find("<Error>") != std::string::npos || r.body.find("<Error ") != std::string::npos;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The request an error answer is to, as parse_error names it: the query left out
// of the URL (it may carry a token or a signature).
AnsweredRequest answered_request(const Request& request) {
  return {request.op, request.method, request.url.origin() + request.url.path, request.url.authority()};
}

// A failure of the transfer that trying again cannot mend: a config error (a call the
// cassette does not hold), interrupted, too large, refused before sending, a host name
// that does not resolve (a wrong endpoint), an answer that is not HTTP, a certificate
// that fails verification, a full disk.
bool is_final(const Error& e) {
  static const std::set<std::string> final_codes = {
      "Interrupted",
      "ResponseTooLarge",
      "UnknownHost",
      "OutOfMemory",
      "MalformedResponse",
      "ResponseHeaderTooLarge",  // the server speaks something else
      "TlsVerificationFailed",   // the certificate stays what it is
      "NoSpace",                 // the disk stays full
  };
  return e.kind == ErrorKind::validation || e.kind == ErrorKind::config || final_codes.count(e.code) > 0;
}

// The error of a call whose step ran out of memory (std::bad_alloc) or threw otherwise.
Error thrown_error() {
  return make_error(ErrorKind::transport, "OutOfMemory", "out of memory while handling the answer");
}

// What to do with an object too large to hold at once (GetObject): have it written
// to a file, which has no size limit (cloud.storage.download_file, of lua/transfer.lua,
// does that in parts), or read it in pieces.
std::string too_large_hint(const Operation& op, std::uint64_t limit) {
  if (op.output_payload.empty()) return "";
  std::string hint;
  if (!op.output_file.empty()) {
    hint += "; write it to a file instead, which has no size limit: " + op.snake_name + "{ ..., " + op.output_file +
            " = path }";
    if (op.api == "storage") hint += ", or cloud.storage.download_file{ Bucket = ..., Object = ..., file = path }";
  }
  if (op.input->find_member("Range"))
    hint += std::string(hint.empty() ? "; " : "; or ") +
            "read the object in pieces with Range, e.g. Range = \"bytes=0-" + std::to_string(limit - 1) +
            "\" for its first " + size_text(limit) + ", then the next piece";
  return hint;
}

std::string encode_query_map(const std::map<std::string, std::string>& query) {
  std::string q;
  for (const auto& [k, v] : query) q += (q.empty() ? "" : "&") + uri_encode(k) + "=" + uri_encode(v);
  return q;
}

}  // namespace

Client::Client(ClientConfig config, const Model& model)
    : config_(std::move(config)), model_(model), transport_(config_.transport) {
  remember_secret(config_.credentials.secret_access_key);  // redacted from all output from now on
  remember_secret(config_.credentials.session_token);
  remember_secret_fields(config_.redact_fields);
}

Client::~Client() = default;

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
  if (base.empty() && config_.endpoint_url_is_s3)
    return make_error(ErrorKind::config, "NoEndpoint",
                      "no endpoint for the " + api.name + " API: " + config_.endpoint_url +
                          " is an S3 server, not a cloudlua serve; give --endpoint " + api.name + "=URL (or endpoint." +
                          api.name + " in the profile, CLOUDLUA_ENDPOINT_" + to_upper(api.name) + ")");
  if (base.empty())
    return make_error(
        ErrorKind::config, "NoEndpoint",
        "no endpoint configured for the " + api.name + " API (profile '" + config_.profile + "'): set endpoint." +
            api.name + " in the profile, CLOUDLUA_ENDPOINT_" + to_upper(api.name) + " or --endpoint " + api.name +
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

// Whether a file body of `api` is signed as it streams: its hash goes in a signed
// header (a payload hash omitted from the headers has no streaming form), streaming
// is not turned off, and no cassette keys the call on the body's hash.
bool Client::streams_payload(const Api& api) const {
  return config_.stream_payloads && api.signing.payload_hash == PayloadHash::header && config_.record.empty() &&
         config_.replay.empty();
}

namespace {

// The headers of a streamed body: aws-chunked first among its content codings, its
// decoded length, and no Content-Length of the caller's (the transport sends the
// framed length).
void add_streaming_headers(Headers& headers, const Dialect& dialect, std::uint64_t decoded) {
  headers.erase(std::remove_if(headers.begin(), headers.end(),
                               [](const Header& h) { return iequals(h.first, "Content-Length"); }),
                headers.end());
  auto coding = std::find_if(headers.begin(), headers.end(),
                             [](const Header& h) { return iequals(h.first, "Content-Encoding"); });
  if (coding == headers.end()) headers.emplace_back("Content-Encoding", "aws-chunked");
  else coding->second = "aws-chunked," + coding->second;
  headers.emplace_back(to_lower(dialect.header_prefix) + "decoded-content-length", std::to_string(decoded));
}

}  // namespace

// Signs one attempt (the date moves on between attempts): the HttpRequest to send.
// A file body without its hash is signed as it streams, chained from this signature.
Outcome<HttpRequest> Client::sign_attempt(const Request& request) const {
  SignInput in;
  in.method = request.method;
  in.headers = request.headers;
  in.payload_sha256 = request.files.upload ? request.files.upload_sha256 : request.body_sha256;
  in.region = config_.region;
  in.service = service_of(*request.api);
  in.credentials = config_.credentials;
  in.dialect = config_.dialect;
  in.policy = request.api->signing;
  const bool streamed = request.files.upload && request.files.upload_sha256.empty();
  if (streamed) {
    add_streaming_headers(in.headers, *in.dialect, request.files.upload->length);
    in.payload_sha256 = streaming_payload(*in.dialect, false);
    in.time = amz_time_now();
  }
  auto signed_request = sign(in, request.url);
  if (!signed_request.ok()) return signed_request.error();
  HttpRequest out{request.method, signed_request->url, std::move(signed_request->headers), {},
                  request.files,  request.body};
  if (streamed)
    out.files.stream = std::make_shared<ChunkStream>(
        ChunkStream{ChunkScope{in.dialect, in.credentials, in.region, in.service, in.time}, signed_request->signature,
                    kStreamChunkSize});
  return out;
}

// The back-off's random source, one per thread: seeded from the system unless
// seed_retry_jitter said otherwise.
static std::mt19937& jitter_rng() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  return rng;
}

void seed_retry_jitter(std::uint64_t seed) { jitter_rng().seed(static_cast<std::mt19937::result_type>(seed)); }

// The one verdict on an answer (or a failure to get one) after `attempt` attempts:
// its API error, parsed once, and whether and when to try again.
Verdict Client::judge(const Request& request, const Outcome<HttpResponse>& outcome, int attempt) const {
  Verdict v;
  bool error_in_200 = false;
  if (outcome.ok()) {
    const HttpResponse& r = outcome.value();
    error_in_200 = request.op && is_success(r.status) && is_error_in_200(*request.api, *request.op, r);
    if (is_success(r.status) && !error_in_200) return v;
    v.error = parse_error(*request.api, r, answered_request(request));
  }
  const RetryPolicy& p = config_.retry;
  if (attempt >= p.max_attempts) return v;
  bool may_resend = request.idempotent || p.retry_non_idempotent;
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  v.delay = jitter(jitter_rng()) * std::min(p.max_delay, p.base_delay * double(1 << std::min(attempt - 1, 16)));
  if (!outcome.ok()) {
    const Error& e = outcome.error();
    v.retry = !is_final(e) && (e.code == "ConnectionFailed" || may_resend);  // a refused connection never arrived
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

// One call under way: its request, what is known so far, the transfer or timer it
// waits on, and what to do with its last outcome.
struct Client::Exchange {
  Request request;
  Meta meta;
  Verdict verdict;
  // What the current attempt's answer must not show, found (a pattern over the URL
  // and headers) only when an error or --debug needs it: most answers never do.
  HttpRequest signed_head;  // the attempt's method, URL and headers; no body
  std::optional<std::vector<std::string>> secrets;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point sent;
  std::optional<HttpRequest> shown;  // the signed attempt, kept for --debug only
  Transport::Id pending = 0;         // the transfer or timer under way
  CallDone call_done;                // an operation's caller, or
  RequestDone request_done;          // cloud.request's
};

const std::vector<std::string>& Client::secrets(Exchange& x) const {
  if (!x.secrets) x.secrets = secrets_of(x.signed_head);
  return *x.secrets;
}

namespace {

// The model names the platform's x-ext-* request headers (CopyObject's copy source);
// in another dialect they go under its prefix (x-amz-copy-source), as its servers read them.
void use_dialect_headers(Headers& headers, const Dialect& dialect) {
  std::string prefix = to_lower(dialect.header_prefix);
  for (Header& h : headers)
    if (to_lower(h.first).rfind("x-ext-", 0) == 0) h.first = prefix + h.first.substr(6);
}

}  // namespace

// Prepare, for an operation: the model's checks, then the Request it sends.
Outcome<Request> Client::operation_request(const std::string& name, json args) const {
  const Operation* op = model_.find(name);
  if (!op) return make_error(ErrorKind::validation, "UnknownOperation", "no operation named '" + name + "'");
  const Api& api = model_.api_for(*op);
  fill_media_type(*op, args);  // put_object{ file = }'s ContentType from the file's name
  auto input = validate_input(*op, std::move(args));
  if (!input.ok()) return input.error();
  WireRequest w = serialize_request(api, *op, std::move(*input));
  if (w.files.upload && !streams_payload(api)) {  // hashed here, read once, then read again as it is sent
    auto hash = sha256_hex_of(*w.files.upload);
    if (!hash.ok()) {
      hash.error().operation = op->name;
      return hash.error();
    }
    w.files.upload_sha256 = std::move(hash.value());
  }
  auto request = prepare(api, w.method, w.path, w.query);
  if (!request.ok()) {
    request.error().operation = op->name;  // "config error in UpdateSnapshot: NoEndpoint ..."
    return request.error();
  }
  request->op = op;
  request->label = op->name;
  request->headers = std::move(w.headers);
  use_dialect_headers(request->headers, *config_.dialect);
  if (!w.body.empty()) request->body = std::make_shared<const std::string>(std::move(w.body));
  request->files = std::move(w.files);
  request->idempotent = op->idempotent;
  return request;
}

const char* presigned_object_operation(const std::string& method) {
  if (method == "GET") return "GetObject";
  if (method == "PUT") return "PutObject";
  if (method == "HEAD") return "HeadObject";
  return nullptr;
}

// The operation's request, built as a call's, then signed into its query.
// Runs the completer, if any is left; it is dropped once it succeeds.
std::optional<Error> Client::complete_config() {
  if (!discovered_ && !config_.endpoint_url.empty()) {
    if (std::optional<Error> failed = discover_serve(config_, transport_)) return failed;
    discovered_ = true;
    remember_secret(config_.credentials.secret_access_key);
  }
  if (!completer_) return std::nullopt;
  if (std::optional<Error> failed = completer_(config_)) return failed;
  completer_ = nullptr;
  remember_secret(config_.credentials.secret_access_key);
  remember_secret(config_.credentials.session_token);
  return std::nullopt;
}

Outcome<std::string> Client::presign(const std::string& operation, const json& args, long expires) {
  if (expires < 1 || expires > kMaxPresignSeconds)
    return make_error(ErrorKind::validation, "InvalidExpires",
                      "expires must be between 1 and " + std::to_string(kMaxPresignSeconds) +
                          " seconds (a week), got " + std::to_string(expires));
  if (std::optional<Error> incomplete = complete_config()) return *incomplete;
  auto request = operation_request(operation, args);
  if (!request.ok()) return request.error();
  if (!request->headers.empty() || request->body || request->files.upload || !request->files.download_to.empty())
    return make_error(ErrorKind::validation, "NotInUrl",
                      "a presigned URL carries only the path and query of " + operation +
                          "; give only the arguments that travel in them");
  SignInput in;
  in.method = request->method;
  in.payload_sha256 = kUnsignedPayload;
  in.region = config_.region;
  in.service = service_of(*request->api);
  in.credentials = config_.credentials;
  in.dialect = config_.dialect;
  in.policy = request->api->signing;
  in.presign_expires = expires;
  auto signed_url = sign(in, request->url);
  if (!signed_url.ok()) return signed_url.error();
  return std::move(signed_url->url);
}

// Registers a call and makes its first attempt; a request that could not be
// prepared ends from the loop's next turn, like any other.
Client::Id Client::begin(Outcome<Request> request, CallDone call_done, RequestDone request_done) {
  Id id = ++last_id_;
  auto x = std::make_unique<Exchange>();
  x->call_done = std::move(call_done);
  x->request_done = std::move(request_done);
  Exchange& ref = *x;
  exchanges_.emplace(id, std::move(x));
  if (!request.ok()) {
    ref.pending =
        transport_.add_timer(0, [this, id, e = std::move(request.error())] { guarded(id, [&] { end(id, e); }); });
    return id;
  }
  ref.request = std::move(request.value());
  const auto& body = ref.request.body;
  if (!ref.request.files.upload)
    ref.request.body_sha256 = sha256_hex(body ? std::string_view(*body) : std::string_view());
  attempt(id);
  return id;
}

// Attempt: signs the request anew and starts its transfer.
void Client::attempt(Id id) {
  Exchange& x = *exchanges_.at(id);
  x.meta.attempts++;
  auto signed_request = sign_attempt(x.request);
  if (!signed_request.ok()) {
    x.pending = transport_.add_timer(
        0, [this, id, e = std::move(signed_request.error())] { guarded(id, [&] { end(id, e); }); });
    return;
  }
  x.signed_head = HttpRequest{signed_request->method, signed_request->url, signed_request->headers, {}};
  x.signed_head.files.stream = signed_request->files.stream;  // its chunks' signatures are secrets too
  x.secrets.reset();
  if (config_.debug) x.shown = *signed_request;
  x.sent = std::chrono::steady_clock::now();
  auto done = [this, id](Outcome<HttpResponse> outcome) { guarded(id, [&] { answered(id, std::move(outcome)); }); };
  x.pending = cassette_ ? cassette_->start(transport_, call_key(x.request), std::move(*signed_request), secrets(x),
                                           config_.credentials.access_key_id, std::move(done))
                        : transport_.start(std::move(*signed_request), std::move(done));
}

// What the cassette matches a request on (core/net/cassette.h).
CallKey Client::call_key(const Request& request) const {
  CallKey key{request.api->name,
              request.label,
              request.method,
              endpoint_of(request.api->name),
              request.url.path,
              request.url.query,
              request.body ? *request.body : std::string(),
              request.files.upload_sha256,
              0};
  if (request.files.upload) key.upload_length = request.files.upload->length;
  return key;
}

// Verdict: shows the exchange to --debug, then ends the call or waits out the
// back-off before the next attempt.
void Client::answered(Id id, Outcome<HttpResponse> outcome) {
  Exchange& x = *exchanges_.at(id);
  if (!outcome.ok()) redact_error(outcome.error(), secrets(x));
  if (config_.debug && x.shown) {
    ExchangeInfo info{x.request.label, x.meta.attempts, seconds_since(x.sent), secrets(x)};
    config_.debug(describe_exchange(*x.shown, outcome, info));
  }
  x.verdict = judge(x.request, outcome, x.meta.attempts);
  if (!x.verdict.retry) return end(id, std::move(outcome));
  // On the loop's clock; a replay's skipped (a recorded answer is not the server's to spare).
  const bool replaying = cassette_ && cassette_->mode() == Cassette::Mode::replay;
  x.pending = transport_.add_timer(
      x.verdict.delay, [this, id] { guarded(id, [&] { attempt(id); }); },
      replaying ? Loop::Pace::skipped : Loop::Pace::clock);
}

// Finish: the call leaves the table, then its outcome becomes a result for its caller.
void Client::end(Id id, Outcome<HttpResponse> outcome) {
  auto it = exchanges_.find(id);
  std::unique_ptr<Exchange> x = std::move(it->second);
  exchanges_.erase(it);
  x->meta.elapsed = seconds_since(x->start);
  try {
    deliver(*x, std::move(outcome));
  } catch (const std::exception&) {
    deliver(*x, thrown_error());  // turning the answer into a result failed: the caller gets the error
  }
}

// Hands the caller its result: an operation's parsed, cloud.request's raw.
void Client::deliver(Exchange& x, Outcome<HttpResponse> outcome) const {
  if (x.call_done) x.call_done(call_result(x, std::move(outcome)));
  else x.request_done(raw_result(x, std::move(outcome)));
}

// Runs a step of call `id` from the loop; what it throws (std::bad_alloc) ends the
// call with an error, so that nothing thrown leaves the loop and no caller waits
// for a call that will never end.
void Client::guarded(Id id, const std::function<void()>& step) {
  try {
    step();
  } catch (const std::exception&) {
    if (exchanges_.count(id)) end(id, thrown_error());
  }
}

void Client::cancel(Id id) {
  auto it = exchanges_.find(id);
  if (it == exchanges_.end()) return;
  transport_.cancel(it->second->pending);
  exchanges_.erase(it);
}

// Runs the loop until `out` holds the outcome of the call that fills it.
template <class T>
T Client::wait_for(std::optional<T>& out) {
  transport_.loop().run_until([&out] { return out.has_value(); });
  return std::move(*out);
}

// An operation's result: the parsed answer, or the error (the verdict's, the
// transport's or the parser's) with the call's operation, status and attempts.
Outcome<CallResult> Client::call_result(Exchange& x, Outcome<HttpResponse> response) const {
  if (!response.ok()) {
    annotate(response.error(), x.request, x.meta);
    if (response.error().code == "ResponseTooLarge" && x.request.op)
      response.error().message += too_large_hint(*x.request.op, config_.transport.max_response_bytes);
    return response.error();
  }
  record_answer(x.meta, *response);
  Outcome<json> result = x.verdict.error ? Outcome<json>(std::move(*x.verdict.error))
                                         : parse_result(*x.request.api, *x.request.op, *response);
  if (!result.ok()) {
    redact_error(result.error(), secrets(x));  // an error body may echo the request: token, signature
    annotate(result.error(), x.request, x.meta);
    return result.error();
  }
  return CallResult{std::move(result.value()), x.meta};
}

// A raw request's result: the answer whatever its status, or the transport's error.
Outcome<RawResult> Client::raw_result(Exchange& x, Outcome<HttpResponse> response) const {
  if (!response.ok()) {
    annotate(response.error(), x.request, x.meta);
    return response.error();
  }
  record_answer(x.meta, *response);
  return RawResult{std::move(response.value()), x.meta};
}

Client::Id Client::start_call(const std::string& name, json args, CallDone done) {
  std::optional<Error> incomplete = complete_config();
  return begin(incomplete ? Outcome<Request>(*incomplete) : operation_request(name, std::move(args)), std::move(done),
               nullptr);
}

Client::Id Client::start_request(const RawRequest& raw, RequestDone done) {
  Outcome<Request> request = make_error(ErrorKind::validation, "UnknownApi",
                                        "api must be storage, devops, cluster or catalog (got '" + raw.api + "')");
  std::optional<Error> incomplete = complete_config();
  if (incomplete) request = *incomplete;
  else if (const Api* api = model_.api(raw.api))
    request = prepare(*api, raw.method, raw.path, encode_query_map(raw.query));
  if (request.ok()) {
    request->headers = raw.headers;
    if (!raw.body.empty()) request->body = std::make_shared<const std::string>(raw.body);
    request->idempotent = raw.method != "POST" && raw.method != "PATCH";
  }
  return begin(std::move(request), nullptr, std::move(done));
}

Outcome<CallResult> Client::call(const std::string& name, const json& args) {
  std::optional<Outcome<CallResult>> out;
  start_call(name, args, [&out](Outcome<CallResult> r) { out = std::move(r); });
  return wait_for(out);
}

Outcome<RawResult> Client::request(const RawRequest& raw) {
  std::optional<Outcome<RawResult>> out;
  start_request(raw, [&out](Outcome<RawResult> r) { out = std::move(r); });
  return wait_for(out);
}

Outcome<std::shared_ptr<Cassette>> open_cassette(ClientConfig& config, const std::vector<std::string>& apis) {
  if (!config.record.empty() && !config.replay.empty())
    return make_error(ErrorKind::config, "RecordAndReplay",
                      "record (" + config.record + ") and replay (" + config.replay +
                          ") were both given: a client does one or the other");
  if (config.record.empty() && config.replay.empty()) return std::shared_ptr<Cassette>();
  bool replaying = !config.replay.empty();
  auto cassette = Cassette::open(replaying ? Cassette::Mode::replay : Cassette::Mode::record,
                                 replaying ? config.replay : config.record);
  if (!cassette.ok() || !replaying) return cassette;
  for (const std::string& api : apis) {  // nothing is sent: the recorded endpoints, a dummy key
    std::string recorded = cassette.value()->endpoint(api);
    config.endpoints[api] = recorded.empty() ? kReplayOrigin : recorded;
  }
  if (config.credentials.access_key_id.empty() || config.credentials.secret_access_key.empty())
    config.credentials = {kRecordedAccessKey, "replay-dummy-secret", ""};
  return cassette;
}

}  // namespace cloud
