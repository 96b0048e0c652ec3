// Answer writing (answers.h): ids and dates, errors, results and bytes, headers.
#include "emulator/answers.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string_view>

#include "core/base/crypto.h"
#include "core/base/dates.h"
#include "core/base/limits.h"
#include "core/model/protocol.h"

namespace cloud {

namespace {

std::string http_date(std::time_t t) { return format_date(t, DateForm::http); }

// Now as an HTTP date, formatted once a second per thread rather than per answer.
const std::string& http_date_now() {
  thread_local std::time_t formatted = -1;
  thread_local std::string date;
  std::time_t now = std::time(nullptr);
  if (now == formatted) return date;
  date = http_date(now), formatted = now;
  return date;
}

// Below this, an answer's bytes are copied into it: httplib's content provider
// costs more to set up (a sink, a stream and three std::functions) than the copy.
constexpr size_t kCopyBelow = 64 << 10;

// Stored bytes as the answer's body, sent from the store a piece at a time (at most
// Blob::kPiece held): the provider holds the bytes (a later PutObject of the key
// replaces them in the store, not here; a file stays open). A file that cannot be
// read ends the answer short, as a failed send does.
void send_bytes(httplib::Response& res, const BytesSlice& slice, const char* type) {
  if (slice.length < kCopyBelow) return res.set_content(slice.bytes->slice(slice.offset, slice.length), type);
  const std::string* memory = slice.bytes->in_memory();
  auto piece = std::make_shared<std::string>();
  res.set_content_provider(slice.length, type,
                           [slice, memory, piece](size_t offset, size_t length, httplib::DataSink& sink) {
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

}  // namespace

Answers::Answers(Platform& platform) : platform_(platform), started_(static_cast<unsigned>(std::time(nullptr))) {}

std::string Answers::next_request_id() {
  char buf[40];
  std::snprintf(buf, sizeof buf, "emu-%08x%08llx", started_.load(), ++requests_);
  return buf;
}

void Answers::set_seed(std::uint64_t seed) {
  unsigned started = static_cast<unsigned>(mix_seed(seed) >> 32);
  if (started_.exchange(started) != started) requests_ = 0;  // the same seed again: counted on
  seeded_ = true;
}

// The Date of an answer: now, or the platform's now when seeded.
std::string Answers::date_now() { return seeded_ ? http_date(platform_.now_wall()) : http_date_now(); }

// x-ext-expiration and the KMS and customer-key headers are left out, as S3 does
// without lifecycle rules, KMS or customer keys, which this emulator does not have.
void Answers::set_common_headers(const Api& api, Headers& head, const std::string& request_id) {
  head.emplace_back("Date", date_now());
  head.emplace_back("x-ext-request-id", request_id);
  if (!api.protocol->support_ids) return;
  std::string digest = sha256(request_id);  // one hash for both (a second, MD5, cost as much)
  head.emplace_back("x-ext-id-2", base64(digest));
  head.emplace_back("x-storage-sg-trace-id", hex(std::string_view(digest).substr(24)));
  head.emplace_back("X-Gateway-Endpoint-Request", "1");
}

std::string Answers::begin(const Api& api, Headers& head) {
  std::string request_id = next_request_id();
  set_common_headers(api, head, request_id);
  return request_id;
}

void Answers::internal_error(const Api& api, httplib::Response& res, Headers& head) {
  std::string request_id = header_value(head, "x-ext-request-id");
  res = httplib::Response();
  head.clear();
  if (request_id.empty()) request_id = next_request_id();
  set_common_headers(api, head, request_id);
  send_error(api, res, 500, "InternalError", "We encountered an internal error. Please try again.", request_id);
}

void Answers::refuse(const Api& api, httplib::Response& res, const Refusal& refusal, bool aws) {
  Headers head;
  std::string request_id = begin(api, head);
  send_error(api, res, refusal, request_id);
  put_headers(res, std::move(head), aws);
}

void send_error(const Api& api, httplib::Response& res, int status, const std::string& code, const std::string& message,
                const std::string& request_id, const json& details) {
  res.status = status;
  res.set_content(serialize_error(api, code, message, request_id, details), content_type_of(api));
}

void send_result(const Api& api, const Operation& op, const HandlerResult& r, httplib::Response& res, Headers& head,
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
  auto declared =
      std::find_if(head.begin(), head.end(), [](const Header& h) { return iequals(h.first, "Content-Type"); });
  if (declared != head.end()) type = declared->second, head.erase(declared);
  if (r.payload.bytes) return send_bytes(res, r.payload, type.c_str());
  res.set_content(body, type);
}

// For the storage API what S3 says, MalformedXML when the XML body breaks the schema
// (an empty part list, an element the schema does not have: only the body can bring
// an unknown field), else InvalidArgument; the JSON APIs say ValidationError either
// way; a rule the model gives a code of its own (errorCodes: KeyTooLongError) says that.
std::string validation_code(const Api& api, const Operation& op, const Error& e) {
  for (const FieldProblem& f : e.fields)
    if (!f.code.empty()) return f.code;  // the model's own for the rule (KeyTooLongError)
  for (const FieldProblem& f : e.fields) {
    const Member* m = op.input->find_member(f.path.substr(0, f.path.find_first_of(".[")));
    if (!m || m->location == Location::body) return api.protocol->invalid_body_code;
  }
  return api.protocol->invalid_argument_code;
}

json problems_of(const Error& e) {
  json fields = json::array();
  for (const FieldProblem& f : e.fields) fields.push_back({{"path", f.path}, {"problem", f.problem}});
  return {{"fields", fields}};
}

// httplib's map compares names a character at a time through tolower(): inserted in
// its order, each insert is one comparison with the last rather than a walk down the
// tree (httplib's set_header leaves out values with line breaks; here any control
// character).
void put_headers(httplib::Response& res, Headers head, bool aws) {
  for (Header& h : head)
    if (aws && h.first.size() > 6 && iequals(std::string_view(h.first).substr(0, 6), "x-ext-"))
      h.first.replace(0, 6, "x-amz-");
  std::stable_sort(head.begin(), head.end(), [](const Header& a, const Header& b) { return iless(a.first, b.first); });
  for (Header& h : head)
    if (header_value_ok(h.first) && header_value_ok(h.second))
      res.headers.emplace_hint(res.headers.end(), std::move(h.first), std::move(h.second));
}

// S3's RequestTimeout when it stalled, its RequestHeaderSectionTooLarge when its head
// outgrew the limits (both 400).
Refusal cut_short_refusal(Cut why, const ConnectionLimits& limits) {
  if (why == Cut::timed_out)
    return {400, "RequestTimeout",
            "Your socket connection to the server was not read from or written to within the timeout period. "
            "Idle connections will be closed."};
  return {400, "RequestHeaderSectionTooLarge",
          "Your request header section exceeds the maximum allowed size (" + std::to_string(limits.head_lines) +
              " header lines, " + size_text(limits.head_bytes) + " in all)."};
}

}  // namespace cloud
