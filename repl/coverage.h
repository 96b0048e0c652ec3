// Line coverage of `cloudlua test --coverage DIR`: a line hook (LUA_MASKLINE) counts
// the lines that run of the Lua files on disk under the current folder (not the test
// files, not cloudlua's embedded library, whose chunks are no files); the lines that
// could run are read from each file's compiled functions, so that a comment, a blank
// line or an `end` never counts as missed. Under -j N each process records its own
// counts and the runner merges them (encode, decode). The reports: DIR/lcov.info and
// DIR/cobertura.xml, and one line of totals.
#pragma once

#include <lua.hpp>

#include <map>
#include <string>
#include <vector>

namespace cloud {

// Per file (its path from the current folder), per line (the index): -1 a line that
// never runs code, else how many times it ran.
class LineCounts {
 public:
  using Lines = std::vector<long>;
  // The lines of `file`, made on first use.
  Lines& of(const std::string& file) { return files_[file]; }
  void merge(const LineCounts& other);
  const std::map<std::string, Lines>& files() const { return files_; }
  // The counts as text another process reads back with decode.
  std::string encode() const;
  // Adds the counts `text` holds; false (why set) when it is not what encode writes.
  bool decode(const std::string& text, std::string& why);

 private:
  std::map<std::string, Lines> files_;
};

// Counts into `counts` the lines L runs from now on (in its threads made later too),
// until stop_recording. One state records at a time in a process.
void record_lines(lua_State* L, LineCounts& counts);
void stop_recording(lua_State* L);

// DIR made when missing; "" or why it cannot be the folder of the reports.
std::string prepare_coverage_folder(const std::string& dir);

// Writes DIR/lcov.info and DIR/cobertura.xml; "" and `summary` set to the line of
// totals, or what went wrong.
std::string write_coverage(const LineCounts& counts, const std::string& dir, std::string& summary);

}  // namespace cloud
