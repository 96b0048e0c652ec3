// File bodies as the model names them: the checks of a payload file and a download
// target (run with the arguments' validation), and a payload file's media type.
#include "core/model/body.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/base/files.h"
#include "core/base/limits.h"
#include "core/base/mime.h"

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

}  // namespace

void fill_media_type(const Operation& op, json& args) {
  if (!op.payload_file || op.payload_file->media_type.empty() || !args.is_object()) return;
  const PayloadFile& names = *op.payload_file;
  if (args.contains(names.media_type) || !args.contains(names.path) || !args[names.path].is_string()) return;
  std::string type = media_type_of(args[names.path].get<std::string>());
  if (!type.empty()) args[names.media_type] = std::move(type);
}

std::optional<FileRange> payload_file_range(const Operation& op, const json& args,
                                            std::vector<FieldProblem>& problems) {
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
    problems.push_back(
        {length ? names.length : names.path, "'" + range.path + "': " + std::to_string(range.length) +
                                                 " bytes, more than " + size_text(kMaxBodyBytes) +
                                                 ", the most a part or an object may hold (send it in parts with " +
                                                 names.offset + " and " + names.length + ")"});
    return std::nullopt;
  }
  return range;
}

void check_output_file(const Operation& op, const json& args, std::vector<FieldProblem>& problems) {
  if (op.output_file.empty() || !args.is_object()) return;
  if (!args.contains(op.output_file)) {
    for (const std::string& member : {op.output_file_offset, op.output_file_durable, op.output_file_beneath})
      if (!member.empty() && args.contains(member)) problems.push_back({member, "only with " + op.output_file});
    return;
  }
  if (!args[op.output_file].is_string()) return;  // its type is reported by validation
  const std::string path = args[op.output_file].get<std::string>();
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  const bool in_place = !op.output_file_offset.empty() && args.contains(op.output_file_offset);
  std::string problem;
  if (in_place && !exists)
    problem = std::string(std::strerror(ENOENT)) + " (with " + op.output_file_offset + ", the file must exist)";
  else if (exists && S_ISDIR(st.st_mode)) problem = std::strerror(EISDIR);
  else if (exists && !S_ISREG(st.st_mode)) problem = special_file_name(st.st_mode) + ", not a regular file";
  else if (::stat(directory_of(path).c_str(), &st) != 0) problem = std::strerror(errno);
  else if (!S_ISDIR(st.st_mode)) problem = std::strerror(ENOTDIR);
  if (!problem.empty()) problems.push_back({op.output_file, "cannot write '" + path + "': " + problem});
}

}  // namespace cloud
