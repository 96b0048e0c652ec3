// The JUnit XML report (repl/junit.h), written with pugixml: one document for the run,
// a <testsuite> appended per file, the totals on <testsuites> when it is saved.
#include "repl/junit.h"

#include <algorithm>
#include <cstdio>

#include "core/net/redact.h"

namespace cloud {

namespace {

// The length of the UTF-8 sequence at s[i] when it is well formed and a character
// XML 1.0 allows; 0 when it is not.
size_t allowed_sequence(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned c = byte(i);
  if (c < 0x80) return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (n == 0 || c > 0xF4 || i + n > s.size()) return 0;
  unsigned code = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = code << 6 | (byte(i + k) & 0x3F);
  }
  bool shortest = (n == 2 && code >= 0x80) || (n == 3 && code >= 0x800) || (n == 4 && code >= 0x10000);
  bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  bool allowed = shortest && !surrogate && code <= 0x10FFFF && code != 0xFFFE && code != 0xFFFF;
  return allowed ? n : 0;
}

// "%.3f" seconds, as reporters read times.
std::string seconds(double t) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", t < 0 ? 0 : t);
  return text;
}

// The classname reporters group cases by: the file's path without ".lua", "/" as ".",
// then the describes the case is in ("outer inner"), "." in them as "_", so that a
// reporter that splits at the last "." (Jenkins: package, class) shows them as the class.
std::string class_name(const std::string& file, std::string describe) {
  std::string name = file;
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".lua") == 0) name.resize(name.size() - 4);
  if (name.rfind("./", 0) == 0) name.erase(0, 2);
  for (char& c : name)
    if (c == '/') c = '.';
  for (char& c : describe)
    if (c == '.') c = '_';
  return describe.empty() ? name : name + "." + describe;
}

void set(pugi::xml_node node, const char* name, const std::string& value) {
  node.append_attribute(name).set_value(xml_safe(value).c_str());
}

// The first line of a message: the message attribute (the whole text is the element's).
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// <system-out> with `text`, when there is any.
void add_output(pugi::xml_node node, const std::string& text) {
  if (!text.empty()) node.append_child("system-out").append_child(pugi::node_pcdata).set_value(xml_safe(text).c_str());
}

void add_case(pugi::xml_node suite, const std::string& file, const CaseResult& c) {
  pugi::xml_node node = suite.append_child("testcase");
  set(node, "classname", class_name(file, c.describe));
  set(node, "name", c.name);
  set(node, "time", seconds(c.time));
  set(node, "file", file);
  if (c.outcome == "skipped") {
    set(node.append_child("skipped"), "message", c.message);
  } else if (c.outcome != "passed") {
    pugi::xml_node why = node.append_child(c.outcome == "failure" ? "failure" : "error");
    set(why, "message", first_line(c.message));
    set(why, "type", c.outcome == "failure" ? "expectation" : "error");
    std::string text = c.message + (c.traceback.empty() ? "" : "\n\n" + c.traceback);
    why.append_child(pugi::node_pcdata).set_value(xml_safe(text).c_str());
  }
  add_output(node, c.output);
}

long count_of(pugi::xml_node suite, const char* outcome) {
  long n = 0;
  for (pugi::xml_node c : suite.children("testcase")) n += c.child(outcome) ? 1 : 0;
  return n;
}

}  // namespace

std::string xml_safe(const std::string& text) {
  const std::string clean = redact(text);
  std::string out;
  out.reserve(clean.size());
  for (size_t i = 0; i < clean.size();) {
    size_t n = allowed_sequence(clean, i);
    if (n > 0) {
      out.append(clean, i, n);
      i += n;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(clean[i++]));
    out += hex;
  }
  return out;
}

JunitReport::JunitReport() {
  pugi::xml_node decl = doc_.append_child(pugi::node_declaration);
  decl.append_attribute("version").set_value("1.0");
  decl.append_attribute("encoding").set_value("UTF-8");
  root_ = doc_.append_child("testsuites");
  root_.append_attribute("name").set_value("cloudlua test");
}

void JunitReport::add(const SuiteResult& s) {
  pugi::xml_node suite = root_.append_child("testsuite");
  set(suite, "name", s.file);
  for (const char* a : {"tests", "failures", "errors", "skipped"}) suite.append_attribute(a);
  set(suite, "time", seconds(s.time));
  set(suite, "file", s.file);
  for (const CaseResult& c : s.cases) add_case(suite, s.file, c);
  add_output(suite, s.output);
  suite.attribute("tests").set_value(static_cast<long long>(s.cases.size()));
  suite.attribute("failures").set_value(static_cast<long long>(count_of(suite, "failure")));
  suite.attribute("errors").set_value(static_cast<long long>(count_of(suite, "error")));
  suite.attribute("skipped").set_value(static_cast<long long>(count_of(suite, "skipped")));
}

