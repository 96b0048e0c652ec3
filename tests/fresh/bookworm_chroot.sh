#!/usr/bin/env bash
# Runs the README's two Quick start commands as a new user would: in a fresh Debian 12
# (bookworm, debootstrap's minbase: nothing installed), on a clone of this repository's
# committed HEAD with no folder of ours beside or above it. Not part of ctest or CI (it
# takes 20 minutes or more: it installs every package and builds everything twice).
#
#   tests/fresh/bookworm_chroot.sh [--keep] [DIR]
#
# DIR (default: a new folder under /var/tmp) holds the chroot; --keep leaves it there
# for a look afterwards (chroot DIR bash). Needs root (debootstrap, chroot, mounts) and
# reaches Debian's mirror and the npm registry as the host does. Where the host reaches
# them through a proxy with a certificate authority of its own, the host's local CA
# certificates (/usr/local/share/ca-certificates) are carried in, where Debian's
# ca-certificates (and so npm) pick them up. Exit status: that of the first command that
# failed, 0 when both passed. The output of each is in DIR/root/*.log as well.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

keep=0
[ "${1:-}" = --keep ] && { keep=1; shift; }
root=${1:-$(mktemp -d /var/tmp/cloudlua-bookworm.XXXXXX)}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

[ "$(id -u)" -eq 0 ] || { echo "bookworm_chroot.sh: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y -q --no-install-recommends debootstrap

mounted=()
cleanup() {
  local m
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  if [ "$keep" = 0 ]; then rm -rf --one-file-system "$root"; else echo "chroot kept in $root" >&2; fi
}
trap cleanup EXIT

echo "== debootstrap bookworm (minbase) into $root" >&2
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
  { tail -20 "$root.debootstrap.log" >&2; exit 1; }
rm -f "$root.debootstrap.log"
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main
SOURCES
cp /etc/resolv.conf "$root/etc/resolv.conf"
# What every installed Debian has and debootstrap leaves to its caller.
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi

for m in proc sys dev dev/pts; do
  mount --bind "/$m" "$root/$m"
  mounted+=("$root/$m")
done
mount -t tmpfs tmpfs "$root/dev/shm" && mounted+=("$root/dev/shm")

echo "== git clone of $(git rev-parse --short HEAD) into /root/cloudlua" >&2
git clone -q --no-local "$repo" "$root/root/cloudlua"
git -C "$root/root/cloudlua" checkout -q "$(git rev-parse HEAD)"

# Each Quick start command as the README gives it, in a login shell with a clean
# environment (only what a fresh machine's root has).
run() {
  local name=$1 started=$SECONDS
  echo "== ./setup.sh $name" >&2
  if env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      ${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy} \
      chroot "$root" bash -lc "cd /root/cloudlua && ./setup.sh $name" </dev/null 2>&1 |
      tee "$root/root/$name.log" | tail -25; [ "${PIPESTATUS[0]}" = 0 ]; then
    echo "== ./setup.sh $name passed in $((SECONDS - started)) s" >&2
  else
    echo "== ./setup.sh $name FAILED after $((SECONDS - started)) s (log: $root/root/$name.log)" >&2
    keep=1
    return 1
  fi
}
run tour
run test
