// The runner of `cloudlua test`. C++ finds the files and gives each one a state of its
// own, with its own session: a fresh embedded emulator whose clock runs on virtual
// time only (transitions happen when a test advances it, never because the machine
// was slow), or the configured endpoints. The harness itself, in Lua (lua/testing.lua),
// runs the cases and emits their events (repl/test_events.h); this file adds each
// file's end and the run's, and passes them all to the reporters --output and --junit
// choose (repl/tap.h, repl/junit.h, repl/json_lines.h). With -j N (or --timeout) the files run in N processes at
// once, forked from this one before any thread or emulator exists (each child runs one
// file: a state, a session, an emulator of its own); each child writes its events to
// a file, and the runner passes them to the same stream in the order of the files.
// --shard I/N keeps one part of the files (the same parts on every machine), and
// --merge-junit joins the parts' reports (repl/junit.cpp). --coverage DIR counts the
// lines the files run (repl/coverage.h), in each worker under -j N, merged here.
#include "repl/test_runner.h"

#include <lua.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "core/net/cassette.h"
#include "core/net/redact.h"
#include "emulator/service.h"
#include "lua/binding.h"
#include "lua/session.h"
#include "repl/cli.h"
#include "repl/coverage.h"
#include "repl/json_lines.h"
#include "repl/junit.h"
#include "repl/tap.h"
#include "repl/test_events.h"

namespace cloud {

bool is_test_file(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  for (const std::string suffix : {"_test.lua", "_spec.lua"})
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  return false;
}

namespace {

namespace fs = std::filesystem;

// Folders are searched recursively, sorted; hidden folders and node_modules skipped.
void add_folder(const fs::path& folder, std::vector<std::string>& out) {
  std::vector<std::string> found;
  auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied);
  for (; it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind('.', 0) == 0 || name == "node_modules")) it.disable_recursion_pending();
    else if (it->is_regular_file() && is_test_file(it->path().string()))
      found.push_back(it->path().lexically_normal().string());
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

// A file to run, and the name of its recording under --record DIR and --replay DIR.
struct TestFile {
  std::string path;
  std::string recording;
};

// The path as the file system has it from the root: absolute, "." and ".." resolved
// lexically (a link is not followed: its name is the file's).
fs::path absolute_path(const std::string& path) {
  std::error_code ec;
  fs::path whole = fs::absolute(path, ec);
  return (ec ? fs::path(path) : whole).lexically_normal();
}

// The deepest folder every file lies in (for one file, its own folder).
fs::path common_folder(const std::vector<std::string>& paths) {
  fs::path root = absolute_path(paths.front()).parent_path();
  for (const std::string& p : paths) {
    fs::path folder = absolute_path(p).parent_path(), common;
    for (auto a = root.begin(), b = folder.begin(); a != root.end() && b != folder.end() && *a == *b; ++a, ++b)
      common /= *a;
    root = common;
  }
  return root;
}

// The files to run with their recordings' names: each file's path from the folder all
// of them lie in, its extension dropped (a/x_test.lua: a/x_test), the one name --record
// writes under and --replay reads from. Files of one name in two folders are apart, and
// files of one folder (a file alone above all) keep DIR/<file name>, as always.
std::vector<TestFile> with_recordings(const std::vector<std::string>& paths) {
  const fs::path root = common_folder(paths);
  std::vector<TestFile> files;
  for (const std::string& p : paths)
    files.push_back({p, absolute_path(p).lexically_relative(root).replace_extension().generic_string()});
  return files;
}

// "I/N" read into a 1-based index and a count; false unless 1 <= I <= N <= 10000.
bool parse_shard(const std::string& text, size_t& index, size_t& count) {
  unsigned long i = 0, n = 0;
  char slash = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%lu%c%lu%n", &i, &slash, &n, &used) != 3 || slash != '/' ||
      used != static_cast<int>(text.size()))
    return false;
  index = i, count = n;
  return i >= 1 && i <= n && n <= 10000;
}