void JunitReport::add_copy(pugi::xml_node suite) { root_.append_copy(suite); }

std::string merge_junit(const std::vector<std::string>& inputs, const std::string& output) {
  JunitReport merged;
  double time = 0;
  for (const std::string& path : inputs) {
    pugi::xml_document doc;
    pugi::xml_parse_result parsed = doc.load_file(path.c_str());
    if (!parsed) return path + ": not a JUnit report (" + parsed.description() + ")";
    pugi::xml_node root = doc.child("testsuites");
    if (!root) return path + ": not a JUnit report (no <testsuites>)";
    for (pugi::xml_node suite : root.children("testsuite")) merged.add_copy(suite);
    time += root.attribute("time").as_double();
  }
  if (!merged.save(output, time)) return "cannot write " + output;
  return "";
}

bool junit_file_times(const std::string& path, std::vector<std::pair<std::string, double>>& out, std::string& why) {
  pugi::xml_document doc;
  pugi::xml_parse_result parsed = doc.load_file(path.c_str());
  if (!parsed) return why = path + ": not a JUnit report (" + parsed.description() + ")", false;
  for (pugi::xml_node suite : doc.child("testsuites").children("testsuite"))
    out.emplace_back(suite.attribute("file").as_string(suite.attribute("name").as_string()),
                     suite.attribute("time").as_double());
  return true;
}

JunitReport::Totals JunitReport::totals() const {
  Totals t;
  for (pugi::xml_node suite : root_.children("testsuite")) {
    t.tests += suite.attribute("tests").as_llong();
    t.failures += suite.attribute("failures").as_llong();
    t.errors += suite.attribute("errors").as_llong();
    t.skipped += suite.attribute("skipped").as_llong();
  }
  return t;
}

// The run's totals and time on <testsuites>, in place of any set before.
void JunitReport::set_totals(double time) {
  Totals t = totals();
  for (const char* a : {"tests", "failures", "errors", "skipped", "time"}) root_.remove_attribute(a);
  root_.append_attribute("tests").set_value(static_cast<long long>(t.tests));
  root_.append_attribute("failures").set_value(static_cast<long long>(t.failures));
  root_.append_attribute("errors").set_value(static_cast<long long>(t.errors));
  root_.append_attribute("skipped").set_value(static_cast<long long>(t.skipped));
  set(root_, "time", seconds(time));
}

bool JunitReport::save(const std::string& path, double time) {
  set_totals(time);
  return doc_.save_file(path.c_str(), "  ", pugi::format_default | pugi::format_no_declaration);
}

void JunitReport::write(std::FILE* out, double time) {
  set_totals(time);
  pugi::xml_writer_file writer(out);
  doc_.save(writer, "  ", pugi::format_default | pugi::format_no_declaration);
  std::fflush(out);
}

namespace {

// What the report keeps of a case's (or a file's) output; the TAP output has all.
constexpr size_t kMaxKeptOutput = 4 * kMaxEventField;

}  // namespace

void JunitReporter::on(const TestEvent& e) {
  if (e.event == "file") {
    suite_ = SuiteResult();
    suite_.file = e.file;
    in_case_ = false;
    case_output_.clear();
  } else if (e.event == "start") {
    in_case_ = true;
    case_output_.clear();
  } else if (e.event == "output") {
    static const std::string kCut = "(more output left out)\n";
    std::string& kept = in_case_ ? case_output_ : suite_.output;  // for <system-out>, about kMaxKeptOutput at most
    if (kept.size() < kMaxKeptOutput) kept += e.text + "\n";
    else if (kept.compare(kept.size() - std::min(kept.size(), kCut.size()), kCut.size(), kCut) != 0) kept += kCut;
  } else if (e.event == "case") {
    suite_.cases.push_back({e.name, e.outcome, e.time, e.message, e.traceback, case_output_, e.describe});
    case_output_.clear();
    in_case_ = false;
  }
}

void JunitReporter::end_file(const std::string&, double time) {
  suite_.time = time;
  report_.add(suite_);
}

bool JunitReporter::end_run(const TestTally&, double time) {
  if (!path_.empty() && !report_.save(path_, time))
    return std::fprintf(stderr, "cloudlua test: cannot write the JUnit report %s\n", path_.c_str()), false;
  if (path_.empty()) report_.write(out_, time);
  return true;
}

}  // namespace cloud
