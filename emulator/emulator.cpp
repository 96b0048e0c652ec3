// HTTP face of the emulator: one cpp-httplib server per API, each request taken
// through signature check -> route -> parse -> validate -> platform -> serialise,
// all with core's code so that client and emulator can never drift apart.
#include "emulator/emulator.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "core/crypto.h"
#include "core/dates.h"
#include "core/limits.h"
#include "core/protocol.h"
#include "core/uri.h"
#include "core/validate.h"
#include "emulator/control.h"
#include "emulator/incoming.h"
#include "emulator/post_object.h"
#include "emulator/connection.h"
#include "emulator/service.h"
#include "emulator/snapshots.h"
#include "emulator/state_db.h"

namespace cloud {

const char* const kEmulatorAccessKey = "CLOUDLUAEMULATORKEY";
const char* const kEmulatorSecretKey = "cloudlua-emulator-secret";

bool is_loopback(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return host == "localhost";
}

namespace {

struct Refusal {
  int status;
  std::string code;
  std::string message;
  json details = json::object();
};

// The first value of a request's header, or null. A look along the request's few
// headers comparing names as ASCII: httplib's lookups fold both names through
// tolower() a character at a time at each node of its map.
const std::string* request_header(const httplib::Request& req, std::string_view name) {
  for (const auto& [n, v] : req.headers)
    if (iequals(n, name)) return &v;
  return nullptr;
}

// The same header's value, "" when it is absent.
std::string request_header_value(const httplib::Request& req, std::string_view name) {
  const std::string* v = request_header(req, name);
  return v ? *v : std::string();
}

}  // namespace

struct Emulator::Impl {
  struct ApiServer {
    const Api* api = nullptr;
    ConnectionServer server{Impl::read_whole};
    std::thread thread;
    int port = 0;
    std::atomic<bool> done{false};  // the thread has left httplib's accept loop

    // Until the thread is in httplib's accept loop (or has left it already):
    // httplib 0.11's stop() does nothing before the loop has marked the server
    // running, and the loop would then run for ever.
    void wait_listening() const {
      while (!server.is_running() && !done) std::this_thread::yield();
    }
  };

  Emulator* self = nullptr;  // what the control plane runs on
  EmulatorOptions options;
  const Model& model;
  Platform platform;
  std::vector<std::unique_ptr<ApiServer>> servers;
  std::atomic<unsigned long long> requests{0};
  // When this emulator started, in the request ids: ids stay unique across restarts.
  // A seed replaces it (and restarts the count), and Date headers then come from the
  // platform's clock.
  std::atomic<unsigned> started{static_cast<unsigned>(std::time(nullptr))};
  std::atomic<bool> seeded{false};
  std::mutex faults_mutex;
  std::vector<Fault> faults;
  std::map<std::string, unsigned long> served;  // requests routed to each operation, under faults_mutex
  // A delay fault waits on this rather than sleeping, so that stop() need not wait
  // out the delays of requests their clients have given up on (Ctrl-C).
  std::mutex stop_mutex;
  std::condition_variable stop_cv;
  bool stopping = false;
  std::unique_ptr<StoreLock> store_lock;    // with options.state_file: this process owns it
  std::unique_ptr<StateDatabase> state_db;  // with options.state_file
  // Where raw payloads are streamed to ("": memory): options.body_folder, or the state's
  // folder of bytes, where the store links them in.
  std::string body_folder;
  std::unique_ptr<Snapshots> snapshots = std::make_unique<Snapshots>(platform, nullptr, "");  // in memory until start()
  // What the bodies of the requests in flight may hold, all APIs together.
  std::shared_ptr<BodyBudget> budget = std::make_shared<BodyBudget>(options.limits.bodies_bytes);

  Impl(EmulatorOptions o, const Model& m) : options(std::move(o)), model(m), platform(options.region, model) {}

  std::string next_request_id() {
    char buf[40];
    std::snprintf(buf, sizeof buf, "emu-%08x%08llx", started.load(), ++requests);
    return buf;
  }

  // The Date of an answer: now, or the platform's now when seeded.
  std::string date_now() { return seeded ? http_date(platform.now_wall()) : http_date_now(); }

  // The signature check of core's signer, with this emulator's region, dialect and
  // credentials and the API's signing policy; nullopt when the request is good. The
  // body is not in it: a plain body's hash is `sha256_hex` (read already), and a
  // streaming body, read after the check, gets the check of its chunks in `later`.
  // `headers` (the request's, copied once for the check and the routing after it) are
  // lent to the check and taken back.
  std::optional<SignatureRefusal> check_signature(const Api& api, const httplib::Request& req, Headers& headers,
                                                  const std::string& sha256_hex,
                                                  std::unique_ptr<StreamCheck>* later) const {
    VerifyInput in;
    in.method = req.method;
    in.url = "http://" + request_header_value(req, "Host") + req.target;
    in.headers = std::move(headers);  // lent, and taken back
    in.body_sha256 = sha256_hex;
    in.body_follows = later != nullptr;
    in.region = options.region;
    in.service = api.service;
    in.policy = api.signing;
    in.dialect = Dialect::find(options.dialect);  // nullptr for "any"
    in.credentials = [this](const std::string& key) {
      return key == options.credentials.access_key_id ? &options.credentials : nullptr;
    };
    std::optional<SignatureRefusal> refused = verify_signature(in, nullptr, later);
    headers = std::move(in.headers);
    if (refused && refused->code == "MissingAuthenticationToken" && !api.protocol->unsigned_code.empty())
      refused->code = api.protocol->unsigned_code, refused->message = api.protocol->unsigned_message;
    return refused;
  }