// Each file's shard (0-based), every file in exactly one, the same for every shard
// of a run given the same files and times. With `times` (seconds per path, an earlier
// run's JUnit report), the longest files first, each to the shard with the least time
// so far (a file the report lacks counts as the mean of those it has); without, the
// files in turn: file k to shard k mod count.
std::vector<size_t> shards_of(const std::vector<TestFile>& files, size_t count,
                              const std::map<std::string, double>& times) {
  std::vector<size_t> shard(files.size());
  if (times.empty()) {
    for (size_t k = 0; k < files.size(); ++k) shard[k] = k % count;
    return shard;
  }
  double sum = 0;
  for (const auto& [path, seconds] : times) sum += seconds;
  const double mean = sum / static_cast<double>(times.size());
  std::vector<double> cost(files.size()), load(count, 0);
  std::vector<size_t> order(files.size());
  for (size_t k = 0; k < files.size(); ++k) {
    auto found = times.find(files[k].path);
    cost[k] = found != times.end() ? found->second : mean;
    order[k] = k;
  }
  std::stable_sort(order.begin(), order.end(), [&cost](size_t a, size_t b) { return cost[a] > cost[b]; });
  for (size_t k : order) {
    size_t least = std::min_element(load.begin(), load.end()) - load.begin();
    shard[k] = least, load[least] += cost[k];
  }
  return shard;
}

// The files of --shard I/N (all of them without it); false, with a message on
// stderr, when the shard or the timings cannot be read.
bool select_shard(const TestOptions& o, std::vector<TestFile>& files) {
  if (o.shard.empty()) return true;
  size_t index = 0, count = 0;
  if (!parse_shard(o.shard, index, count))
    return std::fprintf(stderr, "cloudlua test: --shard %s: give I/N, the I-th of N parts (1 <= I <= N)\n",
                        printable(o.shard).c_str()),
           false;
  std::map<std::string, double> times;
  if (!o.timings.empty()) {
    std::vector<std::pair<std::string, double>> read;
    std::string why;
    if (!junit_file_times(o.timings, read, why))
      return std::fprintf(stderr, "cloudlua test: --timings %s\n", printable(why).c_str()), false;
    for (const auto& [path, seconds] : read) times[path] += seconds;
  }
  const std::vector<size_t> shard = shards_of(files, count, times);
  std::vector<TestFile> mine;
  for (size_t k = 0; k < files.size(); ++k)
    if (shard[k] == index - 1) mine.push_back(files[k]);
  files = mine;
  return true;
}

// `text` in lower case (ASCII): what a file system that ignores case compares.
std::string folded(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Under --record DIR, why two files' recordings would meet ("" when none would): the
// same file given twice, two names one folder (x_test.lua, x_test.txt; or names that
// differ only in case, one folder where case is ignored), or a recording whose folder
// is a file of another's (x_test/storage.jsonl.lua beside x_test.lua). Checked before
// any file runs, so that no recording replaces another, which only the account could
// make again.
std::string recording_clash(const std::vector<TestFile>& files, const std::string& dir) {
  std::map<std::string, const TestFile*> seen;  // by the folded name
  for (const TestFile& f : files) {
    auto [it, added] = seen.emplace(folded(f.recording), &f);
    if (added) continue;
    const TestFile& other = *it->second;
    if (absolute_path(other.path) == absolute_path(f.path)) return f.path + " is given twice";
    std::string where = (fs::path(dir) / other.recording).string();
    if (other.recording != f.recording)
      where += " (and " + (fs::path(dir) / f.recording).string() + ", one folder where case is ignored)";
    return other.path + " and " + f.path + " would both be recorded into " + where;
  }
  const std::vector<std::string> names = Cassette::file_names();
  for (const TestFile& f : files) {
    fs::path name(f.recording);
    auto owner = seen.find(folded(name.parent_path().generic_string()));
    if (owner != seen.end() && std::count(names.begin(), names.end(), name.filename().string()) > 0)
      return f.path + " would be recorded into " + (fs::path(dir) / f.recording).string() + ", a file of " +
             owner->second->path + "'s recording";
  }
  return "";
}

// The text field `name` of the table at `table`; "" when it is absent, false when it is
// neither absent nor text.
bool text_field(lua_State* L, int table, const char* name, std::string& out) {
  int type = lua_getfield(L, table, name);
  size_t len = 0;
  const char* s = type == LUA_TSTRING ? lua_tolstring(L, -1, &len) : nullptr;
  out = s ? bounded_field(redact(std::string_view(s, len))) : std::string();
  lua_pop(L, 1);
  return type == LUA_TSTRING || type == LUA_TNIL;
}

// Where the events of the file being run go.
using EventSink = std::function<void(const TestEvent&)>;

// emit(event): the harness's event (lua/testing.lua), its fields checked, redacted
// here (this process knows the session's secrets) and cut to size, passed to the
// sink (the upvalue).
int emit_event(lua_State* L) {
  const auto& sink = *static_cast<const EventSink*>(lua_touserdata(L, lua_upvalueindex(1)));
  luaL_checktype(L, 1, LUA_TTABLE);
  TestEvent e;
  const std::pair<const char*, std::string*> fields[] = {
      {"event", &e.event},     {"file", &e.file},           {"name", &e.name}, {"outcome", &e.outcome},
      {"message", &e.message}, {"traceback", &e.traceback}, {"text", &e.text}, {"describe", &e.describe}};
  for (const auto& [key, field] : fields)
    if (!text_field(L, 1, key, *field))
      raise_text(L, std::string("bad argument #1 to 'emit' (field '") + key + "' is not a string)");
  lua_getfield(L, 1, "time");
  e.time = lua_tonumber(L, -1);
  lua_pop(L, 1);
  std::string why;
  TestEvent checked;
  if (!decode_event(encode_event(e), checked, why)) raise_text(L, "bad argument #1 to 'emit' (" + why + ")");
  sink(checked);
  return 0;
}

// make_directory(path): the folder and those above it, as `mkdir -p`; raises on failure.
int make_directory(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) raise_text(L, std::string("cannot make the folder ") + path + ": " + ec.message());
  return 0;
}

