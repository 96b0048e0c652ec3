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
  catch2 libcpp-httplib-dev libcli11-dev libedit-dev
  awscli  # interop peer: tests/serve/awscli_test.sh drives `cloudlua serve` with aws-cli v2
)

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

build() {
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  cmake --build "$BUILD_DIR" -j2
}

# Tests run against fresh embedded emulators, never against whatever endpoint or
# account the calling shell happens to configure.
clean_environment() {
  local v
  for v in $(compgen -e | grep '^CLOUDLUA_' || true); do unset "$v"; done
}

main() {
  local what=${1:-tour}
  case "$what" in
    tour|test|build) ;;
    *) echo "usage: ./setup.sh [tour|test|build]" >&2; exit 2 ;;
  esac
  install_packages
  build
  case "$what" in
    tour) exec "$BUILD_DIR/cloudlua" scripts/tour.lua ;;
    test) clean_environment; cd "$BUILD_DIR"; exec ctest --output-on-failure -j2 ;;
  esac
}

main "$@"
