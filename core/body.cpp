// File bodies: the checks of a payload file and a download target (run with the
// arguments' validation), a reader of a file range for the transport and the hash,
// and a sink that writes an answer beside its target and renames it when complete.
#include "core/body.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>
#include <signal.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
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

// ---------------------------------------------------------------- ChunkFramer

namespace {

// Up to `size` bytes of `range` from `fd`, `done` of them read already: the count, 0
// at the range's end, -1 when the read fails or the file ends before the range does
// (`error` says which).
long long read_range(int fd, const FileRange& range, std::uint64_t& done, char* out, std::uint64_t size,
                     std::string& error) {
  std::uint64_t want = std::min(size, range.length - done);
  if (want == 0) return 0;
  ssize_t n;
  do n = ::read(fd, out, static_cast<size_t>(want));
  while (n < 0 && errno == EINTR);
  if (n < 0) error = "cannot read '" + range.path + "': " + std::strerror(errno);
  if (n == 0) error = "'" + range.path + "' ended before its " + std::to_string(range.length) +
                      " bytes were sent (it changed meanwhile)";
  if (n <= 0) return -1;
  done += static_cast<std::uint64_t>(n);
  return n;
}

}  // namespace

// Frames the chunks of a range read from its file's current offset, each signed in
// the chain that starts at the stream's seed. A range of more than one chunk is
// framed by a thread of its own, at most kAhead chunks ahead of the one the sender
// takes, so that reading and hashing chunk N+1 runs beside the sending of chunk N;
// a range of one chunk is framed as it is asked for (nothing would run beside it).
//
// The hand-off: the thread alone reads the file and keeps the chain (done_,
// previous_) and fills the chunk it frames; the ring of framed chunks, the spent
// buffers and stop_ are shared, under lock_. A chunk is moved whole into the ring and
// out of it (its bytes move with their std::string, written by the one thread before
// the lock passes them, read by the other after), and a spent chunk's buffer comes
// back through spare_ to be filled again. The destructor stops the thread and joins
// it before the reader touches the file again (a rewind, its close).
class ChunkFramer {
 public:
  ChunkFramer(int fd, const FileRange& range, const ChunkStream& stream);
  ~ChunkFramer();
  ChunkFramer(const ChunkFramer&) = delete;
  ChunkFramer& operator=(const ChunkFramer&) = delete;
  // The next chunk, waiting for the thread when it is not framed yet; `spent` is the
  // previous chunk's buffer, to be filled again.
  FramedChunk next(std::string spent);

 private:
  static constexpr std::size_t kAhead = 2;  // framed and waiting; with the one sent and the one framed, 4 in memory
  FramedChunk frame(std::string buffer);
  FramedChunk frame_or_error(std::string buffer);
  void start();
  void run();

  int fd_;
  FileRange range_;
  std::uint64_t done_ = 0;
  ChunkScope scope_;
  std::string previous_;  // the last chunk's signature (the seed at first)
  std::uint64_t chunk_size_;
  std::string out_of_memory_;  // the error of a chunk that could not be allocated
  std::mutex lock_;
  std::condition_variable framed_;  // a chunk went into the ring
  std::condition_variable taken_;   // one came out of it, or stop_ was set
  std::array<FramedChunk, kAhead> ring_;
  std::size_t first_ = 0, count_ = 0;
  std::vector<std::string> spare_;  // spent buffers (room for kAhead + 2 reserved: never grows)
  bool stop_ = false;
  std::thread thread_;
};

ChunkFramer::ChunkFramer(int fd, const FileRange& range, const ChunkStream& stream)
    : fd_(fd), range_(range), scope_(stream.scope), previous_(stream.seed), chunk_size_(stream.chunk_size),
      out_of_memory_("cannot read '" + range.path + "': out of memory") {
  if (range_.length > chunk_size_) start();
}

// Starts the framing thread with every signal blocked (Ctrl-C must reach the thread
// that runs Lua); when no thread can be made, the chunks are framed as they are asked
// for, as for a range of one chunk.
void ChunkFramer::start() {
  spare_.reserve(kAhead + 2);
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    thread_ = std::thread(&ChunkFramer::run, this);
  } catch (const std::system_error&) {
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

ChunkFramer::~ChunkFramer() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> hold(lock_);
    stop_ = true;
  }
  taken_.notify_one();
  thread_.join();
}