// opts.write_line(text): a line of --list on the run's standard output (the upvalue:
// a file's own descriptor 1 is held apart while it runs), redacted and printable.
int write_line(lua_State* L) {
  auto* out = static_cast<std::FILE*>(lua_touserdata(L, lua_upvalueindex(1)));
  std::string line = printable(redact(luaL_checkstring(L, 1))) + "\n";
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
  return 0;
}

// opts.clock(): seconds on the steady clock, what a case's time is measured on (the
// loop's clock skips virtual time, which a report of how long cases took must not add).
int real_clock(lua_State* L) {
  lua_pushnumber(L, std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count());
  return 1;
}

// Pushes a list of the strings.
void push_strings(lua_State* L, const std::vector<std::string>& items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) lua_pushstring(L, items[i].c_str()), lua_rawseti(L, -2, i + 1);
}

// Calls require("cloud.testing").run_file(path, opts), its events passed to `sink`,
// the lines of --list written to `out`.
int call_harness(lua_State* L, const std::string& path, const TestOptions& o, const EventSink& sink, std::FILE* out) {
  lua_getglobal(L, "require");
  lua_pushstring(L, "cloud.testing");
  if (protected_call(L, 1, 1) != LUA_OK) return report_error(L, LUA_ERRRUN), LUA_ERRRUN;
  lua_getfield(L, -1, "run_file");
  lua_pushstring(L, path.c_str());
  lua_createtable(L, 0, 6);
  if (!o.filter.empty()) lua_pushstring(L, o.filter.c_str()), lua_setfield(L, -2, "filter");
  lua_pushboolean(L, o.list);
  lua_setfield(L, -2, "list");
  push_strings(L, o.tags), lua_setfield(L, -2, "tags");
  push_strings(L, o.exclude_tags), lua_setfield(L, -2, "exclude_tags");
  lua_pushboolean(L, o.update_snapshots);
  lua_setfield(L, -2, "update_snapshots");
  lua_pushcfunction(L, protect<make_directory>);
  lua_setfield(L, -2, "make_directory");
  lua_pushcfunction(L, real_clock);
  lua_setfield(L, -2, "clock");
  if (out) lua_pushlightuserdata(L, out), lua_pushcclosure(L, write_line, 1), lua_setfield(L, -2, "write_line");
  lua_pushlightuserdata(L, const_cast<EventSink*>(&sink));
  lua_pushcclosure(L, protect<emit_event>, 1);
  lua_setfield(L, -2, "emit");
  int status = protected_call(L, 2, 0);
  if (status != LUA_OK) return report_error(L, status), status;
  return LUA_OK;
}

