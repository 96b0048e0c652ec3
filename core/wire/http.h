// Plain HTTP values passed between the serialiser, the signer, the transport and
// the parser. Headers are an ordered list of pairs: repeats and order are kept,
// because signing depends on them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cloud {

using Header = std::pair<std::string, std::string>;
using Headers = std::vector<Header>;

// A byte range of a file on disk.
struct FileRange {
  std::string path;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

struct ChunkStream;  // core/net/range_reader.h

// Bodies kept out of memory (core/net/range_reader.h, core/net/file_sink.h): the
// request's read from a file range as the transport asks for it, either signed as it
// streams (aws-chunked, each chunk hashed as it is read) or with its SHA-256 computed
// beforehand by reading the range once more; the answer's written to a file when it
// is a success.
struct BodyFiles {
  std::optional<FileRange> upload;           // set: the request body (`body` is then empty)
  std::string upload_sha256;                 // hex SHA-256 of the range, for the signer; empty: streamed
  std::string download_to;                   // a path: a 2xx answer's body goes there
  std::optional<std::uint64_t> download_at;  // set: written in place at this byte of the
                                             // existing file download_to, not renamed onto it
  bool durable = true;  // download_to is flushed to disk before it is renamed (false: the caller syncs later)
  std::string beneath;  // set: download_to lies under this folder, reached without following a link
  std::shared_ptr<ChunkStream> stream{};  // set: the range goes framed and signed chunk by chunk
};

struct HttpRequest {
  std::string method;
  std::string url;  // absolute, as it goes on the wire (path already percent-encoded)
  Headers headers;
  std::string body;
  BodyFiles files{};
  // Set: the body sent instead of `body`, shared with the call that keeps it for its
  // next attempt, so that an attempt does not copy it.
  std::shared_ptr<const std::string> shared_body{};

  // The bytes sent (from memory; a body from a file is `files.upload`).
  std::string_view payload() const { return shared_body ? std::string_view(*shared_body) : std::string_view(body); }
};

struct HttpResponse {
  long status = 0;
  Headers headers;
  std::string body;
  std::string body_file{};  // the file the body was written to (BodyFiles::download_to); body is then empty
  // The room `body` holds in the transport's buffer budget (core/base/limits.h), given back
  // when the last copy of the answer goes.
  std::shared_ptr<void> room{};
};

// The first value of header `name` (case-insensitive), or "" when absent.
std::string header_value(const Headers& headers, std::string_view name);
bool has_header(const Headers& headers, std::string_view name);
// The first value of header `name` in place, or nullptr when absent.
const std::string* find_header(const Headers& headers, std::string_view name);
// ASCII case-insensitive equality, as HTTP names compare (whatever the C locale says).
bool iequals(std::string_view a, std::string_view b);
// Whether `a` sorts before `b` with ASCII letters compared as lowercase.
bool iless(std::string_view a, std::string_view b);
// Whether `value` may be a header's value: no line break, NUL or other control
// character but a tab (one with "\r\n" in it would put a header of its own on the wire).
bool header_value_ok(std::string_view value);
std::string to_lower(std::string_view s);  // ASCII letters only

}  // namespace cloud
