# What the benchmarks of tests/bench share (sourced): a work directory, WORK, removed at
# exit with the servers a script started (NGINX_PID, SERVE_PID), unless the script has
# one already (tests/serve/lib.sh's); the median of numbers on stdin, a free port on
# loopback, and nginx-light started on loopback with a configuration of its own in
# $WORK/nginx, never the system's.

if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d)
  NGINX_PID= SERVE_PID=
  cleanup() {
    local p
    for p in $NGINX_PID $SERVE_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
  }
  trap cleanup EXIT
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_nginx PORT SERVER [HTTP]: nginx on 127.0.0.1:PORT with the directives SERVER in
# its one server block (and HTTP beside it in the http block), NGINX_WORKERS worker
# processes (2 unless set) of NGINX_CONNECTIONS connections each (1,024 unless set);
# sets NGINX_PID and returns once it accepts connections.
start_nginx() {
  mkdir -p "$WORK/nginx/logs"
  cat >"$WORK/nginx/nginx.conf" <<CONF
daemon off;
worker_processes ${NGINX_WORKERS:-2};
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log;
events { worker_connections ${NGINX_CONNECTIONS:-1024}; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $WORK/nginx/body; proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fcgi; uwsgi_temp_path $WORK/nginx/uwsgi; scgi_temp_path $WORK/nginx/scgi;
  ${3:-}
  server {
    listen 127.0.0.1:$1;
    $2
  }
}
CONF
  nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" &
  NGINX_PID=$!
  local tries
  for tries in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nginx did not start: $(cat "$WORK/nginx/logs/error.log")" >&2
  return 1
}

# aws-cli and boto3 see only what a benchmark gives them: no profile, cache or config
# of the user, serve's keys, and $AWS_CONFIG_FILE in $WORK for the caller to write.
isolate_aws_cli() {
  local v
  for v in $(compgen -e | grep '^AWS_' || true); do unset "$v"; done
  export HOME="$WORK" AWS_CONFIG_FILE="$WORK/aws-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/no-credentials"
  export AWS_ACCESS_KEY_ID=$CLOUDLUA_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=$CLOUDLUA_SECRET_ACCESS_KEY
  export AWS_EC2_METADATA_DISABLED=true AWS_PAGER=""
}

# timed PREFIX COMMAND: what waits to be written flushed first (untimed), then bash -c
# COMMAND under /usr/bin/time -v, its output discarded; appends the wall seconds to
# PREFIX.time and the peak resident KiB to PREFIX.rss.
timed() {
  command sync
  /usr/bin/time -v -o "$WORK/time.out" bash -c "$2" >/dev/null
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' \
    "$WORK/time.out" >>"$1.time"
  awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/time.out" >>"$1.rss"
}

# rclone sees one remote, "serve:", the serve started (tests/serve/lib.sh's start_serve),
# in $RCLONE_CONFIG of $WORK: never the user's configuration.
rclone_to_serve() {
  export RCLONE_CONFIG="$WORK/rclone.conf"
  cat >"$RCLONE_CONFIG" <<CONFIG
[serve]
type = s3
provider = Other
endpoint = $CLOUDLUA_ENDPOINT_STORAGE
access_key_id = $CLOUDLUA_ACCESS_KEY_ID
secret_access_key = $CLOUDLUA_SECRET_ACCESS_KEY
region = jp-east-1
force_path_style = true
CONFIG
}

# record FIGURE PEER VALUE UNIT [ROUNDS]: one result, a JSON line appended to $RESULTS
# (tests/bench/results/<script>.jsonl unless set): the figure measured, the tool that
# ran it (cloudlua, or the peer beside it), its median, when, which build of cloudlua
# ($BENCH_BIN's CMake build type, and BENCH_COMMIT or else this tree's commit) and the load average beside it. Every
# line of one run shares its `run`; tests/bench/render.py turns the newest run of each
# file into the tables of docs/performance.md, so no figure there is typed by hand.
BENCH_RUN=${BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
RESULTS=${RESULTS:-$(cd "$(dirname "$0")" && pwd)/results/$(basename "$0" .sh).jsonl}
record() {
  local bin=${BENCH_BIN:-${BIN:-${CLOUDLUA:-}}} build="" commit=""
  if [ -n "$bin" ] && [ -f "$(dirname "$bin")/CMakeCache.txt" ]; then
    build=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$(dirname "$bin")/CMakeCache.txt")
  fi
  commit=${BENCH_COMMIT:-$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || true)}
  mkdir -p "$(dirname "$RESULTS")"
  python3 -c 'import json, sys
figure, peer, value, unit, rounds, run, build, commit, load = sys.argv[1:]
print(json.dumps({"run": run, "figure": figure, "peer": peer, "value": float(value), "unit": unit,
  "rounds": int(rounds) if rounds else None, "date": run[:10], "build": build or None,
  "commit": commit or None, "load": float(load)}, ensure_ascii=False))' \
    "$1" "$2" "$3" "$4" "${5:-${ROUNDS:-}}" "$BENCH_RUN" "$build" "$commit" "$(cut -d' ' -f1 /proc/loadavg)" >>"$RESULTS"
}