// Virtual time while the file runs: the emulator's clock moves only when told, and
// the loop's clock skips every wait (back-off, cloud.sleep, waiters) when nothing else
// runs, the emulator's clock following it (lua/session.cpp).
struct VirtualTime {
  std::shared_ptr<void> hold;
  void use(Emulator& emulator) {
    emulator.platform().set_real_time(false);
    hold = Loop::current().hold_virtual_time();
  }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct FileRun {
  const std::string& path;
  const TestOptions& options;
  std::shared_ptr<Session> session;
  const EventSink& sink;
  std::FILE* out;  // the run's standard output, for --list
};

// The state made ready and the harness run, inside one protected call as lua.c's
// pmain, so that an error while opening the module is reported, not a panic.
int file_main(lua_State* L) {
  auto& run = *static_cast<FileRun*>(lua_touserdata(L, 1));
  luaL_openlibs(L);
  open_cloud(L, run.session);
  if (run.options.seed) seed_session(L, *run.session, *run.options.seed);
  lua_pushboolean(L, call_harness(L, run.path, run.options, run.sink, run.out) == LUA_OK);
  return 1;
}

// Under --record DIR or --replay DIR each file has a cassette of its own,
// DIR/<its recording>, so that a file replays in any order, with -j N.
ConfigOverrides file_config(const TestFile& file, ConfigOverrides config) {
  if (!config.record.empty()) config.record = (fs::path(config.record) / file.recording).string();
  if (!config.replay.empty()) config.replay = (fs::path(config.replay) / file.recording).string();
  return config;
}

// The warning (an output event: a TAP comment) for the recorded calls a replayed file
// left unused.
void warn_unused(const Session& session, const EventSink& sink) {
  const auto& cassette = session.client->cassette();
  if (!cassette || cassette->mode() != Cassette::Mode::replay || cassette->unused().empty()) return;
  std::vector<std::string> unused = cassette->unused();
  std::string first = unused.front() + (unused.size() > 1 ? ", ..." : "");
  TestEvent e;
  e.event = "output";
  e.text = bounded_field(redact(std::to_string(unused.size()) + " recorded call" + (unused.size() == 1 ? "" : "s") +
                                " not replayed (" + first + ")"));
  sink(e);
}

// A file's standard output while it runs. Descriptor 1 points at an unnamed temporary
// file (std::tmpfile: no name in any folder) while this lives, so that nothing the
// file writes there (io.write, io.stdout, io.output(), a command os.execute runs, C
// code) reaches the TAP stream; what arrived is passed on as output events, as
// print's: before each event of the harness (the order stays) and when the file
// ends, redacted in the process that knows the file's secrets, "# " lines in TAP.
class StdoutCapture {
 public:
  StdoutCapture();
  ~StdoutCapture();
  StdoutCapture(const StdoutCapture&) = delete;
  StdoutCapture& operator=(const StdoutCapture&) = delete;
  // Whether descriptor 1 is held; false (errno set) when it could not be.
  bool held() const { return saved_ >= 0; }
  // What arrived since the last call, as output events to `sink`.
  void drain(const EventSink& sink);

 private:
  std::FILE* file_ = nullptr;
  int saved_ = -1;  // descriptor 1 as it was, set back at the end
  off_t read_ = 0;  // how much of file_ was passed on
};

StdoutCapture::StdoutCapture() {
  std::fflush(stdout);
  file_ = std::tmpfile();
  if (!file_) return;
  int held = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);                      // no command the file runs inherits it
  fcntl(fileno(file_), F_SETFL, fcntl(fileno(file_), F_GETFL) | O_APPEND);  // whoever writes, at its end
  if (held >= 0 && dup2(fileno(file_), STDOUT_FILENO) >= 0) saved_ = held;
  else if (held >= 0) close(held);
}

StdoutCapture::~StdoutCapture() {
  std::fflush(stdout);
  if (saved_ >= 0) dup2(saved_, STDOUT_FILENO), close(saved_);
  if (file_) std::fclose(file_);
}

// One output event of `text` (one newline at its end dropped: a print's has none).
void emit_output(std::string text, const EventSink& sink) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  TestEvent e;
  e.event = "output";
  e.text = bounded_field(redact(text));
  sink(e);
}

// Pieces of kMaxEventField bytes at most, each cut after its last newline when it has one.
void StdoutCapture::drain(const EventSink& sink) {
  std::fflush(stdout);
  std::string pending;
  char buffer[65536];
  for (ssize_t n; (n = pread(fileno(file_), buffer, sizeof buffer, read_)) > 0; read_ += n) {
    pending.append(buffer, static_cast<size_t>(n));
    while (pending.size() >= kMaxEventField) {
      size_t cut = pending.rfind('\n', kMaxEventField - 1);
      cut = cut == std::string::npos ? kMaxEventField : cut + 1;
      emit_output(pending.substr(0, cut), sink);
      pending.erase(0, cut);
    }
  }
  if (!pending.empty()) emit_output(pending, sink);
}

// ---------------------------------------------------------------- a world per file on a serve

// A client of `session`'s configuration that records nothing (the world's making and
// removal are the runner's requests, not the file's), signing with `credentials`
// when given.
Outcome<std::shared_ptr<Client>> runner_client(const Session& session, const Credentials* credentials = nullptr) {
  ClientConfig config = session.config.client;
  config.record.clear(), config.replay.clear();
  if (credentials) config.credentials = *credentials;
  return make_client(config);
}