  // Where the body of a request to `op` goes: a raw payload (PutObject's, UploadPart's)
  // to a file of the body folder when there is one (`serve`), else memory.
  std::string folder_for(const Operation* op) const {
    return op && is_raw_payload(*op) ? body_folder : std::string();
  }

  // Reads the request's body, the one way every body is read: from the connection as
  // it arrives (`reader`), or whole from req.body (a request answered without a socket,
  // a GET); and checks the request's signature: before the body when it is streaming
  // (its chunks are checked on the way), after it otherwise (its hash taken on the
  // way). A body refused is read to its end and dropped, so that the answer reaches a
  // client still sending; when the client stops sending, the answer closes the
  // connection (what is left of it is never read as a request).
  std::optional<SignatureRefusal> read_body(const Api& api, const httplib::Request& req, const httplib::ContentReader* reader,
                                            Headers& headers, const Operation* op, std::unique_ptr<IncomingBody>& body) {
    std::unique_ptr<StreamCheck> stream;
    bool follows = api.signing.payload_hash == PayloadHash::header && announces_stream(headers);
    std::optional<SignatureRefusal> refused;
    if (follows) refused = check_signature(api, req, headers, "", &stream);
    body = std::make_unique<IncomingBody>(std::move(stream), refused ? std::string() : folder_for(op),
                                          named_checksums(headers));
    bool whole = refused ? read_into(req, reader, [](std::string_view) {})
                         : read_into(req, reader, [&body](std::string_view piece) { body->feed(piece); });
    if (!whole) return SignatureRefusal{400, "IncompleteBody", "the request's body ended before its declared length", {}};
    if (reader) note_read_whole(req);
    if (refused) return refused;
    if (auto bad = body->finish()) return bad;
    if (follows) return std::nullopt;
    return check_signature(api, req, headers, body->digests().sha256_hex, nullptr);
  }

  // The body to `into`, from the connection or req.body; false when it ended early.
  // httplib reads a multipart/form-data body as its parts, with handlers for them: the
  // emulator takes every body as bytes, so httplib is told the type is not that (the
  // headers the emulator reads were copied before).
  template <class Into>
  static bool read_into(const httplib::Request& req, const httplib::ContentReader* reader, Into into) {
    if (!reader) return into(req.body), true;
    if (req.is_multipart_form_data())
      for (auto& [name, value] : const_cast<httplib::Request&>(req).headers)  // httplib's own, not const
        if (iequals(name, "Content-Type")) value = "application/octet-stream";
    return (*reader)([&into](const char* data, size_t size) { return into(std::string_view(data, size)), true; });
  }

  // The headers of every answer: Date and the request id; on the storage API also the
  // other support identifiers the spec lists (x-ext-id-2, x-storage-sg-trace-id,
  // X-Gateway-Endpoint-Request), derived from the request id. x-ext-expiration and the
  // KMS and customer-key headers are left out, as S3 does without lifecycle rules, KMS
  // or customer keys, which this emulator does not have.
  void set_common_headers(const Api& api, Headers& head, const std::string& request_id) {
    head.emplace_back("Date", date_now());
    head.emplace_back("x-ext-request-id", request_id);
    if (!api.protocol->support_ids) return;
    std::string digest = sha256(request_id);  // one hash for both (a second, MD5, cost as much)
    head.emplace_back("x-ext-id-2", base64(digest));
    head.emplace_back("x-storage-sg-trace-id", hex(std::string_view(digest).substr(24)));
    head.emplace_back("X-Gateway-Endpoint-Request", "1");
  }

  // Now as an HTTP date, formatted once a second per thread rather than per answer.
  static const std::string& http_date_now() {
    thread_local std::time_t formatted = -1;
    thread_local std::string date;
    std::time_t now = std::time(nullptr);
    if (now == formatted) return date;
    date = http_date(now), formatted = now;
    return date;
  }

  static std::string http_date(std::time_t t) { return format_date(t, DateForm::http); }

  // Content-MD5, when sent (aws-cli sends it with parts and objects), must be the
  // base64 of the body's MD5 (decoded, when it came aws-chunked), as S3 checks;
  // `md5` is that MD5, raw.
  static std::optional<Refusal> check_content_md5(const httplib::Request& req, const std::string& md5) {
    const std::string* sent = request_header(req, "Content-MD5");
    if (!sent) return std::nullopt;
    const std::string& given = *sent;
    if (given.size() != 24 || given.compare(22, 2, "==") != 0)
      return Refusal{400, "InvalidDigest", "the Content-MD5 you specified is not the base64 of a 16-byte MD5"};
    if (given != base64(md5))
      return Refusal{400, "BadDigest", "the Content-MD5 you specified did not match what was received"};
    return std::nullopt;
  }

  // An operation whose model says checksumRequired (DeleteObjects) needs the body's
  // Content-MD5, or one of the x-*-checksum-* headers that stand for it, as S3 does.
  static std::optional<Refusal> check_checksum_sent(const Operation& op, const Headers& headers) {
    if (!op.checksum_required || has_header(headers, "Content-MD5")) return std::nullopt;
    for (const auto& [name, value] : headers) {
      std::string lower = to_lower(name);
      if (lower.rfind("x-amz-checksum-", 0) == 0 || lower.rfind("x-ext-checksum-", 0) == 0) return std::nullopt;
    }
    return Refusal{400, "InvalidRequest",
                   "Missing required header for this request: Content-MD5 (or an x-ext-checksum-* or x-amz-checksum-* header)"};
  }

