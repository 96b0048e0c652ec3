// A client's configuration as data: where each API is, the account, the dialect, the
// transport's options and the retry policy. What fills it is core/client/settings (one rule
// per setting) and core/client/config (where each value comes from); core/client/client runs it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "core/base/limits.h"
#include "core/wire/sigv4.h"
#include "core/net/transport.h"

namespace cloud {

struct RetryPolicy {
  int max_attempts = 3;     // 1: no retries
  double base_delay = 0.2;  // seconds; doubled per attempt, with full jitter
  double max_delay = 5.0;
  double invalid_part_delay = 3.0;    // the spec: wait a few seconds, then repeat
  bool retry_non_idempotent = false;  // resend restores even after they may have arrived
};

struct ClientConfig {
  std::string profile = "default";
  std::string region = "jp-east-1";
  const Dialect* dialect = &Dialect::ext();
  bool dialect_given = false;  // set by a setting (flag, variable, profile, cloud.client{}), not the default
  Credentials credentials;
  std::map<std::string, std::string> endpoints;  // api -> base URL
  // A `cloudlua serve`'s URL (endpoint_url): the endpoints an API lacks, the region,
  // and, when serve takes its built-in ones and none are set, the credentials are
  // asked of it before the first call (core/client/discover.h).
  std::string endpoint_url;
  // Discovery found a server at endpoint_url that is not a serve: an S3 server, taken
  // as the storage API's endpoint; the other APIs need endpoints of their own.
  bool endpoint_url_is_s3 = false;
  std::map<std::string, std::string> services;  // api -> signing service (default: the model's)
  TransportOptions transport;
  RetryPolicy retry;
  // When set (--debug), called with every HTTP exchange as describe_exchange shows
  // it, secrets redacted, once per attempt.
  std::function<void(const std::string& text)> debug;
  std::string redact_fields;    // the process's: more secret field names, comma-separated (core/net/redact)
  bool quiet_emulator = false;  // the session's: no line on stderr when the embedded emulator serves
  // The session's: what the process may hold at once of answers being received
  // (process_buffer_budget(), core/base/limits.h), every client's transfers together.
  std::uint64_t max_buffer_bytes = kMaxBufferedBytes;
  // Record every exchange into this folder, or answer every call from it (core/net/cassette.h):
  // --record DIR, --replay DIR, cloud.client{ record = DIR } / { replay = DIR }.
  std::string record;
  std::string replay;
  // A file body's signature (payload_signing): streamed (aws-chunked, each chunk
  // signed as it is read: the file read once) or whole (its SHA-256 first: read twice).
  bool stream_payloads = true;
};

}  // namespace cloud
