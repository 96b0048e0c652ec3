// The checksums S3 takes beside a body (x-amz-checksum-<name>, x-ext-checksum-<name> in
// the platform's dialect): CRC-32, CRC-32C, CRC-64/NVME, SHA-1 and SHA-256, each sent as
// the base64 of its big-endian bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/crypto.h"

namespace cloud {

enum class ChecksumAlgorithm { crc32, crc32c, crc64nvme, sha1, sha256 };

// Every algorithm, in the order S3 lists them.
constexpr std::array<ChecksumAlgorithm, 5> kChecksumAlgorithms = {ChecksumAlgorithm::crc32, ChecksumAlgorithm::crc32c,
                                                                  ChecksumAlgorithm::crc64nvme, ChecksumAlgorithm::sha1,
                                                                  ChecksumAlgorithm::sha256};

// "crc32", "crc32c", "crc64nvme", "sha1", "sha256": the header's suffix.
const char* checksum_name(ChecksumAlgorithm algorithm);
// The algorithm a header suffix or an algorithm header names, in any case ("CRC32C");
// nullopt when none.
std::optional<ChecksumAlgorithm> find_checksum_algorithm(std::string_view name);

// A checksum of bytes given in pieces (a body as it arrives, a stored file read back).
class ChecksumStream {
 public:
  explicit ChecksumStream(ChecksumAlgorithm algorithm);
  ChecksumAlgorithm algorithm() const { return algorithm_; }
  void update(std::string_view piece);
  // Raw big-endian bytes, as checksum() gives them; once, at the end.
  std::string digest();

 private:
  ChecksumAlgorithm algorithm_;
  std::uint64_t crc_;                   // the CRCs' running register
  std::optional<DigestStream> digest_;  // SHA-1 and SHA-256
};

// The checksum of `data` as raw big-endian bytes (4, 8, 20 or 32 of them).
std::string checksum(ChecksumAlgorithm algorithm, std::string_view data);
// The same as it travels: base64 of those bytes.
std::string checksum_base64(ChecksumAlgorithm algorithm, std::string_view data);

// The CRCs themselves, as numbers.
std::uint32_t crc32(std::string_view data);
std::uint32_t crc32c(std::string_view data);
std::uint64_t crc64nvme(std::string_view data);

}  // namespace cloud
