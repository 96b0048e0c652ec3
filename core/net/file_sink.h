// An answer body written to a file rather than held in memory: beside its target,
// renamed onto it when complete (or in place at a byte of it), never leaving a
// temporary file or a half-written target behind.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/base/files.h"

namespace cloud {

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