  // httplib 0.11 percent-decodes every header value as it reads it. The copy-source
  // header of CopyObject is the one a client sends percent-encoded (the source key,
  // S3's way: '/' kept), and signs so: it is encoded again, its ?versionId= kept, so
  // that the signature is checked and the key decoded on the value as sent.
  static void encode_copy_source(httplib::Request& req) {
    for (auto& [name, value] : req.headers) {
      if (!iequals(name, "x-amz-copy-source") && !iequals(name, "x-ext-copy-source")) continue;
      size_t q = value.find("?versionId=");
      value = uri_encode(value.substr(0, q), true) + (q == std::string::npos ? "" : value.substr(q));
    }
  }

  // httplib 0.11 percent-decodes every header value as it reads it: a copy source
  // sent as rclone sends it (a%2Bb=c.txt), a metadata value or a Content-Disposition
  // holding a '%' would be checked against its signature, and kept, as another text.
  // Each header gets back the value it came with, from the head its connection kept
  // (a name's values in the order they came, trimmed as HTTP trims them). A request
  // that came through no connection has its copy source encoded again S3's way.
  static void take_header_values(httplib::Request& req) {
    const std::string* head = current_request_head();
    if (!head || head->empty()) return encode_copy_source(req);
    std::map<std::string, std::vector<std::string>> sent;  // lower-cased name -> values
    size_t at = head->find('\n');  // after the request line
    while (at != std::string::npos && at + 1 < head->size()) {
      size_t end = head->find('\n', at + 1);
      std::string_view line(head->data() + at + 1, (end == std::string::npos ? head->size() : end) - at - 1);
      at = end;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      size_t colon = line.find(':');
      if (colon == std::string_view::npos || colon == 0) continue;
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
      sent[to_lower(line.substr(0, colon))].emplace_back(value);
    }
    std::map<std::string, size_t> taken;
    for (auto& [name, value] : req.headers) {
      auto found = sent.find(to_lower(name));
      if (found == sent.end()) continue;
      size_t& next = taken[found->first];
      if (next < found->second.size()) value = found->second[next++];
    }
  }

  void send_error(const Api& api, httplib::Response& res, int status, const std::string& code,
                  const std::string& message, const std::string& request_id, const json& details = json::object()) {
    res.status = status;
    res.set_content(serialize_error(api, code, message, request_id, details), content_type_of(api));
  }

  // One request, answered in the dialect the client signed with; its body read from
  // `reader` (nullptr: it is in req.body).
  void serve(const Api& api, const httplib::Request& req, httplib::Response& res,
             const httplib::ContentReader* reader = nullptr) {
    // The storage service answers Range itself (206, Content-Range, InvalidRange);
    // httplib 0.11 would otherwise cut the already-cut body a second time.
    const_cast<httplib::Request&>(req).ranges.clear();
    Headers head;  // the answer's headers, the emulator's own
    try {
      dispatch(api, req, res, head, reader);
    } catch (...) {
      internal_error(api, res, head);
    }
    // Bytes go as they are stored, never compressed on the way (httplib would gzip a
    // text/* object for a client that accepts it, as S3 never does: rclone then finds
    // its MD5 wrong); the header was read, and signed, already.
    const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
    put_headers(res, std::move(head), is_aws_request(req));
  }

  // A request the emulator failed on: S3's 500 InternalError, and nothing of the
  // failure's own text (httplib would put it in a header; it can quote the request).
  void internal_error(const Api& api, httplib::Response& res, Headers& head) {
    std::string request_id = header_value(head, "x-ext-request-id");
    res = httplib::Response();
    head.clear();
    if (request_id.empty()) request_id = next_request_id();
    set_common_headers(api, head, request_id);
    send_error(api, res, 500, "InternalError", "We encountered an internal error. Please try again.", request_id);
  }

  // Body and signature, route, faults, then the operation itself. An aws-chunked body
  // is served as its decoded bytes, its trailing headers (checksums) as headers. The
  // operation is matched first, unanswered, to know where its body goes.
  void dispatch(const Api& api, const httplib::Request& req, httplib::Response& res, Headers& head,
                const httplib::ContentReader* reader) {
    std::string request_id = next_request_id();
    set_common_headers(api, head, request_id);
    if (is_discovery(req)) {  // the one unsigned control request: nothing secret, nothing changed
      res.status = 200;
      return res.set_content(discovery(*self).dump(), "application/json");
    }
    Headers headers(req.headers.begin(), req.headers.end());
    std::string target = req.target;
    size_t q = target.find('?');
    std::string path = target.substr(0, q), query = q == std::string::npos ? "" : target.substr(q + 1);
    restore_empty_signed_headers(headers, query);  // httplib drops them (Metadata = { k = "" })
    if (is_post_object(req.method, path, query, headers)) return post_form(api, req, reader, res, head, path, request_id);
    std::map<std::string, std::string> labels;
    const Operation* op = match_operation(api, req.method, path, query, labels, headers);
    std::unique_ptr<IncomingBody> incoming;
    if (auto refusal = read_body(api, req, reader, headers, op, incoming)) {
      json details = json::object();
      for (const auto& [name, value] : refusal->details) details[name] = value;
      return send_error(api, res, refusal->status, refusal->code, refusal->message, request_id, details);
    }
    std::string& body = incoming->memory();
    if (req.target.rfind(kControlPrefix, 0) == 0) return control(api, req.method, req.target, body, res, request_id);
    if (auto refusal = check_content_md5(req, incoming->digests().md5))
      return send_error(api, res, refusal->status, refusal->code, refusal->message, request_id);
    if (!op)
      return send_error(api, res, 404, "UnknownOperation", "no " + api.name + " operation answers " + req.method + " " + path, request_id);
    if (std::string sub = untaken_subresource(*op, query); !sub.empty())
      return send_error(api, res, 501, "NotImplemented",
                        "cloudlua's emulator does not implement ?" + sub + " on " + req.method + " " + path, request_id);
    if (std::optional<Fault> fault = take_fault(api, op->name))
      if (misbehave(api, *fault, req, body, res, request_id)) return;
    const Headers& trailers = incoming->trailers();
    headers.insert(headers.end(), trailers.begin(), trailers.end());  // a trailing checksum
    if (auto refusal = check_checksum_sent(*op, headers))
      return send_error(api, res, refusal->status, refusal->code, refusal->message, request_id);
    // A raw payload (PutObject's, UploadPart's) goes to the store as it is (its memory
    // or its file), beside the arguments rather than copied into them; the model puts
    // no constraint on it.
    bool aside = is_raw_payload(*op);
    RequestBody kept;
    if (aside) kept = {incoming->take_bytes(), incoming->digests().md5, incoming->checksums()};
    auto input = parse_request(api, *op, labels, query, headers, aside ? std::string() : body);
    if (!input.ok()) return send_error(api, res, 400, input.error().code, input.error().message, request_id);
    // The arguments moved into their validation, not copied; InvalidPartOrder is the handler's.
    auto valid = validate_input(*op, std::move(*input), Checker::server);
    if (!valid.ok())
      return send_error(api, res, 400, validation_code(api, *op, valid.error()), valid.error().message, request_id,
                        problems_of(valid.error()));
    answer(api, *op, platform.handle(*op, *valid, &kept), res, head, request_id);
  }

