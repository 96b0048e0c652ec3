#!/usr/bin/env bash
# `cloudlua serve` answers signed requests carrying very long values (an instanceId of
# 50,000 characters, then 1 MB) with a clean 400, and keeps serving (issue 10, item 1:
# std::regex overflowed the server's stack on such a value and killed it).
source "$(dirname "$0")/lib.sh"

start_serve

for n in 50000 1048576; do
  step "an instanceId of $n characters: 400 ValidationError, the server still up"
  lua "
    local body = ('{\"backupId\":\"%s\",\"instanceId\":\"%s-\"}'):format(('f'):rep(32), ('a'):rep($n))
    local r = cloud.request{ api = 'devops', method = 'POST', path = '/v1/instances:restore',
                             headers = { ['Content-Type'] = 'application/json' }, body = body }
    assert(r.status == 400, 'status ' .. r.status)
    assert(r.body:find('\"code\":\"ValidationError\"', 1, true), r.body:sub(1, 200))"
  kill -0 "$SERVE_PID" 2>/dev/null || fail "serve died: $(tail -5 "$WORK/serve.err")"
done

step "an ordinary call still works"
lua 'assert(cloud.cluster.update_snapshot{ SnapshotName = "snap-1" }.snapshot.name == "snap-1")'
stop_serve TERM
[ "$SERVE_STATUS" -eq 0 ] || fail "serve exited with $SERVE_STATUS after TERM"
echo "PASS"
