// The JSON state file of earlier versions of `cloudlua serve --state FILE` (the whole
// platform as one document in FILE, bytes in files of FILE.bytes/), read once and made
// records: a state database in FILE's place. Nothing writes that format any more.
#pragma once

#include <memory>
#include <string>

#include "core/base/error.h"
#include "emulator/service.h"

namespace cloud {

class StoreLock;

// Whether `path` holds a state file of the JSON format: a regular file whose first byte
// that is not blank is '{'.
bool is_json_state_file(const std::string& path);

// The document of the JSON state file in `path`; JSON null when there is no such file.
// An error naming the file when it cannot be read, is not JSON, or is nested deeper than
// any document may be (BadStateFile, naming the depth: never walked).
Outcome<json> read_state_file(const std::string& path);

// The JSON state file in `path` made a state database in its place: its document made
// records, `platform` restored from them (a document of another form, or naming a byte
// file outside FILE.bytes/, is refused as BadStateFile, and changes nothing), then saved
// whole to a database made beside it (FILE.import) and renamed over FILE, so that a
// crash leaves the state file or the whole database. Its byte files are taken over as
// they are: an older document, which names no files, names each by its bytes' name.
// `lock`, when given (the state's owner), is moved onto the new database before it is
// renamed over FILE, so that no other serve can take the state meanwhile.
Outcome<bool> import_state_file(Platform& platform, const std::string& path,
                                std::unique_ptr<StoreLock>* lock = nullptr);

}  // namespace cloud
