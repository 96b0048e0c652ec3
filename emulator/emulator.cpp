// HTTP face of the emulator: one cpp-httplib server per API, each request taken
// through intake (its operation matched once, its body read where that match says,
// its signature checked) -> faults -> parse -> validate -> platform -> answer, all
// with core's code so that client and emulator can never drift apart. The rooms:
// intake.cpp, faults.cpp, answers.cpp; this file wires them to the servers and keeps
// the Emulator facade.
#include "emulator/emulator.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "core/base/limits.h"
#include "core/model/protocol.h"
#include "core/model/validate.h"
#include "emulator/answers.h"
#include "emulator/connection.h"
#include "emulator/control.h"
#include "emulator/faults.h"
#include "emulator/incoming.h"
#include "emulator/intake.h"
#include "emulator/post_object.h"
#include "emulator/service.h"
#include "emulator/checkpoints.h"
#include "emulator/state_db.h"
#include "emulator/worlds.h"

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

// The order the APIs take their ports in and are listed in: storage first, on the
// port asked for, where S3 clients look; then the others in the model's order.
std::vector<const Api*> serve_order(const Model& model) {
  std::vector<const Api*> order;
  for (const Api& api : model.apis())
    if (api.name == "storage") order.push_back(&api);
  for (const Api& api : model.apis())
    if (api.name != "storage") order.push_back(&api);
  return order;
}

}  // namespace

struct Emulator::Impl {
  struct ApiServer {
    const Api* api = nullptr;
    ConnectionServer server{Intake::read_whole};
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
  Worlds worlds;       // the default world and those made since, each its platform, faults and checkpoints
  Platform& platform;  // the default world's
  std::vector<std::unique_ptr<ApiServer>> servers;
  Intake intake{options.region, options.dialect, [this](const std::string& key) -> std::optional<Credentials> {
                  std::optional<Caller> c = worlds.caller(key);
                  return c ? std::optional<Credentials>(c->account.credentials) : std::nullopt;
                }};                       // requests taken in: matched once
  Answers answers{platform};              // request ids, dates, errors and results written
  std::unique_ptr<StoreLock> store_lock;  // with options.state_file: this process owns it
  // What the bodies of the requests in flight may hold, all APIs together.
  std::shared_ptr<BodyBudget> budget = std::make_shared<BodyBudget>(options.limits.bodies_bytes);

  Impl(EmulatorOptions o, const Model& m)
      : options(std::move(o)),
        model(m),
        worlds(options.region, model, options.credentials, kEmulatorAccessKey),
        platform(worlds.main().platform) {}

  // Who sent a request taken in: the world and account of the key it was signed with;
  // one not signed is the default world's, with no account (kAnonymous).
  Caller caller_of(const Arrival& in) {
    std::optional<Caller> found = in.access_key.empty() ? std::nullopt : worlds.caller(in.access_key);
    if (found) return *found;
    return Caller{worlds.main_held(), Account{kAnonymous, {}}};
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
      dispatch(api, const_cast<httplib::Request&>(req), res, head, reader);
    } catch (...) {
      answers.internal_error(api, res, head);
    }
    // Bytes go as they are stored, never compressed on the way (httplib would gzip a
    // text/* object for a client that accepts it, as S3 never does: rclone then finds
    // its MD5 wrong); the header was read, and signed, already.
    const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
    put_headers(res, std::move(head), is_aws_request(req));
  }