// The world a file runs in on a shared serve (docs/emulator.md, "Accounts and worlds"):
// made through serve's control plane before the file's session opens, which then
// signs with its key pair, so that everything the file does (cloud.emulator.reset()
// too) stays in it. Removed when the file ends, unless --keep-worlds.
struct FileWorld {
  std::shared_ptr<Session> probe;  // the session of the run's configuration, which made it
  std::string name;
  Credentials credentials;
  bool keep = false;
  std::string path;

  ~FileWorld() {
    if (name.empty()) return;
    if (keep) {  // its key pair is how it is reached again: a throwaway world's, shown
      std::fprintf(stderr, "cloudlua test: %s: its world %s kept: access key id %s, secret access key %s\n",
                   printable(path).c_str(), name.c_str(), credentials.access_key_id.c_str(),
                   credentials.secret_access_key.c_str());
      return;
    }
    auto client = runner_client(*probe, &credentials);
    Outcome<json> gone = client.ok() ? served_control(**client, "delete_world", json::object()) : client.error();
    if (!gone.ok())
      std::fprintf(stderr, "cloudlua test: %s: its world %s was not removed: %s\n", printable(path).c_str(),
                   name.c_str(), redact(gone.error().describe(), {credentials.secret_access_key}).c_str());
  }
};

// A world for the file when the run reaches a serve by endpoint_url (none replaying,
// none for --list, none when the URL is another S3 server's: nullopt then), and the
// file's configuration signing with its key pair.
Outcome<std::unique_ptr<FileWorld>> enter_world(const std::string& path, const TestOptions& o,
                                                ConfigOverrides& config) {
  if (o.list || config.endpoint_url.empty() || !config.replay.empty()) return std::unique_ptr<FileWorld>();
  auto probe = open_session(config);
  if (!probe.ok()) return probe.error();
  if (!probe.value()->served) return std::unique_ptr<FileWorld>();
  auto client = runner_client(*probe.value());
  if (!client.ok()) return client.error();
  auto made = served_control(**client, "create_world", {{"keep", o.keep_worlds}});
  if (!made.ok() && made.error().code == "NoServe") return std::unique_ptr<FileWorld>();
  if (!made.ok()) return made.error();
  auto world = std::make_unique<FileWorld>();
  try {
    world->name = made->at("world").get<std::string>();
    world->credentials = {made->at("access_key_id").get<std::string>(),
                          made->at("secret_access_key").get<std::string>(), ""};
  } catch (const json::exception&) {
    return make_error(ErrorKind::api, "BadAnswer", "serve's create_world answered without a world and its key pair");
  }
  world->probe = probe.value();
  world->keep = o.keep_worlds;
  world->path = path;
  config.access_key_id = world->credentials.access_key_id;
  config.secret_access_key = world->credentials.secret_access_key;
  return world;
}

// One file in a state and session of its own, its events passed to `sink`, what it
// writes to its standard output among them (StdoutCapture), the lines of --list
// written to `out`, the lines it ran counted into `lines` under --coverage; false when
// the runner itself failed.
bool run_file(const TestFile& file, const TestOptions& o, const EventSink& sink, std::FILE* out, LineCounts* lines) {
  const std::string& path = file.path;
  ConfigOverrides config = file_config(file, o.config);
  auto world = enter_world(path, o, config);  // outlives the session below: removed after it
  if (!world.ok()) {
    std::fprintf(stderr, "cloudlua test: %s: no world of its own on the serve: %s\n", printable(path).c_str(),
                 world.error().describe().c_str());
    return false;
  }
  auto session = open_session(config);
  if (!session.ok()) {
    std::fprintf(stderr, "cloudlua test: %s\n", session.error().describe().c_str());
    return false;
  }
  session.value()->seed = o.seed;
  VirtualTime virtual_time;         // outlives the state and the session below
  if (session.value()->emulated) {  // test files drive the emulator's virtual time: started at once
    auto started = complete_config(*session.value());
    if (!started.ok()) {
      std::fprintf(stderr, "cloudlua test: %s\n", started.error().describe().c_str());
      return false;
    }
    virtual_time.use(*session.value()->emulator);
  }
  StdoutCapture output;  // outlives the state: its finalizers may write too
  if (!output.held())
    return std::fprintf(stderr, "cloudlua test: cannot hold %s's standard output apart: %s\n", printable(path).c_str(),
                        std::strerror(errno)),
           false;
  const EventSink in_order = [&output, &sink](const TestEvent& e) { output.drain(sink), sink(e); };
  std::unique_ptr<lua_State, void (*)(lua_State*)> L(luaL_newstate(), lua_close);
  if (lines && L) record_lines(L.get(), *lines);  // before any thread: each made later keeps the hook
  FileRun run{path, o, session.value(), in_order, out};
  lua_pushcfunction(L.get(), protect<file_main>);
  lua_pushlightuserdata(L.get(), &run);
  int status = protected_call(L.get(), 1, 1);
  if (status != LUA_OK) report_error(L.get(), status);
  bool ok = status == LUA_OK && lua_toboolean(L.get(), -1);
  if (lines) stop_recording(L.get());
  L.reset();
  warn_unused(*session.value(), in_order);
  output.drain(sink);
  return ok;
}

