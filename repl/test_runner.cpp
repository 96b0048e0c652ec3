// The runner of `cloudlua test`. C++ finds the files and gives each one a state of its
// own, with its own session: a fresh embedded emulator whose clock runs on virtual
// time only (transitions happen when a test advances it, never because the machine
// was slow), or the configured endpoints. The harness itself, in Lua (lua/testing.lua),
// runs the cases and writes the TAP lines; this file adds the plan and the summary,
// and the JUnit report (repl/junit.cpp) of the cases the harness recorded. With -j N
// the files run in N processes at once, forked from this one before any thread or
// emulator exists (each child runs one file: a state, a session, an emulator of its
// own); the parent prints their output in the order of the files, the TAP lines
// renumbered, and adds up their reports.
#include "repl/test_runner.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "emulator/service.h"
#include "lua/session.h"
#include "repl/cli.h"
#include "repl/junit.h"

namespace cloud {

namespace {

namespace fs = std::filesystem;

struct Counts {
  long passed = 0, failed = 0, skipped = 0, number = 0;
};

bool is_test_file(const fs::path& p) {
  const std::string name = p.filename().string();
  const std::string suffix = "_test.lua";
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Folders are searched recursively, sorted; hidden folders and node_modules skipped.
void add_folder(const fs::path& folder, std::vector<std::string>& out) {
  std::vector<std::string> found;
  auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied);
  for (; it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind('.', 0) == 0 || name == "node_modules")) it.disable_recursion_pending();
    else if (it->is_regular_file() && is_test_file(it->path())) found.push_back(it->path().lexically_normal().string());
  }
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
}

// The files to run, in order; false (with a message) when a path does not exist.
bool collect_files(const std::vector<std::string>& paths, std::vector<std::string>& out) {
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) add_folder(p, out);
    else if (fs::is_regular_file(p, ec)) out.push_back(p);
    else return std::fprintf(stderr, "cloudlua test: no such file or folder: %s\n", p.c_str()), false;
  }
  return true;
}

long integer_field(lua_State* L, int table, const char* name) {
  lua_getfield(L, table, name);
  long value = static_cast<long>(lua_tointeger(L, -1));
  lua_pop(L, 1);
  return value;
}

std::string string_field(lua_State* L, int table, const char* name) {
  lua_getfield(L, table, name);
  size_t len = 0;
  const char* s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : nullptr;
  std::string value = s ? std::string(s, len) : std::string();
  lua_pop(L, 1);
  return value;
}

// The records of the cases run_file returned (the table `counts`), for the report.
std::vector<CaseResult> case_results(lua_State* L, int counts) {
  std::vector<CaseResult> out;
  if (lua_getfield(L, counts, "cases") == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; ++i) {
      int c = lua_gettop(L);
      lua_getfield(L, c, "time");
      double time = lua_tonumber(L, -1);
      lua_pop(L, 1);
      out.push_back({string_field(L, c, "name"), string_field(L, c, "outcome"), time, string_field(L, c, "message"),
                     string_field(L, c, "traceback")});
      lua_pop(L, 1);
    }
    lua_pop(L, 1);  // what ended the loop
  }
  lua_pop(L, 1);  // the list
  return out;
}

// make_directory(path): the folder and those above it, as `mkdir -p`; raises on failure.
int make_directory(lua_State* L) {
  std::error_code ec;
  fs::create_directories(luaL_checkstring(L, 1), ec);
  if (ec) return luaL_error(L, "cannot make the folder %s: %s", lua_tostring(L, 1), ec.message().c_str());
  return 0;
}