  // The request as taken in (its one match), its body and signature, faults, then the
  // operation itself. An aws-chunked body is served as its decoded bytes, its trailing
  // headers (checksums) as headers.
  void dispatch(const Api& api, httplib::Request& req, httplib::Response& res, Headers& head,
                const httplib::ContentReader* reader) {
    std::string request_id = answers.begin(api, head);
    if (Intake::is_discovery(req)) {  // the one unsigned control request: nothing secret, nothing changed
      res.status = 200;
      return res.set_content(discovery(*self).dump(), "application/json");
    }
    Arrival in = intake.take(api, req);
    if (in.post_form) return post_form(api, req, reader, res, head, in.path, request_id);
    std::unique_ptr<IncomingBody> incoming;
    if (auto refusal = intake.read_body(api, req, reader, in, incoming)) {
      json details = json::object();
      for (const auto& [name, value] : refusal->details) details[name] = value;
      return send_error(api, res, refusal->status, refusal->code, refusal->message, request_id, details);
    }
    std::string& body = incoming->memory();
    Caller who = caller_of(in);
    if (req.target.rfind(kControlPrefix, 0) == 0 && who.account.id == kAnonymous)  // the control plane never is
      return send_error(api, res, 403, api.protocol->unsigned_code, api.protocol->unsigned_message, request_id);
    if (req.target.rfind(kControlPrefix, 0) == 0)
      return control(api, who, req.method, req.target, body, res, request_id);
    if (auto refusal = Intake::check_content_md5(req, incoming->digests().md5))
      return send_error(api, res, *refusal, request_id);
    if (!in.op)
      return send_error(api, res, 404, "UnknownOperation",
                        "no " + api.name + " operation answers " + req.method + " " + in.path, request_id);
    const Operation& op = *in.op;
    if (std::string sub = untaken_subresource(op, in.query); !sub.empty())
      return send_error(api, res, 501, "NotImplemented",
                        "cloudlua's emulator does not implement ?" + sub + " on " + req.method + " " + in.path,
                        request_id);
    Faults& faults = who.world->faults;
    if (std::optional<Fault> fault = faults.take(api, op.name))
      if (faults.act(api, *fault, req, body, res, request_id)) return;
    const Headers& trailers = incoming->trailers();
    in.headers.insert(in.headers.end(), trailers.begin(), trailers.end());  // a trailing checksum
    if (auto refusal = Intake::check_checksum_sent(op, in.headers)) return send_error(api, res, *refusal, request_id);
    // A raw payload (PutObject's, UploadPart's) goes to the store as it is (its memory
    // or its file), beside the arguments rather than copied into them; the model puts
    // no constraint on it.
    RequestBody kept;
    if (in.raw_payload) kept = {incoming->take_bytes(), incoming->digests().md5, incoming->checksums()};
    auto input = parse_request(api, op, in.labels, in.query, in.headers, in.raw_payload ? std::string() : body);
    if (!input.ok()) return send_error(api, res, 400, input.error().code, input.error().message, request_id);
    // The arguments moved into their validation, not copied; InvalidPartOrder is the handler's.
    auto valid = validate_input(op, std::move(*input), Checker::server);
    if (!valid.ok())
      return send_error(api, res, 400, validation_code(api, op, valid.error()), valid.error().message, request_id,
                        problems_of(valid.error()));
    send_result(api, op, who.world->platform.handle(op, *valid, &kept, who.account.id), res, head, request_id);
  }

  // A browser upload (S3's POST object, emulator/post_object.h): signed by the policy
  // in its form, not by the request; the form read whole, bounded as every body is.
  void post_form(const Api& api, const httplib::Request& req, const httplib::ContentReader* reader,
                 httplib::Response& res, Headers& head, const std::string& path, const std::string& request_id) {
    PostObjectRequest in{
        &api, nullptr, path,           request_header_value(req, "Host"), request_header_value(req, "Content-Type"), {},
        {},   {},      options.region, Dialect::find(options.dialect)};
    std::optional<Caller> signer;  // the world and account of the form's key, held while it is served
    in.credentials = [this, &signer, &in](const std::string& key) -> const Credentials* {
      signer = worlds.caller(key);
      if (!signer) return nullptr;
      in.platform = &signer->world->platform, in.account = signer->account.id;
      return &signer->account.credentials;
    };
    bool whole = Intake::read_into(req, reader, [&in](std::string_view piece) { in.body.append(piece); });
    if (reader) Intake::note_read_whole(req);
    if (!whole)
      return send_error(api, res, 400, "IncompleteBody", "the request's body ended before its declared length",
                        request_id);
    Faults& faults = worlds.main().faults;  // the form's key is read later, with the form
    if (std::optional<Fault> fault = faults.take(api, "PostObject"))
      if (faults.act(api, *fault, req, "", res, request_id)) return;
    PostObjectAnswer a = post_object(in);
    if (!a.ok) return send_error(api, res, a.error.status, a.error.code, a.error.message, request_id, a.error.details);
    res.status = a.status;
    head.insert(head.end(), a.headers.begin(), a.headers.end());
    if (!a.body.empty()) res.set_content(a.body, content_type_of(api));
  }

