// The HTTP transport on libcurl's multi interface. A transfer is started (an easy
// handle from the pool, configured and added to the Loop's one multi handle), the loop
// (run_once) drives every transfer at once, and each transfer curl reports done
// (curl_multi_info_read: only those) is queued, then finished (removed, turned into an
// HttpResponse or an Error, its handle reset and pooled) and handed to its completion.
// Timers live beside the transfers, ordered by their moment, so that a back-off or a
// sleep waits in the same loop and a turn looks at the due ones only. A cancelled
// transfer is removed and its handle pooled at once; nothing else refers to it
// afterwards, so that happens once. Each Transport remembers what it started, to
// abandon it when it goes. The multi handle owns the connection cache, so connections
// stay alive while the Loop lives (the thread's: the process's). The request goes out with exactly the caller's headers (they were signed):
// curl's own Expect, Accept and Content-Type are suppressed, bodies are sent as given
// and received as sent (no redirects, no content decoding). A body from a file range
// is read as curl asks for it, and a success asked to go to a file is written there
// (core/model/body.h), so neither is held in memory.
// Thread-safety: a Loop, and the Transports on it, are used by one thread at a time;
// distinct Loops may run on distinct threads (curl_global_init is done once, under std::call_once, when
// the first transfer of the process starts: a run that sends nothing never sets curl,
// or the TLS library under it, up).
#include "core/net/transport.h"

#include <curl/curl.h>

#include <cctype>
#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/wire/aws_chunked.h"
#include "core/model/body.h"

namespace cloud {

namespace {

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
using EasyPtr = std::unique_ptr<CURL, EasyDeleter>;
using MultiPtr = std::unique_ptr<CURLM, MultiDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;
using UrlPtr = std::unique_ptr<CURLU, UrlDeleter>;

constexpr size_t kHandedPerHost = 4;                 // curl holds at most this many transfers per connection allowed
constexpr std::uint64_t kUploadBuffer = 256 * 1024;  // what curl asks a file body for at once

// The process's bandwidth cap (set_rate_limit): one token bucket that every transfer
// of every Loop draws its body bytes from, sent and received alike. A callback that
// finds the bucket empty pauses its transfer (CURL_WRITEFUNC_PAUSE / READFUNC_PAUSE);
// the loop resumes the paused ones when tokens are back. A callback that finds tokens
// takes what it moves, even past zero (a debt the next ones wait out), so no byte is
// refused and the average over any stretch longer than the burst is the rate.
class RateLimiter {
 public:
  // Sets the rate (0: none) and returns the previous one; the bucket starts empty, so
  // that no burst runs ahead of the rate at the start.
  std::uint64_t set(std::uint64_t rate) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::uint64_t before = rate_;
    rate_ = rate;
    tokens_ = 0;
    last_ = now();
    active_.store(rate != 0, std::memory_order_relaxed);
    if (rate != 0) ever_.store(true, std::memory_order_relaxed);
    return before;
  }
  std::uint64_t rate() {
    std::lock_guard<std::mutex> lock(mutex_);
    return rate_;
  }
  bool active() const { return active_.load(std::memory_order_relaxed); }
  // Whether a cap was ever set (a transfer may be paused only then).
  bool ever() const { return ever_.load(std::memory_order_relaxed); }
  // True when the bucket holds tokens (a transfer may move bytes); false: pause.
  bool ready() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (rate_ == 0) return true;
    refill();
    return tokens_ > 0;
  }
  // Takes the bytes a transfer moved (the bucket may go into debt).
  void spend(std::uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (rate_ != 0) tokens_ -= static_cast<double>(bytes);
  }
  // Seconds until the bucket holds tokens again (0 when it does).
  double wait_seconds() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (rate_ == 0) return 0;
    refill();
    return tokens_ > 0 ? 0 : (1 - tokens_) / static_cast<double>(rate_);
  }

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  // At most a tenth of a second's bytes, at least 256 KiB, saved up while idle: a
  // process the scheduler keeps waiting that long (a loaded machine) loses nothing.
  std::uint64_t burst() const { return std::max<std::uint64_t>(rate_ / 10, 256 * 1024); }
  void refill() {
    double t = now();
    tokens_ = std::min(static_cast<double>(burst()), tokens_ + (t - last_) * static_cast<double>(rate_));
    last_ = t;
  }
  std::mutex mutex_;
  std::uint64_t rate_ = 0;
  double tokens_ = 0;
  double last_ = 0;
  std::atomic<bool> active_{false};
  std::atomic<bool> ever_{false};
};

