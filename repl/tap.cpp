// TAP 13 from the run's events (repl/tap.h): each line redacted and made printable.
#include "repl/tap.h"

#include "core/net/redact.h"

namespace cloud {

namespace {

// A case's name as a TAP description: one line, and "#" escaped so that it cannot be
// read as a directive (TAP 13).
std::string tap_name(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '\r' || c == '\n') {
      while (i + 1 < name.size() && (name[i + 1] == '\r' || name[i + 1] == '\n')) ++i;
      out += ' ';
    } else {
      if (c == '#') out += '\\';
      out += c;
    }
  }
  return out;
}

// `text` with `prefix` before every line.
std::string prefixed(const std::string& prefix, const std::string& text) {
  std::string out = prefix;
  for (char c : text) {
    out += c;
    if (c == '\n') out += prefix;
  }
  return out;
}

}  // namespace

void TapReporter::line(const std::string& text) {
  std::string shown = printable(redact(text));
  shown += '\n';
  std::fwrite(shown.data(), 1, shown.size(), out_);
  std::fflush(out_);
}

// A file's header ("# FILE") comes as its first case ends: a file without cases shows none.
void TapReporter::on(const TestEvent& e) {
  if (e.event == "file") {
    file_ = e.file, header_ = false;
  } else if (e.event == "output") {
    line(prefixed("# ", e.text));
  } else if (e.event == "case") {
    if (!header_) line("# " + file_), header_ = true;
    std::string text = std::to_string(++number_) + " - " + tap_name(e.name);
    if (e.outcome == "passed") line("ok " + text);
    else if (e.outcome == "skipped") line("ok " + text + " # SKIP " + e.message);
    else line("not ok " + text), line(prefixed("#   ", e.message));
  }
}

void TapReporter::end_file(const std::string&, double) {}

bool TapReporter::end_run(const TestTally& t, double) {
  std::fprintf(out_, "1..%ld\n", t.cases());
  if (t.skipped) std::fprintf(out_, "%ld passed, %ld failed, %ld skipped\n", t.passed, t.failed, t.skipped);
  else std::fprintf(out_, "%ld passed, %ld failed\n", t.passed, t.failed);
  std::fflush(out_);
  return true;
}

}  // namespace cloud
