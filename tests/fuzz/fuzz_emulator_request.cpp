// Fuzz target: the emulator's handling of requests (signature check, routing by
// match_operation, parse_request, validation, the platform's handlers, the answer)
// for arbitrary methods, targets, headers and bodies, without a socket
// (Emulator::answer). An input is one or more requests separated by a line "%%",
// each in the form of fuzz_input.h, served in order by a fresh emulator:
//   <api> <signing> <METHOD> <target>      storage ext PUT /demo-bucket/a.txt
//   header lines, an empty line, the body
// <signing> ext or aws: signed as a client would, with the emulator's credentials (a
// STREAMING-* content-sha256 header signed as the payload line; chunk signatures cannot
// be known in a seed, so signed chunks are refused, unsigned ones served); anything
// else: sent as it is. A line "advance <seconds>" moves the platform's clock.
// "{upload}" and "{etag}" in a target, a header or a body stand for the last upload id
// and ETag answered, so that seeds can complete the uploads they create.
#include <cstdlib>
#include <optional>

#include "core/wire/sigv4.h"
#include "emulator/emulator.h"
#include "emulator/service.h"
#include "fuzz_input.h"

namespace {

// The headers of `m`, signed as a client of `api` would sign them; unsigned when
// the signing word names no dialect or the target is not one a client could send.
cloud::Headers signed_headers(const cloud::Api& api, const fuzz::Message& m) {
  const cloud::Dialect* dialect = cloud::Dialect::find(m.words[1]);
  if (!dialect) return m.headers;
  cloud::SignInput in;
  in.method = m.words[2];
  in.url = "http://127.0.0.1:8080" + m.words[3];
  in.headers = m.headers;
  in.body = m.body;
  // A streaming (aws-chunked) body is signed with its declared value as the payload line.
  std::string declared = cloud::header_value(m.headers, cloud::to_lower(dialect->header_prefix) + "content-sha256");
  if (declared.rfind("STREAMING-", 0) == 0) in.payload_sha256 = declared;
  in.region = "jp-east-1";
  in.service = api.service;
  in.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  in.dialect = dialect;
  in.policy = api.signing;  // as the client signs
  auto out = cloud::sign(in);
  return out.ok() ? out->headers : m.headers;
}

// What earlier answers gave that later requests may name.
struct Remembered {
  std::string upload, etag;
};

// Every `mark` in `text` replaced by `value`.
void replace_all(std::string& text, const std::string& mark, const std::string& value) {
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + value.size()))
    text.replace(at, mark.size(), value);
}

// `text` with "{upload}" and "{etag}" replaced by what was remembered.
std::string fill_in(std::string text, const Remembered& r) {
  replace_all(text, "{upload}", r.upload);
  replace_all(text, "{etag}", r.etag);
  return text;
}

// The text between <tag> and </tag> in `body`, or "".
std::string element(const std::string& body, const std::string& tag) {
  size_t start = body.find("<" + tag + ">");
  if (start == std::string::npos) return {};
  start += tag.size() + 2;
  size_t end = body.find("</" + tag + ">", start);
  return end == std::string::npos ? "" : body.substr(start, end - start);
}

// The emulator's answer to `m` (no exception escapes: invalid UTF-8 quoted in a JSON
// error answer once did).
std::optional<cloud::HttpResponse> answer_of(cloud::Emulator& emulator, const cloud::Api& api, const fuzz::Message& m) {
  auto answer = emulator.answer(api.name, m.words[2], m.words[3], signed_headers(api, m), m.body);
  FUZZ_CHECK(answer.ok());
  return *answer;
}

// Serves one request and checks the answer: a status of the API's, and an error
// body the client reads as an error with a code.
void serve(cloud::Emulator& emulator, fuzz::Message m, Remembered& remembered) {
  const cloud::Model& model = cloud::Model::builtin();
  const cloud::Api* api = model.api(m.words[0]);
  if (!api) api = &model.apis()[m.words[0].size() % model.apis().size()];
  m.words[3] = fill_in(m.words[3], remembered);
  for (cloud::Header& h : m.headers) h.second = fill_in(h.second, remembered);
  m.body = fill_in(m.body, remembered);
  std::optional<cloud::HttpResponse> answer = answer_of(emulator, *api, m);
  if (!answer) return;
  // 5xx only from injected faults, none here, but for what the emulator does not
  // implement (501 NotImplemented: a sub-resource the model lacks, an ACL it cannot keep).
  FUZZ_CHECK(answer->status >= 200 && (answer->status < 500 || answer->status == 501));
  if (answer->status >= 300) FUZZ_CHECK(!cloud::parse_error(*api, *answer).code.empty());
  if (answer->status == 501) FUZZ_CHECK(cloud::parse_error(*api, *answer).code == "NotImplemented");
  if (std::string id = element(answer->body, "UploadId"); !id.empty()) remembered.upload = id;
  if (std::string etag = cloud::header_value(answer->headers, "ETag"); !etag.empty()) remembered.etag = etag;
}

// Seconds from a text: its number when it is one from 0 to a million, else 0.
double read_seconds(const std::string& text) {
  double s = std::atof(text.c_str());
  return s >= 0 && s <= 1e6 ? s : 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cloud::Emulator emulator;
  Remembered remembered;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find("\n%%\n", start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(start, end - start);
    fuzz::Message m = fuzz::read_message(reinterpret_cast<const uint8_t*>(part.data()), part.size(), 4);
    if (m.words[0] == "advance") emulator.platform().advance(read_seconds(m.words[1]));
    else serve(emulator, std::move(m), remembered);
    start = end + 4;
  }
  return 0;
}
