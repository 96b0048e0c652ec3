// A reader of the aws-chunked framing over a body held whole (the emulator reads each
// body before serving it). Chunk sizes are at most 16 hex digits, and a size larger than
// what is left of the body is a body that ended early.
#include "core/aws_chunked.h"

#include <cstdio>
#include <optional>

namespace cloud {
namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr std::string_view kSignatureKey = "chunk-signature=";

Error malformed(size_t number, const std::string& what) {
  return make_error(ErrorKind::validation, "InvalidRequest",
                    "the aws-chunked body is malformed: chunk " + std::to_string(number) + " " + what);
}

Error ended_early(size_t number) {
  return make_error(ErrorKind::validation, "IncompleteBody",
                    "the aws-chunked body ends inside chunk " + std::to_string(number) +
                        " (or before its last, empty chunk)");
}

Error bad_trailer(const std::string& what) {
  return make_error(ErrorKind::validation, "MalformedTrailerError",
                    "the trailing headers of the aws-chunked body are malformed: " + what);
}

// The value of hex digits `text` (1 to 16 of them), or false.
bool parse_hex(std::string_view text, unsigned long long& value) {
  if (text.empty() || text.size() > 16) return false;
  value = 0;
  for (char c : text) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return false;
    value = value * 16 + static_cast<unsigned>(digit);
  }
  return true;
}

// `text` without the spaces and tabs around it.
std::string_view trimmed(std::string_view text) {
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// One chunk's header line, "<hex size>" or "<hex size>;chunk-signature=<sig>", into
// `chunk` and `size`.
std::optional<Error> parse_chunk_header(std::string_view line, size_t number, AwsChunk& chunk, unsigned long long& size) {
  size_t semicolon = line.find(';');
  std::string_view digits = line.substr(0, semicolon);
  if (!parse_hex(digits, size)) return malformed(number, "has a size that is not 1 to 16 hex digits");
  if (semicolon == std::string_view::npos) return std::nullopt;
  std::string_view extension = line.substr(semicolon + 1);
  if (extension.substr(0, kSignatureKey.size()) != kSignatureKey)
    return malformed(number, "has an extension other than chunk-signature");
  chunk.signature = std::string(extension.substr(kSignatureKey.size()));
  chunk.has_signature = true;
  return std::nullopt;
}

// The trailing lines after the last chunk, up to the empty line that ends the body.
std::optional<Error> parse_trailers(std::string_view rest, Headers& trailers) {
  for (;;) {
    size_t end = rest.find(kCrlf);
    if (end == std::string_view::npos) return bad_trailer("the body does not end with an empty line");
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + kCrlf.size());
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || trimmed(line.substr(0, colon)).empty())
      return bad_trailer("a line is not name:value");
    trailers.emplace_back(to_lower(trimmed(line.substr(0, colon))), std::string(trimmed(line.substr(colon + 1))));
  }
  if (!rest.empty()) return bad_trailer("bytes follow the empty line that ends the body");
  return std::nullopt;
}

}  // namespace

Outcome<AwsChunkedBody> parse_aws_chunked(std::string_view body) {
  AwsChunkedBody out;
  for (size_t number = 1;; ++number) {
    size_t end = body.find(kCrlf);
    if (end == std::string_view::npos) return ended_early(number);
    AwsChunk chunk;
    unsigned long long size = 0;
    if (auto bad = parse_chunk_header(body.substr(0, end), number, chunk, size)) return *bad;
    body.remove_prefix(end + kCrlf.size());
    if (size == 0) {
      out.chunks.push_back(std::move(chunk));
      if (auto bad = parse_trailers(body, out.trailers)) return *bad;
      return out;
    }
    if (size > body.size()) return ended_early(number);
    chunk.data = body.substr(0, size);
    body.remove_prefix(size);
    if (body.size() < kCrlf.size()) return ended_early(number);
    if (body.substr(0, kCrlf.size()) != kCrlf) return malformed(number, "is longer than its size says");
    body.remove_prefix(kCrlf.size());
    out.chunks.push_back(std::move(chunk));
  }
}

std::string joined_data(const AwsChunkedBody& body) {
  size_t size = 0;
  for (const AwsChunk& c : body.chunks) size += c.data.size();
  std::string out;
  out.reserve(size);
  for (const AwsChunk& c : body.chunks) out.append(c.data);
  return out;
}

std::string aws_chunk_head(std::uint64_t size, const std::string& signature) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%llx", static_cast<unsigned long long>(size));
  return std::string(digits) + ";" + std::string(kSignatureKey) + signature + std::string(kCrlf);
}

std::uint64_t aws_chunked_length(std::uint64_t decoded, std::uint64_t chunk_size) {
  const std::uint64_t signature = 64;
  auto framed = [&](std::uint64_t size) { return aws_chunk_head(size, std::string(signature, '0')).size() + size + 2; };
  std::uint64_t full = decoded / chunk_size, rest = decoded % chunk_size;
  return full * framed(chunk_size) + (rest ? framed(rest) : 0) + framed(0);
}

}  // namespace cloud
