# What the tests of `cloudlua serve` share: starting it in the background and
# reading the endpoints it prints, stopping it, pointing cloudlua at it, failing
# with a message. Sourced by tests/serve/*_test.sh, which get the cloudlua binary as
# their first argument. No fixed sleeps: waits poll in short steps with a bound.
set -euo pipefail

CLOUDLUA=${1:?usage: $0 path/to/cloudlua}
export WORK=$(mktemp -d "${TMPDIR:-/tmp}/cloudlua-serve.XXXXXX")
SERVE_PID=""

# On any exit: this test's own background jobs (by their ids) and the server go.
cleanup() {
  local job
  for job in $(jobs -p); do kill "$job" 2>/dev/null || true; done
  if [ -n "$SERVE_PID" ]; then kill -KILL "$SERVE_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# require_peer PROGRAM PACKAGE: an interop peer missing skips the test (77), or fails
# it under CLOUDLUA_REQUIRE_INTEROP=1 (./setup.sh test installs every peer).
require_peer() {
  [ -x "$1" ] && return 0
  [ "${CLOUDLUA_REQUIRE_INTEROP:-0}" = 1 ] && fail "$1 not found (Debian package $2; ./setup.sh test installs it)"
  echo "SKIP: $1 not found (Debian package $2; ./setup.sh test installs it)"
  exit 77
}

step() { echo "--- $*"; }

# require_boto3 PYTHON [HINT]: goes on when PYTHON imports boto3; else skips (77), or
# fails under CLOUDLUA_REQUIRE_INTEROP=1, naming PYTHON (and HINT).
require_boto3() {
  "$1" -c 'import boto3' 2>/dev/null && return 0
  [ "${CLOUDLUA_REQUIRE_INTEROP:-0}" = 1 ] && fail "boto3 not importable by $1${2:+ ($2)}"
  echo "SKIP: boto3 not importable by $1${2:+ ($2)}"
  exit 77
}

# isolate_boto3: boto3 gets only the test's environment (no AWS_* variable, config,
# credentials or instance metadata of the machine's); serve's keys come from the test.
isolate_boto3() {
  local v
  for v in $(compgen -e | grep '^AWS_' || true); do unset "$v"; done
  export HOME="$WORK" AWS_CONFIG_FILE="$WORK/no-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/no-credentials"
  export AWS_EC2_METADATA_DISABLED=true
}

# start_serve ARGS...: starts `cloudlua serve ARGS` and waits (10 s at most, or
# SERVE_START_SECONDS: a benchmark's large state takes longer) until it
# has printed its endpoints (serve writes them and the block to paste after them at
# once); sets SERVE_PID and exports CLOUDLUA_ENDPOINT_<API> for
# each API with the emulator's credentials, so `cloudlua -e` talks to it. With
# SERVE_LIMIT=N, serve runs under `timeout N` (SERVE_PID is timeout's, which passes
# signals on): a serve that outlives N seconds is killed and its status is 124. With
# SERVE_STACK_KIB=N, serve runs with a stack limit (ulimit -s) of N KiB; with
# SERVE_VM_KIB=N, with its address space capped (ulimit -v) at N KiB.
start_serve() {
  local out="$WORK/serve.out"
  : >"$out"
  (
    if [ -n "${SERVE_STACK_KIB:-}" ]; then ulimit -S -s "$SERVE_STACK_KIB"; fi
    if [ -n "${SERVE_VM_KIB:-}" ]; then ulimit -S -v "$SERVE_VM_KIB"; fi
    exec ${SERVE_LIMIT:+timeout -k 1 "$SERVE_LIMIT"} "$CLOUDLUA" serve "$@"
  ) >"$out" 2>"$WORK/serve.err" &
  SERVE_PID=$!
  local tries=0
  until grep -q '^access_key_id ' "$out"; do
    kill -0 "$SERVE_PID" 2>/dev/null || fail "serve exited before printing its endpoints: $(cat "$WORK/serve.err")"
    tries=$((tries + 1))
    [ "$tries" -lt $((${SERVE_START_SECONDS:-10} * 20)) ] || fail "serve printed no endpoints within ${SERVE_START_SECONDS:-10} s"
    sleep 0.05
  done
  local api url
  while read -r api url; do  # the endpoint lines; the block to paste after them is for people
    case $api in catalog | cluster | devops | storage) export "CLOUDLUA_ENDPOINT_${api^^}=$url" ;; esac
  done <"$out"
  export CLOUDLUA_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY CLOUDLUA_SECRET_ACCESS_KEY=cloudlua-emulator-secret
}

# stop_serve SIGNAL: sends SIGNAL to the server, waits for it, sets SERVE_STATUS to
# its exit status and SERVE_STOP_MS to the milliseconds from the signal to its exit
# (not in a $(...) subshell: only this shell can wait for it). The clock is bash's
# EPOCHREALTIME, in microseconds once its point is dropped: nothing is started to read it.
stop_serve() {
  SERVE_STATUS=0
  local start=${EPOCHREALTIME/[.,]/}
  kill "-$1" "$SERVE_PID"
  wait "$SERVE_PID" 2>/dev/null || SERVE_STATUS=$?
  SERVE_STOP_MS=$(((10#${EPOCHREALTIME/[.,]/} - 10#$start) / 1000))
  SERVE_PID=""
}

# free_ports N: the first of N consecutive ports on 127.0.0.1 that nothing listens
# on, below the ephemeral range (clients' ports do not come and go there).
free_ports() {
  local base port tries
  for tries in $(seq 50); do
    base=$((20000 + RANDOM % 10000))
    for port in $(seq "$base" $((base + $1 - 1))); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue 2
    done
    echo "$base"
    return
  done
  fail "no $1 free ports found"
}

# ctl OPERATION [JSON]: a control request (docs/emulator.md, "The control plane") signed
# with curl's own SigV4 (--aws-sigv4) as the documentation's examples are; prints the
# answer, fails unless 200. curl's SigV4 (7.88) sends no x-amz-content-sha256, which the
# storage API requires (as S3 does): the examples add it, the payload left unsigned.
ctl() {
  local status body='{}'
  [ $# -lt 2 ] || body=$2
  status=$(curl -sS -o "$WORK/ctl.out" -w '%{http_code}' --aws-sigv4 "aws:amz:jp-east-1:s3" \
    --user "CLOUDLUAEMULATORKEY:cloudlua-emulator-secret" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
    -X POST --data-binary "$body" "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/$1")
  [ "$status" = 200 ] || fail "control $1: status $status: $(cat "$WORK/ctl.out")"
  cat "$WORK/ctl.out"
}

# lua CODE: runs CODE with cloudlua against the served emulator; fails the test on error.
lua() {
  "$CLOUDLUA" -e "$1" || fail "Lua chunk failed (see above)"
}