RateLimiter& rate_limiter() {
  static RateLimiter limiter;
  return limiter;
}

// Initialises libcurl once per process; it is never cleaned up (process lifetime).
void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

using Clock = std::chrono::steady_clock;
using Owned = std::unordered_set<Loop::Id>;  // what one Transport started and has not seen end

// One request in flight: its easy handle, header list, buffers and outcome.
struct Transfer {
  Loop::Id id = 0;
  Owned* owner = nullptr;                     // the transport's set of what it started
  const TransportOptions* options = nullptr;  // the transport's (it abandons its transfers when it goes)
  double started = 0;                         // on the steady clock: its time-out counts from here
  HttpRequest owned;                          // kept here while curl sends it
  const HttpRequest* request = &owned;
  Loop::Completion completion;
  std::optional<Error> failure;  // ended before or beside curl (setup, multi handle)
  bool added = false;            // attached to the multi handle
  std::uint64_t max_body = 0;    // TransportOptions::max_response_bytes
  EasyPtr easy;
  SlistPtr headers;
  HttpResponse response;
  char error_buffer[CURL_ERROR_SIZE] = {};
  bool done = false;
  bool interrupted = false;
  bool after_interrupt = false;  // started while the interrupt flag was raised: a clean-up's
  Transfer() = default;
  Transfer(const Transfer&) = delete;  // curl holds pointers into it
  Transfer& operator=(const Transfer&) = delete;
  bool too_large = false;  // the answer passed max_body: aborted
  CURLcode result = CURLE_OK;
  RangeReader reader;                            // the request body's file range, when it has one
  std::unique_ptr<FileSink> sink;                // where a 2xx answer's body goes, when asked
  long status = 0;                               // of the last status line received
  std::optional<std::uint64_t> declared_length;  // the answer's Content-Length
  std::string file_error;                        // reading the body file or writing the answer failed
  int file_errno = 0;                            // the errno of a failed write of the answer
  BufferBudget* budget = nullptr;                // TransportOptions::budget, resolved
  std::uint64_t held = 0;                        // room taken from it for response.body
  bool budget_spent = false;                     // the budget had no room for the answer: aborted
  bool out_of_memory = false;                    // an allocation failed in a callback: aborted
  bool paused = false;                           // paused by the rate limit: the loop resumes it
  size_t memory_sent = 0;                        // of an in-memory body sent through on_read (rate limit)
  ~Transfer() { release_room(); }
  // Gives the body's room back to the budget (when the body goes with the Transfer).
  void release_room() {
    if (budget && held) budget->give(held);
    held = 0;
  }
};

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

