#!/usr/bin/env bash
# cloudlua as a user who installs only its .deb finds it: in a fresh Debian 12
# (debootstrap's minbase), with no clone of the repository on the machine, the .deb and
# aws-cli are installed with apt (the .deb's Depends bring the rest), the installed
# binary runs its tour's first call on the embedded emulator and shows its manual's
# sub-commands, and tests/serve/commands_test.sh (copied in on its own, with the two
# files it sources) drives every sub-command against `cloudlua serve` reached with the
# one setting CLOUDLUA_ENDPOINT_URL, aws-cli reading back what each wrote. Not part of
# ctest or CI (it takes several minutes: it installs packages).
#
#   tests/fresh/deb_chroot.sh [--keep] [--deb FILE] [DIR]
#
# FILE: the .deb to install (default: `cpack -G DEB` of BUILD_DIR, default build, which
# is built first). DIR, --keep: as tests/fresh/bookworm_chroot.sh. Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/fresh/lib.sh
deb=
while [ $# -gt 0 ]; do
  case $1 in
    --keep) KEEP=1; shift ;;
    --deb) deb=$(realpath "$2"); shift 2 ;;
    *) break ;;
  esac
done
if [ -z "$deb" ]; then
  build=${BUILD_DIR:-build}
  [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j2 >/dev/null
  out=$(mktemp -d)
  (cd "$build" && cpack -G DEB -B "$out" >/dev/null)
  deb=$(ls "$out"/cloudlua_*.deb)
fi
echo "== installing $(basename "$deb")" >&2
fresh_root "${1:-}"

cp "$deb" "$ROOT/root/"
mkdir -p "$ROOT/root/checks/tests/serve"
cp tests/serve/lib.sh tests/serve/commands_test.sh "$ROOT/root/checks/tests/serve/"
cp tests/without_cloudlua_env.sh "$ROOT/root/checks/tests/"

fresh_run install "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /root/$(basename "$deb") awscli"
fresh_run installed '
  set -euo pipefail
  [ ! -e /root/cloudlua ] && [ ! -e /root/CMakeLists.txt ] || { echo "a clone is on the machine"; exit 1; }
  command -v cloudlua
  cloudlua -v
  CLOUDLUA_QUIET_EMULATOR=1 cloudlua -e "cloud.storage.create_bucket{Bucket=\"first\"}; cloud.storage.head_bucket{Bucket=\"first\"}; print(\"made\")" | grep -qx made
  names=$(cloudlua -E -e "for _, c in ipairs(require(\"cloud.command_specs\").commands) do print(c.name) end")
  [ -n "$names" ] || { echo "the binary declares no sub-command"; exit 1; }
  for c in $names; do
    cloudlua $c --help | grep -q "^usage: cloudlua $c" || { echo "no --help for $c"; exit 1; }
    zcat -f /usr/share/man/man1/cloudlua.1* | grep -q "^\.SS $c" || { echo "the manual has no section for $c"; exit 1; }
  done
  printf "describe(\"a spec\", function() it(\"uses luassert\", function() assert.are.same({1}, {1}) end) end)\n" >/tmp/first_spec.lua
  cloudlua test /tmp/first_spec.lua | grep -qx "ok 1 - a spec uses luassert" || { echo "no luassert for spec files"; exit 1; }
  [ -f /usr/share/bash-completion/completions/cloudlua ]'
fresh_run commands "cd /root/checks && CLOUDLUA_REQUIRE_INTEROP=1 bash tests/serve/commands_test.sh /usr/bin/cloudlua"
