// `cloudlua test [paths...]`: runs Lua test files written for the harness of
// lua/testing.lua and reports in TAP, ending with the line "N passed, M failed" (or,
// with --output, as JUnit XML or JSON lines).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/client/config.h"

namespace cloud {

struct TestOptions {
  std::vector<std::string> paths;         // files, or folders meaning their *_test.lua and *_spec.lua files
  std::string filter;                     // run only cases whose "file: name" contains it
  std::vector<std::string> tags;          // run only cases with one of these tags (#tag in a name)
  std::vector<std::string> exclude_tags;  // and none of these
  bool list = false;                      // print the cases instead of running them
  std::string junit;                      // also write a JUnit XML report there
  std::string output = "tap";             // the report on standard output: tap, junit or json
  bool update_snapshots = false;          // write to_match_snapshot's files instead of comparing
  // Files run in this many processes at once, each in its own (-j 1 too); 0 (no -j):
  // one after another in the runner's own process, unless a timeout is given.
  int jobs = 0;
  // Seconds a file may run in its process before it is killed and failed (0: no limit).
  // Files run in processes under -j N, or alone when this is given; the default is
  // kDefaultTimeout.
  std::optional<double> timeout;
  std::optional<std::uint64_t> seed;  // repeatable ids, request ids and times (seed_session)
  std::string shard;                  // "I/N": run only the I-th of N parts of the files
  std::string timings;                // a JUnit report of an earlier run: the parts balanced by its file times
  std::string merge_junit;            // write the JUnit reports given as paths, merged, to this file
  std::string coverage;               // the folder of the line coverage reports (repl/coverage.h)
  ConfigOverrides config;             // --profile, --endpoint...: no embedded emulator then
  bool keep_worlds = false;           // against a serve: keep each file's world (else removed when it ends)
};

// Whether `path` names a test file: *_test.lua, or busted's *_spec.lua.
bool is_test_file(const std::string& path);

// A file's time limit in its process when none is given: ten minutes, long enough for
// any file that is not stuck, short enough that a stuck one does not hold CI for an hour.
constexpr double kDefaultTimeout = 600;

// Runs every file in a state of its own with a fresh embedded emulator (or against
// the configured endpoints). Returns the exit status: 0 all passed, 1 a case failed
// or none ran, 2 the command itself could not work (no such path, bad configuration).
int run_tests(const TestOptions& options);

}  // namespace cloud
