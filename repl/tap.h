// The TAP reporter of `cloudlua test` (the default, --output tap): a line per case,
// numbered through the run ("ok 3 - name", "not ok", "# SKIP"), "# FILE" before a
// file's first case, what the cases printed as "# " comments, then the plan and the
// tally ("N passed, M failed"). A handler of the run's events (repl/test_events.h).
#pragma once

#include <cstdio>
#include <string>

#include "repl/test_events.h"

namespace cloud {

class TapReporter : public TestHandler {
 public:
  // TAP goes to `out`, the run's standard output.
  explicit TapReporter(std::FILE* out) : out_(out) {}
  void on(const TestEvent& e) override;
  void end_file(const std::string& file, double time) override;
  bool end_run(const TestTally& tally, double time) override;  // the plan and the tally

 private:
  void line(const std::string& text);  // one line on `out`, redacted and printable
  std::FILE* out_;
  std::string file_;     // the file being run
  bool header_ = false;  // "# FILE" was written
  long number_ = 0;      // the cases so far
};

}  // namespace cloud
