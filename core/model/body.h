// Bodies in files, as the model names them: the checks of a payload file and its
// range (Operation::payload_file) and of a download target (Operation::output_file),
// run with the arguments' validation, and the media type a payload file's name
// implies. Reading the range as it is sent and writing the answer to its file are
// the transport's (core/net/range_reader.h, core/net/file_sink.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/wire/http.h"
#include "core/model/model.h"

namespace cloud {

// The byte range of a file that a call's arguments send as its payload (the members
// Operation::payload_file names), or nullopt when they name no file. What is wrong
// with it (a file that cannot be read, is not a regular file, a range outside the
// file, more than 5 GiB, the payload given as well) is appended to `problems`.
std::optional<FileRange> payload_file_range(const Operation& op, const json& args, std::vector<FieldProblem>& problems);

// The member Operation::payload_file's media_type names, set in `args` to the media
// type of the file they send, from its name (core/base/mime: the system's table), when the
// caller gave no such member and the table knows the name's extension; else nothing.
void fill_media_type(const Operation& op, json& args);

// What is wrong with writing an answer to `path` (Operation::output_file), appended
// to `problems`: its directory does not exist, or it is a directory itself; with an
// offset (Operation::output_file_offset) it is not an existing regular file, or the
// offset (or output_file_durable) is given without the path.
void check_output_file(const Operation& op, const json& args, std::vector<FieldProblem>& problems);

}  // namespace cloud
