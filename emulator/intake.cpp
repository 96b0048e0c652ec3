// Request intake (intake.h): a request taken in once, its operation matched at the
// first look, its body read where that match says, its signature checked.
#include "emulator/intake.h"

#include <cstdlib>
#include <vector>

#include "core/base/crypto.h"
#include "core/base/limits.h"
#include "core/model/protocol.h"
#include "core/wire/uri.h"
#include "emulator/control.h"
#include "emulator/post_object.h"

namespace cloud {

std::atomic<unsigned long> Intake::matched_{0};

namespace {

// httplib 0.11 percent-decodes every header value as it reads it. The copy-source
// header of CopyObject is the one a client sends percent-encoded (the source key,
// S3's way: '/' kept), and signs so: it is encoded again, its ?versionId= kept, so
// that the signature is checked and the key decoded on the value as sent.
void encode_copy_source(httplib::Request& req) {
  for (auto& [name, value] : req.headers) {
    if (!iequals(name, "x-amz-copy-source") && !iequals(name, "x-ext-copy-source")) continue;
    size_t q = value.find("?versionId=");
    value = uri_encode(value.substr(0, q), true) + (q == std::string::npos ? "" : value.substr(q));
  }
}

// Calls fn(name, value) for each header field of a request head (its lines after the
// request line), the value trimmed as HTTP trims it; lines without a name are skipped.
template <typename Fn>
void for_each_field(const std::string& head, Fn&& fn) {
  size_t at = head.find('\n');  // after the request line
  while (at != std::string::npos && at + 1 < head.size()) {
    size_t end = head.find('\n', at + 1);
    std::string_view line(head.data() + at + 1, (end == std::string::npos ? head.size() : end) - at - 1);
    at = end;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    fn(line.substr(0, colon), value);
  }
}

// Whether the request's head has the header `name`: httplib drops one sent empty.
bool sent_in_head(std::string_view name) {
  const std::string* head = current_request_head();
  bool found = false;
  if (head) for_each_field(*head, [&](std::string_view n, std::string_view) { found = found || iequals(n, name); });
  return found;
}

// httplib 0.11 percent-decodes every header value as it reads it: a copy source
// sent as rclone sends it (a%2Bb=c.txt), a metadata value or a Content-Disposition
// holding a '%' would be checked against its signature, and kept, as another text.
// Each header gets back the value it came with, from the head its connection kept
// (a name's values in the order they came, trimmed as HTTP trims them). A request
// whose connection kept no head has its copy source encoded again S3's way.
void take_header_values(httplib::Request& req) {
  const std::string* head = current_request_head();
  if (!head || head->empty()) return encode_copy_source(req);
  std::map<std::string, std::vector<std::string>> sent;  // lower-cased name -> values
  for_each_field(*head,
                 [&](std::string_view name, std::string_view value) { sent[to_lower(name)].emplace_back(value); });
  std::map<std::string, size_t> taken;
  for (auto& [name, value] : req.headers) {
    auto found = sent.find(to_lower(name));
    if (found == sent.end()) continue;
    size_t& next = taken[found->first];
    if (next < found->second.size()) value = found->second[next++];
  }
}

// Whether the operation's body is its payload member's bytes as they are (a blob
// with no constraint to check: PutObject's, UploadPart's).
bool is_raw_payload(const Operation& op) {
  if (op.payload.empty()) return false;
  const Member* m = op.input->find_member(op.payload);
  return m && m->shape && m->shape->type == ShapeType::blob;
}

// The size an aws-chunked body sent with Transfer-Encoding: chunked (as boto3 sends
// trailing checksums) declares instead of a Content-Length: its decoded length; ""
// when the body is no such body or declares none.
std::string decoded_length(const httplib::Request& req) {
  if (request_header_value(req, "Content-Encoding").find("aws-chunked") == std::string::npos) return {};
  for (const Dialect* d : {&Dialect::aws(), &Dialect::ext()}) {
    std::string name = to_lower(d->header_prefix) + "decoded-content-length";
    if (const std::string* v = request_header(req, name)) return *v;
  }
  return {};
}

// The path of a request once the emulator has it whole: httplib has read its body,
// if it declared one (it reads none for GET, HEAD or OPTIONS). A connection serves
// the next request only after such a one: httplib answers some requests on its own
// before reading their bodies (a request line too long, a malformed Range), and admit
// refuses some unread; what is left of one must not be read as the next request.
constexpr const char* kReadWhole = "/read-whole";

// A Content-Length value: 1 to 19 decimal digits (what fits 64 bits), nothing else.
bool decimal_length(const std::string& text) {
  return !text.empty() && text.size() <= 19 && text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

// A look along the request's few headers comparing names as ASCII: httplib's lookups
// fold both names through tolower() a character at a time at each node of its map.
const std::string* request_header(const httplib::Request& req, std::string_view name) {
  for (const auto& [n, v] : req.headers)
    if (iequals(n, name)) return &v;
  return nullptr;
}

std::string request_header_value(const httplib::Request& req, std::string_view name) {
  const std::string* v = request_header(req, name);
  return v ? *v : std::string();
}

bool is_aws_request(const httplib::Request& req) {
  return request_header_value(req, "Authorization").rfind(Dialect::aws().algorithm, 0) == 0 ||
         req.has_param(Dialect::aws().query_prefix + "Algorithm");
}

// The request's headers as sent, its path and query, and the one match of its
// operation, which says where its body goes. Headers are taken back from the head only
// in a connection (a request served without a socket came as it is meant).
Arrival Intake::arrive(const Api& api, httplib::Request& req) const {
  if (ConnectionServer::request_note()) take_header_values(req);
  Arrival in;
  in.headers.assign(req.headers.begin(), req.headers.end());
  size_t q = req.target.find('?');
  in.path = req.target.substr(0, q);
  in.query = q == std::string::npos ? "" : req.target.substr(q + 1);
  restore_empty_signed_headers(in.headers, in.query);  // httplib drops them (Metadata = { k = "" })
  in.post_form = is_post_object(req.method, in.path, in.query, in.headers);
  if (in.post_form) return in;
  in.op = match_operation(api, req.method, in.path, in.query, in.labels, in.headers);
  ++matched_;
  in.raw_payload = in.op && is_raw_payload(*in.op);
  if (in.raw_payload) in.body_folder = body_folder_;
  return in;
}

const Arrival& Intake::look(const Api& api, httplib::Request& req) {
  std::unique_ptr<RequestNote>* note = ConnectionServer::request_note();
  if (note && *note)
    if (const auto* noted = dynamic_cast<const Arrival*>(note->get())) return *noted;
  auto in = std::make_unique<Arrival>(arrive(api, req));
  const Arrival& out = *in;
  if (note) {
    *note = std::move(in);
    return out;
  }
  thread_local std::unique_ptr<Arrival> unnoted;  // outside a connection: until the next look
  unnoted = std::move(in);
  return out;
}

Arrival Intake::take(const Api& api, httplib::Request& req) {
  std::unique_ptr<RequestNote>* note = ConnectionServer::request_note();
  if (note && *note) {
    if (auto* noted = dynamic_cast<Arrival*>(note->get())) {
      Arrival in = std::move(*noted);
      note->reset();
      return in;
    }
  }
  return arrive(api, req);
}

// Whether the request's body goes to a file, by its arrival. An arrival that cannot be
// made here (outside the handler, whose failures are answered InternalError) is made
// again by the handler, which answers the failure: the body is held to the budget.
bool Intake::goes_to_file(const Api& api, httplib::Request& req) {
  try {
    return !look(api, req).body_folder.empty();
  } catch (...) {
    return false;
  }
}

std::optional<Refusal> Intake::admit(const Api& api, httplib::Request& req) {
  std::string length = request_header_value(req, "Content-Length");
  if ((request_header(req, "Content-Length") || sent_in_head("Content-Length")) &&
      !decimal_length(length))  // S3: 400, not 411
    return Refusal{400, "BadRequest",
                   "the Content-Length header is '" + length.substr(0, 40) +
                       "'; give the body's size in bytes, 1 to 19 decimal digits"};
  bool chunked = request_header(req, "Transfer-Encoding") != nullptr;
  if (chunked && !decoded_length(req).empty()) {  // aws-chunked with its decoded length
    length = decoded_length(req);
    chunked = false;
  }
  bool body_method = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
  bool undeclared = chunked || (length.empty() && body_method);
  unsigned long long declared = std::strtoull(length.c_str(), nullptr, 10);
  bool fits = !undeclared && declared <= kMaxBodyBytes;
  // A body that goes to a file takes nothing of the budget, which is what memory may hold.
  if (fits && (declared == 0 || goes_to_file(api, req) || ConnectionServer::reserve_body(declared)))
    return std::nullopt;
  if (fits) return Refusal{503, "SlowDown", "Please reduce your request rate."};  // S3's "slow down": retried later
  if (undeclared) return Refusal{411, "MissingContentLength", "give the Content-Length of the body"};
  return Refusal{400,
                 "EntityTooLarge",
                 "the body of " + length + " bytes is larger than " + size_text(kMaxBodyBytes) +
                     ", the most one request may carry",
                 {{"ProposedSize", declared}, {"MaxSizeAllowed", kMaxBodyBytes}}};
}

// The signature check of core's signer, with this emulator's region, dialect and
// credentials and the API's signing policy; nullopt when the request is good, its
// signer's key id then in `arrival.access_key`. The body is not in it: a plain body's
// hash is `sha256_hex` (read already), and a streaming body, read after the check,
// gets the check of its chunks in `later`. An unsigned request to an API that answers
// anonymous requests (the storage API, as S3: its protocol's unsigned_code) is taken
// as anonymous (no key): what it may do is the service's to say (emulator/access.h).
std::optional<SignatureRefusal> Intake::check_signature(const Api& api, const httplib::Request& req, Arrival& arrival,
                                                        const std::string& sha256_hex,
                                                        std::unique_ptr<StreamCheck>* later) const {
  VerifyInput in;
  in.method = req.method;
  in.url = "http://" + request_header_value(req, "Host") + req.target;
  in.headers = std::move(arrival.headers);  // lent, and taken back
  in.body_sha256 = sha256_hex;
  in.body_follows = later != nullptr;
  in.region = region_;
  in.service = api.service;
  in.policy = api.signing;
  in.dialect = Dialect::find(dialect_);  // nullptr for "any"
  std::optional<Credentials> found;      // the account's, held while the signature is checked
  in.credentials = [this, &found](const std::string& key) {
    found = secret_of_(key);
    return found ? &*found : nullptr;
  };
  std::optional<SignatureRefusal> refused = verify_signature(in, nullptr, later);
  arrival.headers = std::move(in.headers);
  arrival.access_key = !refused && found ? found->access_key_id : "";
  bool unsigned_request = refused && refused->code == "MissingAuthenticationToken";
  if (unsigned_request && !api.protocol->unsigned_code.empty()) return std::nullopt;  // anonymous
  return refused;
}

// When the client stops sending a refused body, the answer closes the connection
// (what is left of it is never read as a request).
std::optional<SignatureRefusal> Intake::read_body(const Api& api, const httplib::Request& req,
                                                  const httplib::ContentReader* reader, Arrival& in,
                                                  std::unique_ptr<IncomingBody>& body) const {
  std::unique_ptr<StreamCheck> stream;
  bool follows = api.signing.payload_hash == PayloadHash::header && announces_stream(in.headers);
  std::optional<SignatureRefusal> refused;
  if (follows) refused = check_signature(api, req, in, "", &stream);
  body = std::make_unique<IncomingBody>(std::move(stream), refused ? std::string() : in.body_folder,
                                        named_checksums(in.headers));
  bool whole = refused ? read_into(req, reader, [](std::string_view) {})
                       : read_into(req, reader, [&body](std::string_view piece) { body->feed(piece); });
  if (!whole) return SignatureRefusal{400, "IncompleteBody", "the request's body ended before its declared length", {}};
  if (reader) note_read_whole(req);
  if (refused) return refused;
  if (auto bad = body->finish()) return bad;
  if (follows) return std::nullopt;
  return check_signature(api, req, in, body->digests().sha256_hex, nullptr);
}

// aws-cli sends Content-MD5 with parts and objects; an aws-chunked body's is that of
// its decoded bytes.
std::optional<Refusal> Intake::check_content_md5(const httplib::Request& req, const std::string& md5) {
  const std::string* sent = request_header(req, "Content-MD5");
  if (!sent) return std::nullopt;
  const std::string& given = *sent;
  if (given.size() != 24 || given.compare(22, 2, "==") != 0)
    return Refusal{400, "InvalidDigest", "the Content-MD5 you specified is not the base64 of a 16-byte MD5"};
  if (given != base64(md5))
    return Refusal{400, "BadDigest", "the Content-MD5 you specified did not match what was received"};
  return std::nullopt;
}

std::optional<Refusal> Intake::check_checksum_sent(const Operation& op, const Headers& headers) {
  if (!op.checksum_required || has_header(headers, "Content-MD5")) return std::nullopt;
  for (const auto& [name, value] : headers) {
    std::string lower = to_lower(name);
    if (lower.rfind("x-amz-checksum-", 0) == 0 || lower.rfind("x-ext-checksum-", 0) == 0) return std::nullopt;
  }
  return Refusal{
      400, "InvalidRequest",
      "Missing required header for this request: Content-MD5 (or an x-ext-checksum-* or x-amz-checksum-* header)"};
}

bool Intake::is_discovery(const httplib::Request& req) {
  return req.method == "GET" && req.target == kDiscoverPath && !req.has_header("Transfer-Encoding") &&
         req.get_header_value<uint64_t>("Content-Length") == 0;
}

void Intake::route_anywhere(const httplib::Request& req) {
  const_cast<httplib::Request&>(req).path = kRoute;  // httplib's own Request, not const
}

void Intake::note_read_whole(const httplib::Request& req) {
  bool body_read = req.method == "PUT" || req.method == "POST" || req.method == "PATCH" || req.method == "DELETE";
  if (!body_read) {
    std::string length = request_header_value(req, "Content-Length");
    body_read = (length.empty() || length == "0") && !request_header(req, "Transfer-Encoding");
  }
  if (body_read) const_cast<httplib::Request&>(req).path = kReadWhole;
}

bool Intake::read_whole(const httplib::Request& req) { return req.path == kReadWhole; }

}  // namespace cloud
