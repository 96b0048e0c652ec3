// The cassette of record and replay; see cassette.h and docs/design.md. A line of
// DIR/<api>.jsonl holds one exchange with sorted keys: the request as matched (api,
// operation, method, path, canonical query and body) and the answer (status, headers,
// response or response_base64) or the transport's error (kind, code, message).
#include "core/net/cassette.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/net/file_sink.h"
#include "core/base/crypto.h"
#include "core/model/model.h"
#include "core/base/limits.h"
#include "core/model/protocol.h"
#include "core/net/redact.h"
#include "core/wire/uri.h"
#include "core/base/utf8.h"

namespace cloud {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxBodyText = 64 * 1024;  // a longer request body is kept as its hash and length
// What a replay reads at most: a line (a recorded download's body, base64, in JSON),
// the lines of a cassette, its endpoints.json.
constexpr size_t kMaxLineBytes = size_t{2} * kMaxResponseBytes;
constexpr size_t kMaxLines = 1000000;
constexpr std::uintmax_t kMaxEndpointsBytes = 1 << 20;

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
  static const char* const names[] = {"date",   "connection", "keep-alive", "transfer-encoding",
                                      "server", "x-amz-date", "x-ext-date"};
  for (const char* n : names)
    if (lower == n) return true;
  return false;
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

// The answer's part of a line: status, headers and the body as text or base64. A
// header named like a credential keeps its name, its value redacted (redact_header),
// so that a replayed answer has it as --debug shows it.
void answer_fields(json& line, const HttpRequest& request, const HttpResponse& r) {
  line["status"] = r.status;
  json headers = json::object();
  for (const auto& [name, raw] : r.headers) {
    std::string lower = to_lower(name), value = redact_header(name, raw);
    if (travel_header(lower)) continue;
    headers[lower] = headers.contains(lower) ? headers[lower].get<std::string>() + ", " + value : value;
  }
  line["headers"] = headers;
  std::string body = r.body_file.empty() ? r.body : downloaded_bytes(request, r);
  if (utf8_length(body) >= 0) line["response"] = body;
  else line["response_base64"] = base64(body);
}

const ErrorKind kErrorKinds[] = {ErrorKind::validation, ErrorKind::api,    ErrorKind::transport, ErrorKind::timeout,
                                 ErrorKind::config,     ErrorKind::waiter, ErrorKind::io};

ErrorKind kind_of(const std::string& name) {
  for (ErrorKind k : kErrorKinds)
    if (name == kind_name(k)) return k;
  return ErrorKind::transport;
}

// A text as a message quotes it, cut at 80 characters.
std::string quote(const std::string& s) { return "\"" + (s.size() > 80 ? s.substr(0, 77) + "..." : s) + "\""; }

// One differing field: where, and both values ("(none)" for one left out).
void differ(std::vector<FieldProblem>& out, const std::string& path, const std::string* recorded,
            const std::string* sent) {
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
    std::string a = r.is_string() ? r.get<std::string>() : r.dump(),
                b = s.is_string() ? s.get<std::string>() : s.dump();
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

// A value as a problem quotes it, cut at 40 characters.
std::string got(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return " (got " + (text.size() > 40 ? text.substr(0, 37) + "..." : text) + ")";
}

// What is wrong with the recorded failure `e` ("'error.kind' must be ..."), or "".
std::string error_problem(const json& e) {
  if (!e.is_object()) return "'error' must be an object of kind, code and message" + got(e);
  for (const char* f : {"kind", "code", "message"}) {
    bool required = std::string(f) != "message";
    if (!e.contains(f) ? required : !e[f].is_string())
      return std::string("'error.") + f + "' must be a string" + (e.contains(f) ? got(e[f]) : "");
  }
  std::string kinds;
  for (ErrorKind k : kErrorKinds) {
    if (e["kind"] == kind_name(k)) return "";
    kinds += (kinds.empty() ? "" : ", ") + std::string(kind_name(k));
  }
  return "'error.kind' must be one of " + kinds + got(e["kind"]);
}

// What is wrong with a line of a cassette, naming the field ("'status' must be ..."),
// or "". Every field a replay reads is checked here, so that replaying never meets a
// value of another type.
std::string line_problem(const json& line) {
  if (!line.is_object()) return "the line must be a JSON object" + got(line);
  for (const char* f : {"api", "operation", "method", "path", "query", "body"})
    if (!line.contains(f) || !line[f].is_string())
      return std::string("'") + f + "' must be a string" + (line.contains(f) ? got(line[f]) : "");
  if (line.contains("error")) return error_problem(line["error"]);
  if (!line.contains("status")) return "'status' must be given (or 'error')";
  const json& status = line["status"];
  if (!status.is_number_integer() || status.get<long long>() < 100 || status.get<long long>() > 599)
    return "'status' must be an integer from 100 to 599" + got(status);
  if (line.contains("headers")) {
    if (!line["headers"].is_object()) return "'headers' must be an object" + got(line["headers"]);
    for (const auto& [name, value] : line["headers"].items())
      if (!value.is_string()) return "'headers." + name + "' must be a string" + got(value);
  }
  for (const char* f : {"response", "response_base64"})
    if (line.contains(f) && !line[f].is_string()) return std::string("'") + f + "' must be a string" + got(line[f]);
  if (line.contains("response_base64") && !unbase64(line["response_base64"].get<std::string>()))
    return "'response_base64' is not base64";
  if (may_be_too_deep(line["body"].get<std::string>()))
    return "'body' is nested more than " + std::to_string(kMaxDepth) + " levels deep";
  return "";
}

// Reads the next line of `in`, of at most kMaxLineBytes, into `line`; false at the end
// of the file. A longer line sets `too_long` and is not read further.
bool next_line(std::istream& in, std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf* buffer = in.rdbuf();
  for (int c; (c = buffer->sbumpc()) != std::char_traits<char>::eof();) {
    if (c == '\n') return true;
    if (line.size() == kMaxLineBytes) {
      too_long = true;
      return true;
    }
    line.push_back(static_cast<char>(c));
  }
  return !line.empty();
}

// Reads one cassette file into `entries`; a malformed line is an error naming it
// (file:line: the field and what it must be).
std::optional<Error> read_cassette_file(const fs::path& path, std::vector<Cassette::Entry>& entries) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return cassette_error("CassetteUnreadable", "--replay: cannot read " + path.string());
  std::string text;
  bool too_long = false;
  for (int number = 1; next_line(in, text, too_long); number++) {
    auto malformed = [&](const std::string& problem) {
      return cassette_error("MalformedCassette", path.string() + ":" + std::to_string(number) + ": " + problem);
    };
    if (too_long) return malformed("the line is longer than " + size_text(kMaxLineBytes));
    if (text.empty()) continue;
    if (entries.size() >= kMaxLines) return malformed("more than " + std::to_string(kMaxLines) + " recorded calls");
    bool too_deep = false;
    json line = parse_json_text(text, too_deep);
    std::string problem = too_deep ? "the line is nested more than " + std::to_string(kMaxDepth) + " levels deep"
                          : line.is_discarded() ? "not valid JSON"
                                                : line_problem(line);
    if (!problem.empty()) return malformed(problem);
    entries.push_back({std::move(line), path.filename().string(), number, false});
  }
  return std::nullopt;
}

// The files of the exchanges: DIR/<api>.jsonl for each API of the model.
std::vector<std::string> cassette_files() {
  std::vector<std::string> out;
  for (const Api& api : Model::builtin().apis()) out.push_back(api.name + ".jsonl");
  return out;
}

}  // namespace

