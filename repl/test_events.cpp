// A test run's events (repl/test_events.h): their line form, and the stream that
// counts them and passes them to the reporters.
#include "repl/test_events.h"

#include <cmath>
#include <cstdlib>

#include "core/base/suggest.h"
#include "core/net/redact.h"

namespace cloud {

namespace {

const char* const kKinds[] = {"file", "start", "output", "case"};
const char* const kOutcomes[] = {"passed", "skipped", "failure", "error"};

template <size_t N>
bool one_of(const std::string& s, const char* const (&set)[N]) {
  for (const char* item : set)
    if (s == item) return true;
  return false;
}

// Every byte outside '!'..'~', and '%', as %XX.
std::string percent_encoded(const std::string& text) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c > ' ' && c <= '~' && c != '%') out += static_cast<char>(c);
    else out += '%', out += hex[c >> 4], out += hex[c & 15];
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The text of a percent-encoded value; false when it holds a byte encode_event would
// have escaped, or a bad escape.
bool percent_decoded(const std::string& value, std::string& out) {
  out.clear();
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c != '%') {
      if (c <= ' ' || c > '~') return false;
      out += c;
      continue;
    }
    int high = i + 2 < value.size() ? hex_value(value[i + 1]) : -1;
    int low = high >= 0 ? hex_value(value[i + 2]) : -1;
    if (low < 0) return false;
    out += static_cast<char>(high << 4 | low);
    i += 2;
  }
  return true;
}

// The field of `e` named `key`; nullptr for an unknown key (time is not a text).
std::string* text_field(TestEvent& e, const std::string& key) {
  if (key == "file") return &e.file;
  if (key == "name") return &e.name;
  if (key == "describe") return &e.describe;
  if (key == "outcome") return &e.outcome;
  if (key == "message") return &e.message;
  if (key == "traceback") return &e.traceback;
  if (key == "text") return &e.text;
  return nullptr;
}

}  // namespace

std::string bounded_field(std::string text) {
  if (text.size() <= kMaxEventField) return text;
  std::string more = "... (" + std::to_string(text.size() - kMaxEventField) + " bytes more)";
  text.resize(kMaxEventField);
  return text + more;
}

std::string encode_event(const TestEvent& e) {
  std::string line = e.event;
  const std::pair<const char*, const std::string*> fields[] = {
      {"file", &e.file},           {"name", &e.name}, {"outcome", &e.outcome},  {"message", &e.message},
      {"traceback", &e.traceback}, {"text", &e.text}, {"describe", &e.describe}};
  for (const auto& [key, value] : fields)
    if (!value->empty()) line += std::string(" ") + key + "=" + percent_encoded(*value);
  if (e.event == "case") {
    char time[40];
    std::snprintf(time, sizeof time, " time=%.6f", e.time);
    line += time;
  }
  return line;
}

bool decode_event(const std::string& line, TestEvent& e, std::string& why) {
  e = TestEvent();
  if (line.size() > kMaxEventLine) return why = "a line longer than " + std::to_string(kMaxEventLine) + " bytes", false;
  size_t at = line.find(' ');
  e.event = line.substr(0, at);
  if (!one_of(e.event, kKinds)) return why = "an unknown event \"" + printable(e.event.substr(0, 40)) + "\"", false;
  std::string seen = " ";
  while (at != std::string::npos) {
    size_t next = line.find(' ', at + 1), eq = line.find('=', at + 1);
    if (eq == std::string::npos || eq > next) return why = "a field with no '='", false;
    std::string key = line.substr(at + 1, eq - at - 1),
                value = line.substr(eq + 1, next == std::string::npos ? next : next - eq - 1);
    if (seen.find(" " + key + " ") != std::string::npos) return why = "the field " + printable(key) + " twice", false;
    seen += key + " ";
    std::string text;
    if (!percent_decoded(value, text)) return why = "a bad escape in the field " + printable(key.substr(0, 40)), false;
    if (std::string* field = text_field(e, key)) {
      *field = text;
    } else if (key == "time") {
      char* end = nullptr;
      e.time = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(e.time) || e.time < 0 || e.time > 1e9)
        return why = "a time that is not a number of seconds", false;
    } else {
      return why = unknown_field(printable(key.substr(0, 40)), {}), false;
    }
    at = next;
  }
  if (e.event == "file" && e.file.empty()) return why = "a file event with no file", false;
  if (e.event == "case" && !one_of(e.outcome, kOutcomes)) return why = "a case with no known outcome", false;
  return true;
}

// A file's event told twice (under -j the runner tells it, then the worker's own
// follows) is told to the handlers once.
void TestEvents::on(const TestEvent& e) {
  if (e.event == "file" && began_ && e.file == file_) return;
  if (e.event == "file") file_ = e.file, began_ = true;
  if (e.event == "case" && e.outcome == "passed") ++tally_.passed;
  else if (e.event == "case" && e.outcome == "skipped") ++tally_.skipped;
  else if (e.event == "case") ++tally_.failed;
  for (TestHandler* h : handlers_) h->on(e);
}

void TestEvents::end_file(double time) {
  if (!began_) return;
  began_ = false;
  for (TestHandler* h : handlers_) h->end_file(file_, time);
}

bool TestEvents::end_run(double time) {
  for (TestHandler* h : handlers_)
    if (!h->end_run(tally_, time)) return false;
  return true;
}

}  // namespace cloud
