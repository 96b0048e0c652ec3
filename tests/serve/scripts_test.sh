#!/usr/bin/env bash
# Every script of scripts/ run to completion against `cloudlua serve --settle 500ms`,
# as a user runs them against an account: a separate process, endpoints and keys from
# the environment (no emulator in the client), waiting without --no-wait. The waits
# poll the server over HTTP (--poll 0.2). What they need is serve's own fixtures
# (backup, snap-1, snap-2, fw-1, mesh-1, demo-bucket) or made with the scripts' own
# operations. tour.lua is left out: it drives the embedded emulator's cloud.emulator
# (seeding, faults, virtual time), which a session talking to serve does not have.
source "$(dirname "$0")/lib.sh"
SCRIPTS=$(cd "$(dirname "$0")/../../scripts" && pwd)

start_serve --settle 500ms

# run SCRIPT ARGS...: runs scripts/SCRIPT with ARGS; its output in $WORK/out, the test
# fails when it does not exit with status 0.
run() {
  local script=$1
  shift
  step "$script $*"
  "$CLOUDLUA" "$SCRIPTS/$script" "$@" >"$WORK/out" 2>"$WORK/err" ||
    fail "$script exited with status $?: $(cat "$WORK/err")"
  cat "$WORK/out"
}

# expect_line TEXT: the last script printed a line containing TEXT.
expect_line() {
  grep -qF -- "$1" "$WORK/out" || fail "no line with '$1' in: $(cat "$WORK/out")"
}

run restore_instance.lua 0123456789abcdef0123456789abcdef code-s1 --poll 0.2 --timeout 20
expect_line "code-s1 is RUNNING"

run restore_cluster.lua snap-1 restored-s1 env=qa --poll 0.2 --timeout 20
expect_line "restored-s1 is RUNNING"
expect_line "pool-1-node-3"

run open_firewall.lua fw-1 198.51.100.0/24 --poll 0.2 --timeout 20
expect_line "opened TCP 443 from 198.51.100.0/24"
expect_line "firewall group fw-1 is APPLIED"

run upgrade_mesh.lua rg-1 mesh-1 1.22.1 --poll 0.2 --timeout 20
expect_line "upgrading the mesh of rg-1/mesh-1 to 1.22.1: configuring"
expect_line "mesh-1 is running with mesh 1.22.1"

run rename_snapshot.lua snap-2 snap-renamed --expires +90d
expect_line "snapshot snap-2 is now snap-renamed"

head -c $((11 * 1024 * 1024)) /dev/urandom >"$WORK/big.bin"
run multipart_upload.lua "$WORK/big.bin" scripts-bucket big.bin --part-size 5M --create-bucket
expect_line "11534336 bytes in 3 parts"
expect_line "verified by download"
run download.lua scripts-bucket big.bin "$WORK/copy.bin" --part-size 5M
expect_line "11534336 bytes in 3 ranges"
cmp "$WORK/big.bin" "$WORK/copy.bin" || fail "the downloaded copy differs from the file uploaded"

step "the state the scripts left, read back over the API"
lua '
  assert(cloud.emulator == nil, "the client must talk to serve, not to an emulator of its own")
  assert(cloud.devops.get_instance{ InstanceId = "code-s1" }.instance.status.code == 100)
  assert(cloud.cluster.get_cluster{ ClusterName = "restored-s1" }.cluster.status == "RUNNING")
  assert(cloud.catalog.get_meshplatform_cluster{ ResourceGroupName = "rg-1", ClusterName = "mesh-1" }.status == "running")
  assert(cloud.cluster.get_snapshot{ SnapshotName = "snap-renamed" }.snapshot.name == "snap-renamed")
'
stop_serve TERM
echo "ok"
