// The one stream of a test run's events. The harness (lua/testing.lua) emits them as
// they happen: a file begins, a case starts, output is printed, a case ends with its
// outcome. Two consumers read that stream: the TAP writer (stdout, the case numbers,
// the tally) and the JUnit collector (repl/junit.h). Under `cloudlua test -j N` a
// worker writes its events as lines (encode_event) and the runner reads them back
// (decode_event), checking each as it would any text from outside, then feeds them to
// the same two consumers, so a run prints and reports the same whatever the -j.
#pragma once

#include <cstdio>
#include <string>

#include "repl/junit.h"

namespace cloud {

struct TestEvent {
  std::string event;      // "file", "start" (a case), "output", "case" (a case ended)
  std::string file;       // file: the test file's path
  std::string name;       // start, case: the case's name (its describes' names before it)
  std::string describe;   // case: the names of the describes it is in, outer first ("" for none)
  std::string outcome;    // case: passed, skipped, failure or error
  std::string message;    // case: why it failed or was skipped
  std::string traceback;  // case: where the error was raised
  std::string text;       // output: what was printed (one print, no final newline)
  double time = 0;        // case: seconds
};

// The longest text a field of an event keeps (bounded_field cuts longer ones, saying
// so, where an event is made), and the longest line an encoded event may take: seven
// such fields, each byte escaped.
constexpr size_t kMaxEventField = 256 * 1024;
constexpr size_t kMaxEventLine = 7 * 3 * (kMaxEventField + 64) + 256;

// `text` cut to kMaxEventField bytes, with a note of how much was left out.
std::string bounded_field(std::string text);

// One line (no newline) that decode_event reads back to the same event: the kind, then
// `key=value` fields, each value percent-encoded (every byte outside '!'..'~', and '%').
// The fields are taken as they are: bounded_field them first.
std::string encode_event(const TestEvent& e);

// The event of a line that encode_event wrote; false, with why, for any other line
// (an unknown kind, key or outcome, a bad escape, a field of the wrong type).
bool decode_event(const std::string& line, TestEvent& e, std::string& why);

// The two consumers of a run's events, in the order the files ran.
class TestReporter {
 public:
  // TAP goes to `out`, the run's standard output.
  TestReporter(JunitReport& junit, std::FILE* out) : junit_(junit), out_(out) {}
  void on(const TestEvent& e);  // TAP lines on `out`, the counts, the report's case
  void end_file(double time);   // the file's <testsuite> (when a file began)
  long passed = 0, failed = 0, skipped = 0, number = 0;

 private:
  void tap(const std::string& line);  // one line on `out`, redacted and printable
  void header();                      // "# FILE" once, as the file's first case ends
  JunitReport& junit_;
  std::FILE* out_;
  SuiteResult suite_;
  bool began_ = false, header_ = false, in_case_ = false;
  std::string case_output_;
};

}  // namespace cloud