  // A browser upload (S3's POST object, emulator/post_object.h): signed by the policy
  // in its form, not by the request; the form read whole, bounded as every body is.
  void post_form(const Api& api, const httplib::Request& req, const httplib::ContentReader* reader,
                 httplib::Response& res, Headers& head, const std::string& path, const std::string& request_id) {
    PostObjectRequest in{&api, &platform, path, request_header_value(req, "Host"),
                         request_header_value(req, "Content-Type"), {}, &options.credentials, options.region,
                         Dialect::find(options.dialect)};
    bool whole = read_into(req, reader, [&in](std::string_view piece) { in.body.append(piece); });
    if (reader) note_read_whole(req);
    if (!whole) return send_error(api, res, 400, "IncompleteBody", "the request's body ended before its declared length", request_id);
    if (std::optional<Fault> fault = take_fault(api, "PostObject"))
      if (misbehave(api, *fault, req, "", res, request_id)) return;
    PostObjectAnswer a = post_object(in);
    if (!a.ok) return send_error(api, res, a.error.status, a.error.code, a.error.message, request_id, a.error.details);
    res.status = a.status;
    head.insert(head.end(), a.headers.begin(), a.headers.end());
    if (!a.body.empty()) res.set_content(a.body, content_type_of(api));
  }

  // GET /_cloudlua/discover without a body (docs/emulator.md, "Reaching serve").
  static bool is_discovery(const httplib::Request& req) {
    return req.method == "GET" && req.target == kDiscoverPath && !req.has_header("Transfer-Encoding") &&
           req.get_header_value<uint64_t>("Content-Length") == 0;
  }

  // The control plane (docs/emulator.md, "The control plane"): cloud.emulator's
  // operations over HTTP, signed as any request (checked before this), faults left out.
  // POST /_cloudlua/<operation> with a JSON object of arguments (or no body), or GET
  // for one that takes none; the answer is JSON, an error the API's error body.
  static constexpr const char* kControlPrefix = "/_cloudlua/";
  void control(const Api& api, const std::string& method, const std::string& target, const std::string& body,
               httplib::Response& res, const std::string& request_id) {
    std::string operation = target.substr(std::strlen(kControlPrefix));
    operation = operation.substr(0, operation.find('?'));
    if (method != "POST" && method != "GET")
      return send_error(api, res, 405, "MethodNotAllowed", "the control plane takes POST (or GET), not " + method, request_id);
    json args = body.empty() ? json::object() : json::parse(body, nullptr, false);
    if (args.is_discarded())
      return send_error(api, res, 400, "InvalidArgument", "the body of a control request must be a JSON object", request_id);
    Outcome<json> answer = run_control(*self, operation, args);
    if (!answer.ok()) {
      const Error& e = answer.error();
      int status = e.code == "UnknownControl" || e.code == "NoSuchSnapshot" ? 404 : e.kind == ErrorKind::validation ? 400 : 500;
      if (status == 500) {  // the server's own failure (a snapshot's disk): redacted, as an object write's
        HandlerResult internal = HandlerResult::internal(operation + ": " + e.message);
        return send_error(api, res, 500, internal.error.code, internal.error.message, request_id);
      }
      return send_error(api, res, status, e.code, e.message, request_id);
    }
    res.status = 200;
    res.set_content(answer->dump(), "application/json");
  }

  // The first queued fault for `operation` of `api`, used up one time.
  // Counts the request as one to `operation` (cloud.emulator.requests()).
  std::optional<Fault> take_fault(const Api& api, const std::string& operation) {
    std::lock_guard<std::mutex> lock(faults_mutex);
    ++served[operation];
    for (auto it = faults.begin(); it != faults.end(); ++it) {
      if (!it->operation.empty() && it->operation != operation) continue;
      if (it->json_only && api.protocol->format != Format::json) continue;
      Fault f = *it;
      if (--it->times <= 0) faults.erase(it);
      return f;
    }
    return std::nullopt;
  }

