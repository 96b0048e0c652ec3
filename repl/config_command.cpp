// `cloudlua config`: the effective configuration as the other commands would use
// it, one line per setting with its value (secrets masked) and where it came from:
// a flag, a variable, a line of the config file, or the default.
#include <cstdio>
#include <cstdlib>

#include "repl/cli.h"

namespace cloud {

int run_config(const ConfigOverrides& flags) {
  auto loaded = load_config(flags, [](const char* name) { return std::getenv(name); });
  if (!loaded.ok()) {
    std::fprintf(stderr, "cloudlua config: %s\n", loaded.error().describe().c_str());
    return 1;
  }
  std::fputs(config_report(*loaded).c_str(), stdout);
  return 0;
}

}  // namespace cloud
