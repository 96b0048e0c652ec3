// The storage API's checksums against their published check values (the CRC
// catalogue's "123456789") and the digests' own test vectors; the wire form is the
// base64 of the big-endian bytes.
#include "core/wire/checksum.h"

#include <catch2/catch.hpp>

#include "core/base/crypto.h"

using namespace cloud;

TEST_CASE("checksums: the CRCs' check values", "[checksum]") {
  CHECK(crc32("123456789") == 0xCBF43926u);
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(crc64nvme("123456789") == 0xAE8B14860A799888ull);
  CHECK(crc32("") == 0);
  CHECK(crc32c("") == 0);
  CHECK(crc64nvme("") == 0);
}

TEST_CASE("checksums: big-endian bytes, base64 on the wire", "[checksum]") {
  CHECK(checksum(ChecksumAlgorithm::crc32, "123456789") == std::string("\xCB\xF4\x39\x26", 4));
  CHECK(checksum(ChecksumAlgorithm::crc32c, "123456789") == std::string("\xE3\x06\x92\x83", 4));
  CHECK(checksum(ChecksumAlgorithm::crc64nvme, "123456789") == std::string("\xAE\x8B\x14\x86\x0A\x79\x98\x88", 8));
  CHECK(checksum_base64(ChecksumAlgorithm::crc32, "") == "AAAAAA==");
  CHECK(checksum_base64(ChecksumAlgorithm::crc32, "123456789") == "y/Q5Jg==");
  CHECK(hex(checksum(ChecksumAlgorithm::sha1, "abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(hex(checksum(ChecksumAlgorithm::sha256, "abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("checksums: algorithms found by name in any case", "[checksum]") {
  CHECK(find_checksum_algorithm("crc32") == ChecksumAlgorithm::crc32);
  CHECK(find_checksum_algorithm("CRC32C") == ChecksumAlgorithm::crc32c);
  CHECK(find_checksum_algorithm("Crc64Nvme") == ChecksumAlgorithm::crc64nvme);
  CHECK(find_checksum_algorithm("sha256") == ChecksumAlgorithm::sha256);
  CHECK_FALSE(find_checksum_algorithm("md5"));
  CHECK_FALSE(find_checksum_algorithm(""));
  for (ChecksumAlgorithm a : kChecksumAlgorithms) CHECK(find_checksum_algorithm(checksum_name(a)) == a);
}