  // Acts out a fault; false when only a delay was asked and the request goes on.
  bool misbehave(const Api& api, const Fault& f, const httplib::Request& req, const std::string& body,
                 httplib::Response& res, const std::string& request_id) {
    if (f.delay > 0) {
      std::unique_lock<std::mutex> lock(stop_mutex);
      if (stop_cv.wait_for(lock, std::chrono::duration<double>(f.delay), [this] { return stopping; })) return drop(res);
    }
    if (f.drop) return drop(res);
    if (!f.status && !f.error_in_200 && f.code.empty() && !f.echo) return false;
    std::string code = f.code.empty() ? "InternalError" : f.code;
    std::string message = f.echo ? echo_of(req, body) : f.message.empty() ? "fault injected by cloud.emulator.fault" : f.message;
    int status = f.error_in_200 ? 200 : (f.status ? f.status : 500);
    send_error(api, res, status, code, message, request_id);
    return true;
  }

  // The request as received, one header a line, for the echo fault (httplib's own
  // LOCAL_*/REMOTE_* entries are not headers the client sent), and its body when it
  // was kept in memory.
  static std::string echo_of(const httplib::Request& req, const std::string& body) {
    std::string out = "you sent: " + req.method + " " + req.target;
    for (const auto& [name, value] : req.headers)
      if (name.rfind("LOCAL_", 0) != 0 && name.rfind("REMOTE_", 0) != 0) out += "\n" + name + ": " + value;
    return out + "\n\n" + body;
  }

  // Headers go out, then the body provider fails: the client sees the connection
  // closed mid-answer.
  static bool drop(httplib::Response& res) {
    res.set_chunked_content_provider("application/octet-stream", [](size_t, httplib::DataSink&) { return false; });
    return true;
  }

  // Signed in the aws dialect: by its Authorization header or as a presigned URL.
  static bool is_aws_request(const httplib::Request& req) {
    return request_header_value(req, "Authorization").rfind(Dialect::aws().algorithm, 0) == 0 ||
           req.has_param(Dialect::aws().query_prefix + "Algorithm");
  }

  // Puts the emulator's headers of an answer into httplib's, as x-amz-* where the
  // platform says x-ext-* for an aws-dialect client. httplib's map compares names a
  // character at a time through tolower(): inserted in its order, each insert is
  // one comparison with the last rather than a walk down the tree. A header with a
  // line break or other control character in it is left out (httplib's set_header
  // leaves out those with line breaks).
  static void put_headers(httplib::Response& res, Headers head, bool aws) {
    for (Header& h : head)
      if (aws && h.first.size() > 6 && iequals(std::string_view(h.first).substr(0, 6), "x-ext-"))
        h.first.replace(0, 6, "x-amz-");
    std::stable_sort(head.begin(), head.end(), [](const Header& a, const Header& b) { return iless(a.first, b.first); });
    for (Header& h : head)
      if (header_value_ok(h.first) && header_value_ok(h.second))
        res.headers.emplace_hint(res.headers.end(), std::move(h.first), std::move(h.second));
  }

  // The size an aws-chunked body sent with Transfer-Encoding: chunked (as boto3 sends
  // trailing checksums) declares instead of a Content-Length: its decoded length; ""
  // when the body is no such body or declares none.
  static std::string decoded_length(const httplib::Request& req) {
    if (request_header_value(req, "Content-Encoding").find("aws-chunked") == std::string::npos) return {};
    for (const Dialect* d : {&Dialect::aws(), &Dialect::ext()}) {
      std::string name = to_lower(d->header_prefix) + "decoded-content-length";
      if (const std::string* v = request_header(req, name)) return *v;
    }
    return {};
  }

  // Whether the request's body goes to a file of the folder of bytes as it arrives (a
  // raw payload: PutObject's, UploadPart's): it takes nothing of the bodies' budget,
  // which is what memory may hold.
  // An API none of whose operations takes a raw payload (the JSON ones) is known so
  // without matching the request: their requests pay for no second match.
  bool streams_to_file(const Api& api, const httplib::Request& req) const {
    if (body_folder.empty() || std::none_of(api.operations.begin(), api.operations.end(),
                                            [](const Operation* op) { return is_raw_payload(*op); }))
      return false;
    size_t q = req.target.find('?');
    std::string path = req.target.substr(0, q), query = q == std::string::npos ? "" : req.target.substr(q + 1);
    std::map<std::string, std::string> labels;
    Headers headers(req.headers.begin(), req.headers.end());
    return !folder_for(match_operation(api, req.method, path, query, labels, headers)).empty();
  }

