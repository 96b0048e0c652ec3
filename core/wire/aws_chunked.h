// The framing of an aws-chunked body (Content-Encoding: aws-chunked), as S3's streaming
// uploads send it: chunks of "<hex size>[;chunk-signature=<hex>]\r\n<bytes>\r\n", a
// last chunk of size 0, then trailing headers "name:value\r\n" and an empty line.
// Only the framing: the chunks' signatures are checked by the signer
// (verify_signature, core/wire/sigv4.h). One reader, AwsChunkedReader, takes a body in
// pieces as it arrives (the emulator's bodies streamed to a file) or whole
// (parse_aws_chunked): the same states and the same errors either way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/wire/http.h"

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

// Reads the framing a piece at a time, holding only a chunk's head line or the
// trailing lines (bounded): each chunk's head, its bytes (in as many pieces as they
// came in) and its end go to a Handler as they are read. Errors as parse_aws_chunked's.
class AwsChunkedReader {
 public:
  // What the reader found, in order; false from any of them stops the reading.
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual bool chunk_begins(const AwsChunk& chunk, std::uint64_t size) = 0;  // chunk.data empty
    virtual bool chunk_bytes(std::string_view bytes) = 0;
    virtual bool chunk_ends() = 0;  // the last (empty) chunk's too, right after it begins
  };
  // The most a chunk's head line, or the trailing lines together, may take.
  static constexpr size_t kMaxHeadLine = 4096;
  static constexpr size_t kMaxTrailers = 64 << 10;

  // The next bytes of the body: true to go on, false when `handler` stopped it, an
  // error when the framing is wrong.
  Outcome<bool> feed(std::string_view bytes, Handler& handler);
  // The body has ended: its trailing headers (names lowercased, values trimmed), or an
  // error when it ended early or its trailers are malformed.
  Outcome<Headers> finish();

 private:
  enum class State { head, data, data_end, trailers };
  std::optional<Error> end_of_head(Handler& handler, bool& go_on);
  State state_ = State::head;
  std::string line_;        // the head line read so far, or the trailing lines
  std::uint64_t left_ = 0;  // bytes of the chunk's data still to come
  size_t number_ = 1;       // the chunk being read, from 1
};

// Reads `body` (which must outlive the result: chunks point into it). Fails with
// IncompleteBody when the body ends inside a chunk or before its end, InvalidRequest
// when a chunk's header or its end is malformed, MalformedTrailerError when a trailing
// line is not "name:value", or bytes follow the empty line that ends the body.
Outcome<AwsChunkedBody> parse_aws_chunked(std::string_view body);

// The bytes of the chunks, joined.
std::string joined_data(const AwsChunkedBody& body);

// Writing the framing (the client's streamed file bodies, core/net/range_reader.h): a signed
// chunk's head is "<hex size>;chunk-signature=<64 hex>\r\n", its bytes follow, then
// "\r\n"; the last chunk has size 0 and no trailers follow (an empty line).
constexpr std::uint64_t kMaxAwsChunkHead = 16 + 17 + 64 + 2;  // size digits, ";chunk-signature=", signature, CRLF
std::string aws_chunk_head(std::uint64_t size, const std::string& signature);
// The length on the wire of `decoded` bytes sent signed in chunks of `chunk_size`
// (the last one shorter), the empty last chunk included: the Content-Length, known
// without reading them.
std::uint64_t aws_chunked_length(std::uint64_t decoded, std::uint64_t chunk_size);

}  // namespace cloud