std::vector<std::string> Cassette::file_names() {
  std::vector<std::string> files = cassette_files();
  files.push_back("endpoints.json");
  return files;
}

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
    const std::vector<std::string> files = file_names();  // a recording replaces the one before, by name
    for (const std::string& f : files)
      if (!fs::remove(fs::path(dir) / f, ec) && ec)
        return cassette_error("CassetteUnwritable",
                              "--record: cannot replace " + (fs::path(dir) / f).string() + ": " + ec.message());
  } else {
    if (!fs::is_directory(dir, ec))
      return cassette_error("NoCassette", "--replay: no cassette folder " + dir + " (a run with --record makes one)");
    std::vector<std::string> files = cassette_files();
    std::sort(files.begin(), files.end());
    for (const std::string& f : files)
      if (fs::exists(fs::path(dir) / f, ec))
        if (auto failed = read_cassette_file(fs::path(dir) / f, cassette->entries_)) return *failed;
    fs::path named = fs::path(dir) / "endpoints.json";
    if (fs::exists(named, ec) && fs::file_size(named, ec) > kMaxEndpointsBytes)
      return cassette_error("MalformedCassette", named.string() + ": longer than " + size_text(kMaxEndpointsBytes));
    std::ifstream in(named);
    json endpoints = in ? json::parse(in, nullptr, false) : json::object();
    if (!endpoints.is_object()) return cassette_error("MalformedCassette", named.string() + ": not a JSON object");
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
  return transport.start(std::move(request),
                         [this, key, sent, secrets, access_key, done = std::move(done)](Outcome<HttpResponse> outcome) {
                           if (std::optional<Error> failed = record(key, *sent, outcome, secrets, access_key))
                             return done(*failed);
                           done(std::move(outcome));
                         });
}

// Appends the exchange to DIR/<api>.jsonl (and the API's endpoint to endpoints.json);
// a recording that cannot be written fails the call (kind config, CassetteUnwritable),
// so that a run never seems recorded when it is not.
std::optional<Error> Cassette::record(const CallKey& key, const HttpRequest& request,
                                      const Outcome<HttpResponse>& outcome, const std::vector<std::string>& secrets,
                                      const std::string& access_key) {
  json line = {{"api", key.api},   {"operation", key.operation},          {"method", key.method},
               {"path", key.path}, {"query", canonical_query(key.query)}, {"body", canonical_body(key)}};
  if (outcome.ok()) answer_fields(line, request, *outcome);
  else
    line["error"] = {{"kind", kind_name(outcome.error().kind)},
                     {"code", outcome.error().code},
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
  // As recorded: redacted (a password sent matches the one the recording removed).
  std::string query = redact(canonical_query(key.query)), body = redact(canonical_body(key));
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

}  // namespace cloud
