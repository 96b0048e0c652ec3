// Signature Version 4 (HMAC-SHA256, date/region/service scoped keys) in two dialects:
// `ext` (the platform's: EXT4-HMAC-SHA256, x-ext-*) and `aws` (AWS4-HMAC-SHA256,
// x-amz-*). The same function signs for the client and verifies for the emulator,
// which re-signs what it received and compares.
#pragma once

#include <optional>
#include <string>

#include "core/error.h"
#include "core/http.h"
#include "core/uri.h"

namespace cloud {

struct Dialect {
  std::string name;           // "ext" or "aws"
  std::string algorithm;      // "EXT4-HMAC-SHA256"
  std::string key_prefix;     // "EXT4": prepended to the secret for the first HMAC
  std::string terminator;     // "ext4_request"
  std::string header_prefix;  // "X-Ext-": X-Ext-Date, X-Ext-Security-Token
  std::string query_prefix;   // "X-Ext-": presigned-URL parameters

  static const Dialect& ext();
  static const Dialect& aws();
  static const Dialect* find(const std::string& name);  // nullptr when unknown
};

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty: none
};

struct SignInput {
  std::string method = "GET";
  std::string url;   // absolute URL as it goes on the wire
  Headers headers;   // a Host header is added from the URL when missing
  std::string body;
  std::string payload_sha256;  // hex hash of a body sent from a file; empty: the hash of `body`
  std::string region;
  std::string service;
  Credentials credentials;
  std::string time;  // yyyymmddThhmmssZ; empty: now
  const Dialect* dialect = &Dialect::ext();
  bool normalize = true;       // remove . and .. segments and repeated slashes
  bool double_encode = true;   // encode the wire path once more (false: S3-style)
  bool sign_body = false;      // add and sign the <prefix>content-sha256 header
  bool omit_session_token = false;  // token header added after signing, unsigned
  std::optional<long> presign_expires;  // seconds: presigned-URL variant
};

struct SignOutput {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;
  std::string authorization;  // header variant only
  Headers headers;            // every header to send, in order
  std::string url;            // the URL to send (with the signature when presigned)
};

// Signs `in`. Fails (kind validation) only on an unusable URL or time.
Outcome<SignOutput> sign(const SignInput& in);
// Signs `in` for a URL already in parts (in.url is not read): the client builds its
// URL once rather than joining it into a string to be parsed again.
Outcome<SignOutput> sign(const SignInput& in, const Url& url);

// The current UTC time as yyyymmddThhmmssZ.
std::string amz_time_now();

}  // namespace cloud
