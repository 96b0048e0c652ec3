// The state file of `cloudlua serve --state FILE`: the platform's dump as JSON in
// FILE, the bytes of objects and parts in files of their own in FILE.bytes/ (each
// written once, under the name the dump gives it). After every change, before it is
// answered, new bytes are written and flushed, then FILE is replaced whole and
// flushed, then bytes nothing refers to any more are removed: a crash at any point,
// kill -9 included, leaves a FILE whose bytes are all there, and nothing that was
// acknowledged is lost.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "core/error.h"
#include "emulator/service.h"

namespace cloud {

class StateFile : public StateSink {
 public:
  explicit StateFile(std::string path);
  ~StateFile() override;

  // Restores `platform` from the file when there is one; otherwise saves `platform`
  // as it is, so that the file exists from the start. Errors name the file.
  Outcome<bool> open(Platform& platform);

  ByteStore& bytes() override;
  Outcome<bool> save(const json& dumped) override;

 private:
  class Files;
  std::string path_;
  std::unique_ptr<Files> files_;
};

// The document in `path`; JSON null when there is no such file.
Outcome<json> read_state_file(const std::string& path);
// Writes `state` to a temporary file beside `path`, flushes it to the disk, renames it
// over `path` and flushes the directory.
Outcome<bool> write_state_file(const std::string& path, const json& state);

}  // namespace cloud
