// One curl transfer: the handle configured from the request and the options, the
// callbacks curl calls while it runs (the head and body taken in, a body given out,
// the rate limit drawn from), and its end turned into an HttpResponse or an Error
// with a kind and a hint. A body from a file range is read as curl asks for it, and a
// success asked to go to a file is written there (core/net/range_reader.h,
// core/net/file_sink.h), so neither is held in memory.
#include "core/net/curl_transfer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>

#include "core/net/rate_limit.h"
#include "core/wire/aws_chunked.h"

namespace cloud {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

namespace {

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
using UrlPtr = std::unique_ptr<CURLU, UrlDeleter>;

constexpr std::uint64_t kUploadBuffer = 256 * 1024;  // what curl asks a file body for at once

constexpr size_t kFirstRoom = 16 * 1024;      // a body's first room: most answers are small
constexpr size_t kMaxDeclaredRoom = 1 << 20;  // at most this much taken on a Content-Length's word

// Whether the answer's body goes to the sink: asked for, and a success (an error's
// body is read into memory, for its code and message).
bool to_file(const Transfer& t) { return t.sink && t.status >= 200 && t.status < 300; }

// Trims trailing CR/LF and surrounding blanks from a header line piece.
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// Grows the body's room to hold `more` bytes beside what it has, drawing the growth
// from the budget first: at least doubling (libstdc++ doubles anyway), never past
// max_body unless the bytes need it. False when the budget has no room left.
bool make_room(Transfer& t, std::uint64_t more) {
  std::string& body = t.response.body;
  const std::uint64_t need = body.size() + more;
  if (need <= body.capacity()) return true;
  std::uint64_t want = std::max<std::uint64_t>({need, 2 * std::uint64_t{body.capacity()}, kFirstRoom});
  want = std::max(need, std::min(want, t.max_body));
  if (!t.budget->take(want - t.held)) return t.budget_spent = true, false;
  t.held = want;
  body.reserve(static_cast<size_t>(want));
  if (body.capacity() > t.held && !t.budget->take(body.capacity() - t.held)) return t.budget_spent = true, false;
  t.held = std::max<std::uint64_t>(t.held, body.capacity());
  return true;
}

// A declared Content-Length: over max_body, the answer is refused before its body
// comes; within it, the body's first room is taken, up to kMaxDeclaredRoom: what a
// server says it will send sizes no allocation. A HEAD answer declares the length
// of a body it does not send.
bool expect_length(Transfer& t, const std::string& value) {
  if (t.request->method == "HEAD" || value.empty() || !std::isdigit(static_cast<unsigned char>(value[0])))
    return true;  // curl judges a malformed length
  errno = 0;
  unsigned long long length = std::strtoull(value.c_str(), nullptr, 10);
  t.declared_length = length;
  if (to_file(t)) return true;  // a file holds any size
  if (length > t.max_body || errno == ERANGE) {
    t.too_large = true;
    return false;
  }
  return make_room(t, std::min<std::uint64_t>(length, kMaxDeclaredRoom));
}

// Collects "Name: value" lines; a status line starts afresh,
// so interim (100 Continue) and proxy CONNECT answers do not mix in.
size_t read_header(Transfer* t, char* data, size_t n) {
  std::string_view line(data, n);
  Headers& headers = t->response.headers;
  if (line.substr(0, 5) == "HTTP/") {
    headers.clear();
    size_t space = line.find(' ');  // "HTTP/1.1 200 OK": the status decides where the body goes
    std::string code = space == std::string_view::npos ? "" : std::string(line.substr(space + 1, 3));
    t->status = std::strtol(code.c_str(), nullptr, 10);
    t->declared_length.reset();
  } else if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
    if (!headers.empty()) {  // obsolete line folding: continues the previous value
      std::string_view more = trim(line);
      if (!more.empty()) headers.back().second.append(" ").append(more);
    }
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    headers.emplace_back(std::string(line.substr(0, colon)), std::string(trim(line.substr(colon + 1))));
    if (iequals(headers.back().first, "Content-Length") && !expect_length(*t, headers.back().second))
      return 0;  // curl aborts the transfer
  }
  return n;
}

// Appends the body as it arrives, up to max_body and as the budget allows, or
// writes it to the sink.
size_t read_body(Transfer* t, char* data, size_t n) {
  if (to_file(*t)) {
    if (t->sink->write(data, n)) return n;
    t->file_error = t->sink->error();
    t->file_errno = t->sink->error_number();
    return 0;  // curl aborts the transfer
  }
  if (n > t->max_body - t->response.body.size()) {
    t->too_large = true;
    return 0;  // curl aborts the transfer
  }
  if (!make_room(*t, n)) return 0;
  t->response.body.append(data, n);
  return n;
}

// Runs a callback's work; what it throws (std::bad_alloc) ends the transfer with an
// Error instead of unwinding through curl. 0 makes curl abort the transfer.
template <size_t (*Work)(Transfer*, char*, size_t)>
size_t guarded(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  try {
    return Work(t, data, size * count);
  } catch (const std::exception&) {
    t->out_of_memory = true;
    return 0;
  }
}

// CURLOPT_HEADERFUNCTION and CURLOPT_WRITEFUNCTION.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  return guarded<read_header>(data, size, count, user);
}
size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (!rate_limiter().active()) return guarded<read_body>(data, size, count, user);
  if (!rate_limiter().ready()) return t->paused = true, CURL_WRITEFUNC_PAUSE;
  size_t n = guarded<read_body>(data, size, count, user);
  rate_limiter().spend(n);
  return n;
}

