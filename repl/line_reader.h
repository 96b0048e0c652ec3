// Where the REPL's lines come from. On a terminal (and when cloudlua was built with
// libedit): line editing, history kept across sessions in a file, and Ctrl-C at the
// prompt cancels the line. Otherwise plain reads of stdin, the path for pipes, with
// prompts only when stdin is a terminal.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cloud {

// What Tab offers for the word before the cursor: where the word starts in the line
// and the whole words it may become.
struct Completion {
  size_t start = 0;
  std::vector<std::string> candidates;
};
using Completer = std::function<Completion(const std::string& before_cursor)>;

class LineReader {
 public:
  enum class Status { line, interrupted, end };

  // `history_file` empty: no history kept. `completer`: what Tab completes with (line
  // editing only; none: Tab does nothing).
  static std::unique_ptr<LineReader> open(const std::string& history_file, Completer completer = nullptr);
  virtual ~LineReader() = default;

  // Shows `prompt` (when prompts are shown) and reads one line, without its newline.
  virtual Status read(const std::string& prompt, std::string& line) = 0;
  // Adds a complete chunk (maybe several lines) to the history and saves it.
  virtual void remember(const std::string& chunk) { (void)chunk; }
  // True when prompts are shown, i.e. stdin is a terminal.
  virtual bool interactive() const = 0;
};

// The history file: $CLOUDLUA_HISTORY ("" for none), else ~/.cloudlua_history.
std::string history_file_path();

}  // namespace cloud
