// Long text on a terminal goes through the user's pager, as git and man do: $PAGER,
// else `less -FRX`. Text for a pipe or a file, and text that fits on the screen, is
// written as it is, so scripts and tests never meet a pager.
#pragma once

#include <string>

namespace cloud {

// The pager's command line: $PAGER when set and not empty, else "less -FRX".
std::string pager_command();

// Writes `text` on stdout: through pager_command() when stdout is a terminal and the
// text has more lines than the terminal, else directly. A pager that cannot start
// (or quits early) costs nothing: the text is then written directly, or dropped.
void write_paged(const std::string& text);

}  // namespace cloud
