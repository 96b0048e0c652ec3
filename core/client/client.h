// The client: one path for every operation — validate -> serialise -> sign -> send
// (with retries) -> parse, as a state machine on the transport's loop so that many
// calls may be under way at once. It knows nothing of Lua; the binding hands it JSON
// values and gets JSON values back.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/net/cassette.h"
#include "core/client/client_config.h"
#include "core/base/error.h"
#include "core/model/model.h"
#include "core/wire/sigv4.h"
#include "core/net/transport.h"
#include "core/wire/uri.h"

namespace cloud {

// What came back besides the result: the HTTP status and headers, the request id,
// how many attempts it took and how long it all took.
struct Meta {
  long status = 0;
  Headers headers;
  std::string request_id;
  int attempts = 0;
  double elapsed = 0;  // seconds
};

struct CallResult {
  json result;
  Meta meta;
};

// A request outside the model (cloud.request): signed and sent as given.
struct RawRequest {
  std::string api;
  std::string method = "GET";
  std::string path = "/";
  std::map<std::string, std::string> query;
  Headers headers;
  std::string body;
};

struct RawResult {
  HttpResponse response;
  Meta meta;
};

// One request as the client sends it, built once whatever its origin (an operation
// or cloud.request): the URL in parts (endpoint, path and query joined once), the
// headers and body as serialised, and what retries and messages need to know.
struct Request {
  const Api* api = nullptr;
  const Operation* op = nullptr;  // nullptr for cloud.request: the answer is returned raw
  std::string label;              // "UpdateSnapshot", or "request": messages and --debug
  std::string method;
  Url url;
  Headers headers;
  // The body, made once and shared by every attempt's HttpRequest (never copied);
  // null for none. body_sha256 is its hash, taken once for all attempts.
  std::shared_ptr<const std::string> body;
  std::string body_sha256;
  BodyFiles files;         // a payload sent from a file (its hash taken once), a download target
  bool idempotent = true;  // may be resent after it may have reached the server
};

// What one answer means, decided once and used both to retry and to report: the call
// is over (with the answer's API error, if it is one) or is tried again after `delay`.
struct Verdict {
  bool retry = false;
  double delay = 0;            // seconds before the next attempt
  std::optional<Error> error;  // a non-2xx answer or an <Error> in a 200, parsed once
};

// The storage operation a presigned object URL of `method` performs (GET: GetObject,
// PUT: PutObject, HEAD: HeadObject), or nullptr for any other method.
const char* presigned_object_operation(const std::string& method);

class Client {
 public:
  explicit Client(ClientConfig config, const Model& model = Model::builtin());
  ~Client();  // calls still under way are abandoned
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  using Id = std::uint64_t;  // a call under way; never 0, never reused
  using CallDone = std::function<void(Outcome<CallResult>)>;
  using RequestDone = std::function<void(Outcome<RawResult>)>;

  // Block until the call ends: start it, then run the transport's loop until it does.
  Outcome<CallResult> call(const std::string& operation, const json& args);
  Outcome<RawResult> request(const RawRequest& raw);

  // Start a call and return at once; `done` runs exactly once, from the loop
  // (never from inside these), unless the call is cancelled: the one continuation
  // from the transfer's completion to the caller.
  Id start_call(const std::string& operation, json args, CallDone done);
  Id start_request(const RawRequest& raw, RequestDone done);
  // Abandon a call: its transfer or back-off timer is cancelled, `done` never runs.
  // An id that has already ended is ignored.
  void cancel(Id call);

  // A presigned URL for `operation` with `args` (checked as a call's are): the URL of
  // its path and query on this client's endpoint, signed with its credentials, region
  // and dialect, good for `expires` seconds (1..kMaxPresignSeconds). Its body is not
  // signed (UNSIGNED-PAYLOAD); arguments that would travel in headers or the body are
  // refused, since the URL alone cannot carry them.
  Outcome<std::string> presign(const std::string& operation, const json& args, long expires);

