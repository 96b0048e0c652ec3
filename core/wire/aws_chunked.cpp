// A reader of the aws-chunked framing, a piece at a time (a state per part of the
// framing: a head line, data, the CRLF after it, the trailers). Chunk sizes are at most
// 16 hex digits, and a size larger than what is left of the body is a body that ended
// early.
#include "core/wire/aws_chunked.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace cloud {
namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr std::string_view kSignatureKey = "chunk-signature=";

Error malformed(size_t number, const std::string& what) {
  return make_error(ErrorKind::validation, "InvalidRequest",
                    "the aws-chunked body is malformed: chunk " + std::to_string(number) + " " + what);
}

Error ended_early(size_t number) {
  return make_error(
      ErrorKind::validation, "IncompleteBody",
      "the aws-chunked body ends inside chunk " + std::to_string(number) + " (or before its last, empty chunk)");
}

Error bad_trailer(const std::string& what) {
  return make_error(ErrorKind::validation, "MalformedTrailerError",
                    "the trailing headers of the aws-chunked body are malformed: " + what);
}

// The value of hex digits `text` (1 to 16 of them), or false.
bool parse_hex(std::string_view text, unsigned long long& value) {
  if (text.empty() || text.size() > 16) return false;
  value = 0;
  for (char c : text) {
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0) return false;
    value = value * 16 + static_cast<unsigned>(digit);
  }
  return true;
}

// `text` without the spaces and tabs around it.
std::string_view trimmed(std::string_view text) {
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// One chunk's header line, "<hex size>" or "<hex size>;chunk-signature=<sig>", into
// `chunk` and `size`.
std::optional<Error> parse_chunk_header(std::string_view line, size_t number, AwsChunk& chunk,
                                        unsigned long long& size) {
  size_t semicolon = line.find(';');
  std::string_view digits = line.substr(0, semicolon);
  if (!parse_hex(digits, size)) return malformed(number, "has a size that is not 1 to 16 hex digits");
  if (semicolon == std::string_view::npos) return std::nullopt;
  std::string_view extension = line.substr(semicolon + 1);
  if (extension.substr(0, kSignatureKey.size()) != kSignatureKey)
    return malformed(number, "has an extension other than chunk-signature");
  chunk.signature = std::string(extension.substr(kSignatureKey.size()));
  chunk.has_signature = true;
  return std::nullopt;
}

// The trailing lines after the last chunk, up to the empty line that ends the body.
std::optional<Error> parse_trailers(std::string_view rest, Headers& trailers) {
  for (;;) {
    size_t end = rest.find(kCrlf);
    if (end == std::string_view::npos) return bad_trailer("the body does not end with an empty line");
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + kCrlf.size());
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || trimmed(line.substr(0, colon)).empty())
      return bad_trailer("a line is not name:value");
    trailers.emplace_back(to_lower(trimmed(line.substr(0, colon))), std::string(trimmed(line.substr(colon + 1))));
  }
  if (!rest.empty()) return bad_trailer("bytes follow the empty line that ends the body");
  return std::nullopt;
}

}  // namespace

// A chunk's head line has ended (line_ holds it, without its CRLF): its size and
// signature to the handler; the last chunk (size 0) begins and ends at once.
std::optional<Error> AwsChunkedReader::end_of_head(Handler& handler, bool& go_on) {
  AwsChunk chunk;
  unsigned long long size = 0;
  if (auto bad = parse_chunk_header(line_, number_, chunk, size)) return bad;
  line_.clear();
  go_on = handler.chunk_begins(chunk, size);
  if (size > 0) {
    state_ = State::data, left_ = size;
    return std::nullopt;
  }
  state_ = State::trailers;
  go_on = go_on && handler.chunk_ends();
  return std::nullopt;
}