// Calls require("cloud.testing").run_file(path, opts) and adds its counts to `total`
// and its cases to `cases`.
int call_harness(lua_State* L, const std::string& path, const TestOptions& o, Counts& total,
                 std::vector<CaseResult>& cases) {
  lua_getglobal(L, "require");
  lua_pushstring(L, "cloud.testing");
  if (protected_call(L, 1, 1) != LUA_OK) return report_error(L, LUA_ERRRUN), LUA_ERRRUN;
  lua_getfield(L, -1, "run_file");
  lua_pushstring(L, path.c_str());
  lua_createtable(L, 0, 3);
  if (!o.filter.empty()) lua_pushstring(L, o.filter.c_str()), lua_setfield(L, -2, "filter");
  lua_pushboolean(L, o.list);
  lua_setfield(L, -2, "list");
  lua_pushinteger(L, total.number + 1);
  lua_setfield(L, -2, "first");
  lua_pushboolean(L, o.update_snapshots);
  lua_setfield(L, -2, "update_snapshots");
  lua_pushcfunction(L, make_directory);
  lua_setfield(L, -2, "make_directory");
  int status = protected_call(L, 2, 1);
  if (status != LUA_OK) return report_error(L, status), status;
  int counts = lua_gettop(L);
  total.passed += integer_field(L, counts, "passed");
  total.failed += integer_field(L, counts, "failed");
  total.skipped += integer_field(L, counts, "skipped");
  total.number = integer_field(L, counts, "number");
  cases = case_results(L, counts);
  return LUA_OK;
}

