// The REPL's line readers: PlainReader (stdio, for pipes) and, when cloudlua is built
// with libedit, EditReader. EditReader reads characters itself (EL_GETCFN) because
// libedit's own reader retries a read interrupted by a signal once before giving up,
// which would swallow the first Ctrl-C at the prompt.
#include "repl/line_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cwchar>

#ifdef CLOUDLUA_HAVE_LIBEDIT
#include <histedit.h>
#endif

namespace cloud {

namespace {

class PlainReader : public LineReader {
 public:
  explicit PlainReader(bool prompts) : prompts_(prompts) {}

  Status read(const std::string& prompt, std::string& line) override {
    if (prompts_) std::fputs(prompt.c_str(), stdout);
    std::fflush(stdout);
    line.clear();
    char buf[4096];
    while (std::fgets(buf, sizeof buf, stdin)) {
      line += buf;
      if (line.back() == '\n') {
        line.pop_back();
        return Status::line;
      }
    }
    return line.empty() ? Status::end : Status::line;
  }

  bool interactive() const override { return prompts_; }

 private:
  bool prompts_;
};

#ifdef CLOUDLUA_HAVE_LIBEDIT

constexpr int kHistorySize = 1000;

volatile std::sig_atomic_t line_interrupted = 0;

void on_sigint_at_prompt(int) { line_interrupted = 1; }

// The signal mask while a line is read waits for a key: SIGINT let through. Outside the
// wait SIGINT is blocked, so a Ctrl-C that comes between two keys (while libedit
// completes or redraws) waits for the next wait instead of being lost before a read
// that would then block.
sigset_t waiting_mask;

// The longest start all the words share.
std::string common_start(const std::vector<std::string>& words) {
  std::string common = words.front();
  for (const std::string& w : words) {
    size_t n = 0;
    while (n < common.size() && n < w.size() && common[n] == w[n]) ++n;
    common.resize(n);
  }
  return common;
}

// The terminal's width in characters: the window's (TIOCGWINSZ), else $COLUMNS, else 80.
size_t terminal_width() {
  struct winsize size {};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  const char* columns = std::getenv("COLUMNS");
  long n = columns ? std::strtol(columns, nullptr, 10) : 0;
  return n > 0 ? static_cast<size_t>(n) : 80;
}

// The words in columns down then across, as bash lists completions: each line
// shorter than `width`, so no word is broken by the terminal's wrap (a word longer
// than the width has a line to itself). The last line has no newline: libedit's
// redisplay starts the prompt on a line of its own.
std::string in_columns(const std::vector<std::string>& words, size_t width) {
  size_t longest = 0;
  for (const std::string& w : words) longest = std::max(longest, w.size());
  size_t column = longest + 2;
  size_t columns = std::max<size_t>(1, width / column);
  size_t rows = (words.size() + columns - 1) / columns;
  std::string out;
  for (size_t r = 0; r < rows; ++r) {
    std::string line;
    for (size_t i = r; i < words.size(); i += rows)
      line += words[i] + std::string(i + rows < words.size() ? column - words[i].size() : 0, ' ');
    out += (r > 0 ? "\n" : "") + line;
  }
  return out;
}

class EditReader : public LineReader {
 public:
  EditReader(std::string history_file, Completer completer)
      : file_(std::move(history_file)), completer_(std::move(completer)) {
    std::setlocale(LC_CTYPE, "");  // typed characters are decoded in the user's encoding
    history_ = history_init();
    history(history_, &event_, H_SETSIZE, kHistorySize);
    history(history_, &event_, H_SETUNIQUE, 1);
    if (!file_.empty()) history(history_, &event_, H_LOAD, file_.c_str());
    el_ = el_init("cloudlua", stdin, stdout, stderr);
    el_set(el_, EL_CLIENTDATA, this);
    el_set(el_, EL_EDITOR, "emacs");
    el_set(el_, EL_PROMPT, prompt_of);
    el_set(el_, EL_HIST, history, history_);
    el_set(el_, EL_GETCFN, read_char);
    // The wide form: the narrow el_set copies name and help with wcsdup and never frees
    // them (libedit's own "XXX: The two strdup's leak"), which LeakSanitizer reports.
    el_wset(el_, EL_ADDFN, L"cloudlua-complete", L"Complete the name before the cursor", complete_key);
    el_set(el_, EL_BIND, "^I", "cloudlua-complete", nullptr);
    el_source(el_, nullptr);  // ~/.editrc, as every libedit program reads it
  }

  ~EditReader() override {
    el_end(el_);
    history_end(history_);
  }

