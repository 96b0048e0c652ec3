// The framing of an aws-chunked body (Content-Encoding: aws-chunked), as S3's streaming
// uploads send it: chunks of "<hex size>[;chunk-signature=<hex>]\r\n<bytes>\r\n", a
// last chunk of size 0, then trailing headers "name:value\r\n" and an empty line.
// Only the framing: the chunks' signatures are checked by the signer
// (verify_signature, core/sigv4.h).
#pragma once

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

}  // namespace cloud
