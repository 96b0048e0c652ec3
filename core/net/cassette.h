// Record and replay (--record DIR, --replay DIR, cloud.client{ record = / replay = }):
// a Cassette sits at the one seam every exchange passes, the transport's start.
// Recording, it calls the real start and appends each exchange, as one JSON line with
// sorted keys, to DIR/<api>.jsonl; replaying, it never touches the network and answers
// from those lines through a timer of 0 s, so that everything above the seam (parsing,
// errors, retries, waiters, tasks) runs as it did. Secrets never reach the file: the
// request side holds only what is matched (no headers, no signature), an answer's
// header named like a credential keeps only its name (is_secret_header, the rule of
// --debug), every text passes through core/net/redact and the access key id becomes
// AKID-RECORDED. A call is
// matched on api, operation, method, path, canonical query and canonical body, in order:
// the n-th call with those fields takes the n-th recorded one. It knows nothing of Lua.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/wire/http.h"
#include "core/net/transport.h"

namespace cloud {

// Replaying, what a config that names no account is given: a dummy key, and each API's
// endpoint when the cassette recorded none.
inline constexpr const char* kRecordedAccessKey = "AKID-RECORDED";
inline constexpr const char* kReplayOrigin = "http://replay.invalid";

// What a call is matched on, and the endpoint it went to (kept, not matched).
struct CallKey {
  std::string api;
  std::string operation;  // "ListObjects", or "request" for cloud.request
  std::string method;
  std::string endpoint;             // the API's base URL (kept, not matched)
  std::string path;                 // as on the wire
  std::string query;                // as on the wire; made canonical here
  std::string body;                 // the bytes sent; made canonical here
  std::string upload_sha256;        // a body sent from a file: its hash ...
  std::uint64_t upload_length = 0;  // ... and length
};

class Cassette {
 public:
  enum class Mode { record, replay };

  // The cassette of `dir` in `mode`, one per mode and directory in the process (every
  // client recording into DIR shares one, every client replaying it another: the calls
  // of all of them are matched in one order). Recording makes DIR and removes the
  // *.jsonl it held; replaying reads every DIR/*.jsonl as it is then. Errors (kind
  // config): a missing or unreadable DIR, "file:line: what is wrong" for a malformed line.
  static Outcome<std::shared_ptr<Cassette>> open(Mode mode, const std::string& dir);

  // The files a recording writes in its folder: DIR/<api>.jsonl for each API of the
  // model, and DIR/endpoints.json. Nothing else in DIR is read, replaced or removed.
  static std::vector<std::string> file_names();

  Mode mode() const { return mode_; }
  const std::string& dir() const { return dir_; }

  // Starts the exchange: recording, through `transport` (appending the exchange when it
  // ends, `secrets` and `access_key` removed); replaying, from the cassette.
  Transport::Id start(Transport& transport, const CallKey& key, HttpRequest request,
                      const std::vector<std::string>& secrets, const std::string& access_key,
                      Transport::Completion done);

  // Replaying: the endpoint recorded for `api` ("" when none).
  std::string endpoint(const std::string& api) const;
  // Replaying: the recorded calls not replayed yet, as "ListObjects (storage.jsonl:3)".
  std::vector<std::string> unused() const;

  struct Entry;  // one recorded exchange (cassette.cpp)
  Cassette(Mode mode, std::string dir);
  ~Cassette();

 private:
  Outcome<HttpResponse> replay(const CallKey& key, const BodyFiles& files);
  std::optional<Error> record(const CallKey& key, const HttpRequest& request, const Outcome<HttpResponse>& outcome,
                              const std::vector<std::string>& secrets, const std::string& access_key);

  Mode mode_;
  std::string dir_;
  std::vector<Entry> entries_;                    // replaying: every line, file by file
  std::map<std::string, std::string> endpoints_;  // api -> base URL
};

}  // namespace cloud
