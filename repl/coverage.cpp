// Line coverage for `cloudlua test --coverage DIR` (repl/coverage.h): the hook that
// counts, the lines that could run (read from a chunk's dump: Lua's API shows a
// function's lines, debug.getinfo(f, "L"), only for a closure that exists, and a
// function never called may never have had one), the counts passed between processes,
// and the lcov and Cobertura reports.
#include "repl/coverage.h"

#include <pugixml.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/base/files.h"
#include "core/net/redact.h"
#include "repl/test_runner.h"

namespace cloud {

namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- the lines that could run

// A reader of the binary chunk lua_dump writes (Lua 5.4's ldump.c), for the line of
// every instruction of a function and of the functions inside it.
class DumpReader {
 public:
  explicit DumpReader(const std::string& bytes) : s_(bytes) {}
  // Adds to `lines` the lines of the chunk's functions that hold an instruction, as
  // debug.getinfo(f, "L") gives them; false when the chunk does not read.
  bool read(std::set<int>& lines);

 private:
  bool function(std::set<int>& lines, int depth);
  bool byte(unsigned& b) { return pos_ < s_.size() ? (b = static_cast<unsigned char>(s_[pos_++]), true) : false; }
  bool skip(size_t n) { return n <= s_.size() - pos_ ? (pos_ += n, true) : false; }
  bool size(size_t& n);  // ldump.c's dumpSize: 7 bits a byte, the last one's high bit set
  bool string() {
    size_t n = 0;
    return size(n) && (n == 0 || skip(n - 1));
  }
  const std::string& s_;
  size_t pos_ = 0;
  size_t integer_ = 8, number_ = 8, instruction_ = 4;
};

bool DumpReader::size(size_t& n) {
  n = 0;
  for (unsigned b = 0, k = 0; k < 10; ++k) {
    if (!byte(b)) return false;
    n = (n << 7) | (b & 0x7f);
    if (b & 0x80) return true;
  }
  return false;
}

bool DumpReader::read(std::set<int>& lines) {
  unsigned version = 0, format = 0, i = 0, n = 0, f = 0, upvalues = 0;
  if (s_.compare(0, 4, LUA_SIGNATURE) != 0 || !skip(4) || !byte(version) || version != 0x54 || !byte(format) ||
      format != 0 || !skip(6) || !byte(i) || !byte(n) || !byte(f))
    return false;
  instruction_ = i, integer_ = n, number_ = f;
  return skip(integer_ + number_) && byte(upvalues) && function(lines, 0);
}

// One function (ldump.c's dumpFunction) and those inside it: the line of each
// instruction is the one before plus its byte of lineinfo, or, where that byte is
// -128, the next absolute line; a vararg function's first instruction (VARARGPREP)
// counts for no line, as in ldebug.c's collectvalidlines. Nor does the return the
// compiler adds at a function's `end` when nothing else is on that line: after a
// `return` it never runs, and a line that cannot run must not count as missed.
bool DumpReader::function(std::set<int>& lines, int depth) {
  size_t line_defined = 0, last = 0, code = 0, count = 0;
  unsigned params = 0, vararg = 0, stack = 0;
  if (depth > 200 || !string() || !size(line_defined) || !size(last) || !byte(params) || !byte(vararg) ||
      !byte(stack) || !size(code) || !skip(code * instruction_) || !size(count))
    return false;
  for (size_t k = 0; k < count; ++k) {  // constants
    unsigned type = 0;
    if (!byte(type)) return false;
    if ((type == 3 || type == 19) && !skip(type == 3 ? integer_ : number_)) return false;  // integer, float
    if ((type == 4 || type == 20) && !string()) return false;                              // strings
  }
  if (!size(count) || !skip(count * 3) || !size(count)) return false;  // upvalues, then the inner functions
  for (size_t k = 0; k < count; ++k)
    if (!function(lines, depth + 1)) return false;
  size_t deltas = 0, absolute = 0;
  if (!size(deltas) || deltas > s_.size() - pos_) return false;
  const size_t lineinfo = pos_;
  skip(deltas);
  std::vector<std::pair<size_t, size_t>> fixed;  // (instruction, line)
  if (!size(absolute)) return false;
  for (size_t k = 0, pc = 0, line = 0; k < absolute; ++k) {
    if (!size(pc) || !size(line)) return false;
    fixed.emplace_back(pc, line);
  }
  std::vector<int> of_pc;  // the line of each instruction that counts
  long line = static_cast<long>(line_defined);
  for (size_t pc = 0, next = 0; pc < deltas; ++pc) {
    const auto delta = static_cast<signed char>(s_[lineinfo + pc]);
    if (delta != -128) line += delta;
    else if (next < fixed.size()) line = static_cast<long>(fixed[next++].second);
    if (!(pc == 0 && vararg)) of_pc.push_back(static_cast<int>(line));
  }
  if (of_pc.size() > 1 && std::count(of_pc.begin(), of_pc.end(), of_pc.back()) == 1) of_pc.pop_back();
  lines.insert(of_pc.begin(), of_pc.end());
  if (!size(count)) return false;  // local variables, then the upvalues' names
  for (size_t k = 0, a = 0, b = 0; k < count; ++k)
    if (!string() || !size(a) || !size(b)) return false;
  if (!size(count)) return false;
  for (size_t k = 0; k < count; ++k)
    if (!string()) return false;
  return true;
}

int append_dump(lua_State*, const void* p, size_t n, void* out) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(p), n);
  return 0;
}