  // The control plane (docs/emulator.md, "The control plane"): cloud.emulator's
  // operations over HTTP, signed as any request (checked before this), faults left out.
  // POST /_cloudlua/<operation> with a JSON object of arguments (or no body), or GET
  // for one that takes none; the answer is JSON, an error the API's error body.
  static constexpr const char* kControlPrefix = "/_cloudlua/";
  void control(const Api& api, const Caller& who, const std::string& method, const std::string& target,
               const std::string& body, httplib::Response& res, const std::string& request_id) {
    std::string operation = target.substr(std::strlen(kControlPrefix));
    operation = operation.substr(0, operation.find('?'));
    if (method != "POST" && method != "GET")
      return send_error(api, res, 405, "MethodNotAllowed", "the control plane takes POST (or GET), not " + method,
                        request_id);
    bool too_deep = false;  // depth watched, as every body
    json args = body.empty() ? json::object() : parse_json_text(body, too_deep);
    if (too_deep)
      return send_error(api, res, 400, "InvalidArgument", too_deep_message("the body of a control request"),
                        request_id);
    if (args.is_discarded())
      return send_error(api, res, 400, "InvalidArgument", "the body of a control request must be a JSON object",
                        request_id);
    Outcome<json> answer = run_control(*self, who, operation, args);
    if (!answer.ok()) {
      const Error& e = answer.error();
      int status = e.code == "UnknownControl" || e.code == "NoSuchCheckpoint" || e.code == "NoSuchAccount" ? 404
                   : e.kind == ErrorKind::validation                                                       ? 400
                                                                                                           : 500;
      if (status == 500) {  // the server's own failure (a checkpoint's disk): redacted, as an object write's
        HandlerResult internal = HandlerResult::internal(operation + ": " + e.message);
        return send_error(api, res, 500, internal.error.code, internal.error.message, request_id);
      }
      return send_error(api, res, status, e.code, e.message, request_id);
    }
    res.status = 200;
    res.set_content(answer->dump(), "application/json");
  }

  // Whether a request is refused before its body is read (Intake::admit), answered so.
  bool refuse_body(const Api& api, const httplib::Request& req, httplib::Response& res) {
    std::optional<Refusal> refusal = intake.admit(api, const_cast<httplib::Request&>(req));
    if (!refusal) return false;
    answers.refuse(api, res, *refusal, is_aws_request(req));
    return true;
  }

