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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/redact.h"
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

// A file run in a process of its own (its pid is also its process group's): its stdout,
// stderr and one-file report go to unnamed temporary files (std::tmpfile: no name in
// any folder, so nothing is left behind whatever ends the runner), read back once it
// ended; when it must end; how it ended.
struct Job {
  const std::string* file = nullptr;
  pid_t pid = -1;
  FILE* out = nullptr;
  FILE* err = nullptr;
  FILE* report = nullptr;
  std::chrono::steady_clock::time_point started, deadline;
  bool ended = false;
  int status = 0;      // the wait status, once it ended
  std::string killed;  // why the runner killed it: it timed out, or the run was stopped
};

// The signals that end the runner, and SIGCHLD: blocked in the runner, which waits for
// them with sigtimedwait, and set back in each worker.
sigset_t runner_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, s);
  return set;
}

void on_child(int) {}  // a handler, so that a blocked SIGCHLD stays pending

// In the child: the file run with stdout and stderr in the job's files and its report
// saved; exit status 0, or 2 when the runner itself failed. Never returns.
[[noreturn]] void run_child(const Job& job, const TestOptions& o, const sigset_t& mask) {
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) std::signal(s, SIG_DFL);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
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

// Starts the job's process, in a process group of its own (the runner kills the group:
// the file's own children go too) and killed by the kernel when the runner dies
// (PR_SET_PDEATHSIG, then getppid: the runner may have died before it was set).
bool start_job(Job& job, const TestOptions& o, double timeout, const sigset_t& mask) {
  job.out = std::tmpfile();
  job.err = std::tmpfile();
  job.report = std::tmpfile();
  if (!job.out || !job.err || !job.report) return false;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t runner = getpid();
  job.pid = fork();
  if (job.pid < 0) return false;
  if (job.pid == 0) {
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != runner) _exit(2);
    run_child(job, o, mask);
  }
  setpgid(job.pid, job.pid);  // also here: whichever of the two runs first
  job.started = std::chrono::steady_clock::now();
  job.deadline = std::chrono::steady_clock::time_point::max();
  if (timeout > 0)
    job.deadline = job.started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(timeout));
  return true;
}

// Kills the job's process group (and the process, should it have none yet).
void kill_job(Job& job, const std::string& why) {
  kill(-job.pid, SIGKILL);
  kill(job.pid, SIGKILL);
  job.killed = why;
}

// Where the number of a TAP line ("ok N ..." or "not ok N ...") starts; 0 for another line.
size_t tap_number_at(const std::string& line) {
  size_t at = line.rfind("ok ", 0) == 0 ? 3 : line.rfind("not ok ", 0) == 0 ? 7 : 0;
  return at > 0 && at < line.size() && line[at] >= '0' && line[at] <= '9' ? at : 0;
}

// A TAP line with its number N made N + offset; any other line as it is.
std::string renumbered(const std::string& line, long offset) {
  size_t at = tap_number_at(line), end = at;
  if (at == 0) return line;
  while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
  return line.substr(0, at) + std::to_string(std::stol(line.substr(at, end - at)) + offset) + line.substr(end);
}

// Copies `from` (rewound) to `to`, each TAP line renumbered by `offset`; returns the
// count of the TAP lines copied, passed, failed and skipped.
Counts copy_output(FILE* from, FILE* to, long offset) {
  std::rewind(from);
  Counts shown;
  std::string line;
  const auto put = [&] {
    if (tap_number_at(line) > 0) {
      ++shown.number;
      if (line.rfind("not ok ", 0) == 0) ++shown.failed;
      else if (line.find(" # SKIP") != std::string::npos) ++shown.skipped;
      else ++shown.passed;
    }
    std::fputs(renumbered(line, offset).c_str(), to);
  };
  for (int c; (c = std::fgetc(from)) != EOF;) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    put();
    std::fputc('\n', to);
    line.clear();
  }
  if (!line.empty()) put();
  std::fflush(to);
  return shown;
}

// Why a job's file failed as a whole ("" when its process ended as it should).
std::string ending(const Job& job) {
  if (!job.killed.empty()) return job.killed;
  if (WIFSIGNALED(job.status))
    return "its process was killed by signal " + std::to_string(WTERMSIG(job.status)) + " (" +
           strsignal(WTERMSIG(job.status)) + ")";
  if (WIFEXITED(job.status) && WEXITSTATUS(job.status) != 0)
    return "its process ended with status " + std::to_string(WEXITSTATUS(job.status));
  return "";
}

// A job that ended: its output printed in the order of the files, its report and
// counts added. A process that did not end as it should (a signal, an exit, a time
// limit) is one more failed case, named after the file, in the tally and the report,
// after the cases it finished. False when the runner itself failed in it (status 2).
bool finish_job(Job& job, Counts& total, JunitReport& report) {
  copy_output(job.err, stderr, 0);
  Counts shown = copy_output(job.out, stdout, total.number);
  std::string why = ending(job);
  JunitReport mine;
  if (why.empty() && !(mine.add_from(job.report) && report.add_from(job.report)))
    why = "its report could not be read";
  for (FILE* f : {job.out, job.err, job.report}) std::fclose(f);
  if (why.empty()) {
    JunitReport::Totals t = mine.totals();
    total.number += t.tests;
    total.failed += t.failures + t.errors;
    total.skipped += t.skipped;
    total.passed += t.tests - t.failures - t.errors - t.skipped;
    return true;
  }
  total.number += shown.number + 1;
  total.passed += shown.passed;
  total.skipped += shown.skipped;
  total.failed += shown.failed + 1;
  std::string name = printable(redact(*job.file));
  if (shown.number == 0) std::printf("# %s\n", name.c_str());  // the header its first case would have printed
  std::printf("not ok %ld - %s\n#   %s\n", total.number, name.c_str(), printable(redact(why)).c_str());
  std::fflush(stdout);
  double time = seconds_since(job.started);
  report.add({*job.file, time, {{*job.file, "error", time, why, ""}}});
  return !job.killed.empty() || !WIFEXITED(job.status) || WEXITSTATUS(job.status) != 2;
}