// CURLOPT_READFUNCTION: the next bytes of the body's file range, as curl asks.
size_t on_read(char* buffer, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t want = std::min<size_t>(size * count, kUploadBuffer);
  const bool limited = rate_limiter().active();
  if (limited && !rate_limiter().ready()) return t->paused = true, CURL_READFUNC_PAUSE;
  if (!t->request->files.upload) {  // an in-memory body, sent this way under a rate limit
    std::string_view payload = t->request->payload();
    size_t n = std::min(want, payload.size() - t->memory_sent);
    std::memcpy(buffer, payload.data() + t->memory_sent, n);
    t->memory_sent += n;
    if (limited) rate_limiter().spend(n);
    return n;
  }
  long long n = t->reader.read(buffer, want);
  if (limited && n > 0) rate_limiter().spend(static_cast<std::uint64_t>(n));  // what was read, not what was asked
  if (n >= 0) return static_cast<size_t>(n);
  t->file_error = t->reader.error();
  return CURL_READFUNC_ABORT;
}

// CURLOPT_SEEKFUNCTION: curl sends the body again from its start (only ever to 0).
int on_seek(void* user, curl_off_t offset, int origin) {
  auto* t = static_cast<Transfer*>(user);
  if (origin != SEEK_SET || offset != 0) return CURL_SEEKFUNC_CANTSEEK;
  if (!t->request->files.upload) return t->memory_sent = 0, CURL_SEEKFUNC_OK;
  return t->reader.rewind() ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
}

// Appends one line to a curl header list; false when curl ran out of memory.
bool append(SlistPtr& list, const std::string& line) {
  curl_slist* grown = curl_slist_append(list.get(), line.c_str());
  if (!grown) return false;
  list.release();
  list.reset(grown);
  return true;
}

// Records the first failing curl_easy_setopt, so configuration reads as a list.
class Setter {
 public:
  explicit Setter(CURL* easy) : easy_(easy) {}
  template <class T>
  Setter& operator()(CURLoption option, T value) {
    if (rc_ == CURLE_OK) rc_ = curl_easy_setopt(easy_, option, value);
    return *this;
  }
  CURLcode result() const { return rc_; }

 private:
  CURL* easy_;
  CURLcode rc_ = CURLE_OK;
};

