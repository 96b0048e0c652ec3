// The sink of an answer body: a part file beside the target renamed onto it by
// commit (core/base/files does the making, flushing and renaming), or the existing
// target written in place at a byte.
#include "core/net/file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cloud {

FileSink::~FileSink() { discard(); }

// Opens the existing target for a write in place at at_ (no link followed at its name,
// nor between beneath_ and it); "" or what went wrong.
std::string FileSink::open_in_place() {
  std::string problem;
  fd_ = open_existing_beneath(target_, beneath_, problem);
  errno_ = errno;
  if (fd_ < 0) return error_ = "cannot write '" + target_ + "': " + problem;
  if (::lseek(fd_, static_cast<off_t>(*at_), SEEK_SET) < 0)
    return error_ = "cannot write '" + target_ + "' at byte " + std::to_string(*at_) + ": " + std::strerror(errno);
  return "";
}

std::string FileSink::open() {
  if (at_) return open_in_place();
  part_ = create_part(target_, beneath_);
  fd_ = part_.fd;
  errno_ = errno;
  if (fd_ < 0) return error_ = "cannot write beside '" + target_ + "': " + part_.problem;
  return "";
}

bool FileSink::write(const char* data, std::uint64_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd_, data, static_cast<size_t>(size));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      errno_ = errno;
      error_ = "cannot write '" + (at_ ? target_ : part_.path) + "': " + std::strerror(errno_);
      return false;
    }
    data += n;
    size -= static_cast<std::uint64_t>(n);
    size_ += static_cast<std::uint64_t>(n);
  }
  return true;
}

std::string FileSink::commit() {
  if (!at_) {
    if (error_.empty()) error_ = commit_part(part_, durable_);
    discard_part(part_);  // a write failed: the part file goes (after commit_part: nothing left)
    fd_ = -1;
    return error_;
  }
  if ((durable_ && !flush_file(fd_)) || ::close(fd_) != 0)
    error_ = "cannot write '" + target_ + "': " + std::strerror(errno);
  fd_ = -1;
  return error_;
}

// Closes the file and removes the part file, if it is still there.
void FileSink::discard() {
  if (!at_) {
    discard_part(part_);
  } else if (fd_ >= 0) {
    ::close(fd_);
  }
  fd_ = -1;
}

}  // namespace cloud
