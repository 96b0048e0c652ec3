// File bodies: the checks of a payload file and a download target (run with the
// arguments' validation), a reader of a file range for the transport and the hash,
// and a sink that writes an answer beside its target and renames it when complete.
#include "core/body.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/aws_chunked.h"
#include "core/crypto.h"
#include "core/files.h"
#include "core/limits.h"

namespace cloud {

namespace {

// What a file that is not regular is, for a message saying why it cannot be sent.
std::string special_file_name(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// What keeps the file at `path` from being read as a regular file ("" when nothing
// does; its size in `size`). Opened without blocking: a FIFO must not hang the open.
std::string regular_file_size(const std::string& path, std::uint64_t& size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0) problem = std::strerror(errno);
  else if (S_ISDIR(st.st_mode)) problem = std::strerror(EISDIR);
  else if (!S_ISREG(st.st_mode)) problem = special_file_name(st.st_mode) + ", not a regular file";
  size = static_cast<std::uint64_t>(st.st_size);
  ::close(fd);
  return problem;
}

// A non-negative integer argument, or nullopt when absent or of the wrong type
// (validation of its shape reports that).
std::optional<std::uint64_t> count_arg(const json& args, const std::string& name) {
  if (name.empty() || !args.contains(name) || !args[name].is_number_integer() || args[name].get<long long>() < 0)
    return std::nullopt;
  return args[name].get<std::uint64_t>();
}

// The directory a path is in, "." for a bare name.
std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::optional<FileRange> payload_file_range(const Operation& op, const json& args, std::vector<FieldProblem>& problems) {
  if (!op.payload_file || !args.is_object()) return std::nullopt;
  const PayloadFile& names = *op.payload_file;
  if (!args.contains(names.path)) {
    for (const std::string& n : {names.offset, names.length})
      if (args.contains(n)) problems.push_back({n, "only with " + names.path});
    return std::nullopt;
  }
  if (!args[names.path].is_string()) return std::nullopt;  // its type is reported by validation
  if (args.contains(op.payload)) {
    problems.push_back({names.path, "give " + op.payload + " or " + names.path + ", not both"});
    return std::nullopt;
  }
  FileRange range{args[names.path].get<std::string>(), count_arg(args, names.offset).value_or(0), 0};
  std::uint64_t size = 0;
  if (std::string problem = regular_file_size(range.path, size); !problem.empty()) {
    problems.push_back({names.path, "cannot read '" + range.path + "': " + problem});
    return std::nullopt;
  }
  if (range.offset > size) {
    problems.push_back({names.offset, "at most " + std::to_string(size) + ", the size of '" + range.path + "' (got " +
                                          std::to_string(range.offset) + ")"});
    return std::nullopt;
  }
  std::optional<std::uint64_t> length = count_arg(args, names.length);
  range.length = length.value_or(size - range.offset);
  if (length && *length > size - range.offset) {
    problems.push_back({names.length, "at most " + std::to_string(size - range.offset) + ", the bytes of '" +
                                          range.path + "' from " + names.offset + " " + std::to_string(range.offset) +
                                          " on (got " + std::to_string(*length) + ")"});
    return std::nullopt;
  }
  if (range.length > kMaxBodyBytes) {
    problems.push_back({length ? names.length : names.path,
                        "'" + range.path + "': " + std::to_string(range.length) + " bytes, more than " +
                            size_text(kMaxBodyBytes) + ", the most a part or an object may hold (send it in parts with " +
                            names.offset + " and " + names.length + ")"});
    return std::nullopt;
  }
  return range;
}

void check_output_file(const Operation& op, const json& args, std::vector<FieldProblem>& problems) {
  if (op.output_file.empty() || !args.is_object()) return;
  if (!args.contains(op.output_file)) {
    for (const std::string& member : {op.output_file_offset, op.output_file_durable})
      if (!member.empty() && args.contains(member)) problems.push_back({member, "only with " + op.output_file});
    return;
  }
  if (!args[op.output_file].is_string()) return;  // its type is reported by validation
  const std::string path = args[op.output_file].get<std::string>();
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  const bool in_place = !op.output_file_offset.empty() && args.contains(op.output_file_offset);
  std::string problem;
  if (in_place && !exists) problem = std::string(std::strerror(ENOENT)) + " (with " + op.output_file_offset + ", the file must exist)";
  else if (exists && S_ISDIR(st.st_mode)) problem = std::strerror(EISDIR);
  else if (exists && !S_ISREG(st.st_mode)) problem = special_file_name(st.st_mode) + ", not a regular file";
  else if (::stat(directory_of(path).c_str(), &st) != 0) problem = std::strerror(errno);
  else if (!S_ISDIR(st.st_mode)) problem = std::strerror(ENOTDIR);
  if (!problem.empty()) problems.push_back({op.output_file, "cannot write '" + path + "': " + problem});
}

// ---------------------------------------------------------------- RangeReader

RangeReader::~RangeReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RangeReader::open(const FileRange& range, std::shared_ptr<ChunkStream> stream) {
  range_ = range;
  stream_ = std::move(stream);
  fd_ = ::open(range.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0 || !rewind()) error_ = "cannot read '" + range.path + "': " + std::strerror(errno);
  return error_;
}

bool RangeReader::rewind() {
  done_ = 0;
  framed_.clear();
  at_ = 0;
  ended_ = false;
  if (stream_) {
    previous_ = stream_->seed;
    stream_->signatures.clear();
  }
  return ::lseek(fd_, static_cast<off_t>(range_.offset), SEEK_SET) >= 0;
}

long long RangeReader::read(char* out, std::uint64_t size) {
  if (!stream_) return read_range(out, size);
  if (at_ == framed_.size()) {
    if (ended_) return 0;
    if (!frame_next_chunk()) return -1;
  }
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, framed_.size() - at_));
  std::memcpy(out, framed_.data() + at_, n);
  at_ += n;
  return static_cast<long long>(n);
}