// Chooses the method and body options. Bodies go out as POSTFIELDS with an explicit
// size (binary safe; curl then adds Content-Length unless the caller gave one); a
// body from a file is read as curl asks for it (UPLOAD, with its size); HEAD uses
// NOBODY; other methods without a body send none.
void set_method(Setter& set, Transfer& t) {
  const HttpRequest& r = *t.request;
  const bool body_method = r.method == "POST" || r.method == "PUT" || r.method == "PATCH";
  if (r.method == "HEAD") {
    set(CURLOPT_NOBODY, 1L);
  } else if (r.files.upload) {
    set(CURLOPT_UPLOAD, 1L);
    std::uint64_t length = r.files.upload->length;
    if (r.files.stream) length = aws_chunked_length(length, r.files.stream->chunk_size);
    set(CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(length));
    if (length > kUploadBuffer) set(CURLOPT_UPLOAD_BUFFERSIZE, static_cast<long>(kUploadBuffer));
    set(CURLOPT_READFUNCTION, &on_read);
    set(CURLOPT_READDATA, static_cast<void*>(&t));
    set(CURLOPT_SEEKFUNCTION, &on_seek);
    set(CURLOPT_SEEKDATA, static_cast<void*>(&t));
    if (r.method != "PUT") set(CURLOPT_CUSTOMREQUEST, r.method.c_str());
  } else if ((body_method || !r.payload().empty()) && rate_limiter().active() && !r.payload().empty()) {
    // Under a rate limit, through on_read, so that its bytes draw from the bucket.
    set(CURLOPT_UPLOAD, 1L);
    set(CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.payload().size()));
    set(CURLOPT_READFUNCTION, &on_read);
    set(CURLOPT_READDATA, static_cast<void*>(&t));
    set(CURLOPT_SEEKFUNCTION, &on_seek);
    set(CURLOPT_SEEKDATA, static_cast<void*>(&t));
    if (r.method != "PUT") set(CURLOPT_CUSTOMREQUEST, r.method.c_str());
  } else if (body_method || !r.payload().empty()) {
    set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.payload().size()));
    set(CURLOPT_POSTFIELDS, r.payload().data());
    if (r.method != "POST") set(CURLOPT_CUSTOMREQUEST, r.method.c_str());
  } else if (r.method != "GET") {
    set(CURLOPT_CUSTOMREQUEST, r.method.c_str());
  }
}

struct Failure {
  ErrorKind kind;
  const char* code;
  const char* what;
  const char* hint = "";  // what to do about it, when the user can
};

constexpr const char* kTlsHint =
    "the server's certificate is not signed by a CA cloudlua trusts, or names another host; give its CA "
    "with ca_file (CLOUDLUA_CA_FILE) or use the host name the certificate names";

// Maps a curl result to an error kind, a code, a phrase and a hint. Only ConnectionFailed
// (and the TLS handshake ones) guarantee the request never reached the server.
Failure classify(CURLcode rc, const char* detail) {
  static const std::map<CURLcode, Failure> known = {
      {CURLE_OPERATION_TIMEDOUT, {ErrorKind::timeout, "Timeout", "timed out talking to"}},
      {CURLE_COULDNT_RESOLVE_HOST,
       {ErrorKind::transport, "UnknownHost", "cannot resolve host",
        "check the endpoint (--endpoint API=URL, endpoint.API in the profile, "
        "CLOUDLUA_ENDPOINT_API)"}},
      {CURLE_COULDNT_RESOLVE_PROXY, {ErrorKind::transport, "ConnectionFailed", "cannot connect to"}},
      {CURLE_COULDNT_CONNECT, {ErrorKind::transport, "ConnectionFailed", "cannot connect to"}},
      {CURLE_SSL_CONNECT_ERROR, {ErrorKind::transport, "TlsError", "TLS handshake failed with"}},
      {CURLE_PEER_FAILED_VERIFICATION,
       {ErrorKind::transport, "TlsVerificationFailed", "cannot verify the TLS certificate of", kTlsHint}},
      {CURLE_SSL_ISSUER_ERROR,
       {ErrorKind::transport, "TlsVerificationFailed", "cannot verify the TLS certificate of", kTlsHint}},
      {CURLE_SSL_PINNEDPUBKEYNOTMATCH,
       {ErrorKind::transport, "TlsVerificationFailed", "cannot verify the TLS certificate of", kTlsHint}},
      {CURLE_SSL_CACERT_BADFILE, {ErrorKind::transport, "TlsError", "bad TLS certificate file for"}},
      {CURLE_SSL_CERTPROBLEM, {ErrorKind::transport, "TlsError", "bad TLS certificate file for"}},
      {CURLE_SEND_ERROR, {ErrorKind::transport, "SendError", "failed sending to"}},
      {CURLE_RECV_ERROR, {ErrorKind::transport, "ReceiveError", "failed receiving from"}},
      {CURLE_GOT_NOTHING, {ErrorKind::transport, "EmptyReply", "no answer (connection closed) from"}},
      {CURLE_PARTIAL_FILE, {ErrorKind::transport, "IncompleteResponse", "truncated answer from"}},
      // An answer that is not HTTP: a status line curl cannot read, HTTP/0.9 (no
      // status line at all: another protocol's greeting, garbage) or status 000.
      {CURLE_WEIRD_SERVER_REPLY, {ErrorKind::transport, "MalformedResponse", "the answer is not HTTP from"}},
      {CURLE_UNSUPPORTED_PROTOCOL, {ErrorKind::transport, "MalformedResponse", "the answer is not HTTP from"}},
      // curl's only cause of it once a transfer runs is a header line over its
      // limit (100 KiB); a head over its total (300 KiB) is a receive error saying
      // so. Our callbacks report memory of their own.
      {CURLE_OUT_OF_MEMORY,
       {ErrorKind::transport, "ResponseHeaderTooLarge",
        "the answer's head is larger than curl reads (100 KiB a line, 300 KiB in all) from"}},
      {CURLE_URL_MALFORMAT, {ErrorKind::transport, "InvalidUrl", "cannot use URL for"}},
  };
  if (rc == CURLE_RECV_ERROR && std::string_view(detail).find("reset") != std::string_view::npos)
    return {ErrorKind::transport, "ConnectionReset", "connection reset by"};
  if (rc == CURLE_RECV_ERROR && std::string_view(detail).find("Too large response headers") == 0)
    return known.at(CURLE_OUT_OF_MEMORY);  // the head past curl's total
  // The same code for a URL whose scheme curl does not speak, found before sending.
  if (rc == CURLE_UNSUPPORTED_PROTOCOL && std::string_view(detail).find("Protocol ") == 0)
    return {ErrorKind::transport, "InvalidUrl", "cannot use URL for"};
  auto it = known.find(rc);
  return it != known.end() ? it->second : Failure{ErrorKind::transport, "TransportError", "transfer failed with"};
}