// ---------------------------------------------------------------- -j N: files in processes

// A file run in a process of its own (its pid is also its process group's): its events
// (a line each, encode_event; what it writes to its standard output among them) and
// its stderr go to unnamed temporary files (std::tmpfile: no name in any folder, so
// nothing is left behind whatever ends the runner), read back once it ended; when it
// must end; how it ended.
struct Job {
  const TestFile* file = nullptr;
  pid_t pid = -1;
  FILE* events = nullptr;
  FILE* err = nullptr;
  FILE* coverage = nullptr;  // under --coverage, the lines it ran (LineCounts::encode)
  std::chrono::steady_clock::time_point started, deadline, finished;
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

// In the child: the file run with its events and stderr in the job's files, each
// event written (and flushed) as it happens, so that a process that dies leaves the
// events before. Its standard output is never the run's: /dev/null, and the file's
// own output while it runs (run_file). Under --coverage the lines it ran go to the
// job's file as it ends. Exit status 0, or 2 when the runner itself failed. Never
// returns.
[[noreturn]] void run_child(const Job& job, const TestOptions& o, const sigset_t& mask) {
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) std::signal(s, SIG_DFL);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  int nothing = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (nothing < 0 || dup2(nothing, STDOUT_FILENO) < 0) _exit(2);
  close(nothing);
  dup2(fileno(job.err), STDERR_FILENO);
  FILE* events = job.events;
  fcntl(fileno(events), F_SETFL, fcntl(fileno(events), F_GETFL) | O_APPEND);  // whole lines, whoever else writes
  LineCounts lines;
  bool ok = run_file(
      *job.file, o,
      [events](const TestEvent& e) {
        std::string line = encode_event(e) + "\n";
        std::fwrite(line.data(), 1, line.size(), events);
        std::fflush(events);
      },
      nullptr, job.coverage ? &lines : nullptr);
  if (job.coverage) {
    const std::string counts = lines.encode();
    if (std::fwrite(counts.data(), 1, counts.size(), job.coverage) != counts.size() || std::fflush(job.coverage) != 0)
      ok = false;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(ok ? 0 : 2);
}

// Starts the job's process, in a process group of its own (the runner kills the group:
// the file's own children go too) and killed by the kernel when the runner dies
// (PR_SET_PDEATHSIG, then getppid: the runner may have died before it was set). It
// closes the files of the other jobs, so that one file cannot write another's events,
// and the run's standard output (`out`), which only the runner writes.
bool start_job(Job& job, const std::vector<Job>& jobs, const TestOptions& o, double timeout, const sigset_t& mask,
               std::FILE* out) {
  job.events = std::tmpfile();
  job.err = std::tmpfile();
  if (!o.coverage.empty()) job.coverage = std::tmpfile();
  if (!job.events || !job.err || (!o.coverage.empty() && !job.coverage)) return false;
  std::fflush(out);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t runner = getpid();
  job.pid = fork();
  if (job.pid < 0) return false;
  if (job.pid == 0) {
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != runner) _exit(2);
    for (const Job& other : jobs)
      for (FILE* f : {other.events, other.err, other.coverage})
        if (&other != &job && f) close(fileno(f));
    close(fileno(out));
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

// Copies `from` (rewound) to `to`.
void copy_output(FILE* from, FILE* to) {
  std::rewind(from);
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, from)) > 0;) std::fwrite(buffer, 1, n, to);
  std::fflush(to);
}

