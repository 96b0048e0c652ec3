// The state file of `cloudlua serve --state FILE`: the platform's dump() as JSON,
// replaced whole and durably after every change, so that a crash (kill -9 included)
// between requests loses nothing that was acknowledged.
#pragma once

#include <string>

#include "core/error.h"
#include "core/model.h"

namespace cloud {

// The document in the file; JSON null when there is no file yet. An unreadable file
// or one that is not JSON is an error naming the file.
Outcome<json> read_state_file(const std::string& path);

// Writes `state` to a temporary file beside `path`, flushes it to the disk, renames
// it over `path` and flushes the directory: once this returns, the new state is what
// a restart reads; a crash before leaves the old file whole.
Outcome<bool> write_state_file(const std::string& path, const json& state);

}  // namespace cloud