// The Error for a failed transfer: "<phrase> host:port: <curl's explanation>".
Error transfer_error(const Transfer& t) {
  const char* detail = t.error_buffer[0] ? t.error_buffer : curl_easy_strerror(t.result);
  Failure f = classify(t.result, detail);
  return make_error(
      f.kind, f.code,
      std::string(f.what) + " " + host_port(t.request->url) + ": " + detail + (*f.hint ? "; " : "") + f.hint);
}

// A success written to a file: renamed onto its target when it is as long as its
// Content-Length said; otherwise the target is left untouched.
Outcome<HttpResponse> commit_download(Transfer& t) {
  FileSink& sink = *t.sink;
  if (t.declared_length && *t.declared_length != sink.size())
    return make_error(ErrorKind::transport, "IncompleteResponse",
                      "truncated answer from " + host_port(t.request->url) + ": " + std::to_string(sink.size()) +
                          " of " + std::to_string(*t.declared_length) + " bytes; '" + sink.target() +
                          "' left as it was");
  if (std::string problem = sink.commit(); !problem.empty())
    return make_error(ErrorKind::transport, "FileWriteFailed", problem);
  t.response.body_file = sink.target();
  return std::move(t.response);
}

// The Error for an answer refused at max_body: kind api, the server did answer.
Error too_large_error(Transfer& t) {
  Error e = make_error(ErrorKind::api, "ResponseTooLarge",
                       "the answer from " + host_port(t.request->url) + " is larger than " + size_text(t.max_body) +
                           ", the most cloudlua keeps in memory");
  curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &e.status);
  return e;
}

// The Error for an answer refused when the budget had no room for more of it: kind
// api, the server did answer; the other answers being received hold the rest.
Error budget_spent_error(Transfer& t) {
  Error e = make_error(ErrorKind::api, "ResponseTooLarge",
                       "the answer from " + host_port(t.request->url) + " stopped at " +
                           std::to_string(t.response.body.size()) + " bytes: the answers being received hold " +
                           size_text(t.budget->limit()) + " at once at most (max_buffer_bytes)");
  curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &e.status);
  return e;
}

// Writing an answer to its file failed: a full disk (or quota, or file size limit)
// is NoSpace, which trying again cannot mend; anything else FileError.
Error file_error(const Transfer& t) {
  const int e = t.file_errno;
  const bool full = e == ENOSPC || e == EDQUOT || e == EFBIG;
  return make_error(ErrorKind::transport, full ? "NoSpace" : "FileError", t.file_error);
}

// The body's room in the budget, handed to the answer: given back when its last copy goes.
std::shared_ptr<void> room_of(Transfer& t) {
  BufferBudget* budget = t.budget;
  std::uint64_t held = t.held;
  t.held = 0;
  return std::shared_ptr<void>(nullptr, [budget, held](void*) { budget->give(held); });
}

}  // namespace

