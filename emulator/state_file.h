// The state file of `cloudlua serve --state FILE`: the platform's dump as JSON in
// FILE, the bytes of objects and parts in files of their own in FILE.bytes/. A byte
// file is written once, under a file name never used before in that folder, and FILE
// says which file holds which bytes. After every change, before it is answered, new
// bytes are written and flushed, then FILE is replaced whole and flushed, then byte
// files FILE no longer names are removed. A crash at any point, kill -9 included,
// leaves a FILE whose bytes are all there, and a byte file a crash left behind can
// never pass for the bytes of a later write: nothing acknowledged is lost or changed.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>

#include "core/base/error.h"
#include "emulator/service.h"

namespace cloud {

// How the state writer writes (WriteCall, emulator/blob.h): write(2). The one seam for
// tests, which put a failing disk (ENOSPC, EIO) in its place; nothing else replaces it.

class StateFile : public StateSink {
 public:
  explicit StateFile(std::string path, WriteCall write = ::write);
  ~StateFile() override;

  // Restores `platform` from the file when there is one (and leaves it as it is when
  // there is none); files in FILE.bytes/ that FILE does not name are removed at the
  // first save, and temporary files a crash left beside FILE at once. A FILE naming a
  // byte file outside FILE.bytes/ is refused. Errors name the file.
  Outcome<bool> open(Platform& platform);

  ByteStore& bytes() override;
  Outcome<bool> save(const json& dumped) override;

 private:
  class Files;
  std::string path_;
  WriteCall write_;
  std::unique_ptr<Files> files_;
};

// The document in `path`; JSON null when there is no such file.
Outcome<json> read_state_file(const std::string& path);
// Writes `state` in place of `path` by core/base/files' write_durably (a temporary file
// "<path>.XXXXXX.tmp" beside it, made new and never through a link, flushed, renamed
// over `path`, the folder flushed).
Outcome<bool> write_state_file(const std::string& path, const json& state, const WriteCall& write = ::write);

// What the state's stores (this file's and state_db's) share about their byte files
// (the folder a path is in and a folder's flush are core/base/files'): the error naming
// `path` and the system's reason; whether `file` names a byte file inside its folder (letters,
// digits, '.', '-' and '_', not starting with '.': no "..", no '/', nothing hidden);
// the serial after the last '.' of a byte file's name ("v000000000007.12": 12, 0 if none).
Error state_file_error(const std::string& what, const std::string& path);
bool plain_file_name(const std::string& file);
unsigned long long serial_of(const std::string& file);

}  // namespace cloud
