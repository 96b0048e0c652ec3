// JSON lines from the run's events (repl/json_lines.h). Each text is redacted, then
// written as JSON with every byte outside printable ASCII escaped (\uXXXX; a byte that
// is not UTF-8 as U+FFFD): a line shown on a terminal cannot drive it, and a reader
// gets the redacted text back exactly.
#include "repl/json_lines.h"

#include <nlohmann/json.hpp>

#include "core/net/redact.h"

namespace cloud {

namespace {

using json = nlohmann::json;

// One object as a line on `out`, flushed: a reader sees each event as it happens.
void write_line(std::FILE* out, const json& object) {
  std::string line = object.dump(-1, ' ', true, json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

// Sets `key` to the redacted `text` when there is any.
void set_text(json& object, const char* key, const std::string& text) {
  if (!text.empty()) object[key] = redact(text);
}

}  // namespace

void JsonLinesReporter::on(const TestEvent& e) {
  if (e.event == "file") file_ = e.file, case_.clear();
  if (e.event == "start") case_ = e.name;
  json object = {{"event", e.event}, {"file", redact(file_)}};
  if (e.event == "output") set_text(object, "name", case_);
  set_text(object, "name", e.name);
  set_text(object, "describe", e.describe);  // the describes a case is in, outer first
  set_text(object, "outcome", e.outcome);
  if (e.event == "case") object["time"] = e.time;
  set_text(object, "message", e.message);
  set_text(object, "traceback", e.traceback);
  if (e.event == "output") object["text"] = redact(e.text);
  if (e.event == "case") case_.clear();
  write_line(out_, object);
}

void JsonLinesReporter::end_file(const std::string& file, double time) {
  write_line(out_, {{"event", "file_end"}, {"file", redact(file)}, {"time", time}});
}

bool JsonLinesReporter::end_run(const TestTally& t, double time) {
  write_line(out_, {{"event", "run_end"},
                    {"tests", t.cases()},
                    {"passed", t.passed},
                    {"failed", t.failed},
                    {"skipped", t.skipped},
                    {"time", time}});
  return true;
}

}  // namespace cloud
