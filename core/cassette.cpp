// The cassette of record and replay; see cassette.h and docs/design.md. A line of
// DIR/<api>.jsonl holds one exchange with sorted keys: the request as matched (api,
// operation, method, path, canonical query and body) and the answer (status, headers,
// response or response_base64) or the transport's error (kind, code, message).
#include "core/cassette.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/body.h"
#include "core/client.h"
#include "core/crypto.h"
#include "core/model.h"
#include "core/redact.h"
#include "core/uri.h"
#include "core/validate.h"

namespace cloud {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxBodyText = 64 * 1024;  // a longer request body is kept as its hash and length
const char* const kReplayOrigin = "http://replay.invalid";

Error cassette_error(const std::string& code, const std::string& message) {
  return make_error(ErrorKind::config, code, message);
}

// The query with each pair decoded and encoded once, sorted: how it is matched.
std::string canonical_query(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto& [k, v] : split_query(query)) pairs.emplace_back(uri_encode(uri_decode(k)), uri_encode(uri_decode(v)));
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [k, v] : pairs) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

std::string hashed(const std::string& sha256, std::uint64_t length) {
  return "sha256:" + sha256 + " length:" + std::to_string(length);
}

// The body as matched: JSON with sorted keys, short text as sent, else its hash and length.
std::string canonical_body(const CallKey& key) {
  if (!key.upload_sha256.empty()) return hashed(key.upload_sha256, key.upload_length);
  if (key.body.empty()) return "";
  json parsed = json::parse(key.body, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_structured()) return parsed.dump();
  if (key.body.size() <= kMaxBodyText && utf8_length(key.body) >= 0) return key.body;
  return hashed(sha256_hex(key.body), key.body.size());
}

// Answer headers that only say how this exchange travelled: never recorded.
bool travel_header(const std::string& lower) {
  static const char* const names[] = {"date", "connection", "keep-alive", "transfer-encoding", "server",
                                      "x-amz-date", "x-ext-date"};
  for (const char* n : names)
    if (lower == n) return true;
  return lower.find("authorization") != std::string::npos || lower.find("token") != std::string::npos;
}

// Every string in `v` with the access key replaced and the secrets redacted.
void scrub(json& v, const std::vector<std::string>& secrets, const std::string& access_key) {
  if (v.is_structured()) {
    for (auto& item : v) scrub(item, secrets, access_key);
    return;
  }
  if (!v.is_string()) return;
  std::string s = v.get<std::string>();
  for (size_t at; access_key.size() >= 4 && (at = s.find(access_key)) != std::string::npos;)
    s.replace(at, access_key.size(), kRecordedAccessKey);
  v = redact(s, secrets);
}

// The bytes a download wrote to its file, for the recording.
std::string downloaded_bytes(const HttpRequest& request, const HttpResponse& response) {
  std::ifstream in(response.body_file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(request.files.download_at.value_or(0)));
  std::string length = header_value(response.headers, "content-length");
  char* end = nullptr;
  unsigned long long n = std::strtoull(length.c_str(), &end, 10);
  if (length.empty() || *end) return std::string(std::istreambuf_iterator<char>(in), {});
  std::string out(static_cast<size_t>(n), '\0');  // the transport checked it against the file's size
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return out;
}

// The answer's part of a line: status, headers and the body as text or base64.
void answer_fields(json& line, const HttpRequest& request, const HttpResponse& r) {
  line["status"] = r.status;
  json headers = json::object();
  for (const auto& [name, value] : r.headers) {
    std::string lower = to_lower(name);
    if (travel_header(lower)) continue;
    headers[lower] = headers.contains(lower) ? headers[lower].get<std::string>() + ", " + value : value;
  }
  line["headers"] = headers;
  std::string body = r.body_file.empty() ? r.body : downloaded_bytes(request, r);
  if (utf8_length(body) >= 0) line["response"] = body;
  else line["response_base64"] = base64(body);
}

ErrorKind kind_of(const std::string& name) {
  for (ErrorKind k : {ErrorKind::validation, ErrorKind::api, ErrorKind::transport, ErrorKind::timeout,
                      ErrorKind::config, ErrorKind::waiter, ErrorKind::io})
    if (name == kind_name(k)) return k;
  return ErrorKind::transport;
}

// A text as a message quotes it, cut at 80 characters.
std::string quote(const std::string& s) {
  return "\"" + (s.size() > 80 ? s.substr(0, 77) + "..." : s) + "\"";
}