// Appends one line to a curl header list; false when curl ran out of memory.
bool append(SlistPtr& list, const std::string& line) {
  curl_slist* grown = curl_slist_append(list.get(), line.c_str());
  if (!grown) return false;
  list.release();
  list.reset(grown);
  return true;
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

// A callback due at a moment of the loop's clock, and the transport it belongs to.
struct Timer {
  double due;
  std::function<void()> fire;
  Owned* owner;
  bool after_interrupt;  // set while the interrupt flag was raised: a clean-up's
  Loop::Pace pace;
  double skip_due;  // the loop's skipped seconds at which skipping has passed it
};

struct Loop::Impl {
  double skipped = 0;                    // the seconds skipped so far (now() adds them)
  int holds = 0;                         // the virtual-time holds alive
  std::function<void(double)> follower;  // told each skip (the embedded emulator's clock)
  double skipped_to = -HUGE_VAL;         // the moment the last skip brought due
  const std::atomic<bool>* interrupt = nullptr;
  bool was_raised = false;  // the interrupt flag, as the last turn saw it
  long max_host_connections = 16;
  MultiPtr multi;
  std::vector<EasyPtr> idle;  // reset handles, ready for the next transfer
  Id last_id = 0;
  std::unordered_map<Id, std::unique_ptr<Transfer>> transfers;
  std::unordered_map<Id, Timer> timers;
  std::set<std::pair<double, Id>> due_order;  // the timers by their moment: the heap
  std::deque<Id> ended;                       // transfers that ended, in the order they did, not handed out yet
  std::deque<Id> waiting_room;                // transfers started but not handed to curl yet, in order
  size_t handed = 0;                          // transfers curl holds

  static double real_now();
  double now() const { return real_now() + skipped; }
  bool skips(const Timer& t) const;
  bool skip_to_next_timer();
  CURLM* multi_handle();
  EasyPtr acquire();
  void release(EasyPtr easy);
  size_t most_handed() const { return kHandedPerHost * static_cast<size_t>(std::max(1L, max_host_connections)); }
  std::optional<Error> attach(Transfer& t);
  void admit();
  Id start(HttpRequest request, Completion done, const TransportOptions& options, Owned* owner);
  Id add_timer(double seconds, std::function<void()> fire, Pace pace, Owned* owner);
  void end_transfer(Transfer& t);
  void collect_finished();
  bool interrupted() const;
  bool note_interrupt();
  void interrupt_all();
  void wait(double timeout);
  double resume_paused();
  void hand_out_ended();
  void fire_due_timers(bool all);
  void detach(Transfer& t);
  Outcome<HttpResponse> finish(Transfer& t);
  Outcome<HttpResponse> finish_guarded(Transfer& t);
};

double Loop::Impl::real_now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// Whether a timer's time is skipped rather than waited for, now.
bool Loop::Impl::skips(const Timer& t) const { return t.pace == Pace::skipped || (t.pace == Pace::clock && holds > 0); }

// Skips the time to the earliest timer when nothing else could end sooner: no transfer
// runs, nothing has ended, and that timer is one whose time is skipped. It skips what
// the timer asked for less what was skipped since (not less the real time that went
// by meanwhile), so a follower advances by exactly the seconds waited for. Returns
// whether it skipped. A follower that throws stays behind; nothing crosses the loop.
bool Loop::Impl::skip_to_next_timer() {
  if (!transfers.empty() || !ended.empty() || due_order.empty()) return false;
  const Timer& next = timers.at(due_order.begin()->second);
  if (!skips(next) || next.due <= now()) return false;
  double seconds = std::max(0.0, next.skip_due - skipped);
  skipped += seconds;
  skipped_to = next.due;
  try {
    if (follower && seconds > 0) follower(seconds);
  } catch (const std::exception&) {}
  return true;
}

// The multi handle, made (and curl set up) for the first transfer; null when curl fails.
CURLM* Loop::Impl::multi_handle() {
  if (multi) return multi.get();
  global_init_once();
  multi.reset(curl_multi_init());
  if (multi) curl_multi_setopt(multi.get(), CURLMOPT_MAX_HOST_CONNECTIONS, max_host_connections);
  return multi.get();
}

// An easy handle from the pool, or a new one when the pool is empty.
EasyPtr Loop::Impl::acquire() {
  if (idle.empty()) return EasyPtr(curl_easy_init());
  EasyPtr easy = std::move(idle.back());
  idle.pop_back();
  return easy;
}

// Resets a handle (its session and DNS caches survive) and keeps it for reuse.
void Loop::Impl::release(EasyPtr easy) {
  if (!easy) return;
  curl_easy_reset(easy.get());
  if (idle.size() < most_handed()) idle.push_back(std::move(easy));
}

// Sets a transfer up: takes a handle, configures it and adds it to the multi handle,
// with what is left of its time-out. Returns the Error that ends it before anything
// is sent.
std::optional<Error> Loop::Impl::attach(Transfer& t) {
  const TransportOptions& options = *t.options;
  t.max_body = options.max_response_bytes;
  t.budget = options.budget ? options.budget : &process_buffer_budget();
  for (const Header& h : t.request->headers)
    if (!header_value_ok(h.first) || !header_value_ok(h.second))
      return make_error(ErrorKind::validation, "InvalidHeader",
                        "header '" + h.first + "' holds a line break or control character; nothing was sent");
  long timeout_ms = options.timeout_ms;
  if (timeout_ms > 0) {
    timeout_ms -= static_cast<long>((real_now() - t.started) * 1000);
    if (timeout_ms <= 0)
      return make_error(ErrorKind::timeout, "Timeout",
                        "timed out talking to " + host_port(t.request->url) + ": no connection came free within " +
                            std::to_string(options.timeout_ms) + " ms");
  }
  if (std::optional<Error> e = open_body_files(t)) return e;
  if (!multi_handle()) return make_error(ErrorKind::transport, "TransportError", "curl_multi_init failed");
  t.easy = acquire();
  t.headers = build_header_list(t.request->headers);
  if (!t.easy || !t.headers) return make_error(ErrorKind::transport, "TransportError", "out of memory");
  if (CURLcode rc = configure(t, options, timeout_ms); rc != CURLE_OK)
    return make_error(ErrorKind::transport, "TransportSetup",
                      std::string("cannot set up transfer: ") + curl_easy_strerror(rc));
  if (CURLMcode mc = curl_multi_add_handle(multi.get(), t.easy.get()); mc != CURLM_OK)
    return make_error(ErrorKind::transport, "TransportError", curl_multi_strerror(mc));
  t.added = true;
  ++handed;
  return std::nullopt;
}

// Hands curl the transfers waiting their turn, in order, while it holds fewer than
// most_handed(): curl walks every transfer it holds on each turn, and each holds an
// easy handle and its buffers, so a thousand tasks would cost every turn a thousand
// (with 16 connections to a host, 1,008 of them would only wait in curl's queue).
void Loop::Impl::admit() {
  while (handed < most_handed() && !waiting_room.empty()) {
    auto it = transfers.find(waiting_room.front());
    waiting_room.pop_front();
    if (it == transfers.end() || it->second->done) continue;  // cancelled, or interrupted meanwhile
    Transfer& t = *it->second;
    if (std::optional<Error> failed = attach(t)) {
      t.failure = std::move(failed);
      end_transfer(t);
    }
  }
}

// Takes the request and attaches it (or records why it cannot be), or queues it
// behind the transfers waiting their turn; returns its id.
Loop::Id Loop::Impl::start(HttpRequest request, Completion done, const TransportOptions& options, Owned* owner) {
  auto t = std::make_unique<Transfer>();
  t->owned = std::move(request);
  t->completion = std::move(done);
  t->owner = owner;
  t->options = &options;
  t->started = real_now();
  t->after_interrupt = interrupted();
  t->id = ++last_id;
  if (handed >= most_handed() || !waiting_room.empty()) {
    waiting_room.push_back(t->id);
  } else if (std::optional<Error> failed = attach(*t)) {
    t->failure = std::move(failed);
    end_transfer(*t);  // its completion runs from the next run_once, like any other
  }
  owner->insert(t->id);
  Id id = t->id;
  transfers.emplace(id, std::move(t));
  return id;
}

Loop::Id Loop::Impl::add_timer(double seconds, std::function<void()> fire, Pace pace, Owned* owner) {
  Id id = ++last_id;
  double due = now() + seconds;
  timers.emplace(id, Timer{due, std::move(fire), owner, interrupted(), pace, skipped + seconds});
  due_order.emplace(due, id);
  if (owner) owner->insert(id);
  return id;
}

// Marks a transfer ended and queues it for the next hand-out, once.
void Loop::Impl::end_transfer(Transfer& t) {
  if (t.done) return;
  t.done = true;
  ended.push_back(t.id);
}

// True when the caller's interrupt flag is raised.
bool Loop::Impl::interrupted() const { return interrupt && interrupt->load(std::memory_order_relaxed); }

// Queues every transfer that curl reports as done, with its result code: only those.
void Loop::Impl::collect_finished() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    void* owner = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &owner);
    auto* t = static_cast<Transfer*>(owner);
    if (t->done) continue;
    t->result = msg->data.result;
    end_transfer(*t);
  }
}