  // A browser upload's form (S3's POST object, as boto3's generate_presigned_post
  // makes it): `args` has Bucket and Object (which may end in ${filename}), and
  // optionally fields (a table of form fields), conditions (a list of the policy's
  // conditions: { field = value }, ["eq"|"starts-with", "$field", "value"],
  // ["content-length-range", min, max]) and expires (seconds, 1..kMaxPresignSeconds,
  // default 3600). The policy names the bucket, the key, the signature fields and
  // each given field no condition names (exactly); it is signed with this client's
  // credentials, region and dialect. A bad argument is an Error coded BadArgument.
  struct PostForm {
    std::string url;                                          // the bucket's URL, where the form is posted
    std::vector<std::pair<std::string, std::string>> fields;  // key first; then the file, last
  };
  Outcome<PostForm> presign_post(const json& args);

  // A hook that completes the configuration before the first call or presigned URL
  // that needs it (the session starts its embedded emulator there, which fills in
  // endpoints and credentials). An error it returns fails that call, and the next one
  // runs the hook again; once it succeeds it is dropped.
  using Completer = std::function<std::optional<Error>(ClientConfig& config)>;
  void set_completer(Completer completer) { completer_ = std::move(completer); }
  // Completes the configuration now (the completer, endpoint_url's serve), as the
  // first call would: cloud.emulator over serve needs its endpoints first.
  std::optional<Error> ready() { return complete_config(); }

  const ClientConfig& config() const { return config_; }
  const Model& model() const { return model_; }
  Transport& transport() { return transport_; }

  // Sends every exchange through `cassette` (recording or replaying), or, when null,
  // straight to the transport. Replaying, its back-off is skipped on the loop's clock
  // (Loop::Pace::skipped), not waited for.
  void set_cassette(std::shared_ptr<Cassette> cassette) { cassette_ = std::move(cassette); }
  const std::shared_ptr<Cassette>& cassette() const { return cassette_; }

 private:
  struct Exchange;

  std::optional<Error> complete_config();
  Outcome<Request> operation_request(const std::string& operation, json args) const;
  Outcome<CallResult> call_result(Exchange& x, Outcome<HttpResponse> outcome) const;
  Outcome<RawResult> raw_result(Exchange& x, Outcome<HttpResponse> outcome) const;
  Id begin(Outcome<Request> request, CallDone call_done, RequestDone request_done);
  void attempt(Id id);
  void answered(Id id, Outcome<HttpResponse> outcome);
  void end(Id id, Outcome<HttpResponse> outcome);
  void guarded(Id id, const std::function<void()>& step);
  template <class T>
  T wait_for(std::optional<T>& out);
  void deliver(Exchange& x, Outcome<HttpResponse> outcome) const;
  Outcome<Request> prepare(const Api& api, const std::string& method, const std::string& path,
                           const std::string& query) const;
  Outcome<HttpRequest> sign_attempt(const Request& request) const;
  bool streams_payload(const Api& api) const;
  Verdict judge(const Request& request, const Outcome<HttpResponse>& outcome, int attempt) const;
  std::vector<std::string> secrets_of(const HttpRequest& request) const;
  CallKey call_key(const Request& request) const;
  const std::vector<std::string>& secrets(Exchange& x) const;  // of its current attempt, found once
  std::string endpoint_of(const std::string& api) const;
  std::string service_of(const Api& api) const;

  ClientConfig config_;
  const Model& model_;
  Transport transport_;
  Completer completer_;                                // empty once the configuration is complete
  bool discovered_ = false;                            // endpoint_url's serve has been asked (or there is none)
  std::shared_ptr<Cassette> cassette_;                 // null: exchanges go straight to the transport
  std::map<Id, std::unique_ptr<Exchange>> exchanges_;  // the calls under way
  Id last_id_ = 0;
};

// The cassette `config` asks for (its record or replay directory), or null for none.
// Replaying, the config is made to need no account: each API's endpoint is the recorded
// one (else http://replay.invalid) and empty credentials become a dummy key. Both
// directories at once is an error (kind config, RecordAndReplay).
Outcome<std::shared_ptr<Cassette>> open_cassette(ClientConfig& config, const std::vector<std::string>& apis);

// Seeds the retry back-off's jitter of the calling thread (where cloud's calls run):
// the same seed, the same delays (cloudlua test --seed).
void seed_retry_jitter(std::uint64_t seed);

}  // namespace cloud