// One differing field: where, and both values ("(none)" for one left out).
void differ(std::vector<FieldProblem>& out, const std::string& path, const std::string* recorded, const std::string* sent) {
  out.emplace_back(path, std::string("recorded ") + (recorded ? quote(*recorded) : "(none)") + ", sent " +
                             (sent ? quote(*sent) : "(none)"));
}

std::map<std::string, std::string> query_map(const std::string& query) {
  std::map<std::string, std::string> out;
  for (auto& [k, v] : split_query(query)) out[uri_decode(k)] = uri_decode(v);
  return out;
}

// The query's differences parameter by parameter: query.max-keys.
void query_differences(const std::string& recorded, const std::string& sent, std::vector<FieldProblem>& out) {
  auto r = query_map(recorded), s = query_map(sent);
  for (const auto& [k, v] : r) {
    auto it = s.find(k);
    if (it == s.end() || it->second != v) differ(out, "query." + k, &v, it == s.end() ? nullptr : &it->second);
  }
  for (const auto& [k, v] : s)
    if (!r.count(k)) differ(out, "query." + k, nullptr, &v);
}

// JSON bodies' differences by dotted path (body.Tags[2].Key); other bodies as a whole.
void json_differences(const json& r, const json& s, const std::string& path, std::vector<FieldProblem>& out) {
  if (r.is_object() && s.is_object()) {
    for (auto it = r.begin(); it != r.end(); ++it) {
      std::string text = it.value().dump();
      if (!s.contains(it.key())) differ(out, path + "." + it.key(), &text, nullptr);
      else json_differences(it.value(), s[it.key()], path + "." + it.key(), out);
    }
    for (auto it = s.begin(); it != s.end(); ++it) {
      std::string text = it.value().dump();
      if (!r.contains(it.key())) differ(out, path + "." + it.key(), nullptr, &text);
    }
    return;
  }
  if (r.is_array() && s.is_array() && r.size() == s.size()) {
    for (size_t i = 0; i < r.size(); i++) json_differences(r[i], s[i], path + "[" + std::to_string(i + 1) + "]", out);
    return;
  }
  if (r != s) {
    std::string a = r.is_string() ? r.get<std::string>() : r.dump(), b = s.is_string() ? s.get<std::string>() : s.dump();
    differ(out, path, &a, &b);
  }
}

void body_differences(const std::string& recorded, const std::string& sent, std::vector<FieldProblem>& out) {
  if (recorded == sent) return;
  json r = json::parse(recorded, nullptr, false), s = json::parse(sent, nullptr, false);
  if (!r.is_discarded() && !s.is_discarded() && r.is_structured() && s.is_structured())
    return json_differences(r, s, "body", out);
  differ(out, "body", &recorded, &sent);
}

// The registry of open cassettes: one per mode and directory in the process.
std::map<std::string, std::weak_ptr<Cassette>>& open_cassettes() {
  static std::map<std::string, std::weak_ptr<Cassette>> open;
  return open;
}

const char* mode_flag(Cassette::Mode mode) { return mode == Cassette::Mode::record ? "--record" : "--replay"; }

}  // namespace

// One recorded exchange: the line, where it came from, and whether it was replayed.
struct Cassette::Entry {
  json line;
  std::string file;  // "storage.jsonl"
  int number = 0;    // its line
  bool used = false;

  std::string text(const char* field) const { return line.value(field, ""); }
  std::string where() const { return file + ":" + std::to_string(number); }
  // "ListObjects GET /bkt?max-keys=2"
  std::string call() const {
    std::string q = text("query");
    return text("operation") + " " + text("method") + " " + text("path") + (q.empty() ? "" : "?" + q);
  }
  std::vector<FieldProblem> differences(const CallKey& key, const std::string& query, const std::string& body) const {
    std::vector<FieldProblem> out;
    std::string method = text("method"), path = text("path");
    if (method != key.method) differ(out, "method", &method, &key.method);
    if (path != key.path) differ(out, "path", &path, &key.path);
    query_differences(text("query"), query, out);
    body_differences(text("body"), body, out);
    return out;
  }
};

Cassette::Cassette(Mode mode, std::string dir) : mode_(mode), dir_(std::move(dir)) {}
Cassette::~Cassette() = default;

