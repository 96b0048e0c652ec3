// The REPL as a person meets it: the built cloudlua run on a pseudo-terminal (forkpty),
// keys typed into it, its screen read back. Multi-line input, Ctrl-C at the prompt,
// during a call made slow by an emulator delay fault, during cloud.map and during cloud.sleep, Ctrl-D,
// history kept across two sessions, colour and NO_COLOR. Waits are for text to
// appear; their time limit is a safety net for a broken build, never an assertion.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr int kSafetyNetSeconds = 30;
// Prompts at the start of a line: libedit may redraw the line being typed, prompt
// included, but only a new prompt follows a newline.
const char* const kPrompt = "\ncloudlua[emulator]> ";
const char* const kMore = "\n                 >> ";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A scratch directory for HOME and the history file, removed afterwards.
class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/cloudlua-repl-XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    path_ = name;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// cloudlua on a pseudo-terminal. Output is kept as received (`raw`) and as read by a
// person (`screen`: escape sequences and carriage returns taken out).
class Terminal {
 public:
  explicit Terminal(const std::map<std::string, std::string>& env_overrides, std::vector<std::string> args = {}) {
    std::vector<std::string> env_strings = environment(env_overrides);
    args.insert(args.begin(), CLOUDLUA_BIN);
    struct winsize size {};
    size.ws_col = 80;
    size.ws_row = 24;
    pid_ = forkpty(&fd_, nullptr, nullptr, &size);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) exec(args, env_strings);
  }

  ~Terminal() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }

  void type(const std::string& keys) {
    REQUIRE(write(fd_, keys.data(), keys.size()) == static_cast<ssize_t>(keys.size()));
  }

  // Reads until `text` appears on the screen after what earlier calls consumed, and
  // consumes up to its end. False if the program ended or the safety net ran out.
  bool expect(const std::string& text) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kSafetyNetSeconds);
    for (;;) {
      size_t at = screen().find(text, consumed_);
      if (at != std::string::npos) {
        consumed_ = at + text.size();
        return true;
      }
      if (std::chrono::steady_clock::now() > deadline || !read_some()) {
        UNSCOPED_INFO("waiting for \"" << text << "\"; screen so far:\n" << screen());
        return false;
      }
    }
  }

  // Reads until the program ends; its exit status, or -1 if it did not end normally
  // (then it is killed).
  int wait_exit() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kSafetyNetSeconds);
    int status = 0;
    for (;;) {
      bool more = read_some();
      pid_t done = waitpid(pid_, &status, WNOHANG);
      if (done == pid_) break;
      if (!more && done != 0) return -1;
      if (std::chrono::steady_clock::now() > deadline) {
        UNSCOPED_INFO("cloudlua did not end; screen:\n" << screen());
        return -1;  // the destructor kills it
      }
    }
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Waits until the line editor has the terminal (canonical mode off). libedit shows
  // the prompt a moment before it takes the terminal; a Ctrl-D typed in that moment
  // would go to the terminal driver and be lost.
  bool expect_prompt(const std::string& prompt = kPrompt) {
    if (!expect(prompt)) return false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kSafetyNetSeconds);
    struct termios mode {};
    while (tcgetattr(fd_, &mode) == 0 && (mode.c_lflag & ICANON)) {
      if (std::chrono::steady_clock::now() > deadline || !read_some()) return false;
    }
    return true;
  }

  // Waits until cloudlua blocks in poll(2), as it does while a transfer waits for its
  // answer; false if that was not seen (kernels name their wait channels differently).
  bool wait_until_polling() {
    std::string wchan_file = "/proc/" + std::to_string(pid_) + "/wchan";
    for (int i = 0; i < 50; ++i) {
      if (read_file(wchan_file).find("poll") != std::string::npos) return true;
      read_some();
    }
    return false;
  }

  // Waits until cloudlua sleeps in nanosleep(2) (cloud.sleep); false if that was not seen.
  bool wait_until_sleeping() {
    std::string wchan_file = "/proc/" + std::to_string(pid_) + "/wchan";
    for (int i = 0; i < 50; ++i) {
      if (read_file(wchan_file).find("nanosleep") != std::string::npos) return true;
      read_some();
    }
    return false;
  }

  const std::string& raw() const { return raw_; }

  std::string screen() const {
    static const std::regex escapes("\x1b\\[[0-9;?]*[A-Za-z]|\r");
    return std::regex_replace(raw_, escapes, "");
  }

 private:
  static std::vector<std::string> environment(const std::map<std::string, std::string>& overrides) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string entry = *e;
      size_t eq = entry.find('=');
      if (eq != std::string::npos && entry.rfind("CLOUDLUA_", 0) != 0) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    env.erase("NO_COLOR");
    env["TERM"] = "dumb";
    env["PAGER"] = "cat";  // long text on the terminal goes through the pager: none that waits for keys
    for (const auto& [k, v] : overrides) env[k] = v;
    std::vector<std::string> out;
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
  }

  [[noreturn]] static void exec(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::vector<char*> argv, envp;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }

  // Waits for output (a tenth of a second at most) and keeps it; false at end of output.
  bool read_some() {
    struct pollfd p {
      fd_, POLLIN, 0
    };
    int ready = poll(&p, 1, 100);
    if (ready <= 0) return ready == 0;
    char buf[4096];
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) return false;  // EIO once the program has ended
    raw_.append(buf, static_cast<size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  bool exited_ = false;
  std::string raw_;
  size_t consumed_ = 0;
};

