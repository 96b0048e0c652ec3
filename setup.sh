#!/usr/bin/env bash
# Sets cloudlua up on Debian 12 and runs it: installs the Debian packages that are
# missing (apt-get; sudo when not root), configures and builds with CMake, then
#   ./setup.sh tour    runs scripts/tour.lua on the embedded emulator
#   ./setup.sh test    runs the whole test suite (ctest) but the long forms of tests (label
#                      `long`: `cd build && ctest -L long`); non-zero on any failure
#   ./setup.sh sanitize  the same suite built with ASan and UBSan, in build-asan
#   ./setup.sh build   only builds
#   ./setup.sh bench   installs the benchmarks' tools, builds Release in build-release and
#                      runs tests/bench/speed_bench.sh (extra arguments go to it)
# Quick when nothing changed: no apt call when every package is there, and an
# incremental build.
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${BUILD_DIR:-build}
PACKAGES=(
  build-essential cmake pkg-config
  liblua5.4-dev libcurl4-openssl-dev nettle-dev nlohmann-json3-dev libpugixml-dev
  catch2 libcpp-httplib-dev libcli11-dev libedit-dev libre2-dev zlib1g-dev libsqlite3-dev
  libevent-dev  # the event loop that holds serve's connections between requests
  media-types  # /etc/mime.types: the type of an uploaded file from its name
  lua-luassert # busted's assertions, spies, stubs and mocks in `cloudlua test` spec files
)

# The interop tests' peers, for `test` only: aws-cli v2, s3cmd, rclone and boto3
# (tests/serve/{awscli,s3cmd,rclone,boto3}_test.sh drive `cloudlua serve` with them),
# and Node.js with npm for s3rver. Debian 12's
# nodejs and npm are installed when no `node`/`npm` is found; a machine that already has
# Node.js from elsewhere (NodeSource's nodejs, which conflicts with Debian's npm) keeps it.
# clang builds the fuzz targets; libFuzzer's runtime is in libclang-rt-dev, which
# Debian's clang only recommends (and recommends are not installed here). man-db renders
# the manual page in the install test (`man -l`). ca-certificates lets npm reach its
# registry over TLS (a minimal Debian 12 has none); the serve tests use curl, and the
# client's TLS test makes its certificate and server with openssl; lua-check is the
# luacheck of the luacheck entry, clang-format the C++ style entry's; tmux drives the
# REPL's terminal test; lcov reads the coverage reports of `cloudlua test --coverage`.
add_test_packages() {
  PACKAGES+=(awscli s3cmd rclone python3-boto3 clang libclang-rt-dev man-db ca-certificates curl openssl lua-check clang-format tmux lcov)
  command -v node >/dev/null && command -v npm >/dev/null || PACKAGES+=(nodejs npm)
}

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
  done
}

install_packages() {
  local missing
  missing=$(missing_packages)
  [ -z "$missing" ] && return 0
  echo "setup: installing $(echo $missing)" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  # shellcheck disable=SC2086
  $sudo apt-get install -y -q --no-install-recommends $missing
}

# build [TARGET]: everything, or only TARGET (the tour needs the binary, not the tests).
# CMAKE_OPTIONS, when set, are applied to the configuration every time.
CMAKE_OPTIONS=()
build() {
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] || [ ${#CMAKE_OPTIONS[@]} -gt 0 ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${CMAKE_OPTIONS[@]}"
  fi
  cmake --build "$BUILD_DIR" -j2 ${1:+--target "$1"}
}

# s3rver and its dependencies, as locked in tests/interop/package-lock.json, into
# tests/interop/node_modules; skipped when that install is already up to date.
install_test_peers() {
  local dir=tests/interop
  if [ -f "$dir/node_modules/.package-lock.json" ] && [ ! "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    return 0
  fi
  echo "setup: installing the interop test peers (npm ci in $dir)" >&2
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
}

# The tour and the tests run against fresh embedded emulators, never against whatever
# endpoint or account the calling shell or the user's config file configures.
clean_environment() {
  local v
  for v in $(compgen -e | grep '^CLOUDLUA_' || true); do unset "$v"; done
  unset AWS_ENDPOINT_URL        # aws-cli's spelling of CLOUDLUA_ENDPOINT_URL, which cloudlua reads too
  export CLOUDLUA_CONFIG_FILE=  # empty: no config file
}

main() {
  local what=${1:-tour}
  case "$what" in
    tour|test|sanitize|build|bench) ;;
    *) echo "usage: ./setup.sh [tour|test|sanitize|build|bench]" >&2; exit 2 ;;
  esac
  if [ "$what" = test ] || [ "$what" = sanitize ]; then add_test_packages; fi
  # The peers of tests/bench's benchmarks (tests/bench/all.sh runs every one).
  if [ "$what" = bench ]; then add_test_packages; PACKAGES+=(nginx-light wrk curl lua5.4 python3-boto3 time); fi
  install_packages
  if [ "$what" = test ] || [ "$what" = sanitize ]; then install_test_peers; fi
  clean_environment
  case "$what" in
    build) build ;;
    tour) build cloudlua; exec "$BUILD_DIR/cloudlua" scripts/tour.lua ;;
    test)
      build
      tests/fuzz/run.sh --build-only --build-dir "$BUILD_DIR/fuzz"  # clang, for the fuzz.* entries
      export CLOUDLUA_REQUIRE_INTEROP=1 CLOUDLUA_REQUIRE_FUZZ=1  # here a missing peer or fuzz build fails
      cd "$BUILD_DIR"; exec ctest --output-on-failure -j2 -LE long ;;
    sanitize)
      # Every test but the fuzz runs (their own build has the sanitizers already) and the
      # long forms, stopping at the first error a sanitizer reports.
      BUILD_DIR=${SANITIZE_BUILD_DIR:-build-asan}
      CMAKE_OPTIONS=(-DCLOUDLUA_SANITIZE=ON)
      build
      export CLOUDLUA_REQUIRE_INTEROP=1
      export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
      cd "$BUILD_DIR"; exec ctest --output-on-failure -j2 -LE "fuzz|long" ;;
    bench)
      BUILD_DIR=${BENCH_BUILD_DIR:-build-release}
      CMAKE_OPTIONS=(-DCMAKE_BUILD_TYPE=Release)
      build cloudlua
      shift
      exec tests/bench/all.sh "$BUILD_DIR/cloudlua" "$@" ;;
  esac
}

main "$@"
