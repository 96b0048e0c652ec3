// The one Catch2 main for all unit tests. The CLOUDLUA_* variables of the environment
// it was started in go first (all but the suite's own CLOUDLUA_REQUIRE_* switches), as
// tests/without_cloudlua_env.sh does for ctest's other entries: a developer's endpoint
// or keys must not reach the binary the REPL tests drive, and no developer's config
// file either (CLOUDLUA_CONFIG_FILE=/dev/null), nor aws-cli's AWS_ENDPOINT_URL.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace {

void clear_cloudlua_environment() {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("CLOUDLUA_", 0) == 0 && name.rfind("CLOUDLUA_REQUIRE_", 0) != 0) names.push_back(name);
  }
  for (const std::string& name : names) unsetenv(name.c_str());
  unsetenv("AWS_ENDPOINT_URL");  // cloudlua reads it as CLOUDLUA_ENDPOINT_URL when nothing else is set
  setenv("CLOUDLUA_CONFIG_FILE", "/dev/null", 1);
}

}  // namespace

int main(int argc, char** argv) {
  clear_cloudlua_environment();
  return Catch::Session().run(argc, argv);
}
