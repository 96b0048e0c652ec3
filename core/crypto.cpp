// Hashes, MACs and encodings for signing, all through OpenSSL 3's non-deprecated
// calls (EVP_Digest, EVP_MAC, EVP_EncodeBlock, CRYPTO_memcmp) and the EVP digest
// context for a hash fed in pieces. Only hex is done by hand: it is
// formatting, not cryptography.
#include "core/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

namespace cloud {
namespace {

// One-shot digest of `data` with `md`; empty string if OpenSSL fails (it does not
// for these built-in digests, but callers then at least get no garbage).
std::string digest(std::string_view data, const EVP_MD* md) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) != 1) return {};
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace

// SHA-256 of `data`, 32 raw bytes.
std::string sha256(std::string_view data) { return digest(data, EVP_sha256()); }

// SHA-256 of `data` as 64 lowercase hex digits (payload and canonical-request hashes).
std::string sha256_hex(std::string_view data) { return hex(sha256(data)); }

DigestStream::DigestStream(Digest which) : ctx_(EVP_MD_CTX_new()) {
  if (ctx_) EVP_DigestInit_ex(ctx_, which == Digest::md5 ? EVP_md5() : EVP_sha256(), nullptr);
}

DigestStream::~DigestStream() { EVP_MD_CTX_free(ctx_); }

// Adds the next piece of the bytes hashed.
void DigestStream::update(std::string_view piece) {
  if (ctx_) EVP_DigestUpdate(ctx_, piece.data(), piece.size());
}

// The hash of every piece given; "" if OpenSSL failed (it does not for these digests).
std::string DigestStream::hex_digest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ctx_ || EVP_DigestFinal_ex(ctx_, out, &len) != 1) return {};
  return hex(std::string_view(reinterpret_cast<const char*>(out), len));
}

// MD5 of `data`, 16 raw bytes (Content-MD5 of the storage API, not for security).
std::string md5(std::string_view data) { return digest(data, EVP_md5()); }

// SHA-1 of `data`, 20 raw bytes (one of the storage API's checksums, not for security).
std::string sha1(std::string_view data) { return digest(data, EVP_sha1()); }

// HMAC-SHA256 of `data` under `key`, 32 raw bytes, through an EVP_MAC fetched once
// (the one-shot EVP_Q_mac looks the algorithm up again on every call).
std::string hmac_sha256(std::string_view key, std::string_view data) {
  static EVP_MAC* const hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  char digest_name[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest_name, 0), OSSL_PARAM_construct_end()};
  unsigned char out[EVP_MAX_MD_SIZE];
  size_t len = 0;
  EVP_MAC_CTX* ctx = hmac ? EVP_MAC_CTX_new(hmac) : nullptr;
  bool ok = ctx && EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) == 1 &&
            EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1 &&
            EVP_MAC_final(ctx, out, &len, sizeof out) == 1;
  EVP_MAC_CTX_free(ctx);
  if (!ok) return {};
  return std::string(reinterpret_cast<const char*>(out), len);
}

// Lowercase hex of raw bytes, two digits per byte.
std::string hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 0x0f];
  }
  return out;
}

// Standard base64 with padding and no line breaks (Content-MD5, binary blobs in JSON).
std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<int>(bytes.size()));
  out.resize(len < 0 ? 0 : static_cast<size_t>(len));
  return out;
}

// EVP_DecodeBlock decodes whole 4-character groups and counts the padding as zero
// bytes, so those are taken off again.
std::optional<std::string> unbase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  int len = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (len < 0) return std::nullopt;
  size_t padding = text.size() >= 2 ? (text[text.size() - 1] == '=') + (text[text.size() - 2] == '=') : 0;
  out.resize(static_cast<size_t>(len) - padding);
  return out;
}

// Equal strings compare in time that depends only on the length, which is public
// (signatures are fixed-length hex), never on where the first difference lies.
bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace cloud
