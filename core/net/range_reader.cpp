// A file range read for sending: plain, or framed as aws-chunked by a thread of its
// own a few chunks ahead (ChunkFramer); and the digest of a range, read once.
#include "core/net/range_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/wire/aws_chunked.h"
#include "core/base/crypto.h"

namespace cloud {

// ---------------------------------------------------------------- ChunkFramer

namespace {

// read(2) of up to `size` bytes, again when a signal interrupts it.
ssize_t read_some(int fd, char* out, std::uint64_t size) {
  ssize_t n;
  do n = ::read(fd, out, static_cast<size_t>(size));
  while (n < 0 && errno == EINTR);
  return n;
}

// Why `range` could not be sent: the read failed with `error_number`, or (0) the file
// ended before the range did.
std::string range_error(const FileRange& range, int error_number) {
  if (error_number != 0) return "cannot read '" + range.path + "': " + std::strerror(error_number);
  return "'" + range.path + "' ended before its " + std::to_string(range.length) +
         " bytes were sent (it changed meanwhile)";
}

// Up to `size` bytes of `range` from `fd`, `done` of them read already: the count, 0
// at the range's end, -1 when the read fails or the file ends before the range does
// (`error` says which).
long long read_range(int fd, const FileRange& range, std::uint64_t& done, char* out, std::uint64_t size,
                     std::string& error) {
  std::uint64_t want = std::min(size, range.length - done);
  if (want == 0) return 0;
  ssize_t n = read_some(fd, out, want);
  if (n <= 0) {
    error = range_error(range, n < 0 ? errno : 0);
    return -1;
  }
  done += static_cast<std::uint64_t>(n);
  return n;
}

constexpr std::size_t kFramerStack = 256 * 1024;  // the framing thread reads and hashes: little stack

}  // namespace

// Frames the chunks of a range read from its file's current offset, each signed in
// the chain that starts at the stream's seed. A range of more than one chunk is read
// and hashed by a thread of its own into three slots in turn, so that reading and
// hashing the next chunks runs beside the sending of this one; the sending thread
// signs each chunk (an HMAC over its hash) and writes its head as it takes it. A
// range of one chunk is read and hashed as it is asked for (nothing would run beside
// it), and so is every range when no thread can be made.
//
// The hand-off: the slots' buffers are made by the sending thread before the thread
// starts; the thread alone reads the file (done_) and fills a slot's bytes, size,
// hash and read error; produced_, released_ and stop_ are shared, under lock_. The
// thread fills chunk n into slot n % 3 only once chunk n - 3 is released, and the
// sender reads a slot only once the chunk is counted in produced_: each slot is
// written by one thread, then read by the other after the lock passes it. The thread
// allocates nothing (no string, no malloc arena of its own: a process capped with
// ulimit -v has no room for a 64 MiB arena per transfer) and runs on a small stack.
// The destructor stops the thread and joins it before the reader touches the file
// again (a rewind, its close).
class ChunkFramer {
 public:
  ChunkFramer(int fd, const FileRange& range, std::shared_ptr<ChunkStream> stream);
  ~ChunkFramer();
  ChunkFramer(const ChunkFramer&) = delete;
  ChunkFramer& operator=(const ChunkFramer&) = delete;
  // The next chunk, framed and signed (waiting for the thread when it is not read
  // yet), in `framed` until the next call; `last` for the empty chunk that ends the
  // body; false, with `error`, when it could not be read.
  bool next(std::string_view& framed, bool& last, std::string& error);

 private:
  struct Slot {
    std::string bytes;         // room for the longest head, the chunk and "\r\n"
    std::uint64_t size = 0;    // the chunk's bytes, after the head's room
    unsigned char hash[32]{};  // their SHA-256
    int error_number = 0;      // the read failed with this errno
    bool cut = false;          // the file ended before the range did
  };
  static constexpr std::size_t kSlots = 3;  // the chunk sent and two read ahead

  void fill(Slot& slot);
  bool start();
  static void* run(void* self);
  void produce();

  int fd_;
  FileRange range_;
  std::uint64_t done_ = 0;  // bytes of the range read (by whichever thread reads)
  std::uint64_t chunk_size_;
  std::shared_ptr<ChunkStream> stream_;  // its scope and signatures: the sending thread's
  std::string previous_;                 // the last chunk's signature (the seed at first)
  std::array<Slot, kSlots> slots_;
  std::mutex lock_;
  std::condition_variable filled_;  // produced_ grew
  std::condition_variable freed_;   // released_ grew, or stop_ was set
  std::uint64_t produced_ = 0;      // chunks read and hashed
  std::uint64_t released_ = 0;      // chunks sent: their slots may be filled again
  std::uint64_t taken_ = 0;         // chunks the sender took (its own)
  bool stop_ = false;
  bool threaded_ = false;
  pthread_t thread_{};
};

ChunkFramer::ChunkFramer(int fd, const FileRange& range, std::shared_ptr<ChunkStream> stream)
    : fd_(fd), range_(range), chunk_size_(stream->chunk_size), stream_(std::move(stream)), previous_(stream_->seed) {
  const bool ahead = range_.length > chunk_size_;
  for (std::size_t i = 0; i < (ahead ? kSlots : 1); ++i) slots_[i].bytes.resize(kMaxAwsChunkHead + chunk_size_ + 2);
  threaded_ = ahead && start();
}

// Starts the thread on a small stack with every signal blocked (Ctrl-C must reach the
// thread that runs Lua); false when it cannot be made.
bool ChunkFramer::start() {
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) != 0) return false;
  pthread_attr_setstacksize(&attributes, kFramerStack);
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  const bool started = pthread_create(&thread_, &attributes, &ChunkFramer::run, this) == 0;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pthread_attr_destroy(&attributes);
  return started;
}

