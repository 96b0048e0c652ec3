#!/bin/sh
# Runs a command without the CLOUDLUA_* variables of the environment ctest was started
# in, then with the NAME=VALUE assignments given before the command. A developer's
# endpoint, profile or keys would otherwise point the suites at an account (where the
# suites that need the embedded emulator fail), and a plain `ctest` must test the same
# thing everywhere. CLOUDLUA_REQUIRE_* stay: they are the suite's own switches
# (./setup.sh test sets them), which cloudlua itself never reads.
# tests/CMakeLists.txt runs every ctest entry through it; tests/unit/main.cpp does the
# same for the Catch2 entries.
# AWS_ENDPOINT_URL goes too: cloudlua reads it as CLOUDLUA_ENDPOINT_URL when nothing
# else sets an endpoint.
# Usage: without_cloudlua_env.sh [NAME=VALUE...] COMMAND [ARG...]
unset AWS_ENDPOINT_URL
for name in $(env | sed -n 's/^\(CLOUDLUA_[A-Za-z0-9_]*\)=.*/\1/p'); do
  case $name in CLOUDLUA_REQUIRE_*) ;; *) unset "$name" ;; esac
done
exec env "$@"