// "host:port" of a URL, for error messages (never the path or query: they may hold
// presigned credentials).
std::string host_port(const std::string& url) {
  UrlPtr u(curl_url());
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return "(invalid URL)";
  char* host = nullptr;
  char* port = nullptr;
  curl_url_get(u.get(), CURLUPART_HOST, &host, 0);
  curl_url_get(u.get(), CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
  std::string out = host ? host : "?";
  if (port) out += std::string(":") + port;
  curl_free(host);
  curl_free(port);
  return out;
}

// The header list to send: the caller's headers exactly, plus empty entries that stop
// curl adding Expect, Accept or Content-Type of its own. "Name;" is curl's spelling
// for a header with an empty value ("Name:" would remove it).
SlistPtr build_header_list(const Headers& given) {
  SlistPtr list;
  for (const Header& h : given) {
    std::string line = h.second.empty() ? h.first + ";" : h.first + ": " + h.second;
    if (!append(list, line)) return nullptr;
  }
  for (const char* name : {"Expect", "Accept", "Content-Type"})
    if (!has_header(given, name) && !append(list, std::string(name) + ":")) return nullptr;
  return list;
}

// Applies every option of one transfer to its (freshly reset) easy handle.
CURLcode configure(Transfer& t, const TransportOptions& o, long timeout_ms) {
  Setter set(t.easy.get());
  set(CURLOPT_URL, t.request->url.c_str());
  set(CURLOPT_PATH_AS_IS, 1L);  // the path as signed: no removal of `.` and `..` segments
#if LIBCURL_VERSION_NUM >= 0x075500
  set(CURLOPT_PROTOCOLS_STR, "http,https");
#else
  set(CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  set(CURLOPT_HTTPHEADER, t.headers.get());
  set(CURLOPT_CONNECTTIMEOUT_MS, o.connect_timeout_ms);
  set(CURLOPT_TIMEOUT_MS, timeout_ms);
  set(CURLOPT_SSL_VERIFYPEER, o.verify_tls ? 1L : 0L);
  set(CURLOPT_SSL_VERIFYHOST, o.verify_tls ? 2L : 0L);
  if (!o.ca_file.empty()) set(CURLOPT_CAINFO, o.ca_file.c_str());
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_FOLLOWLOCATION, 0L);
  set(CURLOPT_HTTP_CONTENT_DECODING, 0L);
  set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  set(CURLOPT_HEADERFUNCTION, &on_header);
  set(CURLOPT_HEADERDATA, static_cast<void*>(&t));
  set(CURLOPT_WRITEFUNCTION, &on_body);
  set(CURLOPT_WRITEDATA, static_cast<void*>(&t));
  set(CURLOPT_ERRORBUFFER, t.error_buffer);
  set(CURLOPT_PRIVATE, static_cast<void*>(&t));
  set_method(set, t);
  return set.result();
}

// Opens the file a body is read from and the one an answer is written to, if any.
std::optional<Error> open_body_files(Transfer& t) {
  const BodyFiles& files = t.request->files;
  if (files.upload)
    if (std::string problem = t.reader.open(*files.upload, files.stream); !problem.empty())
      return make_error(ErrorKind::validation, "FileUnreadable", problem + "; nothing was sent");
  if (files.download_to.empty()) return std::nullopt;
  t.sink = std::make_unique<FileSink>(files.download_to, files.download_at, files.durable, files.beneath);
  if (std::string problem = t.sink->open(); !problem.empty()) {
    if (t.sink->error_number() == ELOOP)  // a link in the destination: kind io, as cloud.fs says it
      return make_error(ErrorKind::io, "LinkInDestination", problem + "; nothing was sent");
    return make_error(ErrorKind::validation, "FileUnwritable", problem + "; nothing was sent");
  }
  return std::nullopt;
}

// The response or the Error a transfer ended with, before its handle is detached.
Outcome<HttpResponse> transfer_outcome(Transfer& t) {
  Outcome<HttpResponse> out = HttpResponse{};
  if (t.failure) {
    out = std::move(*t.failure);
  } else if (t.interrupted) {
    out = make_error(ErrorKind::transport, "Interrupted", "request to " + host_port(t.request->url) + " interrupted");
  } else if (t.too_large) {
    out = too_large_error(t);
  } else if (t.budget_spent) {
    out = budget_spent_error(t);
  } else if (t.out_of_memory) {
    out = make_error(ErrorKind::transport, "OutOfMemory",
                     "cannot hold the answer from " + host_port(t.request->url) + ": out of memory");
  } else if (!t.file_error.empty()) {
    out = file_error(t);
  } else if (t.result != CURLE_OK) {
    out = transfer_error(t);
  } else {
    curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &t.response.status);
    out = to_file(t) ? commit_download(t) : std::move(t.response);
    if (out.ok() && t.held) out.value().room = room_of(t);
  }
  return out;
}

}  // namespace cloud
