#!/usr/bin/env bash
# Runs the README's two Quick start commands as a new user would: in a fresh Debian 12
# (bookworm, debootstrap's minbase: nothing installed), on a clone of this repository's
# committed HEAD with no folder of ours beside or above it. Not part of ctest or CI (it
# takes 20 minutes or more: it installs every package and builds everything twice).
#
#   tests/fresh/bookworm_chroot.sh [--keep] [DIR]
#
# DIR (default: a new folder under /var/tmp) holds the chroot; --keep leaves it there
# for a look afterwards (chroot DIR bash). Needs root; see lib.sh for what the chroot
# has. Exit status: that of the first command that failed, 0 when both passed. The
# output of each is in DIR/root/*.log as well.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
. tests/fresh/lib.sh
[ "${1:-}" = --keep ] && { KEEP=1; shift; }
fresh_root "${1:-}"

echo "== git clone of $(git rev-parse --short HEAD) into /root/cloudlua" >&2
git clone -q --no-local "$repo" "$ROOT/root/cloudlua"
git -C "$ROOT/root/cloudlua" checkout -q "$(git rev-parse HEAD)"

# Each Quick start command as the README gives it.
fresh_run tour "cd /root/cloudlua && ./setup.sh tour"
fresh_run test "cd /root/cloudlua && ./setup.sh test"
