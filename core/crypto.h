// Hashes and MACs through OpenSSL's EVP interface; no hand-written crypto.
#pragma once

#include <optional>
#include <string>
#include <string_view>

struct evp_md_ctx_st;   // OpenSSL's EVP_MD_CTX
struct evp_mac_ctx_st;  // OpenSSL's EVP_MAC_CTX

namespace cloud {

std::string sha256(std::string_view data);        // raw 32 bytes
std::string sha256_hex(std::string_view data);    // lowercase hex
std::string md5(std::string_view data);           // raw 16 bytes
std::string sha1(std::string_view data);          // raw 20 bytes
std::string hmac_sha256(std::string_view key, std::string_view data);  // raw 32 bytes
std::string hex(std::string_view bytes);          // lowercase hex
std::string base64(std::string_view bytes);
std::optional<std::string> unbase64(std::string_view text);  // nullopt: not base64

// A request body's MD5 (Content-MD5, ETag) and SHA-256 (the signature's payload hash).
struct BodyDigests {
  std::string md5;         // raw 16 bytes
  std::string sha256_hex;  // lowercase hex
};
BodyDigests md5_and_sha256(std::string_view data);  // one pass over `data`; empty fields if OpenSSL fails

enum class Digest { sha256, md5 };

// A digest of bytes given in pieces (a file range read once, block by block).
class DigestStream {
 public:
  explicit DigestStream(Digest which);
  ~DigestStream();
  DigestStream(const DigestStream&) = delete;
  DigestStream& operator=(const DigestStream&) = delete;
  void update(std::string_view piece);
  std::string digest();      // raw bytes; ends the stream
  std::string hex_digest();  // lowercase hex; ends the stream

 private:
  evp_md_ctx_st* ctx_;
};

// HMAC-SHA256 under one key, keyed once: a copy starts from the keyed state (the
// key's set-up is not redone), so a kept key signs each message for the cost of
// hashing it. Copying only reads the original, but OpenSSL promises nothing for
// concurrent reads of one context, so threads sharing an original copy it under a lock.
class HmacSha256 {
 public:
  explicit HmacSha256(std::string_view key);
  HmacSha256(const HmacSha256& other);
  HmacSha256& operator=(const HmacSha256&) = delete;
  ~HmacSha256();
  std::string sign(std::string_view data);  // raw 32 bytes; ends this context

 private:
  evp_mac_ctx_st* ctx_;
};

// Compares two strings in time independent of where they differ (signatures).
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace cloud
