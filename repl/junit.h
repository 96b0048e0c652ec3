// The JUnit XML report of `cloudlua test --junit FILE`, as the test reporters of
// GitLab, Jenkins and GitHub read it: <testsuites> with one <testsuite> per file and
// one <testcase> per case, a <failure> (a check failed), an <error> (anything else
// raised) or <skipped/> inside it, and <system-out> with what the case printed.
// JunitReporter, a handler of the run's events (repl/test_events.h), adds each file's
// results; the totals are summed from the suites when the report is written (to the
// file --junit names, or to standard output with --output junit).
#pragma once

#include <pugixml.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "repl/test_events.h"

namespace cloud {

struct CaseResult {
  std::string name;
  std::string outcome;    // passed, skipped, failure or error
  double time = 0;        // seconds
  std::string message;    // why it failed or was skipped
  std::string traceback;  // where the error was raised
  std::string output;     // what the case printed (<system-out>)
  std::string describe;   // the describes it is in, outer first: added to the classname
};

struct SuiteResult {
  std::string file;  // the test file's path, as given
  double time = 0;   // seconds, the whole file (setup and teardown included)
  std::vector<CaseResult> cases;
  std::string output;  // what the file printed outside its cases (<system-out>)
};

class JunitReport {
 public:
  JunitReport();
  void add(const SuiteResult& suite);               // one <testsuite>
  bool save(const std::string& path, double time);  // the totals, then the file; false when it cannot be written
  void write(std::FILE* out, double time);          // the totals, then the document to `out`
  // The counts of a report: tests, failures, errors, skipped (summed over its suites).
  struct Totals {
    long tests = 0, failures = 0, errors = 0, skipped = 0;
  };
  Totals totals() const;
  void add_copy(pugi::xml_node suite);  // a <testsuite> read from another report, as it is

 private:
  void set_totals(double time);
  pugi::xml_document doc_;
  pugi::xml_node root_;
};

// The JUnit collector of a run's events: each file's <testsuite>, what each case
// printed (about 1 MiB of it at most, a note where more was left out); the report
// written at the run's end to `path`, or with no path to `out`.
class JunitReporter : public TestHandler {
 public:
  explicit JunitReporter(std::string path) : path_(std::move(path)) {}
  explicit JunitReporter(std::FILE* out) : out_(out) {}
  void on(const TestEvent& e) override;
  void end_file(const std::string& file, double time) override;
  bool end_run(const TestTally& tally, double time) override;

 private:
  JunitReport report_;
  std::string path_;
  std::FILE* out_ = nullptr;
  SuiteResult suite_;
  bool in_case_ = false;
  std::string case_output_;
};

// The JUnit reports at `inputs` (written by --junit, on shards of one run) merged into
// one at `output`: every <testsuite> of each, in the order given, the totals summed
// again, the time the sum of theirs. "" when done, else what went wrong.
std::string merge_junit(const std::vector<std::string>& inputs, const std::string& output);

// Each file's time in seconds in the JUnit report at `path` (its <testsuite>s' file and
// time); false, with why, when it cannot be read.
bool junit_file_times(const std::string& path, std::vector<std::pair<std::string, double>>& out, std::string& why);

// `text` as XML 1.0 can carry it: valid UTF-8 with none of the control characters the
// standard forbids (all below 0x20 but tab, newline and carriage return, and U+FFFE,
// U+FFFF); each byte that is not is written as \xNN. Redacted, as all output is.
std::string xml_safe(const std::string& text);

}  // namespace cloud
