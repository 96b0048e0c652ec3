// Hashes and MACs through GNU Nettle; no hand-written crypto.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nettle/hmac.h>
#include <nettle/md5.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>

namespace cloud {

std::string sha256(std::string_view data);                             // raw 32 bytes
std::string sha256_hex(std::string_view data);                         // lowercase hex
std::string md5(std::string_view data);                                // raw 16 bytes
std::string sha1(std::string_view data);                               // raw 20 bytes
std::string hmac_sha256(std::string_view key, std::string_view data);  // raw 32 bytes
std::string hmac_sha1(std::string_view key, std::string_view data);    // raw 20 bytes: signature V2
std::string hex(std::string_view bytes);                               // lowercase hex
std::string base64(std::string_view bytes);
std::optional<std::string> unbase64(std::string_view text);  // nullopt: not base64

// A request body's MD5 (Content-MD5, ETag) and SHA-256 (the signature's payload hash).
struct BodyDigests {
  std::string md5;         // raw 16 bytes
  std::string sha256_hex;  // lowercase hex
};
BodyDigests md5_and_sha256(std::string_view data);  // one pass over `data`

enum class Digest { sha256, md5, sha1 };

// A digest of bytes given in pieces (a file range read once, block by block).
class DigestStream {
 public:
  explicit DigestStream(Digest which);
  void update(std::string_view piece);
  std::string digest();                  // raw bytes; starts the stream afresh
  void digest_into(unsigned char* out);  // the same into out (32 or 16 bytes): allocates nothing
  std::string hex_digest();              // lowercase hex; starts the stream afresh

 private:
  Digest which_;
  union {
    sha256_ctx sha256_;
    md5_ctx md5_;
    sha1_ctx sha1_;
  };
};

// HMAC-SHA256 under one key, keyed once: a copy starts from the keyed state (the
// key's set-up is not redone), so a kept key signs each message for the cost of
// hashing it. Threads sharing an original copy it under a lock (core/wire/sigv4's kept keys).
class HmacSha256 {
 public:
  explicit HmacSha256(std::string_view key);
  std::string sign(std::string_view data);  // raw 32 bytes; back to the state the key left

 private:
  hmac_sha256_ctx ctx_;  // a plain struct: a copy is a keyed context
};

// Compares two strings in time independent of where they differ (signatures).
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace cloud
