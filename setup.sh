#!/usr/bin/env bash
# Sets cloudlua up on Debian 12 and runs it: installs the Debian packages that are
# missing (apt-get; sudo when not root), configures and builds with CMake, then
#   ./setup.sh tour    runs scripts/tour.lua on the embedded emulator
#   ./setup.sh test    runs the whole test suite (ctest); non-zero on any failure
#   ./setup.sh build   only builds
# Quick when nothing changed: no apt call when every package is there, and an
# incremental build.
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${BUILD_DIR:-build}
PACKAGES=(
  build-essential cmake pkg-config
  liblua5.4-dev libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libpugixml-dev
  catch2 libcpp-httplib-dev libcli11-dev libedit-dev libre2-dev
)

# The interop tests' peers, for `test` only: aws-cli v2 (tests/serve/awscli_test.sh
# drives `cloudlua serve` with it), and Node.js with npm for s3rver. Debian 12's
# nodejs and npm are installed when no `node`/`npm` is found; a machine that already has
# Node.js from elsewhere (NodeSource's nodejs, which conflicts with Debian's npm) keeps it.
add_test_packages() {
  PACKAGES+=(awscli)
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
build() {
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo
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
  export CLOUDLUA_CONFIG_FILE=  # empty: no config file
}

main() {
  local what=${1:-tour}
  case "$what" in
    tour|test|build) ;;
    *) echo "usage: ./setup.sh [tour|test|build]" >&2; exit 2 ;;
  esac
  if [ "$what" = test ]; then add_test_packages; fi
  install_packages
  if [ "$what" = test ]; then install_test_peers; fi
  clean_environment
  case "$what" in
    build) build ;;
    tour) build cloudlua; exec "$BUILD_DIR/cloudlua" scripts/tour.lua ;;
    test)
      build
      export CLOUDLUA_REQUIRE_INTEROP=1  # here a missing interop peer is a failure, not a skip
      cd "$BUILD_DIR"; exec ctest --output-on-failure -j2 ;;
  esac
}

main "$@"
