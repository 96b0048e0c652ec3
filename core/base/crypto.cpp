// Hashes, MACs and encodings for signing, all through GNU Nettle (already in every
// process: libcurl's TLS stack loads it). Its contexts are plain structs: no
// algorithm is looked up, nothing is allocated, and a keyed HMAC is copied by value.
// OpenSSL 3's EVP calls did the same work behind a provider look-up whose first use
// cost about 3M instructions (an eighth of a one-call process) and each later use a
// few thousand. Nettle picks its SHA-NI code at run time where the CPU has it. Only
// hex is done by hand: it is formatting, not cryptography.
#include "core/base/crypto.h"

#include <nettle/base64.h>
#include <nettle/memops.h>
#include <nettle/sha1.h>

namespace cloud {
namespace {

const uint8_t* bytes_of(std::string_view data) { return reinterpret_cast<const uint8_t*>(data.data()); }

template <size_t N>
std::string as_string(const uint8_t (&out)[N]) {
  return std::string(reinterpret_cast<const char*>(out), N);
}

std::string digest_of(Digest which, std::string_view data) {
  DigestStream hash(which);
  hash.update(data);
  return hash.digest();
}

}  // namespace

// Both digests in one pass: each block is hashed twice while it is still in the
// cache, so a large body is read from memory once rather than twice.
BodyDigests md5_and_sha256(std::string_view data) {
  constexpr size_t kBlock = 64 << 10;  // well inside L2, a multiple of both block sizes
  DigestStream md5(Digest::md5), sha256(Digest::sha256);
  for (size_t at = 0; at < data.size(); at += kBlock) {
    std::string_view block = data.substr(at, kBlock);
    md5.update(block);
    sha256.update(block);
  }
  return {md5.digest(), sha256.hex_digest()};
}

// SHA-256 of `data`, 32 raw bytes.
std::string sha256(std::string_view data) { return digest_of(Digest::sha256, data); }

// SHA-256 of `data` as 64 lowercase hex digits (payload and canonical-request hashes).
std::string sha256_hex(std::string_view data) { return hex(sha256(data)); }

// MD5 of `data`, 16 raw bytes (Content-MD5 of the storage API, not for security).
std::string md5(std::string_view data) { return digest_of(Digest::md5, data); }

// SHA-1 of `data`, 20 raw bytes (one of the storage API's checksums, not for security).
std::string sha1(std::string_view data) {
  sha1_ctx ctx;
  sha1_init(&ctx);
  sha1_update(&ctx, data.size(), bytes_of(data));
  uint8_t out[SHA1_DIGEST_SIZE];
  sha1_digest(&ctx, sizeof out, out);
  return as_string(out);
}

DigestStream::DigestStream(Digest which) : which_(which) {
  switch (which_) {
    case Digest::md5: md5_init(&md5_); break;
    case Digest::sha1: sha1_init(&sha1_); break;
    case Digest::sha256: sha256_init(&sha256_); break;
  }
}

// Adds the next piece of the bytes hashed.
void DigestStream::update(std::string_view piece) {
  switch (which_) {
    case Digest::md5: md5_update(&md5_, piece.size(), bytes_of(piece)); break;
    case Digest::sha1: sha1_update(&sha1_, piece.size(), bytes_of(piece)); break;
    case Digest::sha256: sha256_update(&sha256_, piece.size(), bytes_of(piece)); break;
  }
}

// The hash of every piece given, raw (Nettle's digest calls start the context afresh).
std::string DigestStream::digest() {
  uint8_t out[SHA256_DIGEST_SIZE];  // the largest of the three
  size_t size = which_ == Digest::md5    ? MD5_DIGEST_SIZE
                : which_ == Digest::sha1 ? SHA1_DIGEST_SIZE
                                         : SHA256_DIGEST_SIZE;
  switch (which_) {
    case Digest::md5: md5_digest(&md5_, size, out); break;
    case Digest::sha1: sha1_digest(&sha1_, size, out); break;
    case Digest::sha256: sha256_digest(&sha256_, size, out); break;
  }
  return std::string(reinterpret_cast<const char*>(out), size);
}

void DigestStream::digest_into(unsigned char* out) {
  if (which_ == Digest::md5) md5_digest(&md5_, MD5_DIGEST_SIZE, out);
  else sha256_digest(&sha256_, SHA256_DIGEST_SIZE, out);
}

// The same as lowercase hex.
std::string DigestStream::hex_digest() { return hex(digest()); }

HmacSha256::HmacSha256(std::string_view key) { hmac_sha256_set_key(&ctx_, key.size(), bytes_of(key)); }

// The MAC of `data`; the context is then as the key left it, so a kept copy signs again.
std::string HmacSha256::sign(std::string_view data) {
  hmac_sha256_update(&ctx_, data.size(), bytes_of(data));
  uint8_t out[SHA256_DIGEST_SIZE];
  hmac_sha256_digest(&ctx_, sizeof out, out);
  return as_string(out);
}

// HMAC-SHA256 of `data` under `key`, 32 raw bytes.
std::string hmac_sha256(std::string_view key, std::string_view data) { return HmacSha256(key).sign(data); }

// HMAC-SHA1, kept for S3's older signature (V2) of browser-upload policies.
std::string hmac_sha1(std::string_view key, std::string_view data) {
  hmac_sha1_ctx ctx;
  hmac_sha1_set_key(&ctx, key.size(), reinterpret_cast<const uint8_t*>(key.data()));
  hmac_sha1_update(&ctx, data.size(), reinterpret_cast<const uint8_t*>(data.data()));
  std::string out(SHA1_DIGEST_SIZE, '\0');
  hmac_sha1_digest(&ctx, out.size(), reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

// Lowercase hex of raw bytes, two digits per byte.
std::string hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = digits[c >> 4];
    out[2 * i + 1] = digits[c & 0x0f];
  }
  return out;
}

// Standard base64 with padding and no line breaks (Content-MD5, binary blobs in JSON).
std::string base64(std::string_view bytes) {
  std::string out(BASE64_ENCODE_RAW_LENGTH(bytes.size()), '\0');
  base64_encode_raw(out.data(), bytes.size(), bytes_of(bytes));
  return out;
}

// Strict base64: whole 4-character groups of the standard alphabet, '=' only as the
// padding of the last group (Nettle's decoder alone would skip white space).
std::optional<std::string> unbase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    char c = text[i];
    bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (!alphabet) return std::nullopt;
  }
  base64_decode_ctx ctx;
  base64_decode_init(&ctx);
  std::string out(BASE64_DECODE_LENGTH(text.size()), '\0');
  size_t length = out.size();
  if (!base64_decode_update(&ctx, &length, reinterpret_cast<uint8_t*>(out.data()), text.size(), text.data()) ||
      !base64_decode_final(&ctx))
    return std::nullopt;
  out.resize(length);
  return out;
}

// Equal strings compare in time that depends only on the length, which is public
// (signatures are fixed-length hex), never on where the first difference lies.
bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return memeql_sec(a.data(), b.data(), a.size()) != 0;
}

}  // namespace cloud
