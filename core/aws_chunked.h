// The framing of an aws-chunked body (Content-Encoding: aws-chunked), as S3's streaming
// uploads send it: chunks of "<hex size>[;chunk-signature=<hex>]\r\n<bytes>\r\n", a
// last chunk of size 0, then trailing headers "name:value\r\n" and an empty line.
// Only the framing: the chunks' signatures are checked by the signer
// (verify_signature, core/sigv4.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/http.h"

namespace cloud {

struct AwsChunk {
  std::string_view data;  // into the body parsed
  std::string signature;  // the chunk-signature extension; empty when unsigned
  bool has_signature = false;
};

struct AwsChunkedBody {
  std::vector<AwsChunk> chunks;  // every chunk, the last (empty) one too
  Headers trailers;              // as received, names lowercased, values trimmed
};

// Reads `body` (which must outlive the result: chunks point into it). Fails with
// IncompleteBody when the body ends inside a chunk or before its end, InvalidRequest
// when a chunk's header or its end is malformed, MalformedTrailerError when a trailing
// line is not "name:value", or bytes follow the empty line that ends the body.
Outcome<AwsChunkedBody> parse_aws_chunked(std::string_view body);

// The bytes of the chunks, joined.
std::string joined_data(const AwsChunkedBody& body);

// Writing the framing (the client's streamed file bodies, core/body.h): a signed
// chunk's head is "<hex size>;chunk-signature=<64 hex>\r\n", its bytes follow, then
// "\r\n"; the last chunk has size 0 and no trailers follow (an empty line).
constexpr std::uint64_t kMaxAwsChunkHead = 16 + 17 + 64 + 2;  // size digits, ";chunk-signature=", signature, CRLF
std::string aws_chunk_head(std::uint64_t size, const std::string& signature);
// The length on the wire of `decoded` bytes sent signed in chunks of `chunk_size`
// (the last one shorter), the empty last chunk included: the Content-Length, known
// without reading them.
std::uint64_t aws_chunked_length(std::uint64_t decoded, std::uint64_t chunk_size);

}  // namespace cloud