// Reads the next chunk of the range into framed_ behind room for its head, signs it
// and writes its head just before it: the bytes are read and hashed once, not copied.
bool RangeReader::frame_next_chunk() {
  std::uint64_t size = std::min(stream_->chunk_size, range_.length - done_);
  framed_.resize(kMaxAwsChunkHead + size + 2);
  for (std::uint64_t got = 0; got < size;) {
    long long n = read_range(&framed_[kMaxAwsChunkHead + got], size - got);
    if (n <= 0) return false;  // read_range ends only at the range's end: this is an error
    got += static_cast<std::uint64_t>(n);
  }
  std::string signature = chunk_signature(stream_->scope, previous_, std::string_view(framed_).substr(kMaxAwsChunkHead, size));
  std::string head = aws_chunk_head(size, signature);
  at_ = kMaxAwsChunkHead - head.size();
  framed_.replace(at_, head.size(), head);
  framed_.replace(kMaxAwsChunkHead + size, 2, "\r\n");
  stream_->signatures.push_back(signature);
  previous_ = std::move(signature);
  ended_ = size == 0;
  return true;
}

// Up to `size` bytes of the range itself.
long long RangeReader::read_range(char* out, std::uint64_t size) {
  std::uint64_t want = std::min(size, range_.length - done_);
  if (want == 0) return 0;
  ssize_t n;
  do n = ::read(fd_, out, static_cast<size_t>(want));
  while (n < 0 && errno == EINTR);
  if (n < 0) error_ = "cannot read '" + range_.path + "': " + std::strerror(errno);
  if (n == 0) error_ = "'" + range_.path + "' ended before its " + std::to_string(range_.length) +
                       " bytes were sent (it changed meanwhile)";
  if (n <= 0) return -1;
  done_ += static_cast<std::uint64_t>(n);
  return n;
}

Outcome<std::string> hex_digest_of(const FileRange& range, Digest which) {
  RangeReader reader;
  DigestStream hash(which);
  std::vector<char> buffer(1 << 18);
  long long n = reader.open(range).empty() ? 1 : -1;
  while (n > 0 && (n = reader.read(buffer.data(), buffer.size())) > 0)
    hash.update(std::string_view(buffer.data(), static_cast<size_t>(n)));
  if (n < 0) return make_error(ErrorKind::validation, "FileUnreadable", reader.error());
  return hash.hex_digest();
}

Outcome<std::string> sha256_hex_of(const FileRange& range) {
  Outcome<std::string> hash = hex_digest_of(range, Digest::sha256);
  if (!hash.ok()) hash.error().message += "; nothing was sent";
  return hash;
}

// ---------------------------------------------------------------- FileSink

FileSink::~FileSink() { discard(); }

// Opens the existing target for a write in place at at_; "" or what went wrong.
std::string FileSink::open_in_place() {
  fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_ < 0) return error_ = "cannot write '" + target_ + "': " + std::strerror(errno);
  if (::lseek(fd_, static_cast<off_t>(*at_), SEEK_SET) < 0)
    return error_ = "cannot write '" + target_ + "' at byte " + std::to_string(*at_) + ": " + std::strerror(errno);
  return "";
}

std::string FileSink::open() {
  if (at_) return open_in_place();
  part_ = create_part(target_);
  fd_ = part_.fd;
  if (fd_ < 0) return error_ = "cannot write beside '" + target_ + "': " + std::strerror(errno);
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
    if (error_.empty()) error_ = commit_part(part_, target_, durable_);
    discard_part(part_);  // a write failed: the part file goes (after commit_part: nothing left)
    fd_ = -1;
    return error_;
  }
  if ((durable_ && ::fsync(fd_) != 0) || ::close(fd_) != 0) error_ = "cannot write '" + target_ + "': " + std::strerror(errno);
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
