# A fresh Debian 12 for the tests under tests/fresh, sourced by them (bash):
#
#   fresh_root [DIR]      makes ROOT: debootstrap's minbase of bookworm (nothing
#                         installed), Debian's sources, DNS, /etc/hosts, the host's local
#                         CA certificates, /proc /sys /dev mounted; all undone at exit
#                         unless KEEP=1 (set by --keep, or by a failure)
#   fresh_run NAME CMD    runs CMD in ROOT as root in a login shell with a clean
#                         environment (only what a fresh machine's root has), its output
#                         in ROOT/root/NAME.log and its last 25 lines on stdout
#
# Needs root (debootstrap, chroot, mounts) and reaches Debian's mirror (and npm's
# registry) as the host does. Where the host reaches them through a proxy with a
# certificate authority of its own, the host's local CA certificates
# (/usr/local/share/ca-certificates) are carried in, where Debian's ca-certificates
# (and so npm) pick them up.

KEEP=${KEEP:-0}
ROOT=
FRESH_MOUNTS=()

fresh_cleanup() {
  local i
  for ((i = ${#FRESH_MOUNTS[@]} - 1; i >= 0; i--)); do umount -l "${FRESH_MOUNTS[i]}" 2>/dev/null || true; done
  [ -n "$ROOT" ] || return 0
  if [ "$KEEP" = 0 ]; then rm -rf --one-file-system "$ROOT"; else echo "chroot kept in $ROOT (chroot $ROOT bash)" >&2; fi
}

fresh_root() {
  [ "$(id -u)" -eq 0 ] || { echo "$(basename "$0"): needs root (debootstrap, chroot)" >&2; exit 2; }
  command -v debootstrap >/dev/null || apt-get install -y -q --no-install-recommends debootstrap
  ROOT=${1:-$(mktemp -d /var/tmp/cloudlua-bookworm.XXXXXX)}
  trap fresh_cleanup EXIT
  local mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian} m
  echo "== debootstrap bookworm (minbase) into $ROOT" >&2
  debootstrap --variant=minbase bookworm "$ROOT" "$mirror" >"$ROOT.debootstrap.log" 2>&1 ||
    { tail -20 "$ROOT.debootstrap.log" >&2; exit 1; }
  rm -f "$ROOT.debootstrap.log"
  cat >"$ROOT/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main
SOURCES
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  # What every installed Debian has and debootstrap leaves to its caller.
  printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOT/etc/hosts"
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$ROOT/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
  fi
  for m in proc sys dev dev/pts; do
    mount --bind "/$m" "$ROOT/$m"
    FRESH_MOUNTS+=("$ROOT/$m")
  done
  mount -t tmpfs tmpfs "$ROOT/dev/shm" && FRESH_MOUNTS+=("$ROOT/dev/shm")
}

fresh_run() {
  local name=$1 command=$2 started=$SECONDS
  echo "== $name: $command" >&2
  if env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      ${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy} \
      chroot "$ROOT" bash -lc "$command" </dev/null 2>&1 |
      tee "$ROOT/root/$name.log" | tail -25; [ "${PIPESTATUS[0]}" = 0 ]; then
    echo "== $name passed in $((SECONDS - started)) s" >&2
  else
    echo "== $name FAILED after $((SECONDS - started)) s (log: $ROOT/root/$name.log)" >&2
    KEEP=1
    return 1
  fi
}