// The thread: frames chunk after chunk into the ring while it has room, until the
// last chunk, a chunk that could not be read, or stop_.
void ChunkFramer::run() {
  for (bool end = false; !end;) {
    std::string buffer;
    {
      std::unique_lock<std::mutex> hold(lock_);
      taken_.wait(hold, [this] { return stop_ || count_ < kAhead; });
      if (stop_) return;
      if (!spare_.empty()) {
        buffer = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    FramedChunk chunk = frame_or_error(std::move(buffer));
    end = chunk.last || !chunk.error.empty();
    {
      std::lock_guard<std::mutex> hold(lock_);
      ring_[(first_ + count_++) % kAhead] = std::move(chunk);
    }
    framed_.notify_one();
  }
}

FramedChunk ChunkFramer::next(std::string spent) {
  if (!thread_.joinable()) return frame_or_error(std::move(spent));
  std::unique_lock<std::mutex> hold(lock_);
  if (spent.capacity() > 0 && spare_.size() < spare_.capacity()) spare_.push_back(std::move(spent));
  framed_.wait(hold, [this] { return count_ > 0; });
  FramedChunk chunk = std::move(ring_[first_]);
  first_ = (first_ + 1) % kAhead;
  --count_;
  hold.unlock();
  taken_.notify_one();
  return chunk;
}

// Reads the next chunk into `buffer` behind room for its head, signs it and writes its
// head just before it: the bytes are read and hashed once, not copied.
FramedChunk ChunkFramer::frame(std::string buffer) {
  FramedChunk chunk;
  chunk.bytes = std::move(buffer);
  std::uint64_t size = std::min(chunk_size_, range_.length - done_);
  chunk.bytes.resize(kMaxAwsChunkHead + size + 2);
  for (std::uint64_t got = 0; got < size;) {
    long long n = read_range(fd_, range_, done_, &chunk.bytes[kMaxAwsChunkHead + got], size - got, chunk.error);
    if (n <= 0) {  // read_range ends only at the range's end: this is an error
      FramedChunk failed;
      failed.error = std::move(chunk.error);
      return failed;
    }
    got += static_cast<std::uint64_t>(n);
  }
  chunk.signature = chunk_signature(scope_, previous_, std::string_view(chunk.bytes).substr(kMaxAwsChunkHead, size));
  std::string head = aws_chunk_head(size, chunk.signature);
  chunk.at = kMaxAwsChunkHead - head.size();
  chunk.bytes.replace(chunk.at, head.size(), head);
  chunk.bytes.replace(kMaxAwsChunkHead + size, 2, "\r\n");
  previous_ = chunk.signature;
  chunk.last = size == 0;
  return chunk;
}

// frame(), an allocation that fails becoming the chunk's error (on the thread, an
// exception would end the process).
FramedChunk ChunkFramer::frame_or_error(std::string buffer) {
  try {
    return frame(std::move(buffer));
  } catch (const std::bad_alloc&) {
    FramedChunk failed;
    failed.error = std::move(out_of_memory_);  // made beforehand: a move allocates nothing
    return failed;
  }
}

// ---------------------------------------------------------------- RangeReader

RangeReader::RangeReader() = default;

RangeReader::~RangeReader() {
  framer_.reset();  // its thread joined before the file is closed
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
  framer_.reset();
  done_ = 0;
  chunk_ = FramedChunk{};
  if (stream_) stream_->signatures.clear();
  return ::lseek(fd_, static_cast<off_t>(range_.offset), SEEK_SET) >= 0;
}

long long RangeReader::read(char* out, std::uint64_t size) {
  if (!stream_) return read_range(fd_, range_, done_, out, size, error_);
  if (!chunk_.error.empty()) return -1;
  if (chunk_.at == chunk_.bytes.size()) {
    if (chunk_.last) return 0;
    if (!next_chunk()) return -1;
  }
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, chunk_.bytes.size() - chunk_.at));
  std::memcpy(out, chunk_.bytes.data() + chunk_.at, n);
  chunk_.at += n;
  return static_cast<long long>(n);
}

// Takes the next framed chunk (the framer made at the first read, so a transfer that
// waits its turn reads nothing yet) and keeps its signature, a secret of the exchange.
bool RangeReader::next_chunk() {
  if (!framer_) framer_ = std::make_unique<ChunkFramer>(fd_, range_, *stream_);
  FramedChunk next = framer_->next(std::move(chunk_.bytes));
  if (!next.error.empty()) {
    error_ = next.error;
    chunk_ = std::move(next);
    return false;
  }
  stream_->signatures.push_back(next.signature);
  chunk_ = std::move(next);
  return true;
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