namespace {

// What is wrong with a line of a cassette, or "".
std::string line_problem(const json& line) {
  if (!line.is_object()) return "not a JSON object";
  for (const char* f : {"api", "operation", "method", "path", "query", "body"})
    if (!line.contains(f) || !line[f].is_string()) return std::string("'") + f + "' must be a string";
  if (line.contains("error")) {
    const json& e = line["error"];
    if (!e.is_object() || !e.value("code", json()).is_string() || !e.value("kind", json()).is_string())
      return "'error' must be an object with kind and code";
    return "";
  }
  if (!line.contains("status") || !line["status"].is_number_integer()) return "'status' must be an integer";
  if (line.contains("headers") && !line["headers"].is_object()) return "'headers' must be an object";
  for (const auto& h : line.value("headers", json::object()))
    if (!h.is_string()) return "every header's value must be a string";
  if (line.contains("response_base64") && !unbase64(line.value("response_base64", "")))
    return "'response_base64' is not base64";
  return "";
}

// Reads one cassette file into `entries`; a malformed line is an error naming it.
std::optional<Error> read_cassette_file(const fs::path& path, std::vector<Cassette::Entry>& entries) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return cassette_error("CassetteUnreadable", "--replay: cannot read " + path.string());
  std::string text;
  for (int number = 1; std::getline(in, text); number++) {
    if (text.empty()) continue;
    json line = json::parse(text, nullptr, false);
    std::string problem = line.is_discarded() ? "not valid JSON" : line_problem(line);
    if (!problem.empty())
      return cassette_error("MalformedCassette", path.string() + ":" + std::to_string(number) + ": " + problem);
    entries.push_back({std::move(line), path.filename().string(), number, false});
  }
  return std::nullopt;
}

}  // namespace

Outcome<std::shared_ptr<Cassette>> Cassette::open(Mode mode, const std::string& dir) {
  std::error_code ec;
  std::string key = std::string(mode_flag(mode)) + " " + fs::weakly_canonical(fs::absolute(dir, ec), ec).string();
  auto& registry = open_cassettes();
  if (auto it = registry.find(key); it != registry.end())
    if (auto existing = it->second.lock()) return existing;
  auto cassette = std::make_shared<Cassette>(mode, dir);
  if (mode == Mode::record) {
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
      return cassette_error("CassetteUnwritable", "--record: cannot make the folder " + dir + ": " + ec.message());
    for (const auto& f : fs::directory_iterator(dir, ec))  // a recording replaces the one before
      if (f.path().extension() == ".jsonl" || f.path().filename() == "endpoints.json") fs::remove(f.path(), ec);
  } else {
    if (!fs::is_directory(dir, ec))
      return cassette_error("NoCassette", "--replay: no cassette folder " + dir + " (a run with --record makes one)");
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir, ec))
      if (f.path().extension() == ".jsonl") files.push_back(f.path());
    if (ec) return cassette_error("CassetteUnreadable", "--replay: cannot read the folder " + dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files)
      if (auto failed = read_cassette_file(f, cassette->entries_)) return *failed;
    std::ifstream in(fs::path(dir) / "endpoints.json");
    json endpoints = in ? json::parse(in, nullptr, false) : json::object();
    if (!endpoints.is_object())
      return cassette_error("MalformedCassette", (fs::path(dir) / "endpoints.json").string() + ": not a JSON object");
    for (const auto& [api, url] : endpoints.items())
      if (url.is_string()) cassette->endpoints_[api] = url.get<std::string>();
  }
  registry[key] = cassette;
  return cassette;
}

Transport::Id Cassette::start(Transport& transport, const CallKey& key, HttpRequest request,
                              const std::vector<std::string>& secrets, const std::string& access_key,
                              Transport::Completion done) {
  if (mode_ == Mode::replay) {
    Outcome<HttpResponse> answer = replay(key, request.files);
    return transport.add_timer(0, [done = std::move(done), answer = std::move(answer)] { done(answer); });
  }
  auto sent = std::make_shared<HttpRequest>(HttpRequest{request.method, request.url, {}, {}, request.files});
  return transport.start(std::move(request), [this, key, sent, secrets, access_key, done = std::move(done)](
                                                 Outcome<HttpResponse> outcome) {
    if (std::optional<Error> failed = record(key, *sent, outcome, secrets, access_key)) return done(*failed);
    done(std::move(outcome));
  });
}