// Whether the interrupt flag is raised. Once it is seen lowered again, what was
// started while it was raised (a clean-up's) becomes interruptible like the rest.
bool Loop::Impl::note_interrupt() {
  const bool raised = interrupted();
  if (was_raised && !raised) {
    for (auto& [id, t] : transfers) t->after_interrupt = false;
    for (auto& [id, timer] : timers) timer.after_interrupt = false;
  }
  was_raised = raised;
  return raised;
}

// Ends every transfer started before the interrupt flag was raised as "Interrupted"
// (Ctrl-C; those timers all fire this turn).
void Loop::Impl::interrupt_all() {
  for (auto& [id, t] : transfers)
    if (!t->done && !t->after_interrupt) {
      t->interrupted = true;
      end_transfer(*t);
    }
}

// Drives the multi handle, waiting up to `timeout` seconds (and at most kPollSeconds, to
// look at the interrupt flag) unless a transfer ends or a timer falls due sooner. A
// failing multi handle ends every transfer with its error.
void Loop::Impl::wait(double timeout) {
  admit();
  timeout = std::min(timeout, resume_paused());
  int running = 0;
  CURLMcode mc = multi ? curl_multi_perform(multi.get(), &running) : CURLM_OK;  // none before the first transfer
  if (mc == CURLM_OK && multi) collect_finished();
  const double start = now();
  const bool timer_due = !due_order.empty() && due_order.begin()->first <= start;
  if (mc == CURLM_OK && !timer_due && !skip_to_next_timer() && ended.empty()) {
    double until = start + timeout;
    if (!due_order.empty()) until = std::min(until, due_order.begin()->first);
    // Rounded up: a timer 0.8 ms away is waited for, not turned past with a sleep of 0.
    double ms = std::ceil((until - start) * 1000.0);
    int wait_ms = static_cast<int>(std::clamp(ms, 0.0, kPollSeconds * 1000.0));
    if (multi && !transfers.empty()) mc = curl_multi_poll(multi.get(), nullptr, 0, wait_ms, nullptr);
    else std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    if (mc == CURLM_OK && multi) mc = curl_multi_perform(multi.get(), &running);
    if (mc == CURLM_OK && multi) collect_finished();
  }
  if (mc != CURLM_OK)
    for (auto& [id, t] : transfers)
      if (!t->done) {
        t->failure = make_error(ErrorKind::transport, "TransportError", curl_multi_strerror(mc));
        end_transfer(*t);
      }
}

