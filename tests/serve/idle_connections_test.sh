#!/usr/bin/env bash
# A thousand idle connections cost `cloudlua serve` no thread and little memory (and
# its limit on open files is raised to allow them): with
# 1,000 connections open to the storage API and silent, its thread count
# (/proc/PID/status, Threads:) is what it was before them, its resident memory has
# grown by less than 20 MiB, every one of them is still open, and a new client's
# request is answered at once. Then SIGTERM still ends it within a second, the
# thousand connections open.
source "$(dirname "$0")/lib.sh"

IDLE=1000
RSS_GROWTH_KIB=$((20 * 1024))

# Each connection is a descriptor on both sides. serve is started with the soft limit
# many systems have (1,024), which it raises to the hard one; the clients raise theirs.
hard=$(ulimit -H -n)
if [ "$hard" != unlimited ] && [ "$hard" -lt $((IDLE + 200)) ]; then
  echo "SKIP: at most $hard open files (ulimit -Hn), fewer than $IDLE connections need"
  exit 77
fi
ulimit -S -n 1024

# status_field NAME: the value of NAME in serve's /proc/PID/status (kB for VmRSS).
status_field() { awk -v name="$1:" '$1 == name { print $2 }' "/proc/$SERVE_PID/status"; }

start_serve
port=${CLOUDLUA_ENDPOINT_STORAGE##*:}

step "its soft limit on open files raised to the hard one"
soft=$(awk '/^Max open files/ { print $4 }' "/proc/$SERVE_PID/limits")
[ "$soft" = "$hard" ] || fail "serve's soft limit on open files is $soft, not the hard limit $hard"

step "one request first (the worker that serves it started), then the counts before"
curl -sS -o /dev/null "http://127.0.0.1:$port/" || fail "serve did not answer the first request"
threads_before=$(status_field Threads)
rss_before=$(status_field VmRSS)

step "$IDLE idle connections: no thread more, less than 20 MiB more, all open, a new request answered"
python3 - "$port" "$IDLE" "$SERVE_PID" "$threads_before" "$rss_before" "$RSS_GROWTH_KIB" <<'EOF' || fail "see above"
import http.client, resource, socket, sys, time

port, idle, pid, threads_before, rss_before, rss_growth = (int(a) for a in sys.argv[1:])
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)

def field(name):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(name + ":"):
                return int(line.split()[1])

def answered():
    """A new connection's request answered (any status: the server read and answered it)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/")
    status = c.getresponse().status
    c.close()
    return status

def still_open(s):
    """Connected: nothing to read, and neither its end nor a reset."""
    try:
        return s.recv(1, socket.MSG_DONTWAIT) is None
    except BlockingIOError:
        return True
    except OSError:
        return False

conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(idle)]
# Accepted in order: once a later connection is answered, the thousand are the server's.
status = answered()
time.sleep(0.5)  # past any wait of a worker for a next request
threads, rss = field("Threads"), field("VmRSS")
open_now = sum(still_open(s) for s in conns)
print(f"threads {threads_before} -> {threads}; RSS {rss_before} -> {rss} KiB; {open_now} of {idle} open; "
      f"a new request answered {status}")
problems = []
if threads != threads_before:
    problems.append(f"{threads - threads_before} threads more with {idle} idle connections")
if rss - rss_before >= rss_growth:
    problems.append(f"resident memory grew by {rss - rss_before} KiB, {rss_growth} or more")
if open_now != idle:
    problems.append(f"{idle - open_now} of the idle connections were ended")
if answered() == 0:
    problems.append("no answer")
if problems:
    print("FAIL: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
EOF

step "SIGTERM ends it within a second with connections open"
python3 -c '
import resource, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(int(sys.argv[2]))]
open(sys.argv[3], "w").close()
time.sleep(30)
' "$port" "$IDLE" "$WORK/holding" &
holder=$!
tries=0
until [ -e "$WORK/holding" ]; do
  tries=$((tries + 1))
  [ "$tries" -lt 200 ] || fail "$IDLE connections not opened within 10 s"
  sleep 0.05
done
stop_serve TERM
kill "$holder" 2>/dev/null || true
[ "$SERVE_STATUS" -eq 0 ] || fail "serve exited with status $SERVE_STATUS"
[ "$SERVE_STOP_MS" -le 1000 ] || fail "serve exited $SERVE_STOP_MS ms after SIGTERM, more than 1000"
echo "PASS"
