// The one stream of a test run's events. The harness (lua/testing.lua) emits them as
// they happen: a file begins, a case starts, output is printed, a case ends with its
// outcome; the runner adds a file's end and the run's. The reporters are sibling
// handlers of that stream (TestHandler), each in a file of its own: TAP (repl/tap.h),
// JUnit XML (repl/junit.h), JSON lines (repl/json_lines.h); none reads another's
// text. Under `cloudlua test -j N` a worker writes its events as lines (encode_event)
// and the runner reads them back (decode_event), checking each as it would any text
// from outside, then feeds them to the same stream, so a run prints and reports the
// same whatever the -j.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

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

// What a run counted: its cases that passed, failed (a failure or an error), were skipped.
struct TestTally {
  long passed = 0, failed = 0, skipped = 0;
  long cases() const { return passed + failed + skipped; }
};

// A reporter: a handler of the run's events, told each of them in the order the files
// ran. Every text it writes from an event is redacted (core/net/redact) and escaped
// for where it goes.
class TestHandler {
 public:
  virtual ~TestHandler() = default;
  // An event of the file being run: file (it began), start, output, case.
  virtual void on(const TestEvent& e) = 0;
  // The file's events were all told; the file ran `time` seconds.
  virtual void end_file(const std::string& file, double time) = 0;
  // The run ended: what it counted, in `time` seconds. False when the report could
  // not be written (the handler said why on stderr).
  virtual bool end_run(const TestTally& tally, double time) = 0;
};

// The stream: each event counted and passed to every handler, in the order they were
// added.
class TestEvents {
 public:
  void add(TestHandler& handler) { handlers_.push_back(&handler); }
  void on(const TestEvent& e);
  void end_file(double time);  // when a file began
  bool end_run(double time);   // every handler's end, while each succeeds
  const TestTally& tally() const { return tally_; }

 private:
  std::vector<TestHandler*> handlers_;
  TestTally tally_;
  std::string file_;  // the file being run
  bool began_ = false;
};

}  // namespace cloud