// Resumes the transfers the rate limit paused, when the bucket holds tokens again;
// returns how long the loop may wait before looking again (a long time when none is
// paused). A resumed transfer may pause again at once (curl calls its callback here).
double Loop::Impl::resume_paused() {
  if (!rate_limiter().ever() || transfers.empty()) return HUGE_VAL;
  bool any = false;
  for (auto& [id, t] : transfers) any = any || t->paused;
  if (!any) return HUGE_VAL;
  if (double wait = rate_limiter().wait_seconds(); wait > 0) return wait;
  for (auto& [id, t] : transfers)
    if (t->paused && t->added && !t->done) {
      t->paused = false;
      curl_easy_pause(t->easy.get(), CURLPAUSE_CONT);
    }
  return 0.001;
}

// Hands each transfer that ended before this turn's callbacks began to its completion.
// Each is looked up again: an earlier callback may have cancelled it.
void Loop::Impl::hand_out_ended() {
  for (size_t n = ended.size(); n > 0; --n) {
    Id id = ended.front();
    ended.pop_front();
    auto it = transfers.find(id);
    if (it == transfers.end()) continue;
    std::unique_ptr<Transfer> t = std::move(it->second);
    transfers.erase(it);
    t->owner->erase(id);
    Outcome<HttpResponse> out = finish_guarded(*t);
    if (t->completion) t->completion(std::move(out));
  }
}