std::map<std::string, std::string> session_env(const TempDir& home) {
  return {{"HOME", home.path()}, {"CLOUDLUA_HISTORY", home.path() + "/history"}};
}

// Whether every Ctrl-C that stopped a chunk was said as lua.c says it, in one plain
// line ("cloudlua: interrupted", then the prompt): no error kind, code or traceback.
bool said_interrupted_plainly(const Terminal& t) {
  std::string screen = t.screen();
  UNSCOPED_INFO("screen:\n" << screen);
  return screen.find("cloudlua: interrupted" + std::string(kPrompt)) != std::string::npos &&
         screen.find("Interrupted") == std::string::npos && screen.find("stack traceback") == std::string::npos &&
         screen.find("interrupted!") == std::string::npos;
}

}  // namespace

// Each step waits for the prompt before typing on: Ctrl-C and Ctrl-D typed while a
// chunk runs would reach the terminal driver, not the line editor.

TEST_CASE("REPL on a terminal: banner, a prompt naming the session, values, multi-line chunks") {
  TempDir home;
  Terminal t(session_env(home));
  REQUIRE(t.expect("session: emulator\nhelp() lists the operations"));
  REQUIRE(t.expect_prompt());
  t.type("1 + 1\r");
  CHECK(t.expect("1 + 1\n2"));
  REQUIRE(t.expect_prompt());
  t.type("function twice(x)\r");
  REQUIRE(t.expect_prompt(kMore));
  t.type("return x * 2\r");
  REQUIRE(t.expect_prompt(kMore));
  t.type("end\r");
  REQUIRE(t.expect_prompt());
  t.type("twice(21)\r");
  CHECK(t.expect("twice(21)\n42"));
  REQUIRE(t.expect_prompt());
  // a call spread over lines still shows its result
  t.type("cloud.cluster.update_snapshot{\r");
  REQUIRE(t.expect_prompt(kMore));
  t.type("SnapshotName = \"snap-1\" }.snapshot.name\r");
  CHECK(t.expect("\nsnap-1"));
  REQUIRE(t.expect_prompt());
  t.type("\x04");  // Ctrl-D leaves
  CHECK(t.wait_exit() == 0);
}

TEST_CASE("REPL on a terminal: Ctrl-C at the prompt cancels the line, in a continuation too") {
  TempDir home;
  Terminal t(session_env(home));
  REQUIRE(t.expect_prompt());
  t.type("error('this line is never run')\x03");
  REQUIRE(t.expect_prompt());
  t.type("function unfinished(\r");
  REQUIRE(t.expect_prompt(kMore));
  t.type("\x03");
  REQUIRE(t.expect_prompt());
  t.type("2 + 2\r");
  CHECK(t.expect("2 + 2\n4"));
  REQUIRE(t.expect_prompt());
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
  CHECK(t.screen().find("cloudlua: ") == std::string::npos);  // no error: the cancelled lines never ran
}

