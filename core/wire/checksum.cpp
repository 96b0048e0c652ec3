// CRC-32 is zlib's. CRC-32C and CRC-64/NVME have no common Debian library, so they are
// here, table-driven (a byte at a time), in their reflected forms:
//   CRC-32C (Castagnoli): polynomial 0x1EDC6F41, reflected 0x82F63B78; initial value
//     and final XOR all ones; check value ("123456789") 0xE3069283.
//   CRC-64/NVME: polynomial 0xAD93D23594C93659, reflected 0x9A6C9329AC4BC9B5; initial
//     value and final XOR all ones; check value 0xAE8B14860A799888.
// (Parameters and check values as the CRC catalogue of R. Williams' model lists them.)
// SHA-1 and SHA-256 go through core/base/crypto (GNU Nettle).
#include "core/wire/checksum.h"

#include <zlib.h>

#include <algorithm>

#include "core/base/crypto.h"
#include "core/wire/http.h"

namespace cloud {
namespace {

// The 256 remainders of a reflected CRC with polynomial `reflected`, one per byte.
template <typename Word>
constexpr std::array<Word, 256> crc_table(Word reflected) {
  std::array<Word, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    Word r = byte;
    for (int bit = 0; bit < 8; ++bit) r = (r & 1) ? (r >> 1) ^ reflected : r >> 1;
    table[byte] = r;
  }
  return table;
}

// A reflected CRC's register `r` (all ones at first; the CRC is its complement)
// carried over `data`.
template <typename Word>
Word reflected_crc_update(const std::array<Word, 256>& table, Word r, std::string_view data) {
  for (unsigned char c : data) r = table[(r ^ c) & 0xff] ^ (r >> 8);
  return r;
}

// A reflected CRC with all-ones initial value and final XOR, over `data`.
template <typename Word>
Word reflected_crc(const std::array<Word, 256>& table, std::string_view data) {
  return ~reflected_crc_update(table, ~Word{0}, data);
}

constexpr auto kCrc32cTable = crc_table<std::uint32_t>(0x82F63B78u);
constexpr auto kCrc64NvmeTable = crc_table<std::uint64_t>(0x9A6C9329AC4BC9B5ull);

// `value`'s `bytes` low bytes, most significant first.
std::string big_endian(std::uint64_t value, int bytes) {
  std::string out(static_cast<size_t>(bytes), '\0');
  for (int i = bytes - 1; i >= 0; --i, value >>= 8) out[static_cast<size_t>(i)] = static_cast<char>(value & 0xff);
  return out;
}

// zlib's CRC-32 `r` carried over `data` (zlib's crc32 takes at most UINT_MAX bytes a call).
uLong zlib_crc32_update(uLong r, std::string_view data) {
  constexpr size_t kStep = 1u << 30;
  for (size_t at = 0; at < data.size(); at += kStep) {
    size_t n = std::min(kStep, data.size() - at);
    r = ::crc32(r, reinterpret_cast<const Bytef*>(data.data() + at), static_cast<uInt>(n));
  }
  return r;
}

}  // namespace

std::uint32_t crc32(std::string_view data) {
  return static_cast<std::uint32_t>(zlib_crc32_update(::crc32(0L, Z_NULL, 0), data));
}

std::uint32_t crc32c(std::string_view data) { return reflected_crc(kCrc32cTable, data); }

std::uint64_t crc64nvme(std::string_view data) { return reflected_crc(kCrc64NvmeTable, data); }

const char* checksum_name(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::crc32: return "crc32";
    case ChecksumAlgorithm::crc32c: return "crc32c";
    case ChecksumAlgorithm::crc64nvme: return "crc64nvme";
    case ChecksumAlgorithm::sha1: return "sha1";
    case ChecksumAlgorithm::sha256: return "sha256";
  }
  return "";
}

std::optional<ChecksumAlgorithm> find_checksum_algorithm(std::string_view name) {
  for (ChecksumAlgorithm a : kChecksumAlgorithms)
    if (iequals(checksum_name(a), name)) return a;
  return std::nullopt;
}

ChecksumStream::ChecksumStream(ChecksumAlgorithm algorithm) : algorithm_(algorithm) {
  if (algorithm == ChecksumAlgorithm::crc32) crc_ = ::crc32(0L, Z_NULL, 0);
  else crc_ = ~std::uint64_t{0};
  if (algorithm == ChecksumAlgorithm::sha1) digest_.emplace(Digest::sha1);
  if (algorithm == ChecksumAlgorithm::sha256) digest_.emplace(Digest::sha256);
}

void ChecksumStream::update(std::string_view piece) {
  switch (algorithm_) {
    case ChecksumAlgorithm::crc32: crc_ = zlib_crc32_update(static_cast<uLong>(crc_), piece); break;
    case ChecksumAlgorithm::crc32c:
      crc_ = reflected_crc_update(kCrc32cTable, static_cast<std::uint32_t>(crc_), piece);
      break;
    case ChecksumAlgorithm::crc64nvme: crc_ = reflected_crc_update(kCrc64NvmeTable, crc_, piece); break;
    case ChecksumAlgorithm::sha1:
    case ChecksumAlgorithm::sha256: digest_->update(piece); break;
  }
}

std::string ChecksumStream::digest() {
  switch (algorithm_) {
    case ChecksumAlgorithm::crc32: return big_endian(crc_, 4);
    case ChecksumAlgorithm::crc32c: return big_endian(~static_cast<std::uint32_t>(crc_), 4);
    case ChecksumAlgorithm::crc64nvme: return big_endian(~crc_, 8);
    case ChecksumAlgorithm::sha1:
    case ChecksumAlgorithm::sha256: return digest_->digest();
  }
  return {};
}

std::string checksum(ChecksumAlgorithm algorithm, std::string_view data) {
  ChecksumStream sum(algorithm);
  sum.update(data);
  return sum.digest();
}

std::string checksum_base64(ChecksumAlgorithm algorithm, std::string_view data) {
  return base64(checksum(algorithm, data));
}

}  // namespace cloud