// Fires the timers due now (`interrupted`: and those set before the interrupt flag
// was raised), earliest first; timers added meanwhile wait for the next turn.
void Loop::Impl::fire_due_timers(bool interrupted) {
  const double limit = std::max(now(), skipped_to);
  skipped_to = -HUGE_VAL;
  std::vector<Id> due;
  for (auto it = due_order.begin(); it != due_order.end(); ++it) {
    if (it->first <= limit) due.push_back(it->second);
    else if (!interrupted) break;
    else if (!timers.at(it->second).after_interrupt) due.push_back(it->second);
  }
  for (Id id : due) {
    auto it = timers.find(id);
    if (it == timers.end()) continue;
    std::function<void()> fire = std::move(it->second.fire);
    if (it->second.owner) it->second.owner->erase(id);
    due_order.erase({it->second.due, id});
    timers.erase(it);
    if (fire) fire();
  }
}

// Detaches a transfer from the multi handle and pools its handle; curl no longer
// refers to it afterwards.
void Loop::Impl::detach(Transfer& t) {
  if (t.added) {
    curl_multi_remove_handle(multi.get(), t.easy.get());
    --handed;
  }
  t.added = false;
  release(std::move(t.easy));
}

// Finishes a transfer: detaches it and turns its result into the response or an Error.
Outcome<HttpResponse> Loop::Impl::finish(Transfer& t) {
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
  detach(t);
  return out;
}

// finish, with what it throws (std::bad_alloc turning an answer into its result)
// made the transfer's Error: nothing thrown leaves run_once.
Outcome<HttpResponse> Loop::Impl::finish_guarded(Transfer& t) {
  try {
    return finish(t);
  } catch (const std::exception&) {
    detach(t);
    return make_error(ErrorKind::transport, "OutOfMemory", "cannot hold an answer: out of memory");
  }
}

Loop::Loop() : impl_(std::make_unique<Impl>()) {}

// Transfers still running are abandoned; easy handles go before the multi handle.
Loop::~Loop() {
  for (auto& [id, t] : impl_->transfers) impl_->detach(*t);
  impl_->transfers.clear();
  impl_->idle.clear();
  impl_->multi.reset();
}

// Made once per thread; it goes when the thread has ended and the last transport on
// it has gone (each holds it: a client kept in a static may outlive the thread's
// thread_local destructors).
namespace {
std::shared_ptr<Loop> thread_loop() {
  static thread_local std::shared_ptr<Loop> loop = std::make_shared<Loop>();
  return loop;
}
}  // namespace

Loop& Loop::current() { return *thread_loop(); }

Loop::Id Loop::add_timer(double seconds, std::function<void()> fire, Pace pace) {
  return impl_->add_timer(seconds, std::move(fire), pace, nullptr);
}