// Passes the events a worker wrote (read from the start of `from`) to `stream`, each
// line read within kMaxEventLine and checked (decode_event), as any text from outside
// the runner. "" when all were, else what was wrong (the events before it are passed).
std::string replay_events(FILE* from, const std::string& file, TestEvents& stream) {
  std::rewind(from);
  std::string line, why;
  TestEvent e;
  long count = 1;
  for (int c; (c = std::fgetc(from)) != EOF;) {
    if (c != '\n') {
      if (line.size() > kMaxEventLine)
        return "its event " + std::to_string(count) + " is longer than " + std::to_string(kMaxEventLine) + " bytes";
      line += static_cast<char>(c);
      continue;
    }
    if (!decode_event(line, e, why)) return "its event " + std::to_string(count) + " is malformed: " + why;
    if (e.event == "file" && e.file != file) return "its event " + std::to_string(count) + " names another file";
    stream.on(e);
    line.clear(), ++count;
  }
  return line.empty() ? "" : "its last event is cut short";
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

// Adds the lines a job's process ran to `lines`; a process that ended before it wrote
// them (killed, timed out) adds none, and counts that do not read are said on stderr.
void merge_counts(const Job& job, LineCounts& lines) {
  std::string text, why;
  std::rewind(job.coverage);
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, job.coverage)) > 0;) text.append(buffer, n);
  if (!lines.decode(text, why))
    std::fprintf(stderr, "cloudlua test: --coverage: the lines %s ran do not read (%s), left out\n",
                 printable(job.file->path).c_str(), printable(why).c_str());
}

// A job that ended: its output printed in the order of the files, its events passed
// to the stream (the TAP lines numbered on, the JUnit suite). A process that did not
// end as it should (a signal, an exit, a time limit, events that do not read) is one
// more failed case, named after the file, after the cases it finished; the output of a
// case it was running goes with it. The lines it ran are added to `lines` (under
// --coverage). False when the runner itself failed in it (status 2).
bool finish_job(Job& job, TestEvents& stream, LineCounts* lines) {
  copy_output(job.err, stderr);
  TestEvent e;
  e.event = "file", e.file = job.file->path;
  stream.on(e);
  std::string why = replay_events(job.events, job.file->path, stream);
  std::string ended = ending(job);
  if (!ended.empty()) why = why.empty() ? ended : why + "; " + ended;
  if (!why.empty()) {
    e = TestEvent();
    e.event = "case", e.name = job.file->path, e.outcome = "error", e.message = bounded_field(why);
    stream.on(e);
  }
  stream.end_file(std::chrono::duration<double>(job.finished - job.started).count());
  if (lines && job.coverage) merge_counts(job, *lines);
  for (FILE** f : {&job.events, &job.err, &job.coverage})
    if (*f) std::fclose(*f), *f = nullptr;
  return !job.killed.empty() || !WIFEXITED(job.status) || WEXITSTATUS(job.status) != 2;
}