  // Bodies are read before a request is served (into memory, or a raw payload into a
  // file), so a body that declares more than the platform takes is answered
  // EntityTooLarge (400, as S3 does) before a byte of it is read, one of undeclared length (chunked, or
  // read until the connection ends) MissingContentLength (411, as S3 does), but an
  // aws-chunked one that declares its decoded length, and one held in memory that does
  // not fit in what the bodies in flight may hold SlowDown (503, S3's "reduce your request
  // rate": clients retry it later). The connection then ends: the unread body cannot
  // be told from a next request.
  bool refuse_body(const Api& api, const httplib::Request& req, httplib::Response& res) {
    std::string length = request_header_value(req, "Content-Length");
    bool chunked = request_header(req, "Transfer-Encoding") != nullptr;
    if (chunked && !decoded_length(req).empty()) {
      length = decoded_length(req);
      chunked = false;
    }
    bool body_method = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
    bool undeclared = chunked || (length.empty() && body_method);
    unsigned long long declared = std::strtoull(length.c_str(), nullptr, 10);
    bool fits = !undeclared && declared <= kMaxBodyBytes;
    if (fits && (declared == 0 || streams_to_file(api, req) || ConnectionServer::reserve_body(declared))) return false;
    std::string request_id = next_request_id();
    Headers head;
    set_common_headers(api, head, request_id);
    if (fits) {  // the bodies in flight hold what the budget allows: S3's answer to a client to slow down
      res.status = 503;
      res.set_content(serialize_error(api, "SlowDown", "Please reduce your request rate.", request_id),
                      content_type_of(api));
    } else if (undeclared) {
      res.status = 411;
      res.set_content(serialize_error(api, "MissingContentLength", "give the Content-Length of the body", request_id),
                      content_type_of(api));
    } else {
      res.status = 400;
      json sizes = {{"ProposedSize", declared}, {"MaxSizeAllowed", kMaxBodyBytes}};
      res.set_content(serialize_error(api, "EntityTooLarge", "the body of " + length + " bytes is larger than " +
                                                                 size_text(kMaxBodyBytes) + ", the most one request may carry",
                                      request_id, sizes),
                      content_type_of(api));
    }
    put_headers(res, std::move(head), is_aws_request(req));
    return true;
  }

  // httplib routes by matching the path against each handler's libstdc++ regex, which
  // recurses once per character: a path of the longest request line httplib takes
  // (8 KiB) needed about 5 MiB of stack. The emulator routes by the target itself
  // (serve), so every path is replaced by kRoute, the one path its handlers are
  // registered for, before httplib routes: its regex never sees the client's path.
  // httplib then still reads the body, answers HEAD as GET without the body, and
  // answers 404 (OPTIONS) or 400 (other methods) to methods no handler takes.
  static constexpr const char* kRoute = "/";
  static void route_anywhere(const httplib::Request& req) {
    const_cast<httplib::Request&>(req).path = kRoute;  // httplib's own Request, not const
  }

  // The path of a request once the emulator has it whole: httplib has read its body,
  // if it declared one (it reads none for GET, HEAD or OPTIONS). A connection serves
  // the next request only after such a one (read_whole): httplib answers some requests
  // on its own before reading their bodies (a request line too long, a malformed
  // Range), and refuse_body refuses some unread; what is left of one must not be read
  // as the next request.
  static constexpr const char* kReadWhole = "/read-whole";
  static void note_read_whole(const httplib::Request& req) {
    bool body_read = req.method == "PUT" || req.method == "POST" || req.method == "PATCH" || req.method == "DELETE";
    if (!body_read) {
      std::string length = request_header_value(req, "Content-Length");
      body_read = (length.empty() || length == "0") && !request_header(req, "Transfer-Encoding");
    }
    if (body_read) const_cast<httplib::Request&>(req).path = kReadWhole;
  }
  static bool read_whole(const httplib::Request& req) { return req.path == kReadWhole; }

  // The code of a refused request, as the API's protocol says: for the storage API
  // what S3 says, MalformedXML when the XML body breaks the schema (an empty part list,
  // an element the schema does not have: only the body can bring an unknown field),
  // else InvalidArgument; the JSON APIs say ValidationError either way; a rule the
  // model gives a code of its own (errorCodes: KeyTooLongError) says that.
  static std::string validation_code(const Api& api, const Operation& op, const Error& e) {
    for (const FieldProblem& f : e.fields)
      if (!f.code.empty()) return f.code;  // the model's own for the rule (KeyTooLongError)
    for (const FieldProblem& f : e.fields) {
      const Member* m = op.input->find_member(f.path.substr(0, f.path.find_first_of(".[")));
      if (!m || m->location == Location::body) return api.protocol->invalid_body_code;
    }
    return api.protocol->invalid_argument_code;
  }

  static json problems_of(const Error& e) {
    json fields = json::array();
    for (const FieldProblem& f : e.fields) fields.push_back({{"path", f.path}, {"problem", f.problem}});
    return {{"fields", fields}};
  }

  void answer(const Api& api, const Operation& op, const HandlerResult& r, httplib::Response& res, Headers& head,
              const std::string& request_id) {
    if (!r.ok) return send_error(api, res, r.error.status, r.error.code, r.error.message, request_id, r.error.details);
    std::string body = serialize_result(api, op, r.result, head);
    res.status = r.status;
    // An object's bytes are not XML: their type is the one the object was stored with
    // (its ContentType, a header member of the result, taken out of `head` so that it is
    // sent once), S3's binary/octet-stream when it has none. HEAD describes what GET
    // would send, so it says the same.
    bool bytes = !op.output_payload.empty() || op.method == "HEAD";
    std::string type = bytes ? "binary/octet-stream" : content_type_of(api);
    auto declared = std::find_if(head.begin(), head.end(), [](const Header& h) { return iequals(h.first, "Content-Type"); });
    if (declared != head.end()) type = declared->second, head.erase(declared);
    if (r.payload.bytes) return send_bytes(res, r.payload, type.c_str());
    res.set_content(body, type);
  }

  // Whether the operation's body is its payload member's bytes as they are (a blob
  // with no constraint to check: PutObject's, UploadPart's).
  static bool is_raw_payload(const Operation& op) {
    if (op.payload.empty()) return false;
    const Member* m = op.input->find_member(op.payload);
    return m && m->shape && m->shape->type == ShapeType::blob;
  }

  // Below this, an answer's bytes are copied into it: httplib's content provider
  // costs more to set up (a sink, a stream and three std::functions) than the copy.
  static constexpr size_t kCopyBelow = 64 << 10;

