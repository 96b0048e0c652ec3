// Blobs in memory, in files and joined (emulator/blob.h), and writing them.
#include "emulator/blob.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <stdexcept>

#include "core/base/files.h"

namespace cloud {

namespace {

class MemoryBlob final : public Blob {
 public:
  explicit MemoryBlob(std::string bytes) : bytes_(std::move(bytes)) {}
  std::uint64_t size() const override { return bytes_.size(); }
  void read(std::uint64_t offset, size_t length, char* into) const override {
    std::memcpy(into, bytes_.data() + offset, length);
  }
  SharedBytes opened() const override { return shared_from_this(); }
  const std::string* in_memory() const override { return &bytes_; }

 private:
  std::string bytes_;
};

// Reads `length` bytes at `offset` of `fd` with pread(2); throws naming `path` when it cannot.
void read_at(int fd, const std::string& path, std::uint64_t offset, size_t length, char* into) {
  for (size_t done = 0; done < length;) {
    ssize_t n = ::pread(fd, into + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error("cannot read " + path + ": " +
                               (n == 0 ? "it is shorter than kept" : std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
}

// A file held open: what an answer sends from.
class OpenFileBlob final : public Blob {
 public:
  OpenFileBlob(int fd, std::string path, std::uint64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  ~OpenFileBlob() override { ::close(fd_); }
  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, size_t length, char* into) const override {
    read_at(fd_, path_, offset, length, into);
  }
  SharedBytes opened() const override { return shared_from_this(); }
  std::string file() const override { return path_; }

 private:
  int fd_;
  std::string path_;
  std::uint64_t size_;
};

// A file named, not held open (a platform keeps thousands).
class FileBlob : public Blob {
 public:
  FileBlob(std::string path, std::uint64_t size) : path_(std::move(path)), size_(size) {}
  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, size_t length, char* into) const override {
    if (length) opened()->read(offset, length, into);
  }
  SharedBytes opened() const override {
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) throw std::runtime_error("the bytes " + path_ + " are missing: " + std::strerror(errno));
    return std::make_shared<OpenFileBlob>(fd, path_, size_);
  }
  std::string file() const override { return path_; }

 private:
  std::string path_;
  std::uint64_t size_;
};

// A file named that goes with the blob (a body streamed to a file).
class OwnedFileBlob final : public FileBlob {
 public:
  using FileBlob::FileBlob;
  ~OwnedFileBlob() override { ::unlink(file().c_str()); }
};

class JoinedBlob final : public Blob {
 public:
  explicit JoinedBlob(std::vector<SharedBytes> parts) : parts_(std::move(parts)) {
    for (const SharedBytes& p : parts_) size_ += p->size();
  }
  std::uint64_t size() const override { return size_; }
  // The parts the range crosses, each from where it begins in it.
  void read(std::uint64_t offset, size_t length, char* into) const override {
    std::uint64_t start = 0;
    for (const SharedBytes& p : parts_) {
      std::uint64_t end = start + p->size();
      if (length && offset < end) {
        size_t n = static_cast<size_t>(std::min<std::uint64_t>(length, end - offset));
        p->read(offset - start, n, into);
        into += n, offset += n, length -= n;
      }
      start = end;
    }
  }
  // Each part's pieces in turn: one part's file open at a time (an upload has up to
  // 10,000), where opened() holds them all.
  bool each_piece(const std::function<bool(const char*, size_t)>& piece) const override {
    for (const SharedBytes& p : parts_)
      if (!p->each_piece(piece)) return false;
    return true;
  }
  SharedBytes opened() const override {
    std::vector<SharedBytes> open;
    for (const SharedBytes& p : parts_) open.push_back(p->opened());
    return std::make_shared<JoinedBlob>(std::move(open));
  }

 private:
  std::vector<SharedBytes> parts_;
  std::uint64_t size_ = 0;
};

// [offset, offset + length) of another blob, read from it when asked: a part copied
// from an object's range (UploadPartCopy) holds no copy of the range.
class SliceBlob final : public Blob {
 public:
  SliceBlob(SharedBytes whole, std::uint64_t offset, std::uint64_t length)
      : whole_(std::move(whole)), offset_(offset), length_(length) {}
  std::uint64_t size() const override { return length_; }
  void read(std::uint64_t offset, size_t length, char* into) const override {
    whole_->read(offset_ + offset, length, into);
  }
  SharedBytes opened() const override { return std::make_shared<SliceBlob>(whole_->opened(), offset_, length_); }
  // A piece at a time from the blob it is a slice of, each read opening what it reads
  // (opened() would open every part of joined bytes at once).
  bool each_piece(const std::function<bool(const char*, size_t)>& piece) const override {
    std::string buffer(static_cast<size_t>(std::min<std::uint64_t>(kPiece, length_)), '\0');
    for (std::uint64_t at = 0; at < length_;) {
      size_t n = static_cast<size_t>(std::min<std::uint64_t>(kPiece, length_ - at));
      whole_->read(offset_ + at, n, &buffer[0]);
      if (!piece(buffer.data(), n)) return false;
      at += n;
    }
    return true;
  }

 private:
  SharedBytes whole_;
  std::uint64_t offset_, length_;
};

}  // namespace

std::string Blob::slice(std::uint64_t offset, std::uint64_t length) const {
  if (const std::string* bytes = in_memory()) return bytes->substr(offset, length);
  std::string out(length, '\0');
  if (length) opened()->read(offset, length, &out[0]);
  return out;
}

bool Blob::each_piece(const std::function<bool(const char*, size_t)>& piece) const {
  if (const std::string* bytes = in_memory()) return piece(bytes->data(), bytes->size());
  SharedBytes open = opened();
  std::string buffer(static_cast<size_t>(std::min<std::uint64_t>(kPiece, size())), '\0');
  for (std::uint64_t at = 0; at < size();) {
    size_t n = static_cast<size_t>(std::min<std::uint64_t>(kPiece, size() - at));
    open->read(at, n, &buffer[0]);
    if (!piece(buffer.data(), n)) return false;
    at += n;
  }
  return true;
}

SharedBytes sliced_blob(SharedBytes whole, std::uint64_t offset, std::uint64_t length) {
  if (offset == 0 && length == whole->size()) return whole;
  return std::make_shared<SliceBlob>(std::move(whole), offset, length);
}
SharedBytes memory_blob(std::string bytes) { return std::make_shared<MemoryBlob>(std::move(bytes)); }
SharedBytes file_blob(std::string path, std::uint64_t size) {
  return std::make_shared<FileBlob>(std::move(path), size);
}
SharedBytes stored_file(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw std::runtime_error("the bytes " + path + " are missing (or not a plain file)");
  return file_blob(path, static_cast<std::uint64_t>(st.st_size));
}

SharedBytes owned_file_blob(std::string path, std::uint64_t size) {
  return std::make_shared<OwnedFileBlob>(std::move(path), size);
}

BodyFile::BodyFile(const std::string& folder) {
  TemporaryFile made = create_temporary(folder + "/" + kIncoming);
  fd_ = made.fd;
  path_ = std::move(made.path);
  if (fd_ < 0) throw std::runtime_error("cannot create a file for a body in " + folder + ": " + std::strerror(errno));
  held_.reserve(Blob::kPiece);
}

BodyFile::~BodyFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(path_.c_str());
}

void BodyFile::write(const char* data, size_t size) {
  size_ += size;
  while (size > 0) {
    size_t n = std::min(size, Blob::kPiece - held_.size());
    held_.append(data, n);
    data += n, size -= n;
    if (held_.size() == Blob::kPiece) flush();
  }
}

// What is held, to the file.
void BodyFile::flush() {
  if (!write_all(fd_, held_.data(), held_.size(), ::write))
    throw std::runtime_error("cannot write a body to " + path_ + ": " + std::strerror(errno));
  held_.clear();
}

SharedBytes BodyFile::finish() {
  flush();
  ::close(fd_);
  fd_ = -1;
  return owned_file_blob(path_, size_);
}

SharedBytes joined_blob(std::vector<SharedBytes> parts) { return std::make_shared<JoinedBlob>(std::move(parts)); }

bool write_all(int fd, const char* data, size_t size, const WriteCall& write) {
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool write_blob(int fd, const Blob& blob, const WriteCall& write) {
  int failed = 0;
  bool ok = false;
  try {
    ok = blob.each_piece(
        [&](const char* data, size_t size) { return write_all(fd, data, size, write) || (failed = errno, false); });
  } catch (const std::runtime_error&) {
    failed = EIO;
  }
  if (!ok) errno = failed ? failed : EIO;
  return ok;
}

}  // namespace cloud