// Appends the exchange to DIR/<api>.jsonl (and the API's endpoint to endpoints.json);
// a recording that cannot be written fails the call (kind config, CassetteUnwritable),
// so that a run never seems recorded when it is not.
std::optional<Error> Cassette::record(const CallKey& key, const HttpRequest& request, const Outcome<HttpResponse>& outcome,
                      const std::vector<std::string>& secrets, const std::string& access_key) {
  json line = {{"api", key.api},     {"operation", key.operation},         {"method", key.method},
               {"path", key.path},   {"query", canonical_query(key.query)}, {"body", canonical_body(key)}};
  if (outcome.ok()) answer_fields(line, request, *outcome);
  else line["error"] = {{"kind", kind_name(outcome.error().kind)}, {"code", outcome.error().code},
                        {"message", outcome.error().message}};
  scrub(line, secrets, access_key);
  fs::path file = fs::path(dir_) / (key.api + ".jsonl");
  if (!(std::ofstream(file, std::ios::app | std::ios::binary) << line.dump() << "\n"))
    return cassette_error("CassetteUnwritable", "--record: cannot write " + file.string());
  if (endpoints_[key.api] == key.endpoint) return std::nullopt;
  endpoints_[key.api] = key.endpoint;
  json endpoints(endpoints_);
  scrub(endpoints, secrets, access_key);
  file = fs::path(dir_) / "endpoints.json";
  if (!(std::ofstream(file, std::ios::trunc) << endpoints.dump(2) << "\n"))
    return cassette_error("CassetteUnwritable", "--record: cannot write " + file.string());
  return std::nullopt;
}

// The answer of a recorded line; a success to a file (a download) is written there
// as the transport writes one.
Outcome<HttpResponse> recorded_answer(const Cassette::Entry& e, const BodyFiles& files) {
  HttpResponse r;
  r.status = e.line.value("status", 0L);
  json headers = e.line.value("headers", json::object());
  for (const auto& [name, value] : headers.items()) r.headers.emplace_back(name, value);
  r.body = e.line.contains("response_base64") ? *unbase64(e.text("response_base64")) : e.text("response");
  if (files.download_to.empty() || r.status < 200 || r.status >= 300) return r;
  FileSink sink(files.download_to, files.download_at, files.durable);
  std::string problem = sink.open();
  if (problem.empty() && !sink.write(r.body.data(), r.body.size())) problem = sink.error();
  if (problem.empty()) problem = sink.commit();
  if (!problem.empty()) return make_error(ErrorKind::transport, "FileWriteFailed", problem);
  r.body.clear();
  r.body_file = files.download_to;
  return r;
}

// The answer recorded for the call, or the NoRecordedCall error naming the nearest.
Outcome<HttpResponse> Cassette::replay(const CallKey& key, const BodyFiles& files) {
  std::string query = canonical_query(key.query), body = canonical_body(key);
  const Entry* nearest = nullptr;
  std::vector<FieldProblem> nearest_differences;
  for (Entry& e : entries_) {
    if (e.text("api") != key.api || e.text("operation") != key.operation) continue;
    std::vector<FieldProblem> d = e.differences(key, query, body);
    if (d.empty() && !e.used) {
      e.used = true;
      return e.line.contains("error") ? Outcome<HttpResponse>(make_error(kind_of(e.line["error"].value("kind", "")),
                                                                      e.line["error"].value("code", ""),
                                                                      e.line["error"].value("message", "")))
                                      : Outcome<HttpResponse>(recorded_answer(e, files));
    }
    if (!nearest || d.size() < nearest_differences.size()) nearest = &e, nearest_differences = std::move(d);
  }
  std::string sent = key.operation + " " + key.method + " " + key.path + (query.empty() ? "" : "?" + query);
  Error error = cassette_error("NoRecordedCall", "no recorded call in " + dir_ + " matches " + sent);
  if (!nearest) error.message += ": " + key.operation + " was not recorded (" + key.api + ".jsonl)";
  else if (nearest_differences.empty())
    error.message += ": it was recorded, and every recorded call like it was replayed already (this one is one more)";
  else error.message += "; the nearest is " + nearest->where() + " (" + nearest->call() + "), which differs in:";
  error.fields = std::move(nearest_differences);
  return error;
}

std::string Cassette::endpoint(const std::string& api) const {
  auto it = endpoints_.find(api);
  return it == endpoints_.end() ? "" : it->second;
}

std::vector<std::string> Cassette::unused() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_)
    if (!e.used) out.push_back(e.text("operation") + " (" + e.where() + ")");
  return out;
}

Outcome<std::shared_ptr<Cassette>> open_cassette(ClientConfig& config, const std::vector<std::string>& apis) {
  if (!config.record.empty() && !config.replay.empty())
    return cassette_error("RecordAndReplay", "record (" + config.record + ") and replay (" + config.replay +
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