  // Stored bytes as the answer's body, sent from the store a piece at a time (at most
  // Blob::kPiece held): the provider holds the bytes (a later PutObject of the key
  // replaces them in the store, not here; a file stays open). A file that cannot be
  // read ends the answer short, as a failed send does.
  static void send_bytes(httplib::Response& res, const BytesSlice& slice, const char* type) {
    if (slice.length < kCopyBelow) return res.set_content(slice.bytes->slice(slice.offset, slice.length), type);
    const std::string* memory = slice.bytes->in_memory();
    auto piece = std::make_shared<std::string>();
    res.set_content_provider(slice.length, type, [slice, memory, piece](size_t offset, size_t length, httplib::DataSink& sink) {
      if (memory) return sink.write(memory->data() + slice.offset + offset, length);
      size_t n = std::min(length, Blob::kPiece);
      piece->resize(n);
      try {
        slice.bytes->read(slice.offset + offset, n, &(*piece)[0]);
      } catch (const std::runtime_error&) {
        return false;
      }
      return sink.write(piece->data(), n);
    });
  }

  // A request its connection cut short: S3's RequestTimeout when it stalled, its
  // RequestHeaderSectionTooLarge when its head outgrew the limits (both 400).
  void cut_short(const Api& api, Cut why, const httplib::Request& req, httplib::Response& res) {
    std::string request_id = next_request_id();
    Headers head;
    set_common_headers(api, head, request_id);
    if (why == Cut::timed_out)
      send_error(api, res, 400, "RequestTimeout",
                 "Your socket connection to the server was not read from or written to within the timeout period. "
                 "Idle connections will be closed.",
                 request_id);
    else
      send_error(api, res, 400, "RequestHeaderSectionTooLarge",
                 "Your request header section exceeds the maximum allowed size (" +
                     std::to_string(options.limits.head_lines) + " header lines, " +
                     size_text(options.limits.head_bytes) + " in all).",
                 request_id);
    put_headers(res, std::move(head), is_aws_request(req));
  }

  Outcome<bool> start_api(const Api& api, int port) {
    auto s = std::make_unique<ApiServer>();
    s->api = &api;
    s->server.set_limits(options.limits);
    s->server.set_body_budget(budget);
    s->server.set_cut_short_handler([this, a = &api](Cut why, const httplib::Request& req, httplib::Response& res) {
      cut_short(*a, why, req, res);
    });
    int listening = -1;
    s->server.set_socket_options([&listening](socket_t sock) {
      int yes = 1;  // what httplib's default options do, kept
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listening = sock;
    });
    // GET and HEAD: httplib reads no body. The methods that may have one: the body is
    // read by the handler (read_body), as it arrives.
    auto handler = [this, a = &api](const httplib::Request& req, httplib::Response& res) {
      note_read_whole(req);
      take_header_values(const_cast<httplib::Request&>(req));
      serve(*a, req, res);
    };
    auto reading = [this, a = &api](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) {
      take_header_values(const_cast<httplib::Request&>(req));
      serve(*a, req, res, &reader);
    };
    s->server.set_pre_routing_handler([this, a = &api](const httplib::Request& req, httplib::Response& res) {
      if (refuse_body(*a, req, res)) return httplib::Server::HandlerResponse::Handled;
      route_anywhere(req);
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // With Expect: 100-continue the client waits before sending the body: refused
    // then, it never sends it.
    s->server.set_expect_100_continue_handler([this, a = &api](const httplib::Request& req, httplib::Response& res) {
      return refuse_body(*a, req, res) ? res.status : 100;
    });
    s->server.Get(kRoute, handler).Post(kRoute, reading).Put(kRoute, reading).Delete(kRoute, reading).Patch(kRoute, reading);
    // What a body of undeclared length (an aws-chunked one, its decoded length declared)
    // may take on the wire: the largest body and its framing, which at S3's smallest
    // chunks (8 KiB, some 90 bytes of header each) adds less than 1/64.
    s->server.set_payload_max_length(kMaxBodyBytes + (kMaxBodyBytes >> 6));
    // A connection serves requests for as long as the client keeps it (httplib closes
    // it after five by default: a client then pays a new connection every fifth call).
    s->server.set_keep_alive_max_count(std::numeric_limits<size_t>::max());
    // A large answer is many writes: without this, Nagle and the client's delayed ACK
    // would hold its last segment back 40 ms.
    s->server.set_tcp_nodelay(true);
    s->port = port ? (s->server.bind_to_port(options.host.c_str(), port) ? port : -1)
                   : s->server.bind_to_any_port(options.host.c_str());
    if (s->port <= 0)
      return make_error(ErrorKind::config, "BindFailed",
                        "cannot listen on " + options.host + ":" + std::to_string(port) + " for the " + api.name + " API");
    // httplib listens with a backlog of 5: a burst of new connections (aws-cli opens
    // ten) would see SYNs dropped and retried a second later. Listening again on the
    // bound socket only raises the backlog.
    ::listen(listening, SOMAXCONN);
    ApiServer* raw = s.get();
    s->thread = std::thread([raw] {
      raw->server.listen_after_bind();
      raw->done = true;
    });
    raw->wait_listening();
    servers.push_back(std::move(s));
    return true;
  }
};

Emulator::Emulator(EmulatorOptions options, const Model& model)
    : impl_(std::make_unique<Impl>(std::move(options), model)) {
  impl_->self = this;
  if (impl_->options.seed) set_seed(*impl_->options.seed);  // the fixtures' ids and times too
  if (impl_->options.fixtures) impl_->platform.load_fixtures();
}

Emulator::~Emulator() { stop(); }

Outcome<bool> Emulator::start() {
  if (auto served = impl_->platform.check(); !served.ok()) return served.error();
  const EmulatorOptions& o = impl_->options;
  if (!is_loopback(o.host) &&
      (o.credentials.access_key_id == kEmulatorAccessKey || o.credentials.secret_access_key == kEmulatorSecretKey))
    return make_error(ErrorKind::config, "PublicCredentials",
                      "listening on " + o.host + ", beyond loopback, needs an access key and secret of your own "
                      "(serve: --access-key and --secret-key): the built-in test credentials are public");
  if (!impl_->options.state_file.empty()) {
    // The database's platform in place of the fixtures (or the fixtures into a new
    // one; a JSON state file imported first); from then on every change is saved
    // before it is answered.
    if (!impl_->store_lock) {  // before anything of the state is read: one owner at a time
      auto lock = StoreLock::take(impl_->options.state_file);
      if (!lock.ok()) return lock.error();
      impl_->store_lock = std::move(*lock);
    }
    impl_->state_db = std::make_unique<StateDatabase>(impl_->options.state_file);
    auto opened = open_state(impl_->platform, *impl_->state_db, impl_->options.state_file);
    if (!opened.ok()) return opened.error();
    impl_->snapshots =
        std::make_unique<Snapshots>(impl_->platform, impl_->state_db.get(), impl_->options.state_file + ".snapshots");
    if (auto owned = impl_->snapshots->open(); !owned.ok()) return owned.error();  // made now: nobody else's
  }
  impl_->body_folder = impl_->state_db ? impl_->state_db->bytes_folder() : impl_->options.body_folder;
  {
    std::lock_guard<std::mutex> lock(impl_->stop_mutex);
    impl_->stopping = false;
  }
  int port = impl_->options.port;
  for (const Api& api : impl_->model.apis()) {
    auto started = impl_->start_api(api, port);
    if (!started.ok()) {
      stop();
      return started.error();
    }
    if (port) ++port;
  }
  std::map<std::string, std::string> urls;
  for (const auto& [api, url] : endpoints()) urls[api] = url;
  impl_->platform.set_endpoints(urls);
  return true;
}

void Emulator::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->stop_mutex);
    impl_->stopping = true;
  }
  impl_->stop_cv.notify_all();
  for (auto& s : impl_->servers) {
    s->server.stop();
    s->server.end_connections();
    if (s->thread.joinable()) s->thread.join();
  }
  impl_->servers.clear();
}