  // Ctrl-C is caught only while el_gets waits (no SA_RESTART, so read() returns EINTR).
  Status read(const std::string& prompt, std::string& line) override {
    prompt_ = prompt;
    line_interrupted = 0;
    struct sigaction action {
    }, previous{};
    action.sa_handler = on_sigint_at_prompt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous);
    sigset_t sigint, unmasked;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigint, &unmasked);
    waiting_mask = unmasked;
    sigdelset(&waiting_mask, SIGINT);
    std::fflush(stdout);
    int count = 0;
    const char* text = el_gets(el_, &count);
    pthread_sigmask(SIG_SETMASK, &unmasked, nullptr);
    sigaction(SIGINT, &previous, nullptr);
    if (line_interrupted) return Status::interrupted;
    if (!text) return Status::end;  // Ctrl-D on an empty line, or the terminal went away
    line.assign(text, static_cast<size_t>(count));
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return Status::line;
  }

  // The file is created private before libedit writes it: typed lines may hold secrets.
  void remember(const std::string& chunk) override {
    history(history_, &event_, H_ENTER, chunk.c_str());
    if (file_.empty()) return;
    int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
    history(history_, &event_, H_SAVE, file_.c_str());
  }

  bool interactive() const override { return true; }

 private:
  static char* prompt_of(EditLine* el) {
    void* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    return const_cast<char*>(static_cast<EditReader*>(self)->prompt_.c_str());
  }

  // Tab: the completer's candidates for the word before the cursor. What they all
  // start with is inserted; when that adds nothing and there are several, they are
  // listed under the line, as a shell lists them.
  static unsigned char complete_key(EditLine* el, int) {
    void* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    const Completer& completer = static_cast<EditReader*>(self)->completer_;
    const LineInfo* li = el_line(el);
    std::string before(li->buffer, static_cast<size_t>(li->cursor - li->buffer));
    Completion c = completer ? completer(before) : Completion{};
    if (c.candidates.empty() || c.start > before.size()) return CC_REFRESH_BEEP;
    std::string typed = before.substr(c.start);
    std::string common = common_start(c.candidates);
    if (common.size() > typed.size() && common.compare(0, typed.size(), typed) == 0) {
      el_insertstr(el, common.substr(typed.size()).c_str());
      return CC_REFRESH;
    }
    if (c.candidates.size() == 1) return CC_REFRESH;
    std::fputs(("\n" + in_columns(c.candidates, terminal_width())).c_str(), stdout);
    std::fflush(stdout);
    return CC_REDISPLAY;
  }

  // Waits until stdin has a byte (or its end) with SIGINT let through for the wait
  // alone (ppoll swaps the mask atomically); false when Ctrl-C came, now or before.
  static bool wait_for_key() {
    struct pollfd in {
      STDIN_FILENO, POLLIN, 0
    };
    while (!line_interrupted) {
      if (::ppoll(&in, 1, nullptr, &waiting_mask) >= 0) return true;
      if (errno != EINTR) return true;  // let read() report it
    }
    return false;
  }

  // One character from stdin, decoded in the locale's encoding; -1 when Ctrl-C
  // interrupted the wait, 0 at end of input.
  static int read_char(EditLine*, wchar_t* out) {
    char bytes[MB_LEN_MAX];
    size_t n = 0;
    for (;;) {
      if (n == 0 && !wait_for_key()) return -1;
      ssize_t got = ::read(STDIN_FILENO, &bytes[n], 1);
      if (got < 0 && errno == EINTR && !line_interrupted) continue;
      if (got <= 0) return got < 0 ? -1 : 0;
      ++n;
      std::mbstate_t state{};
      size_t used = std::mbrtowc(out, bytes, n, &state);
      if (used == static_cast<size_t>(-2) && n < sizeof bytes) continue;  // the rest of a character
      if (used == static_cast<size_t>(-1) || used == static_cast<size_t>(-2)) {
        n = 0;  // not a character in this locale: dropped, as libedit does
        continue;
      }
      return 1;
    }
  }

  std::string file_;
  Completer completer_;
  History* history_ = nullptr;
  HistEvent event_{};
  EditLine* el_ = nullptr;
  std::string prompt_;
};

#endif  // CLOUDLUA_HAVE_LIBEDIT

}  // namespace

std::unique_ptr<LineReader> LineReader::open(const std::string& history_file, Completer completer) {
  bool terminal = isatty(STDIN_FILENO);
#ifdef CLOUDLUA_HAVE_LIBEDIT
  if (terminal) return std::make_unique<EditReader>(history_file, std::move(completer));
#else
  (void)history_file;
  (void)completer;
#endif
  return std::make_unique<PlainReader>(terminal);
}

std::string history_file_path() {
  if (const char* path = std::getenv("CLOUDLUA_HISTORY")) return path;
  const char* home = std::getenv("HOME");
  return home && *home ? std::string(home) + "/.cloudlua_history" : "";
}

}  // namespace cloud