// Marks the lines that could run of the function on top of L's stack (popped) and of
// those inside it: -1 becomes 0. False when its chunk does not read.
bool mark_active_lines(lua_State* L, LineCounts::Lines& lines) {
  std::string bytes;
  std::set<int> active;
  bool read = lua_isfunction(L, -1) && !lua_iscfunction(L, -1) && lua_dump(L, append_dump, &bytes, 0) == 0 &&
              DumpReader(bytes).read(active);
  lua_pop(L, 1);
  if (!read || active.empty()) return read;
  if (lines.size() <= static_cast<size_t>(*active.rbegin())) lines.resize(*active.rbegin() + 1, -1);
  for (int line : active)
    if (line >= 0 && lines[line] < 0) lines[line] = 0;
  return true;
}

// ---------------------------------------------------------------- the hook

// The files a state's chunks come from, by their source string: counted (the lines of
// the file), or not (null). A pointer Lua may reuse for another source after freeing
// one, so the text is kept and compared.
struct Recorder {
  LineCounts& counts;
  struct Source {
    std::string text;
    LineCounts::Lines* lines;
  };
  std::unordered_map<const char*, Source> sources;
  const char* last = nullptr;  // the source of the line before, and its lines
  LineCounts::Lines* last_lines = nullptr;
};

std::unique_ptr<Recorder> recording;  // the state recording in this process (as lua.c's globalL)

// The path from the current folder of a chunk's file when its lines count: a file on
// disk under the current folder that is not a test file; "" otherwise.
std::string counted_path(const char* source) {
  if (source[0] != '@') return "";
  const fs::path path(source + 1);
  std::error_code ec;
  if (is_test_file(path.string()) || !fs::is_regular_file(path, ec)) return "";
  const fs::path here = fs::current_path(ec);
  if (ec) return "";
  const fs::path relative = fs::absolute(path, ec).lexically_normal().lexically_relative(here);
  if (ec || relative.empty() || *relative.begin() == "..") return "";
  return relative.generic_string();
}

// The lines of the chunk running at `ar` (null when they do not count), its lines that
// could run marked the first time its source is seen.
LineCounts::Lines* lines_of(lua_State* L, lua_Debug* ar, Recorder& r) {
  auto found = r.sources.find(ar->source);
  if (found != r.sources.end() && found->second.text == ar->source) return found->second.lines;
  const std::string path = counted_path(ar->source);
  LineCounts::Lines* lines = path.empty() ? nullptr : &r.counts.of(path);
  r.sources[ar->source] = {ar->source, lines};
  if (lines && !(lua_getinfo(L, "f", ar) && mark_active_lines(L, *lines)))
    std::fprintf(stderr, "cloudlua test: --coverage: the lines of %s do not read; its count may be short\n",
                 printable(path).c_str());
  return lines;
}

