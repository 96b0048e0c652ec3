// The bytes of an object or a part (a Blob): in memory (the embedded emulator, and a
// request's body as it arrived), a file of `serve --state`'s byte folder (after a
// restart, or once a change is saved: the memory is let go), or parts joined (an
// upload completed: nothing copied). Never changed once made; read in pieces, so that
// an answer or a save holds one piece at a time, however large the bytes.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cloud {

class Blob;
using SharedBytes = std::shared_ptr<const Blob>;

class Blob : public std::enable_shared_from_this<Blob> {
 public:
  // The size of the pieces a blob is read, written and sent in.
  static constexpr size_t kPiece = 1 << 20;

  virtual ~Blob() = default;
  virtual std::uint64_t size() const = 0;
  // Copies `length` bytes from `offset` into `into`; throws std::runtime_error when
  // a file cannot be read.
  virtual void read(std::uint64_t offset, size_t length, char* into) const = 0;
  // The bytes, readable for as long as the result is held: a file is opened now and
  // stays readable after the store removes it (a later change replacing it). Taken
  // under the platform's lock, before an answer leaves it.
  virtual SharedBytes opened() const = 0;
  // The bytes in memory as they stand, when they are there whole; else nullptr.
  virtual const std::string* in_memory() const { return nullptr; }
  // The file that holds the bytes whole, when one does; else "".
  virtual std::string file() const { return ""; }
  // Whether that file was flushed to the disk (a state's store flushes a body's file
  // before the change that keeps it, marking it so; a blob's file never changes).
  bool flushed() const { return flushed_; }
  void mark_flushed() const { flushed_ = true; }

  // [offset, offset + length) as a string (read from a file when need be).
  std::string slice(std::uint64_t offset, std::uint64_t length) const;
  std::string all() const { return slice(0, size()); }
  // Each piece in order to `piece` (false from it stops: false); a file is opened for
  // the time it takes, joined parts one after the other.
  virtual bool each_piece(const std::function<bool(const char*, size_t)>& piece) const;

 private:
  mutable std::atomic<bool> flushed_{false};
};

// Bytes in memory, moved in.
SharedBytes memory_blob(std::string bytes);
// Bytes in the file `path`, `size` of them, opened each time they are read.
SharedBytes file_blob(std::string path, std::uint64_t size);
// The bytes of the regular file `path` as it stands (its size looked up, nothing read);
// throws std::runtime_error when there is none (a link is not followed).
SharedBytes stored_file(const std::string& path);
// Bytes in the file `path`, `size` of them, that the blob owns: the file is removed
// when the last holder lets the blob go (a request's body, streamed to a file: kept as
// the object or part it made, or hard-linked into a store's folder).
SharedBytes owned_file_blob(std::string path, std::uint64_t size);

// How the file of a body being streamed in is named: kIncoming followed by six characters.
constexpr const char* kIncoming = "incoming-";

// A request's body written to a new file of `folder` as it arrives, a piece at a time
// (held until Blob::kPiece is full): the file is removed unless finish() hands it on.
class BodyFile {
 public:
  // Makes the file kIncoming + "XXXXXX" in `folder`; throws std::runtime_error when it cannot.
  explicit BodyFile(const std::string& folder);
  ~BodyFile();
  BodyFile(const BodyFile&) = delete;
  BodyFile& operator=(const BodyFile&) = delete;
  // Throws std::runtime_error when the file cannot be written (a full disk).
  void write(const char* data, size_t size);
  // The bytes written, as an owned_file_blob; throws as write() does.
  SharedBytes finish();

 private:
  void flush();
  int fd_ = -1;
  std::string path_;
  std::string held_;
  std::uint64_t size_ = 0;
};

// [offset, offset + length) of `whole` (inside it), nothing copied: read from `whole`.
SharedBytes sliced_blob(SharedBytes whole, std::uint64_t offset, std::uint64_t length);
// The blobs one after the other, as one.
SharedBytes joined_blob(std::vector<SharedBytes> parts);

// How bytes are written to a file: write(2), or a test's failing disk.
using WriteCall = std::function<ssize_t(int fd, const void* data, size_t size)>;
// All of `data` to `fd`, however many write calls it takes; false on an error (errno set).
bool write_all(int fd, const char* data, size_t size, const WriteCall& write);
// All of `blob` to `fd`, a piece at a time.
bool write_blob(int fd, const Blob& blob, const WriteCall& write);

}  // namespace cloud