TEST_CASE("REPL on a terminal: Ctrl-C during a slow call returns to the prompt, and the session goes on") {
  TempDir home;
  Terminal t(session_env(home));
  REQUIRE(t.expect_prompt());
  t.type("cloud.emulator.fault{ operation = 'UpdateSnapshot', delay = 5 }\r");
  REQUIRE(t.expect_prompt());
  t.type("print('calling'); r = cloud.cluster.update_snapshot{ SnapshotName = 'snap-1' }\r");
  REQUIRE(t.expect("\ncalling\n"));
  t.wait_until_polling();  // the request is out, its answer 5 seconds away
  t.type("\x03");
  // one plain line, as for a script: no error kind, code or traceback
  CHECK(t.expect("cloudlua: interrupted"));
  REQUIRE(t.expect_prompt());
  t.type("r == nil\r");
  CHECK(t.expect("r == nil\ntrue"));
  REQUIRE(t.expect_prompt());
  // the next call goes through (another operation: the fault may not have been reached)
  t.type("cloud.storage.create_bucket{ Bucket = 'after-interrupt' }.Location\r");
  CHECK(t.expect("\n/after-interrupt"));
  REQUIRE(t.expect_prompt());
  // a loop in Lua stops too
  t.type("print('looping'); while true do end\r");
  REQUIRE(t.expect("\nlooping\n"));
  t.type("\x03");
  CHECK(t.expect("cloudlua: interrupted"));
  REQUIRE(t.expect_prompt());
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
  CHECK(said_interrupted_plainly(t));
}

TEST_CASE("REPL on a terminal: Ctrl-C ends cloud.sleep at once and the session goes on") {
  TempDir home;
  Terminal t(session_env(home));
  REQUIRE(t.expect_prompt());
  t.type("print('sleeping'); cloud.sleep(3600); print('woke up')\r");
  REQUIRE(t.expect("\nsleeping\n"));
  CHECK(t.wait_until_sleeping());
  t.type("\x03");
  CHECK(t.expect("cloudlua: interrupted"));
  REQUIRE(t.expect_prompt());
  CHECK(t.screen().find("\nwoke up") == std::string::npos);  // the line after the sleep never ran
  t.type("1 + 1\r");
  CHECK(t.expect("1 + 1\n2"));
  REQUIRE(t.expect_prompt());
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
  CHECK(said_interrupted_plainly(t));
}

TEST_CASE("REPL on a terminal: Ctrl-C during cloud.map cancels every task and returns to the prompt") {
  TempDir home;
  Terminal t(session_env(home));
  REQUIRE(t.expect_prompt());
  t.type("cloud.emulator.fault{ operation = 'UpdateSnapshot', delay = 5, times = 4 }\r");
  REQUIRE(t.expect_prompt());
  t.type(
      "print('mapping'); rs = cloud.map({ 'snap-1', 'snap-2', 'snap-1', 'snap-2' }, "
      "function(n) return cloud.cluster.update_snapshot{ SnapshotName = n, snapshot = {} } end)\r");
  REQUIRE(t.expect("\nmapping\n"));
  t.wait_until_polling();  // the four requests are out, their answers 5 seconds away
  t.type("\x03");
  CHECK(t.expect("cloudlua: interrupted"));
  REQUIRE(t.expect_prompt());
  t.type("rs == nil\r");
  CHECK(t.expect("rs == nil\ntrue"));
  REQUIRE(t.expect_prompt());
  t.type("cloud._loop.run_once(0)\r");  // how many waits are still under way
  CHECK(t.expect("cloud._loop.run_once(0)\n0"));
  REQUIRE(t.expect_prompt());
  t.type("cloud.storage.create_bucket{ Bucket = 'after-tasks' }.Location\r");
  CHECK(t.expect("\n/after-tasks"));
  REQUIRE(t.expect_prompt());
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
  CHECK(said_interrupted_plainly(t));
}

TEST_CASE("REPL on a terminal: history is kept across sessions in CLOUDLUA_HISTORY, private to the user") {
  TempDir home;
  std::string file = home.path() + "/history";
  {
    Terminal first(session_env(home));
    REQUIRE(first.expect_prompt());
    first.type("answer = 6 * 7\r");
    REQUIRE(first.expect_prompt());
    first.type("\x04");
    REQUIRE(first.wait_exit() == 0);
  }
  CHECK(read_file(file).find("answer") != std::string::npos);
  struct stat info {};
  REQUIRE(stat(file.c_str(), &info) == 0);
  CHECK((info.st_mode & 0077) == 0);

  Terminal second(session_env(home));
  REQUIRE(second.expect_prompt());
  second.type("\x10\r");  // Ctrl-P: the line before, run again
  REQUIRE(second.expect_prompt());
  second.type("answer\r");
  CHECK(second.expect("answer\n42"));
  REQUIRE(second.expect_prompt());
  second.type("\x04");
  CHECK(second.wait_exit() == 0);
}