// The line hook: one more run of the line, in a file that counts (a line that is none
// of those marked, a function's `end` after its return, is left out).
void on_line(lua_State* L, lua_Debug* ar) {
  Recorder* r = recording.get();
  if (!r || !lua_getinfo(L, "S", ar)) return;
  if (ar->source != r->last) r->last_lines = lines_of(L, ar, *r), r->last = ar->source;
  if (!r->last_lines || ar->currentline < 0 || static_cast<size_t>(ar->currentline) >= r->last_lines->size()) return;
  long& count = (*r->last_lines)[ar->currentline];
  if (count >= 0) ++count;
}

// ---------------------------------------------------------------- the reports

struct Totals {
  long lines = 0, hit = 0;
};

Totals totals_of(const LineCounts::Lines& lines) {
  Totals t;
  for (long count : lines)
    if (count >= 0) ++t.lines, t.hit += count > 0;
  return t;
}

std::string rate(const Totals& t) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", t.lines ? static_cast<double>(t.hit) / static_cast<double>(t.lines) : 1.0);
  return text;
}

// lcov's tracefile: per file SF, a DA line per line that could run, LF and LH.
std::string lcov_text(const LineCounts& counts) {
  std::string text;
  for (const auto& [file, lines] : counts.files()) {
    text += "TN:\nSF:" + printable(file) + "\n";
    for (size_t line = 0; line < lines.size(); ++line)
      if (lines[line] >= 0) text += "DA:" + std::to_string(line) + "," + std::to_string(lines[line]) + "\n";
    const Totals t = totals_of(lines);
    text += "LF:" + std::to_string(t.lines) + "\nLH:" + std::to_string(t.hit) + "\nend_of_record\n";
  }
  return text;
}

// The attributes Cobertura gives a coverage, a package and a class.
void set_rates(pugi::xml_node node, const Totals& t) {
  node.append_attribute("line-rate") = rate(t).c_str();
  node.append_attribute("branch-rate") = "0";
  node.append_attribute("complexity") = "0";
}

