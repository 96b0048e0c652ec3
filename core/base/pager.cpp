// The pager (pager.h): popen of the user's pager with SIGPIPE ignored while writing,
// so quitting the pager early ends the text, not cloudlua.
#include "core/base/pager.h"

#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace cloud {

namespace {

// The terminal's height in lines, 0 when stdout is no terminal.
size_t terminal_rows() {
  if (!isatty(STDOUT_FILENO)) return 0;
  struct winsize size {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0) return size.ws_row;
  return 24;
}

void write_plain(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// Writes the text into the pager and waits for it; false when it could not start
// (popen failed, or the shell found no such command: status 127).
bool through_pager(const std::string& text) {
  std::fflush(stdout);
  std::FILE* pager = popen(pager_command().c_str(), "w");
  if (!pager) return false;
  void (*previous)(int) = std::signal(SIGPIPE, SIG_IGN);
  std::fwrite(text.data(), 1, text.size(), pager);
  int status = pclose(pager);
  std::signal(SIGPIPE, previous);
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}

}  // namespace

std::string pager_command() {
  const char* pager = std::getenv("PAGER");
  return pager && *pager ? pager : "less -FRX";
}

void write_paged(const std::string& text) {
  size_t rows = terminal_rows();
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  if (rows == 0 || lines < rows || !through_pager(text)) write_plain(text);
}

}  // namespace cloud