// Notes every job whose process ended (none is waited for).
void reap(std::vector<Job>& jobs, size_t& running) {
  for (Job& job : jobs)
    if (job.pid > 0 && !job.ended && waitpid(job.pid, &job.status, WNOHANG) == job.pid) job.ended = true, --running;
}

// Waits for a signal of `signals` until the earliest deadline of the running jobs (an
// hour at most); returns it, or 0.
int wait_signal(const std::vector<Job>& jobs, const sigset_t& signals) {
  auto until = std::chrono::steady_clock::now() + std::chrono::hours(1);
  for (const Job& job : jobs)
    if (job.pid > 0 && !job.ended) until = std::min(until, job.deadline);
  double seconds = std::chrono::duration<double>(until - std::chrono::steady_clock::now()).count();
  seconds = std::max(0.001, seconds);
  timespec limit{};
  limit.tv_sec = static_cast<time_t>(seconds);
  limit.tv_nsec = static_cast<long>((seconds - static_cast<double>(limit.tv_sec)) * 1e9);
  siginfo_t info;
  int sig = sigtimedwait(&signals, &info, &limit);
  return sig > 0 ? sig : 0;
}

// Kills the running jobs (failed: the run was stopped by `sig`) and waits for each.
void stop_jobs(std::vector<Job>& jobs, size_t& running, int sig) {
  std::string why = std::string("stopped: the runner got SIG") + sigabbrev_np(sig) + " (" + strsignal(sig) + ")";
  for (Job& job : jobs)
    if (job.pid > 0 && !job.ended) kill_job(job, why);
  for (Job& job : jobs)
    if (job.pid > 0 && !job.ended) waitpid(job.pid, &job.status, 0), job.ended = true, --running;
}

// Kills the jobs still running past their deadline (failed: timed out).
void kill_overdue(std::vector<Job>& jobs, double timeout) {
  const auto now = std::chrono::steady_clock::now();
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", timeout);
  for (Job& job : jobs)
    if (job.pid > 0 && !job.ended && job.killed.empty() && now >= job.deadline)
      kill_job(job, std::string("timed out: still running after ") + limit + " s (--timeout), its process was killed");
}

// The files in at most o.jobs processes at once; output printed file by file in order
// as soon as each file and those before it ended. A file still running when its time
// limit passes is killed and failed. SIGINT, SIGTERM or SIGHUP kill every running file
// (failed) and start no other: the run ends with what it has. Returns the exit status:
// -1 to carry on, 2 when the runner failed, 128 + the signal that stopped it.
int run_in_processes(const std::vector<std::string>& files, const TestOptions& o, Counts& total,
                     JunitReport& report) {
  const double timeout = o.timeout.value_or(kDefaultTimeout);
  const sigset_t signals = runner_signals();
  sigset_t mask;
  struct sigaction action{}, previous{};
  action.sa_handler = on_child;
  sigaction(SIGCHLD, &action, &previous);
  sigprocmask(SIG_BLOCK, &signals, &mask);
  std::vector<Job> jobs(files.size());
  size_t started = 0, printed = 0, running = 0, end = files.size();
  bool runner_ok = true;
  int stopped = 0;
  while (printed < end) {
    for (; running < static_cast<size_t>(o.jobs) && started < end; ++started, ++running) {
      jobs[started].file = &files[started];
      if (start_job(jobs[started], o, timeout, mask)) continue;
      std::perror("cloudlua test: cannot start a process");
      stopped = SIGTERM, runner_ok = false;
      break;
    }
    reap(jobs, running);
    for (; printed < started && jobs[printed].ended; ++printed) runner_ok = finish_job(jobs[printed], total, report) && runner_ok;
    if (printed == end) break;
    int sig = stopped ? 0 : wait_signal(jobs, signals);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) stopped = sig;
    if (stopped) stop_jobs(jobs, running, stopped), end = started;
    kill_overdue(jobs, timeout);
  }
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  sigaction(SIGCHLD, &previous, nullptr);
  if (!runner_ok) return 2;
  if (stopped)
    std::fprintf(stderr, "cloudlua test: interrupted (SIG%s), %zu of %zu files not run\n", sigabbrev_np(stopped),
                 files.size() - end, files.size());
  return stopped ? 128 + stopped : -1;
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
  int status = -1;  // the exit status when the run itself decided it
  if ((o.jobs > 1 || o.timeout) && !o.list) {
    status = run_in_processes(files, o, total, report);
  } else {
    for (const std::string& f : files)
      if (!run_file(f, o, total, report)) return 2;
  }
  if (o.list) return 0;
  if (!o.junit.empty() && !report.save(o.junit, seconds_since(start)))
    return std::fprintf(stderr, "cloudlua test: cannot write the JUnit report %s\n", o.junit.c_str()), 2;
  print_summary(total);
  if (status >= 0) return status;
  if (total.number == 0) std::fprintf(stderr, "cloudlua test: no test case ran%s\n", o.filter.empty() ? "" : " (check --filter)");
  return total.failed == 0 && total.number > 0 ? 0 : 1;
}

}  // namespace cloud