Outcome<bool> AwsChunkedReader::feed(std::string_view bytes, Handler& handler) {
  bool go_on = true;
  while (!bytes.empty() && go_on) {
    switch (state_) {
      case State::head: {  // up to the CRLF that ends the line
        size_t lf = bytes.find('\n');
        size_t take = lf == std::string_view::npos ? bytes.size() : lf + 1;
        if (line_.size() + take > kMaxHeadLine) return malformed(number_, "has a head line longer than 4 KiB");
        line_.append(bytes.substr(0, take));
        bytes.remove_prefix(take);
        if (lf == std::string_view::npos) break;
        if (line_.size() < 2 || line_[line_.size() - 2] != '\r')
          return malformed(number_, "has a head line not ended by CRLF");
        line_.resize(line_.size() - 2);
        if (auto bad = end_of_head(handler, go_on)) return *bad;
        break;
      }
      case State::data: {
        size_t take = static_cast<size_t>(std::min<std::uint64_t>(left_, bytes.size()));
        go_on = handler.chunk_bytes(bytes.substr(0, take));
        bytes.remove_prefix(take);
        left_ -= take;
        if (left_ == 0) state_ = State::data_end;
        break;
      }
      case State::data_end: {  // the CRLF after the data, which may come a byte at a time
        if (bytes[0] != kCrlf[line_.size()]) return malformed(number_, "is longer than its size says");
        bytes.remove_prefix(1);
        if (line_.empty()) {
          line_ = "\r";
          break;
        }
        line_.clear();
        state_ = State::head, ++number_;
        go_on = handler.chunk_ends();
        break;
      }
      case State::trailers:  // read at the end, when the body is known to be whole
        if (line_.size() + bytes.size() > kMaxTrailers) return bad_trailer("they are longer than 64 KiB");
        line_.append(bytes);
        bytes = {};
        break;
    }
  }
  return go_on;
}

Outcome<Headers> AwsChunkedReader::finish() {
  if (state_ != State::trailers) return ended_early(number_);
  Headers trailers;
  if (auto bad = parse_trailers(line_, trailers)) return *bad;
  return trailers;
}

namespace {

// Keeps every chunk, its data a view into the body (fed whole: one piece per chunk).
class ChunkList final : public AwsChunkedReader::Handler {
 public:
  explicit ChunkList(std::vector<AwsChunk>& chunks) : chunks_(chunks) {}
  bool chunk_begins(const AwsChunk& chunk, std::uint64_t) override { return chunks_.push_back(chunk), true; }
  bool chunk_bytes(std::string_view bytes) override { return chunks_.back().data = bytes, true; }
  bool chunk_ends() override { return true; }

 private:
  std::vector<AwsChunk>& chunks_;
};

}  // namespace

Outcome<AwsChunkedBody> parse_aws_chunked(std::string_view body) {
  AwsChunkedBody out;
  AwsChunkedReader reader;
  ChunkList list(out.chunks);
  Outcome<bool> read = reader.feed(body, list);
  if (!read.ok()) return read.error();
  Outcome<Headers> trailers = reader.finish();
  if (!trailers.ok()) return trailers.error();
  out.trailers = std::move(*trailers);
  return out;
}

std::string joined_data(const AwsChunkedBody& body) {
  size_t size = 0;
  for (const AwsChunk& c : body.chunks) size += c.data.size();
  std::string out;
  out.reserve(size);
  for (const AwsChunk& c : body.chunks) out.append(c.data);
  return out;
}

std::string aws_chunk_head(std::uint64_t size, const std::string& signature) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%llx", static_cast<unsigned long long>(size));
  return std::string(digits) + ";" + std::string(kSignatureKey) + signature + std::string(kCrlf);
}

std::uint64_t aws_chunked_length(std::uint64_t decoded, std::uint64_t chunk_size) {
  const std::uint64_t signature = 64;
  auto framed = [&](std::uint64_t size) { return aws_chunk_head(size, std::string(signature, '0')).size() + size + 2; };
  std::uint64_t full = decoded / chunk_size, rest = decoded % chunk_size;
  return full * framed(chunk_size) + (rest ? framed(rest) : 0) + framed(0);
}

}  // namespace cloud
