// What the fuzz targets share: the text form of an input that carries an HTTP
// message, so that seeds are written by hand and read in a diff; the check that
// stops a run when an invariant breaks; the client's reading of an answer.
//
//   first line: words separated by one space (the last one keeps the rest)
//   then header lines "Name: value", up to an empty line
//   then the body, byte for byte
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/wire/http.h"
#include "core/model/model.h"
#include "core/model/protocol.h"

namespace fuzz {

struct Message {
  std::vector<std::string> words;  // always max_words of them, "" when missing
  cloud::Headers headers;
  std::string body;
};

// The line of `text` that starts at `at`, without its '\n'; `at` moves past it.
inline std::string_view next_line(std::string_view text, size_t& at) {
  size_t end = text.find('\n', at);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(at, end - at);
  at = end + 1;
  return line;
}

// Splits an input into its first line's words, its headers and its body.
inline Message read_message(const uint8_t* data, size_t size, size_t max_words) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Message m;
  size_t at = 0;
  std::string_view first = next_line(text, at);
  for (size_t i = 0; i < max_words; ++i) {
    size_t space = i + 1 < max_words ? first.find(' ') : std::string_view::npos;
    m.words.emplace_back(first.substr(0, space));
    first = space == std::string_view::npos ? std::string_view() : first.substr(space + 1);
  }
  while (at < text.size()) {
    std::string_view line = next_line(text, at);
    if (line.empty()) break;
    size_t colon = line.find(':');
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    m.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  if (at < text.size()) m.body = std::string(text.substr(at));
  return m;
}

// The operation named `name` among `operations`; any other text picks one by its
// length, so that every input reaches an operation.
inline const cloud::Operation& pick_operation(const std::vector<const cloud::Operation*>& operations,
                                              const std::string& name) {
  for (const cloud::Operation* op : operations)
    if (op->name == name) return *op;
  return *operations[name.size() % operations.size()];
}

// The status of a text: its number when it is one from 100 to 599, else 200.
inline long read_status(const std::string& text) {
  long n = std::strtol(text.c_str(), nullptr, 10);
  return n >= 100 && n <= 599 ? n : 200;
}

// Stops the run (libFuzzer keeps the input) when an invariant does not hold.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

// Problems fuzzing found that are not fixed yet, each with a reproducer in
// tests/fuzz/crashes/<target>/: a run passes over the inputs that hit one (true), so
// that it can look for others, unless FUZZ_KNOWN=1 (false: the check fails), as when
// replaying the reproducers. Delete the call when its fix is in.
inline bool skip_known(const char* /* problem, for the reader */) {
  static const bool strict = std::getenv("FUZZ_KNOWN") && std::string(std::getenv("FUZZ_KNOWN")) == "1";
  return !strict;
}

// Reads an answer as the client does: the result of a 2xx and the error of any
// status (a hostile server chooses both). A result is a table; an error has a code
// and a message a person can act on.
inline void read_answer(const cloud::Api& api, const cloud::Operation& op, const cloud::HttpResponse& response) {
  cloud::Outcome<cloud::json> result = cloud::parse_result(api, op, response);
  if (result.ok()) FUZZ_CHECK(result->is_object());
  else FUZZ_CHECK(result.error().kind == cloud::ErrorKind::api && !result.error().code.empty());
  cloud::Error e = cloud::parse_error(api, response);
  FUZZ_CHECK(!e.code.empty() && !e.message.empty());
  FUZZ_CHECK(!e.describe().empty());
}

}  // namespace fuzz