// Cobertura's report: a package per folder, a class per file, its lines with hits.
std::string cobertura_text(const LineCounts& counts) {
  std::map<std::string, std::vector<std::string>> packages;  // folder: its files
  Totals all;
  for (const auto& [file, lines] : counts.files()) {
    const std::string folder = fs::path(file).parent_path().generic_string();
    packages[folder.empty() ? "." : folder].push_back(file);
    const Totals t = totals_of(lines);
    all.lines += t.lines, all.hit += t.hit;
  }
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("coverage");
  set_rates(root, all);
  root.append_attribute("lines-covered") = all.hit;
  root.append_attribute("lines-valid") = all.lines;
  root.append_attribute("branches-covered") = 0;
  root.append_attribute("branches-valid") = 0;
  root.append_attribute("version") = "cloudlua " CLOUDLUA_VERSION;
  root.append_attribute("timestamp") = static_cast<long long>(std::time(nullptr)) * 1000;
  std::error_code ec;
  root.append_child("sources").append_child("source").text() = printable(fs::current_path(ec).string()).c_str();
  pugi::xml_node xml_packages = root.append_child("packages");
  for (const auto& [folder, files] : packages) {
    pugi::xml_node package = xml_packages.append_child("package");
    package.append_attribute("name") = printable(folder).c_str();
    Totals in_package;
    pugi::xml_node classes = package.append_child("classes");
    for (const std::string& file : files) {
      const LineCounts::Lines& lines = counts.files().at(file);
      const Totals t = totals_of(lines);
      in_package.lines += t.lines, in_package.hit += t.hit;
      pugi::xml_node c = classes.append_child("class");
      c.append_attribute("name") = printable(fs::path(file).filename().string()).c_str();
      c.append_attribute("filename") = printable(file).c_str();
      set_rates(c, t);
      c.append_child("methods");
      pugi::xml_node xml_lines = c.append_child("lines");
      for (size_t line = 0; line < lines.size(); ++line) {
        if (lines[line] < 0) continue;
        pugi::xml_node l = xml_lines.append_child("line");
        l.append_attribute("number") = static_cast<long long>(line);
        l.append_attribute("hits") = static_cast<long long>(lines[line]);
        l.append_attribute("branch") = "false";
      }
    }
    set_rates(package, in_package);
  }
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

// Writes `text` whole to `path`; "" or what went wrong.
std::string write_text(const std::string& path, const std::string& text) {
  return write_durably(path, [&text](int fd) {
    for (size_t done = 0; done < text.size();) {
      ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  });
}

// 1234567 as "1,234,567".
std::string with_commas(long n) {
  std::string digits = std::to_string(n);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(static_cast<size_t>(at), ",");
  return digits;
}

}  // namespace

void LineCounts::merge(const LineCounts& other) {
  for (const auto& [file, theirs] : other.files_) {
    Lines& mine = files_[file];
    if (mine.size() < theirs.size()) mine.resize(theirs.size(), -1);
    for (size_t line = 0; line < theirs.size(); ++line)
      if (theirs[line] >= 0) mine[line] = std::max(mine[line], 0L) + theirs[line];
  }
}

// Per file: "file <bytes>\n<path>\n<count> <n> <n>...\n" (-1 for a line with no code).
std::string LineCounts::encode() const {
  std::string text;
  for (const auto& [file, lines] : files_) {
    text += "file " + std::to_string(file.size()) + "\n" + file + "\n" + std::to_string(lines.size());
    for (long n : lines) text += " " + std::to_string(n);
    text += "\n";
  }
  return text;
}

bool LineCounts::decode(const std::string& text, std::string& why) {
  LineCounts read;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    size_t bytes = 0, count = 0;
    if (word != "file" || !(in >> bytes) || in.get() != '\n' || bytes > 4096) return why = "a file's name", false;
    std::string file(bytes, '\0');
    if (!in.read(file.data(), static_cast<std::streamsize>(bytes)) || in.get() != '\n')
      return why = "a file's name", false;
    if (!(in >> count) || count > (1u << 24)) return why = "the lines of " + file, false;
    Lines& lines = read.files_[file];
    lines.resize(count);
    for (long& n : lines)
      if (!(in >> n) || n < -1) return why = "the lines of " + file, false;
  }
  merge(read);
  return true;
}

void record_lines(lua_State* L, LineCounts& counts) {
  recording.reset(new Recorder{counts, {}, nullptr, nullptr});
  lua_sethook(L, on_line, LUA_MASKLINE, 0);
}

void stop_recording(lua_State* L) {
  if (lua_gethook(L) == on_line) lua_sethook(L, nullptr, 0, 0);
  recording.reset();
}

std::string prepare_coverage_folder(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return dir + " is a file, not a folder: give a folder for lcov.info and cobertura.xml";
  fs::create_directories(dir, ec);
  if (ec) return "cannot make the folder " + dir + ": " + ec.message();
  return "";
}

std::string write_coverage(const LineCounts& counts, const std::string& dir, std::string& summary) {
  const std::string lcov = (fs::path(dir) / "lcov.info").string(), xml = (fs::path(dir) / "cobertura.xml").string();
  for (const auto& [path, text] : {std::pair{lcov, lcov_text(counts)}, std::pair{xml, cobertura_text(counts)}})
    if (std::string why = write_text(path, text); !why.empty()) return why;
  Totals all;
  for (const auto& [file, lines] : counts.files()) {
    const Totals t = totals_of(lines);
    all.lines += t.lines, all.hit += t.hit;
  }
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.1f%%",
                all.lines ? 100.0 * static_cast<double>(all.hit) / static_cast<double>(all.lines) : 0.0);
  const size_t files = counts.files().size();
  summary = "coverage: " + std::string(percent) + " of " + with_commas(all.lines) + " line" +
            (all.lines == 1 ? "" : "s") + " in " + std::to_string(files) + " file" + (files == 1 ? "" : "s") + " (" +
            printable(lcov) + ", " + printable(xml) + ")";
  return "";
}

}  // namespace cloud