TEST_CASE("REPL on a terminal: colour for values, none with NO_COLOR") {
  TempDir home;
  auto env = session_env(home);
  env["TERM"] = "xterm";
  {
    Terminal coloured(env);
    REQUIRE(coloured.expect_prompt());
    coloured.type("{ 1, 'a' }\r");
    REQUIRE(coloured.expect_prompt());
    CHECK(coloured.raw().find("\x1b[33m1\x1b[0m") != std::string::npos);
    CHECK(coloured.raw().find("\x1b[32m\"a\"\x1b[0m") != std::string::npos);
    coloured.type("\x04");
    CHECK(coloured.wait_exit() == 0);
  }
  env["NO_COLOR"] = "1";
  Terminal plain(env);
  REQUIRE(plain.expect_prompt());
  plain.type("{ 1, 'a' }\r");
  CHECK(plain.expect("{ 1, \"a\" }"));
  REQUIRE(plain.expect_prompt());
  CHECK(plain.raw().find("\x1b[3") == std::string::npos);
  plain.type("\x04");
  CHECK(plain.wait_exit() == 0);
}

TEST_CASE("REPL on a terminal: the prompt names the endpoint in use, or _PROMPT when set") {
  TempDir home;
  Terminal t(session_env(home), {"--endpoint", "cluster=http://127.0.0.1:9"});
  REQUIRE(t.expect("session: 127.0.0.1:9\n"));
  REQUIRE(t.expect_prompt("\ncloudlua[127.0.0.1:9]> "));
  t.type("_PROMPT, _PROMPT2 = 'mine> ', 'more> '\r");
  REQUIRE(t.expect_prompt("\nmine> "));
  t.type("do\r");
  REQUIRE(t.expect_prompt("\nmore> "));
  t.type("end\r");
  REQUIRE(t.expect_prompt("\nmine> "));
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
}

TEST_CASE("REPL on a terminal: values and errors that echo the request show no signature") {
  TempDir home;
  Terminal t(session_env(home));
  REQUIRE(t.expect_prompt());
  t.type(
      "cloud.emulator.fault{ operation = 'UpdateSnapshot', echo = true, status = 400, code = 'BadRequest', times = 2 "
      "}\r");
  REQUIRE(t.expect_prompt());
  t.type("cloud.request{ api = 'cluster', method = 'PUT', path = '/v1/snapshots/snap-1', body = '{}' }.body\r");
  CHECK(t.expect("Authorization: EXT4-HMAC-SHA256 Credential=CLOUDLUAEMULATORKEY/"));
  CHECK(t.expect("Signature=<redacted>"));
  REQUIRE(t.expect_prompt());
  t.type("cloud.cluster.update_snapshot{ SnapshotName = 'snap-1' }\r");
  CHECK(t.expect("cloudlua: api error in UpdateSnapshot (HTTP 400): BadRequest: you sent: PUT /v1/snapshots/snap-1"));
  CHECK(t.expect("Signature=<redacted>"));
  REQUIRE(t.expect_prompt());
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
  std::string screen = t.screen();
  for (size_t at = screen.find("Signature="); at != std::string::npos; at = screen.find("Signature=", at + 1))
    CHECK(screen.compare(at, 20, "Signature=<redacted>") == 0);
}

