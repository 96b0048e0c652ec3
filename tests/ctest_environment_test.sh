#!/usr/bin/env bash
# ctest started with CLOUDLUA_* variables that point elsewhere (an endpoint that
# refuses connections, a profile, keys, a config file that does not exist, aws-cli's
# AWS_ENDPOINT_URL, which cloudlua reads too) still runs
# the suites' cases against the embedded emulator, and they pass: none is skipped.
# Before tests/without_cloudlua_env.sh, every case of such a file was skipped and
# ctest reported success. Usage: ctest_environment_test.sh CTEST BUILD_DIR/tests
set -u
ctest=$1 dir=$2
out=$(CLOUDLUA_ENDPOINT_CLUSTER=http://127.0.0.1:1 CLOUDLUA_ENDPOINT_STORAGE=http://127.0.0.1:1 \
      CLOUDLUA_ENDPOINT_DEVOPS=http://127.0.0.1:1 CLOUDLUA_ENDPOINT_CATALOG=http://127.0.0.1:1 \
      CLOUDLUA_ACCESS_KEY_ID=AKIDELSEWHERE CLOUDLUA_SECRET_ACCESS_KEY=elsewhere-secret \
      CLOUDLUA_PROFILE=elsewhere CLOUDLUA_CONFIG_FILE=/nonexistent/config AWS_ENDPOINT_URL=http://127.0.0.1:1 \
      "$ctest" --test-dir "$dir" -R '^(helpers\.wait_until_test|tour)$' --output-on-failure -V 2>&1)
status=$?
fail() { printf 'ctest_environment: %s\n%s\n' "$1" "$out"; exit 1; }
[ $status -eq 0 ] || fail "ctest failed (status $status)"
grep -q '100% tests passed, 0 tests failed out of 2' <<<"$out" || fail "not both entries ran"
grep -Eq '^[0-9]+: 11 passed, 0 failed$' <<<"$out" || fail "the cases of wait_until_test did not all run and pass"
! grep -q 'SKIP' <<<"$out" || fail "a case was skipped"
echo "ok: both entries ran their cases against the embedded emulator"