// The emulator's clock moves only when told, and the retry waits (back-off, the
// InvalidPart pause) of every client on the loop pass virtual time instead of
// sleeping, while the file runs; the loop's own sleeper again once it has.
struct VirtualTime {
  Loop& loop = Loop::current();
  void use(Emulator& emulator) {
    emulator.platform().set_real_time(false);
    loop.set_sleeper([&emulator](double seconds) { emulator.platform().advance(seconds); });
  }
  ~VirtualTime() { loop.set_sleeper(nullptr); }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct FileRun {
  const std::string& path;
  const TestOptions& options;
  std::shared_ptr<Session> session;
  Counts& total;
  std::vector<CaseResult> cases;
};

// The state made ready and the harness run, inside one protected call as lua.c's
// pmain, so that an error while opening the module is reported, not a panic.
int file_main(lua_State* L) {
  auto& run = *static_cast<FileRun*>(lua_touserdata(L, 1));
  luaL_openlibs(L);
  open_cloud(L, run.session);
  if (run.options.seed) seed_session(L, *run.session, *run.options.seed);
  lua_pushboolean(L, call_harness(L, run.path, run.options, run.total, run.cases) == LUA_OK);
  return 1;
}

// Under --record DIR or --replay DIR each file has a cassette of its own,
// DIR/<file name without .lua>, so that a file replays alone, in any order, with -j N.
ConfigOverrides file_config(const std::string& path, ConfigOverrides config) {
  std::string name = fs::path(path).stem().string();
  if (!config.record.empty()) config.record = (fs::path(config.record) / name).string();
  if (!config.replay.empty()) config.replay = (fs::path(config.replay) / name).string();
  return config;
}

// The warning line (a TAP comment) for the recorded calls a replayed file left unused.
void warn_unused(const Session& session) {
  const auto& cassette = session.client->cassette();
  if (!cassette || cassette->mode() != Cassette::Mode::replay || cassette->unused().empty()) return;
  std::vector<std::string> unused = cassette->unused();
  std::string first = unused.front() + (unused.size() > 1 ? ", ..." : "");
  std::printf("# %zu recorded call%s not replayed (%s)\n", unused.size(), unused.size() == 1 ? "" : "s", first.c_str());
}

// One file in a state and session of its own, its cases added to the report; false
// when the runner itself failed.
bool run_file(const std::string& path, const TestOptions& o, Counts& total, JunitReport& report) {
  const auto start = std::chrono::steady_clock::now();
  auto session = open_session(file_config(path, o.config));
  if (!session.ok()) {
    std::fprintf(stderr, "cloudlua test: %s\n", session.error().describe().c_str());
    return false;
  }
  session.value()->seed = o.seed;
  VirtualTime virtual_time;  // outlives the state and the session below
  if (session.value()->emulated) {  // test files drive the emulator's virtual time: started at once
    auto started = complete_config(*session.value());
    if (!started.ok()) {
      std::fprintf(stderr, "cloudlua test: %s\n", started.error().describe().c_str());
      return false;
    }
    virtual_time.use(*session.value()->emulator);
  }
  std::unique_ptr<lua_State, void (*)(lua_State*)> L(luaL_newstate(), lua_close);
  FileRun run{path, o, session.value(), total, {}};
  lua_pushcfunction(L.get(), file_main);
  lua_pushlightuserdata(L.get(), &run);
  int status = protected_call(L.get(), 1, 1);
  if (status != LUA_OK) return report_error(L.get(), status), false;
  warn_unused(*session.value());
  report.add({path, seconds_since(start), std::move(run.cases)});
  return lua_toboolean(L.get(), -1);
}

void print_summary(const Counts& c) {
  std::printf("1..%ld\n", c.number);
  if (c.skipped) std::printf("%ld passed, %ld failed, %ld skipped\n", c.passed, c.failed, c.skipped);
  else std::printf("%ld passed, %ld failed\n", c.passed, c.failed);
  std::fflush(stdout);
}

// ---------------------------------------------------------------- -j N: files in processes

// A file run in a process of its own: its pid, where its stdout and stderr go (unlinked
// temporary files, read back once it ended), where it writes its one-file report.
struct Job {
  const std::string* file = nullptr;
  pid_t pid = -1;
  FILE* out = nullptr;
  FILE* err = nullptr;
  std::string report;
  int status = -1;  // the exit status once it ended
};

volatile sig_atomic_t interrupted = 0;
void on_interrupt(int) { interrupted = 1; }

// In the child: the file run with stdout and stderr in the job's files and its report
// saved; exit status 0, or 2 when the runner itself failed. Never returns.
[[noreturn]] void run_child(const Job& job, const TestOptions& o) {
  std::signal(SIGINT, SIG_DFL);
  dup2(fileno(job.out), STDOUT_FILENO);
  dup2(fileno(job.err), STDERR_FILENO);
  Counts counts;
  JunitReport report;
  const auto start = std::chrono::steady_clock::now();
  bool ok = run_file(*job.file, o, counts, report) && report.save(job.report, seconds_since(start));
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(ok ? 0 : 2);
}

// Starts the job's process in process group `group` (0: a new one, the first job's).
bool start_job(Job& job, const TestOptions& o, pid_t& group) {
  const char* tmp = std::getenv("TMPDIR");
  std::string report = std::string(tmp && *tmp ? tmp : "/tmp") + "/cloudlua-test-XXXXXX";
  int fd = mkstemp(report.data());
  if (fd < 0) return false;
  close(fd);
  job.report = report;
  job.out = std::tmpfile();
  job.err = std::tmpfile();
  if (!job.out || !job.err) return false;
  std::fflush(stdout);
  std::fflush(stderr);
  job.pid = fork();
  if (job.pid < 0) return false;
  if (job.pid == 0) {
    setpgid(0, group);
    run_child(job, o);
  }
  setpgid(job.pid, group);  // also here: whichever of the two runs first
  if (group == 0) group = job.pid;
  return true;
}

// "ok N ..." or "not ok N ...": the line with N + offset; any other line as it is.
std::string renumbered(const std::string& line, long offset) {
  size_t at = line.rfind("ok ", 0) == 0 ? 3 : line.rfind("not ok ", 0) == 0 ? 7 : 0;
  size_t end = at;
  while (at > 0 && end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
  if (at == 0 || end == at) return line;
  return line.substr(0, at) + std::to_string(std::stol(line.substr(at, end - at)) + offset) + line.substr(end);
}

// Copies `from` (rewound) to `to`, each TAP line renumbered by `offset`.
void copy_output(FILE* from, FILE* to, long offset) {
  std::rewind(from);
  std::string line;
  for (int c; (c = std::fgetc(from)) != EOF;) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    std::fprintf(to, "%s\n", renumbered(line, offset).c_str());
    line.clear();
  }
  if (!line.empty()) std::fputs(renumbered(line, offset).c_str(), to);
  std::fflush(to);
}

// A job that ended: its output printed in the order of the files, its report and
// counts added; false when the runner failed in it.
bool finish_job(Job& job, Counts& total, JunitReport& report) {
  copy_output(job.err, stderr, 0);
  copy_output(job.out, stdout, total.number);
  std::fclose(job.out);
  std::fclose(job.err);
  if (job.status != 0 && job.status != 2)
    std::fprintf(stderr, "cloudlua test: the process running %s ended with status %d\n", job.file->c_str(), job.status);
  JunitReport mine;
  bool ok = job.status == 0 && mine.add_from(job.report) && report.add_from(job.report);
  std::remove(job.report.c_str());
  JunitReport::Totals t = mine.totals();
  total.number += t.tests;
  total.failed += t.failures + t.errors;
  total.skipped += t.skipped;
  total.passed += t.tests - t.failures - t.errors - t.skipped;
  return ok;
}

// Ctrl-C: every job's process stopped (SIGINT to their group), each waited for.
void stop_jobs(std::vector<Job>& jobs, pid_t group) {
  if (group > 0) kill(-group, SIGINT);
  for (Job& job : jobs) {
    if (job.pid > 0 && job.status < 0) waitpid(job.pid, nullptr, 0);
    if (job.out) std::fclose(job.out);
    if (job.err) std::fclose(job.err);
    if (!job.report.empty()) std::remove(job.report.c_str());
  }
}

// The files in at most o.jobs processes at once, in their own process group; output
// printed file by file in order as soon as each file and those before it ended.
// Returns the exit status: -1 to carry on (the summary), 2 when the runner failed,
// 130 on Ctrl-C.
int run_in_processes(const std::vector<std::string>& files, const TestOptions& o, Counts& total,
                     JunitReport& report) {
  std::vector<Job> jobs(files.size());
  pid_t group = 0;
  size_t started = 0, printed = 0, running = 0;
  bool runner_ok = true;
  struct sigaction action{}, previous{};
  action.sa_handler = on_interrupt;
  sigaction(SIGINT, &action, &previous);  // no SA_RESTART: waitpid returns at Ctrl-C
  while (printed < files.size() && !interrupted) {
    for (; running < static_cast<size_t>(o.jobs) && started < files.size(); ++started, ++running) {
      jobs[started].file = &files[started];
      if (!start_job(jobs[started], o, group)) return stop_jobs(jobs, group), std::perror("cloudlua test"), 2;
    }
    int status = 0;
    pid_t pid = waitpid(-group, &status, 0);
    if (pid < 0) continue;  // interrupted
    for (Job& job : jobs)
      if (job.pid == pid) job.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), --running;
    for (; printed < started && jobs[printed].status >= 0; ++printed) runner_ok = finish_job(jobs[printed], total, report) && runner_ok;
  }
  sigaction(SIGINT, &previous, nullptr);
  if (interrupted) {
    stop_jobs(jobs, group);
    return std::fprintf(stderr, "cloudlua test: interrupted\n"), 130;
  }
  return runner_ok ? -1 : 2;
}

}  // namespace

int run_tests(const TestOptions& o) {
  std::vector<std::string> files;
  if (o.paths.empty()) return std::fprintf(stderr, "cloudlua test: give test files or folders (usage: cloudlua test PATH...)\n"), 2;
  if (!collect_files(o.paths, files)) return 2;
  if (files.empty()) return std::fprintf(stderr, "cloudlua test: no *_test.lua file found\n"), 2;
  Counts total;
  JunitReport report;
  const auto start = std::chrono::steady_clock::now();
  if (o.jobs > 1 && files.size() > 1 && !o.list) {
    int status = run_in_processes(files, o, total, report);
    if (status >= 0) return status;
  } else {
    for (const std::string& f : files)
      if (!run_file(f, o, total, report)) return 2;
  }
  if (o.list) return 0;
  if (!o.junit.empty() && !report.save(o.junit, seconds_since(start)))
    return std::fprintf(stderr, "cloudlua test: cannot write the JUnit report %s\n", o.junit.c_str()), 2;
  print_summary(total);
  if (total.number == 0) std::fprintf(stderr, "cloudlua test: no test case ran%s\n", o.filter.empty() ? "" : " (check --filter)");
  return total.failed == 0 && total.number > 0 ? 0 : 1;
}

}  // namespace cloud
