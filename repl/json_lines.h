// The JSON lines reporter of `cloudlua test --output json`: one JSON object per line
// per event, for a program to read as the run goes. Every object has "event": "file"
// (a file began: "file"), "start" (a case began: "file", "name"), "output" (what was
// printed: "file", "text", and "name" inside a case), "case" (a case ended: "file",
// "name", "outcome" passed, skipped, failure or error, "time" in seconds, "message"
// and "traceback" when there are), "file_end" ("file", "time") and, last, "run_end"
// ("tests", "passed", "failed", "skipped", "time"). A file that cannot load, or whose
// process dies, is a case of outcome "error" named after the file. A handler of the
// run's events (repl/test_events.h).
#pragma once

#include <cstdio>
#include <string>

#include "repl/test_events.h"

namespace cloud {

class JsonLinesReporter : public TestHandler {
 public:
  // The lines go to `out`, the run's standard output.
  explicit JsonLinesReporter(std::FILE* out) : out_(out) {}
  void on(const TestEvent& e) override;
  void end_file(const std::string& file, double time) override;
  bool end_run(const TestTally& tally, double time) override;

 private:
  std::FILE* out_;
  std::string file_;  // the file being run
  std::string case_;  // the case being run, "" between cases
};

}  // namespace cloud
