// A request's body as the emulator reads it, the one way every body is read (from the
// connection as it arrives, or whole when a request is answered without a socket):
// hashed on the way (a plain body's SHA-256, the signature's payload hash, and its
// MD5; a streaming body's chunks checked by its StreamCheck and the MD5 of its decoded
// bytes; the checksums the request names, of the bytes kept) and kept in memory or,
// given a folder (a raw payload of `serve`: PutObject's, UploadPart's), in a new file
// there, a piece at a time, so that the object or part is made from that file.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/wire/checksum.h"
#include "core/base/crypto.h"
#include "core/wire/sigv4.h"
#include "emulator/blob.h"

namespace cloud {

class IncomingBody {
 public:
  // `stream`: the check of a streaming body (nullptr: a plain one); `folder`: "" keeps
  // the bytes in memory; `sums`: the checksums to take of the bytes kept.
  IncomingBody(std::unique_ptr<StreamCheck> stream, std::string folder, std::vector<ChecksumAlgorithm> sums);

  // The next bytes as received. A body refused on the way (a chunk's signature) is read
  // on to its end and dropped: its file goes at once. Throws std::runtime_error when the
  // file cannot be written.
  void feed(std::string_view received);
  // The body has ended: the refusal of a streaming body, if any; else its digests,
  // checksums and bytes are ready.
  std::optional<SignatureRefusal> finish();

  // The MD5 of the bytes kept (raw) and, for a plain body, its SHA-256 (hex).
  const BodyDigests& digests() const { return digests_; }
  // The checksums taken (raw), by algorithm.
  const std::map<ChecksumAlgorithm, std::string>& checksums() const { return checksums_; }
  // A streaming body's trailing headers (its checksum, when it came last).
  Headers& trailers() { return trailers_; }
  // The bytes kept in memory (empty when they went to a file).
  std::string& memory() { return memory_; }
  // The bytes kept, as a blob: the file's (it goes with the blob), or the memory moved in.
  SharedBytes take_bytes();

 private:
  bool keep(std::string_view bytes);

  std::unique_ptr<StreamCheck> stream_;
  std::unique_ptr<BodyFile> file_;
  DigestStream md5_{Digest::md5}, sha256_{Digest::sha256};
  std::vector<ChecksumStream> sums_;
  std::optional<SignatureRefusal> refused_;
  BodyDigests digests_;
  std::map<ChecksumAlgorithm, std::string> checksums_;
  Headers trailers_;
  std::string memory_;
  SharedBytes file_bytes_;
};

// The checksums a request names: in a checksum header (<prefix>checksum-<name>), its
// SDK's algorithm header (<prefix>sdk-checksum-algorithm) or its trailer header
// (<prefix>trailer), in either dialect's prefix.
std::vector<ChecksumAlgorithm> named_checksums(const Headers& headers);

}  // namespace cloud