// Removes the transfer or timer; the transfer's handle is detached and pooled here.
void Loop::cancel(Id id) {
  if (auto it = impl_->transfers.find(id); it != impl_->transfers.end()) {
    std::unique_ptr<Transfer> t = std::move(it->second);
    impl_->transfers.erase(it);
    t->owner->erase(id);
    impl_->detach(*t);
  }
  if (auto it = impl_->timers.find(id); it != impl_->timers.end()) {
    if (it->second.owner) it->second.owner->erase(id);
    impl_->due_order.erase({it->second.due, id});
    impl_->timers.erase(it);
  }
}

// One turn: drive the transfers (ending first, while the interrupt flag is raised,
// those started before it was), then hand out what ended and fire what is due.
void Loop::run_once(double timeout) {
  const bool interrupted = impl_->note_interrupt();
  if (interrupted) impl_->interrupt_all();
  impl_->wait(timeout);
  impl_->hand_out_ended();
  impl_->fire_due_timers(interrupted);
}

void Loop::run_until(const std::function<bool()>& done) {
  while (!done()) run_once(kPollSeconds);
}

size_t Loop::pending() const { return impl_->transfers.size() + impl_->timers.size(); }

double Loop::now() const { return impl_->now(); }

// A hold that ends when its last copy goes (the loop must outlive it).
std::shared_ptr<void> Loop::hold_virtual_time() {
  ++impl_->holds;
  return std::shared_ptr<void>(nullptr, [impl = impl_.get()](void*) { --impl->holds; });
}

std::function<void(double)> Loop::follow(std::function<void(double)> follower) {
  std::swap(impl_->follower, follower);
  return follower;
}

void Loop::set_max_host_connections(long n) {
  impl_->max_host_connections = n;
  if (impl_->multi) curl_multi_setopt(impl_->multi.get(), CURLMOPT_MAX_HOST_CONNECTIONS, n);
}

std::uint64_t set_rate_limit(std::uint64_t bytes_per_second) { return rate_limiter().set(bytes_per_second); }
std::uint64_t rate_limit() { return rate_limiter().rate(); }

// The flag is only read (relaxed), so a signal handler may set it.
void Loop::set_interrupt_flag(const std::atomic<bool>* flag) { impl_->interrupt = flag; }

struct Transport::Impl {
  Loop* loop;
  std::shared_ptr<Loop> thread_loop;  // holds the thread's loop, when it is that one
  TransportOptions options;
  Owned owned;  // the transfers and timers started here and not ended yet
};

Transport::Transport(TransportOptions options) : impl_(std::make_unique<Impl>()) {
  if (!options.loop) impl_->thread_loop = thread_loop();
  impl_->loop = options.loop ? options.loop : impl_->thread_loop.get();
  impl_->options = std::move(options);
}

// What is still under way is abandoned (its callbacks never run).
Transport::~Transport() {
  Owned owned = std::move(impl_->owned);
  impl_->owned.clear();
  for (Id id : owned) impl_->loop->cancel(id);
}

Transport::Id Transport::start(HttpRequest request, Completion done) {
  return impl_->loop->impl_->start(std::move(request), std::move(done), impl_->options, &impl_->owned);
}

Transport::Id Transport::add_timer(double seconds, std::function<void()> fire, Loop::Pace pace) {
  return impl_->loop->impl_->add_timer(seconds, std::move(fire), pace, &impl_->owned);
}

void Transport::cancel(Id id) {
  if (impl_->owned.count(id)) impl_->loop->cancel(id);
}

void Transport::run_once(double timeout) { impl_->loop->run_once(timeout); }

size_t Transport::pending() const { return impl_->owned.size(); }

// start, then run the loop until this transfer has its outcome.
Outcome<HttpResponse> Transport::perform(HttpRequest request) {
  std::optional<Outcome<HttpResponse>> out;
  start(std::move(request), [&out](Outcome<HttpResponse> r) { out = std::move(r); });
  impl_->loop->run_until([&out] { return out.has_value(); });
  return std::move(*out);
}

const TransportOptions& Transport::options() const { return impl_->options; }
Loop& Transport::loop() const { return *impl_->loop; }

}  // namespace cloud
