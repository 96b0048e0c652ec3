// Hashes and MACs through OpenSSL's EVP interface; no hand-written crypto.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cloud {

std::string sha256(std::string_view data);        // raw 32 bytes
std::string sha256_hex(std::string_view data);    // lowercase hex
std::string md5(std::string_view data);           // raw 16 bytes
std::string hmac_sha256(std::string_view key, std::string_view data);  // raw 32 bytes
std::string hex(std::string_view bytes);          // lowercase hex
std::string base64(std::string_view bytes);
std::optional<std::string> unbase64(std::string_view text);  // nullopt: not base64

// Compares two strings in time independent of where they differ (signatures).
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace cloud