std::vector<std::pair<std::string, std::string>> Emulator::endpoints() const {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string& host = impl_->options.host;
  std::string url_host = host.find(':') == std::string::npos ? host : "[" + host + "]";  // IPv6
  for (const auto& s : impl_->servers)
    out.emplace_back(s->api->name, "http://" + url_host + ":" + std::to_string(s->port));
  return out;
}

const EmulatorOptions& Emulator::options() const { return impl_->options; }

void Emulator::add_fault(Fault fault) {
  std::lock_guard<std::mutex> lock(impl_->faults_mutex);
  impl_->faults.push_back(std::move(fault));
}

void Emulator::clear_faults() {
  std::lock_guard<std::mutex> lock(impl_->faults_mutex);
  impl_->faults.clear();
  impl_->served.clear();
}

Outcome<bool> Emulator::snapshot(const std::string& name) { return impl_->snapshots->take(name); }
Outcome<bool> Emulator::restore(const std::string& name) { return impl_->snapshots->restore(name); }
std::vector<std::string> Emulator::snapshots() const { return impl_->snapshots->names(); }

std::map<std::string, unsigned long> Emulator::requests_served() const {
  std::lock_guard<std::mutex> lock(impl_->faults_mutex);
  return impl_->served;
}
Platform& Emulator::platform() { return impl_->platform; }

void Emulator::set_seed(std::uint64_t seed) {
  impl_->platform.set_seed(seed);
  unsigned started = static_cast<unsigned>(mix_seed(seed) >> 32);
  if (impl_->started.exchange(started) != started) impl_->requests = 0;  // the same seed again: counted on
  impl_->seeded = true;
}

// The request as httplib would have parsed it, served, and the answer copied out.
Outcome<HttpResponse> Emulator::answer(const std::string& api_name, const std::string& method,
                                       const std::string& target, const Headers& headers, const std::string& body) {
  const Api* api = impl_->model.api(api_name);
  if (!api) {
    std::string known;
    for (const Api& a : impl_->model.apis()) known += (known.empty() ? "" : ", ") + a.name;
    return make_error(ErrorKind::config, "UnknownApi", "no API named '" + api_name + "' (APIs: " + known + ")");
  }
  httplib::Request req;
  req.method = method;
  req.target = target;
  req.path = target.substr(0, target.find('?'));
  req.body = body;
  for (const Header& h : headers) req.headers.emplace(h.first, h.second);
  httplib::Response res;
  impl_->serve(*api, req, res);
  HttpResponse out;
  out.status = res.status;
  for (const auto& [name, value] : res.headers) out.headers.emplace_back(name, value);
  out.body = res.body;
  if (res.content_provider_) {  // bytes sent from the store: read as a connection would
    httplib::DataSink sink;
    sink.write = [&out](const char* data, size_t size) { return out.body.append(data, size), true; };
    sink.is_writable = [] { return true; };
    for (size_t at = 0; at < res.content_length_;) {
      size_t before = out.body.size();
      if (!res.content_provider_(at, res.content_length_ - at, sink) || out.body.size() == before) break;
      at += out.body.size() - before;
    }
  }
  return out;
}

}  // namespace cloud
