// Hashes, MACs and encodings for signing, all through OpenSSL 3's non-deprecated
// calls (EVP_Digest, EVP_MAC, EVP_EncodeBlock, CRYPTO_memcmp) and the EVP digest
// context for a hash fed in pieces. Only hex is done by hand: it is
// formatting, not cryptography. Algorithms are fetched once per process and
// contexts reused where that is safe: on the per-call path their set-up cost more
// than the hashing of a small request.
#include "core/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

namespace cloud {
namespace {

// The digest named `name`, fetched once per process: the EVP_sha256()-style
// constants make OpenSSL look the algorithm up again on every use, which cost as much
// as hashing a small canonical request. Fetched algorithms may be shared by threads.
const EVP_MD* fetched(const char* name) {
  return EVP_MD_fetch(nullptr, name, nullptr);
}

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

// Digest of `data` with `md`, through a context kept per thread (a context must not
// be shared between threads; allocating one per hash is what is saved). Empty
// string if OpenSSL fails (it does not for these built-in digests, but callers then
// at least get no garbage).
std::string digest(std::string_view data, const EVP_MD* md) {
  struct Context {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Context() { EVP_MD_CTX_free(ctx); }
  };
  static thread_local Context kept;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!kept.ctx || !md || EVP_DigestInit_ex(kept.ctx, md, nullptr) != 1 ||
      EVP_DigestUpdate(kept.ctx, data.data(), data.size()) != 1 || EVP_DigestFinal_ex(kept.ctx, out, &len) != 1)
    return {};
  return std::string(reinterpret_cast<const char*>(out), len);
}

// The digest a context holds so far, raw; "" if OpenSSL failed.
std::string finish(EVP_MD_CTX* ctx) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ctx || EVP_DigestFinal_ex(ctx, out, &len) != 1) return {};
  return std::string(reinterpret_cast<const char*>(out), len);
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

// The hash of every piece given, raw; "" if OpenSSL failed (it does not for these digests).
std::string DigestStream::digest() { return finish(ctx_); }

// The same as lowercase hex.
std::string DigestStream::hex_digest() { return hex(digest()); }

// MD5 of `data`, 16 raw bytes (Content-MD5 of the storage API, not for security).
std::string md5(std::string_view data) { return digest(data, md_md5()); }

// SHA-1 of `data`, 20 raw bytes (one of the storage API's checksums, not for security).
std::string sha1(std::string_view data) { return digest(data, md_sha1()); }

namespace {

// The HMAC algorithm, fetched once (EVP_Q_mac would look it up on every call).
EVP_MAC* hmac_algorithm() {
  static EVP_MAC* const hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return hmac;
}

// A context keyed with `key`; null if OpenSSL fails.
evp_mac_ctx_st* keyed_context(std::string_view key) {
  char digest_name[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest_name, 0), OSSL_PARAM_construct_end()};
  EVP_MAC_CTX* ctx = hmac_algorithm() ? EVP_MAC_CTX_new(hmac_algorithm()) : nullptr;
  if (ctx && EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) != 1) {
    EVP_MAC_CTX_free(ctx);
    return nullptr;
  }
  return ctx;
}

}  // namespace

HmacSha256::HmacSha256(std::string_view key) : ctx_(keyed_context(key)) {}

// Duplicating copies the state left by the key (the padded key already absorbed), so
// a signature under a kept key costs the MAC of its data only. `other` is only read.
HmacSha256::HmacSha256(const HmacSha256& other) : ctx_(other.ctx_ ? EVP_MAC_CTX_dup(other.ctx_) : nullptr) {}

HmacSha256::~HmacSha256() { EVP_MAC_CTX_free(ctx_); }

std::string HmacSha256::sign(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  size_t len = 0;
  if (!ctx_ || EVP_MAC_update(ctx_, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1 ||
      EVP_MAC_final(ctx_, out, &len, sizeof out) != 1)
    return {};
  return std::string(reinterpret_cast<const char*>(out), len);
}

// HMAC-SHA256 of `data` under `key`, 32 raw bytes.
std::string hmac_sha256(std::string_view key, std::string_view data) { return HmacSha256(key).sign(data); }

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