TEST_CASE("REPL on a terminal: long help and long values go through $PAGER, short ones do not") {
  TempDir home;
  std::map<std::string, std::string> env = session_env(home);
  env["PAGER"] = "sed 's/^/paged: /'";  // marks every line that went through the pager
  Terminal t(env);
  REQUIRE(t.expect_prompt());
  t.type("help()\r");
  CHECK(t.expect("\npaged: The platform's APIs as Lua functions"));
  REQUIRE(t.expect_prompt());
  t.type("('line\\n'):rep(30)\r");
  CHECK(t.expect("\npaged: line\npaged: line"));
  REQUIRE(t.expect_prompt());
  t.type("help(cloud.sleep)\r");
  CHECK(t.expect("\ncloud.sleep(seconds [, { real_time }])\n"));
  REQUIRE(t.expect_prompt());
  t.type("1 + 1\r");
  CHECK(t.expect("1 + 1\n2"));
  REQUIRE(t.expect_prompt());
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
  CHECK(t.screen().find("paged: cloud.sleep") == std::string::npos);
  CHECK(t.screen().find("paged: 2") == std::string::npos);
}

TEST_CASE("REPL on a terminal: Tab completes globals, fields after a dot and an operation's argument names") {
  TempDir home;
  Terminal t(session_env(home));
  REQUIRE(t.expect_prompt());
  t.type("string.fo\t");
  CHECK(t.expect("string.format"));
  t.type("\x03");  // cancel the line
  REQUIRE(t.expect_prompt());
  t.type("cloud.clu\t");
  CHECK(t.expect("cloud.cluster"));
  t.type(".\t");  // several operations: listed under the line
  CHECK(t.expect("\ncloud.cluster.restore_cluster_from_snapshot\ncloud.cluster.update_snapshot"));
  t.type("update_sn\t");
  CHECK(t.expect("cloud.cluster.update_snapshot"));
  t.type("{Sn\t");
  CHECK(t.expect("SnapshotName"));
  t.type(" = 'snap-1' }.snapshot.name\r");
  CHECK(t.expect("\nsnap-1"));
  REQUIRE(t.expect_prompt());
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
}

// Types `line` and Tab; whether `offered` then shows. The line is cancelled after.
bool tab_offers(Terminal& t, const std::string& line, const std::string& offered) {
  t.type(line + "\t");
  bool shown = t.expect(offered);
  t.type("\x03");
  return t.expect_prompt() && shown;
}

TEST_CASE("REPL on a terminal: Tab completes an operation's fields at any depth and a library function's options") {
  TempDir home;
  Terminal t(session_env(home));
  REQUIRE(t.expect_prompt());
  CHECK(tab_offers(t, "cloud.cluster.update_snapshot{ snapshot = { ta", "tags"));
  CHECK(t.screen().find("table") == std::string::npos);
  // an element of a list: the fields of its structure
  CHECK(tab_offers(t, "cloud.cluster.update_snapshot{ snapshot = { tags = { { k", "key"));
  // every field of that place, listed in columns
  CHECK(tab_offers(t, "cloud.cluster.update_snapshot({ snapshot = { ",
                   "\ndescription     expirationTime  name            tags\n"));
  // options read off the usage line, derived from lua/reference.lua's declarations
  CHECK(tab_offers(t, "cloud.storage.sync{ from = 'a', dry", "dry_run"));
  CHECK(tab_offers(t, "cloud.wait_for('ClusterRunning', {}, { max_", "max_attempts"));
  // a sub-command's table form: the fields lua/command_specs.lua declares for it
  CHECK(tab_offers(t, "cloud.commands.cp{ 'a', 'b', dry", "dry_run"));
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
}

TEST_CASE("REPL on a terminal: a list of candidates is laid out in columns the terminal's width, no word broken") {
  TempDir home;
  Terminal t(session_env(home));
  REQUIRE(t.expect_prompt());
  t.type("cloud.storage.\t");
  REQUIRE(t.expect("\n"));
  REQUIRE(t.expect_prompt());
  std::string screen = t.screen();
  size_t typed = screen.find("> cloud.storage.\n");
  REQUIRE(typed != std::string::npos);
  CHECK(screen.find("cloud.storage.copy_object", typed) != std::string::npos);
  std::istringstream lines(screen.substr(screen.find('\n', typed) + 1));
  int listed = 0;
  for (std::string line; std::getline(lines, line) && line.find("cloudlua[") == std::string::npos; ++listed) {
    INFO("line: " << line);
    CHECK(line.size() < 80);  // the terminal is 80 wide: a longer line would wrap mid-word
    CHECK(line.rfind("cloud.storage.", 0) == 0);
  }
  CHECK(listed > 1);
  t.type("\x03");
  REQUIRE(t.expect_prompt());
  t.type("\x04");
  CHECK(t.wait_exit() == 0);
}