ChunkFramer::~ChunkFramer() {
  if (!threaded_) return;
  {
    std::lock_guard<std::mutex> hold(lock_);
    stop_ = true;
  }
  freed_.notify_one();
  pthread_join(thread_, nullptr);
}

void* ChunkFramer::run(void* self) {
  static_cast<ChunkFramer*>(self)->produce();
  return nullptr;
}

// The thread: reads and hashes chunk after chunk into the slots while one is free,
// until the last chunk, one that could not be read, or stop_.
void ChunkFramer::produce() {
  for (bool end = false; !end;) {
    std::uint64_t n;
    {
      std::unique_lock<std::mutex> hold(lock_);
      freed_.wait(hold, [this] { return stop_ || produced_ - released_ < kSlots; });
      if (stop_) return;
      n = produced_;
    }
    Slot& slot = slots_[n % kSlots];
    fill(slot);
    end = slot.size == 0 || slot.error_number != 0 || slot.cut;
    {
      std::lock_guard<std::mutex> hold(lock_);
      ++produced_;
    }
    filled_.notify_one();
  }
}

// Reads the next chunk of the range into `slot` behind the room for its head and
// hashes it: the bytes are read and hashed once, not copied. Allocates nothing.
void ChunkFramer::fill(Slot& slot) {
  slot.size = std::min(chunk_size_, range_.length - done_);
  slot.error_number = 0;
  slot.cut = false;
  char* data = &slot.bytes[kMaxAwsChunkHead];
  for (std::uint64_t got = 0; got < slot.size;) {
    ssize_t n = read_some(fd_, data + got, slot.size - got);
    if (n <= 0) {
      slot.error_number = n < 0 ? errno : 0;
      slot.cut = n == 0;
      return;
    }
    got += static_cast<std::uint64_t>(n);
    done_ += static_cast<std::uint64_t>(n);
  }
  DigestStream hash(Digest::sha256);
  hash.update(std::string_view(data, static_cast<std::size_t>(slot.size)));
  hash.digest_into(slot.hash);
}

bool ChunkFramer::next(std::string_view& framed, bool& last, std::string& error) {
  Slot* slot = &slots_[0];
  if (threaded_) {
    {
      std::unique_lock<std::mutex> hold(lock_);
      released_ = taken_;  // the chunk before this one has been sent
      filled_.wait(hold, [this] { return produced_ > taken_; });
    }
    freed_.notify_one();
    slot = &slots_[taken_++ % kSlots];
  } else {
    fill(*slot);
  }
  if (slot->error_number != 0 || slot->cut) {
    error = range_error(range_, slot->error_number);
    return false;
  }
  std::string signature = chunk_signature_of_hash(
      stream_->scope, previous_, hex(std::string_view(reinterpret_cast<const char*>(slot->hash), sizeof slot->hash)));
  std::string head = aws_chunk_head(slot->size, signature);
  std::size_t at = kMaxAwsChunkHead - head.size();
  slot->bytes.replace(at, head.size(), head);
  slot->bytes.replace(kMaxAwsChunkHead + slot->size, 2, "\r\n");
  framed = std::string_view(slot->bytes).substr(at, head.size() + slot->size + 2);
  last = slot->size == 0;
  stream_->signatures.push_back(signature);
  previous_ = std::move(signature);
  return true;
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
  sending_ = {};
  last_ = false;
  failed_ = false;
  if (stream_) stream_->signatures.clear();
  return ::lseek(fd_, static_cast<off_t>(range_.offset), SEEK_SET) >= 0;
}

long long RangeReader::read(char* out, std::uint64_t size) {
  if (!stream_) return read_range(fd_, range_, done_, out, size, error_);
  if (failed_) return -1;
  if (sending_.empty()) {
    if (last_) return 0;
    if (!next_chunk()) return -1;
  }
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, sending_.size()));
  std::memcpy(out, sending_.data(), n);
  sending_.remove_prefix(n);
  return static_cast<long long>(n);
}

// Takes the next framed chunk (the framer made at the first read, so a transfer that
// waits its turn reads nothing yet); its signature is kept, a secret of the exchange.
bool RangeReader::next_chunk() {
  try {
    if (!framer_) framer_ = std::make_unique<ChunkFramer>(fd_, range_, stream_);
    failed_ = !framer_->next(sending_, last_, error_);
  } catch (const std::bad_alloc&) {
    error_ = "cannot read '" + range_.path + "': out of memory";
    failed_ = true;
  }
  return !failed_;
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

}  // namespace cloud
