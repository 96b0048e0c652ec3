// Bodies that live in files rather than in memory, so memory stays flat whatever
// their size: a request body read from a byte range of a file as the transport asks
// for it (its SHA-256 computed before, reading the range once), and an answer body
// written to a temporary file beside its target and renamed onto it when complete.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/crypto.h"
#include "core/base/error.h"
#include "core/base/files.h"
#include "core/wire/http.h"
#include "core/model/model.h"
#include "core/wire/sigv4.h"

namespace cloud {

// The byte range of a file that a call's arguments send as its payload (the members
// Operation::payload_file names), or nullopt when they name no file. What is wrong
// with it (a file that cannot be read, is not a regular file, a range outside the
// file, more than 5 GiB, the payload given as well) is appended to `problems`.
std::optional<FileRange> payload_file_range(const Operation& op, const json& args, std::vector<FieldProblem>& problems);

// The member Operation::payload_file's media_type names, set in `args` to the media
// type of the file they send, from its name (core/base/mime: the system's table), when the
// caller gave no such member and the table knows the name's extension; else nothing.
void fill_media_type(const Operation& op, json& args);

// What is wrong with writing an answer to `path` (Operation::output_file), appended
// to `problems`: its directory does not exist, or it is a directory itself; with an
// offset (Operation::output_file_offset) it is not an existing regular file, or the
// offset (or output_file_durable) is given without the path.
void check_output_file(const Operation& op, const json& args, std::vector<FieldProblem>& problems);

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

class ChunkFramer;  // core/model/body.cpp: frames a range's chunks, a few ahead on a thread of its own

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

// An answer body written to the target's part file (core/base/files.h: beside it, so the
// rename is atomic): commit() renames it onto the target; a sink not committed
// removes its part file when it goes, leaving the target untouched. With `at`,
// the body is written in place at that byte of the existing target instead (one
// range of a parallel download), and commit() only flushes it. A sink not `durable`
// skips the flush (fsync): its caller makes a batch of files durable at once
// (cloud.fs.sync, at the end of a tree's downloads). With `beneath`, the target's
// folder is reached from that folder without following a link (core/base/files.h).
class FileSink {
 public:
  explicit FileSink(std::string target, std::optional<std::uint64_t> at = std::nullopt, bool durable = true,
                    std::string beneath = "")
      : target_(std::move(target)), at_(at), durable_(durable), beneath_(std::move(beneath)) {}
  ~FileSink();
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  // Creates the temporary file; "" or what went wrong.
  std::string open();
  // Appends bytes; false (error() set) when the disk refuses them.
  bool write(const char* data, std::uint64_t size);
  // Flushes, closes and renames onto the target; "" or what went wrong.
  std::string commit();
  std::uint64_t size() const { return size_; }
  const std::string& target() const { return target_; }
  const std::string& error() const { return error_; }
  int error_number() const { return errno_; }  // the errno of the write that failed

 private:
  std::string open_in_place();
  void discard();
  std::string target_;
  std::optional<std::uint64_t> at_;
  bool durable_;
  std::string beneath_;  // set: the target lies under this folder, no link followed between
  PartFile part_;        // the part file; unused with `at`
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string error_;
  int errno_ = 0;
};

}  // namespace cloud