// Notes every job whose process ended (none is waited for).
void reap(std::vector<Job>& jobs, size_t& running) {
  for (Job& job : jobs)
    if (job.pid > 0 && !job.ended && waitpid(job.pid, &job.status, WNOHANG) == job.pid)
      job.ended = true, job.finished = std::chrono::steady_clock::now(), --running;
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
    if (job.pid > 0 && !job.ended)
      waitpid(job.pid, &job.status, 0), job.ended = true, job.finished = std::chrono::steady_clock::now(), --running;
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
int run_in_processes(const std::vector<TestFile>& files, const TestOptions& o, TestEvents& stream, std::FILE* out,
                     LineCounts* lines) {
  const double timeout = o.timeout.value_or(kDefaultTimeout);
  const size_t processes = static_cast<size_t>(std::max(o.jobs, 1));
  const sigset_t signals = runner_signals();
  sigset_t mask;
  struct sigaction action {
  }, previous{};
  action.sa_handler = on_child;
  sigaction(SIGCHLD, &action, &previous);
  sigprocmask(SIG_BLOCK, &signals, &mask);
  std::vector<Job> jobs(files.size());
  size_t started = 0, printed = 0, running = 0, end = files.size();
  bool runner_ok = true;
  int stopped = 0;
  while (printed < end) {
    for (; running < processes && started < end; ++started, ++running) {
      jobs[started].file = &files[started];
      if (start_job(jobs[started], jobs, o, timeout, mask, out)) continue;
      std::perror("cloudlua test: cannot start a process");
      stopped = SIGTERM, runner_ok = false;
      break;
    }
    reap(jobs, running);
    for (; printed < started && jobs[printed].ended; ++printed)
      runner_ok = finish_job(jobs[printed], stream, lines) && runner_ok;
    if (printed == end) break;
    if (running < processes && started < end) continue;  // a process ended: start the next
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

// The reporter of the run's standard output that --output names: tap, junit or json.
std::unique_ptr<TestHandler> shown_reporter(const std::string& output, std::FILE* out) {
  if (output == "json") return std::make_unique<JsonLinesReporter>(out);
  if (output == "junit") return std::make_unique<JunitReporter>(out);
  return std::make_unique<TapReporter>(out);
}

// --merge-junit OUT REPORT...: the reports merged into OUT.
int merge_reports(const TestOptions& o) {
  if (o.paths.empty())
    return std::fprintf(stderr, "cloudlua test: --merge-junit %s: give the reports to merge\n", o.merge_junit.c_str()),
           2;
  std::string why = merge_junit(o.paths, o.merge_junit);
  if (!why.empty()) return std::fprintf(stderr, "cloudlua test: --merge-junit: %s\n", printable(why).c_str()), 2;
  return 0;
}

}  // namespace

int run_tests(const TestOptions& o) {
  if (!o.merge_junit.empty()) return merge_reports(o);
  std::vector<std::string> paths;
  if (o.paths.empty())
    return std::fprintf(stderr, "cloudlua test: give test files or folders (usage: cloudlua test PATH...)\n"), 2;
  if (!collect_files(o.paths, paths)) return 2;
  if (paths.empty()) return std::fprintf(stderr, "cloudlua test: no *_test.lua or *_spec.lua file found\n"), 2;
  std::vector<TestFile> files = with_recordings(paths);  // named from every file, whatever the shard
  if (!select_shard(o, files)) return 2;
  if (files.empty())  // reported as a run of no file, in the format asked for
    std::fprintf(stderr, "cloudlua test: shard %s has no file (%zu files in all)\n", printable(o.shard).c_str(),
                 paths.size());
  const bool coverage = !o.coverage.empty() && !o.list;
  if (std::string why = coverage ? prepare_coverage_folder(o.coverage) : ""; !why.empty())
    return std::fprintf(stderr, "cloudlua test: --coverage: %s\n", printable(why).c_str()), 2;
  if (std::string clash = o.config.record.empty() ? "" : recording_clash(files, o.config.record); !clash.empty())
    return std::fprintf(stderr, "cloudlua test: --record: %s; run them apart, or rename one\n",
                        printable(clash).c_str()),
           2;
  // The report's stream: standard output as the run found it, written by the runner only
  // (a file's own descriptor 1 is held apart while it runs: StdoutCapture).
  int tap_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);  // no command a file runs inherits it
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(tap_fd >= 0 ? fdopen(tap_fd, "w") : nullptr, std::fclose);
  if (!out)
    return std::fprintf(stderr, "cloudlua test: cannot write to standard output: %s\n", std::strerror(errno)), 2;
  TestEvents events;
  std::unique_ptr<TestHandler> junit_file, shown = shown_reporter(o.output, out.get());
  if (!o.junit.empty()) junit_file = std::make_unique<JunitReporter>(o.junit), events.add(*junit_file);
  events.add(*shown);
  const auto start = std::chrono::steady_clock::now();
  int status = -1;  // the exit status when the run itself decided it
  LineCounts lines;
  LineCounts* counted = coverage ? &lines : nullptr;
  if ((o.jobs > 0 || o.timeout) && !o.list) {  // -j N (1 too) or --timeout: each file in a process of its own
    status = run_in_processes(files, o, events, out.get(), counted);
  } else {
    for (const TestFile& f : files) {
      const auto file_start = std::chrono::steady_clock::now();
      if (!run_file(
              f, o, [&events](const TestEvent& e) { events.on(e); }, out.get(), counted))
        return 2;
      events.end_file(seconds_since(file_start));
    }
  }
  if (o.list) return 0;
  if (!events.end_run(seconds_since(start))) return 2;
  if (coverage) {
    std::string summary, why = write_coverage(lines, o.coverage, summary);
    if (!why.empty()) return std::fprintf(stderr, "cloudlua test: --coverage: %s\n", printable(why).c_str()), 2;
    std::fprintf(stderr, "%s\n", summary.c_str());
  }
  if (status >= 0) return status;
  const TestTally& tally = events.tally();
  if (files.empty()) return 0;  // a shard with no file (more shards than files): nothing to fail
  if (tally.cases() == 0)
    std::fprintf(stderr, "cloudlua test: no test case ran%s\n", o.filter.empty() ? "" : " (check --filter)");
  return tally.failed == 0 && tally.cases() > 0 ? 0 : 1;
}

}  // namespace cloud
