// Where the REPL's lines come from. On a terminal (and when cloudlua was built with
// libedit): line editing, history kept across sessions in a file, and Ctrl-C at the
// prompt cancels the line. Otherwise plain reads of stdin, the path for pipes, with
// prompts only when stdin is a terminal.
#pragma once

#include <memory>
#include <string>

namespace cloud {

class LineReader {
 public:
  enum class Status { line, interrupted, end };

  // `history_file` empty: no history kept.
  static std::unique_ptr<LineReader> open(const std::string& history_file);
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
