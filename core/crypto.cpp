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

// The digest `name`, fetched from the default provider once: OpenSSL 3 looks the
// algorithm up again on every use of EVP_sha256() and the like (about a tenth of
// the emulator's time per small request went to those look-ups).
const EVP_MD* fetched(const char* name) { return EVP_MD_fetch(nullptr, name, nullptr); }
const EVP_MD* md_sha256() {
  static const EVP_MD* const md = fetched("SHA256");
  return md;
}
const EVP_MD* md_md5() {
  static const EVP_MD* const md = fetched("MD5");
  return md;
}
const EVP_MD* md_sha1() {
  static const EVP_MD* const md = fetched("SHA1");
  return md;
}

// One-shot digest of `data` with `md`; empty string if OpenSSL fails (it does not
// for these built-in digests, but callers then at least get no garbage).
std::string digest(std::string_view data, const EVP_MD* md) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) != 1) return {};
  return std::string(reinterpret_cast<const char*>(out), len);
}

// The digest a stream's context holds so far, raw; "" if OpenSSL failed.
std::string finish(EVP_MD_CTX* ctx) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ctx || EVP_DigestFinal_ex(ctx, out, &len) != 1) return {};
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace

// SHA-256 of `data`, 32 raw bytes.
std::string sha256(std::string_view data) { return digest(data, md_sha256()); }

// SHA-256 of `data` as 64 lowercase hex digits (payload and canonical-request hashes).
std::string sha256_hex(std::string_view data) { return hex(sha256(data)); }

DigestStream::DigestStream(Digest which) : ctx_(EVP_MD_CTX_new()) {
  if (ctx_) EVP_DigestInit_ex(ctx_, which == Digest::md5 ? md_md5() : md_sha256(), nullptr);
}

DigestStream::~DigestStream() { EVP_MD_CTX_free(ctx_); }

// Adds the next piece of the bytes hashed.
void DigestStream::update(std::string_view piece) {
  if (ctx_) EVP_DigestUpdate(ctx_, piece.data(), piece.size());
}

// The hash of every piece given; "" if OpenSSL failed (it does not for these digests).
std::string DigestStream::hex_digest() {
  std::string raw = finish(ctx_);
  return raw.empty() ? raw : hex(raw);
}

// MD5 of `data`, 16 raw bytes (Content-MD5 of the storage API, not for security).
std::string md5(std::string_view data) { return digest(data, md_md5()); }

// SHA-1 of `data`, 20 raw bytes (one of the storage API's checksums, not for security).
std::string sha1(std::string_view data) { return digest(data, md_sha1()); }

// Both digests in one pass: each block is hashed twice while it is still in the
// cache, so a large body is read from memory once rather than twice.
BodyDigests md5_and_sha256(std::string_view data) {
  constexpr size_t kBlock = 64 << 10;  // well inside L2, a multiple of both block sizes
  EVP_MD_CTX* m = EVP_MD_CTX_new();
  EVP_MD_CTX* s = EVP_MD_CTX_new();
  bool ok = m && s && EVP_DigestInit_ex(m, md_md5(), nullptr) == 1 && EVP_DigestInit_ex(s, md_sha256(), nullptr) == 1;
  for (size_t at = 0; ok && at < data.size(); at += kBlock) {
    std::string_view block = data.substr(at, kBlock);
    ok = EVP_DigestUpdate(m, block.data(), block.size()) == 1 && EVP_DigestUpdate(s, block.data(), block.size()) == 1;
  }
  BodyDigests out;
  if (ok) out = {finish(m), hex(finish(s))};
  EVP_MD_CTX_free(m);
  EVP_MD_CTX_free(s);
  return out;
}

// An HMAC context with its digest (SHA-256) already set, copied for each MAC: setting
// the digest by name makes OpenSSL look the digest up again, on every call.
const EVP_MAC_CTX* hmac_sha256_template() {
  static EVP_MAC_CTX* const ctx = [] {
    EVP_MAC* hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    EVP_MAC_CTX* c = hmac ? EVP_MAC_CTX_new(hmac) : nullptr;
    EVP_MAC_free(hmac);  // the context holds its own reference
    char digest_name[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest_name, 0), OSSL_PARAM_construct_end()};
    if (c && EVP_MAC_CTX_set_params(c, params) != 1) {
      EVP_MAC_CTX_free(c);
      c = nullptr;
    }
    return c;
  }();
  return ctx;
}

// HMAC-SHA256 of `data` under `key`, 32 raw bytes.
std::string hmac_sha256(std::string_view key, std::string_view data) {
  const EVP_MAC_CTX* base = hmac_sha256_template();
  unsigned char out[EVP_MAX_MD_SIZE];
  size_t len = 0;
  EVP_MAC_CTX* ctx = base ? EVP_MAC_CTX_dup(base) : nullptr;
  bool ok = ctx && EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), nullptr) == 1 &&
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
