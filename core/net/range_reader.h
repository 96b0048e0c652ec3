// A request body read from a byte range of a file as the transport asks for it, so
// memory stays flat whatever its size: sent as it is (its SHA-256 computed before,
// reading the range once more) or framed as aws-chunked, each chunk hashed and signed
// as it is read (the file read once, as it is sent).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/crypto.h"
#include "core/base/error.h"
#include "core/wire/http.h"
#include "core/wire/sigv4.h"

namespace cloud {

// The bytes of a chunk of a streamed file body (64 KiB is S3's SDKs'; larger chunks
// sign less often and keep fewer signatures).
constexpr std::uint64_t kStreamChunkSize = 256 * 1024;

// A file body signed as it streams (STREAMING-<ALG>-PAYLOAD, core/wire/aws_chunked.h): each
// chunk's signature chained from the request's own (the seed), computed as the chunk
// is read. The signatures made are kept, secrets of the exchange (core/net/redact.h).
struct ChunkStream {
  ChunkScope scope;
  std::string seed;  // the request's signature
  std::uint64_t chunk_size = kStreamChunkSize;
  std::vector<std::string> signatures{};  // of the chunks sent by the current attempt
};

class ChunkFramer;  // core/net/range_reader.cpp: frames a range's chunks, a few ahead on a thread of its own

// Reads a FileRange from its first byte; each reader opens the file again (one per
// attempt, so a retry re-sends the range from its start). With a ChunkStream, what
// it reads is the range framed as aws-chunked, each chunk hashed and signed as it is
// read from the file: the file is read once, as it is sent. A range of more than one
// chunk is read and hashed on a second thread a few chunks ahead of the sending
// (ChunkFramer), so the hashing runs beside it on the second core.
class RangeReader {
 public:
  RangeReader();
  ~RangeReader();
  RangeReader(const RangeReader&) = delete;
  RangeReader& operator=(const RangeReader&) = delete;

  // Opens the file at the range's start; "" or what went wrong.
  std::string open(const FileRange& range, std::shared_ptr<ChunkStream> stream = nullptr);
  // Up to `size` bytes of the range (framed, with a stream) into `out`: the count, 0
  // at the end, -1 when a read fails or the file ends before the range does (error()
  // says which).
  long long read(char* out, std::uint64_t size);
  // Back to the range's first byte (a stream's chain back to its seed); false when
  // the file cannot seek.
  bool rewind();
  const std::string& error() const { return error_; }

 private:
  bool next_chunk();
  int fd_ = -1;
  FileRange range_;
  std::uint64_t done_ = 0;
  std::string error_;
  std::shared_ptr<ChunkStream> stream_;  // set: the range goes framed and signed
  std::unique_ptr<ChunkFramer> framer_;  // with a stream: made at the first read, gone at a rewind
  std::string_view sending_;             // the unsent bytes of the framed chunk being sent (in framer_)
  bool last_ = false;                    // it is the empty chunk that ends the body
  bool failed_ = false;                  // a chunk could not be read: error_ says why
};

// The hex digest (SHA-256 for signing, MD5 to compare with an ETag) of a file range,
// read once; kind validation when it cannot be read.
Outcome<std::string> hex_digest_of(const FileRange& range, Digest which);
// The SHA-256 of a payload about to be sent; its error says that nothing was sent.
Outcome<std::string> sha256_hex_of(const FileRange& range);

}  // namespace cloud