  Outcome<bool> start_api(const Api& api, int port) {
    auto s = std::make_unique<ApiServer>();
    s->api = &api;
    s->server.set_limits(options.limits);
    s->server.set_body_budget(budget);
    s->server.set_cut_short_handler([this, a = &api](Cut why, const httplib::Request& req, httplib::Response& res) {
      answers.refuse(*a, res, cut_short_refusal(why, options.limits), is_aws_request(req));
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
      Intake::note_read_whole(req);
      serve(*a, req, res);
    };
    auto reading = [this, a = &api](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) { serve(*a, req, res, &reader); };
    s->server.set_pre_routing_handler([this, a = &api](const httplib::Request& req, httplib::Response& res) {
      if (refuse_body(*a, req, res)) return httplib::Server::HandlerResponse::Handled;
      Intake::route_anywhere(req);
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // With Expect: 100-continue the client waits before sending the body: refused
    // then, it never sends it.
    s->server.set_expect_100_continue_handler([this, a = &api](const httplib::Request& req, httplib::Response& res) {
      return refuse_body(*a, req, res) ? res.status : 100;
    });
    const char* route = Intake::kRoute;
    s->server.Get(route, handler).Post(route, reading).Put(route, reading).Delete(route, reading).Patch(route, reading);
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
      return make_error(
          ErrorKind::config, "BindFailed",
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
  auto is_public = [](const Credentials& c) {
    return c.access_key_id == kEmulatorAccessKey || c.secret_access_key == kEmulatorSecretKey;
  };
  bool any_public = is_public(o.credentials) || std::any_of(o.accounts.begin(), o.accounts.end(), is_public);
  if (!is_loopback(o.host) && any_public)
    return make_error(ErrorKind::config, "PublicCredentials",
                      "listening on " + o.host +
                          ", beyond loopback, needs an access key and secret of your own "
                          "(serve: --access-key and --secret-key; no --account of them): the built-in test "
                          "credentials are public");
  World& main = impl_->worlds.main();
  for (const Credentials& account : o.accounts)  // serve --account, --accounts
    if (!impl_->worlds.caller(account.access_key_id)) {
      auto added = impl_->worlds.add_account(main, account);
      if (!added.ok()) return added.error();
    }
  if (!impl_->options.state_file.empty() && !main.db) {
    // The database's platform in place of the fixtures (or the fixtures into a new
    // one; a JSON state file imported first); from then on every change is saved
    // before it is answered. The accounts and kept worlds with it (worlds.h).
    if (!impl_->store_lock) {  // before anything of the state is read: one owner at a time
      auto lock = StoreLock::take(impl_->options.state_file);
      if (!lock.ok()) return lock.error();
      impl_->store_lock = std::move(*lock);
    }
    auto opened = impl_->worlds.open_state(impl_->options.state_file, &impl_->store_lock, is_loopback(o.host));
    if (!opened.ok()) return opened.error();
  }
  // Raw payloads are streamed to options.body_folder, or the state's folder of bytes,
  // where the store links them in.
  impl_->intake.set_body_folder(main.db ? main.db->bytes_folder() : impl_->options.body_folder);
  impl_->worlds.each([](World& w) { w.faults.resume(); });
  int port = impl_->options.port;
  for (const Api* api : serve_order(impl_->model)) {
    auto started = impl_->start_api(*api, port);
    if (!started.ok()) {
      stop();
      return started.error();
    }
    if (port) ++port;
  }
  std::map<std::string, std::string> urls;
  for (const auto& [api, url] : endpoints()) urls[api] = url;
  impl_->worlds.each([&urls](World& w) { w.platform.set_endpoints(urls); });
  return true;
}

void Emulator::stop() {
  impl_->worlds.each(
      [](World& w) { w.faults.stop(); });  // delays end: no need to wait for requests their clients gave up on
  for (auto& s : impl_->servers) {
    s->server.stop();
    s->server.end_connections();
    if (s->thread.joinable()) s->thread.join();
  }
  impl_->servers.clear();
}

std::string Emulator::state_commits() const {
  if (impl_->options.state_file.empty()) return "";
  StateDatabase::Commits c;  // of every world saved: the default one and the kept ones
  impl_->worlds.each([&c](World& w) {
    if (!w.db) return;
    StateDatabase::Commits of = w.db->commits();
    c.changes += of.changes;
    c.commits += of.commits;
  });
  return "the state " + impl_->options.state_file + ": " + std::to_string(c.changes) + " changes saved in " +
         std::to_string(c.commits) + " commits";
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

void Emulator::add_fault(Fault fault) { impl_->worlds.main().faults.add(std::move(fault)); }
void Emulator::clear_faults() { impl_->worlds.main().faults.clear(); }

Outcome<bool> Emulator::checkpoint(const std::string& name) { return impl_->worlds.main().checkpoints->take(name); }
std::vector<std::string> Emulator::checkpoints() const { return impl_->worlds.main().checkpoints->names(); }

// The checkpoint `name` in place of the platform; an unknown name is NoSuchCheckpoint,
// listing the known ones.
Outcome<bool> Emulator::restore(const std::string& name) {
  World& main = impl_->worlds.main();
  auto restored = main.checkpoints->restore(name);
  if (!restored.ok()) return restored;
  return impl_->worlds.save_accounts(main);  // the accounts are the world's, not the checkpoint's
}

std::map<std::string, unsigned long> Emulator::requests_served() const { return impl_->worlds.main().faults.served(); }
Platform& Emulator::platform() { return impl_->platform; }
Worlds& Emulator::worlds() { return impl_->worlds; }

void Emulator::set_seed(std::uint64_t seed) {
  impl_->platform.set_seed(seed);
  impl_->answers.set_seed(seed);
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
