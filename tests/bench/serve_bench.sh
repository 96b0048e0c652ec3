#!/usr/bin/env bash
# `cloudlua serve` under load beside nginx, measured side by side (not ctest; no test
# asserts a time). Run by hand:
#   tests/bench/serve_bench.sh [build-release/cloudlua] [rounds] [seconds] [other/cloudlua]
#
# wrk replays one signed request over and over, at 1 and at 8 connections (or at those
# CONNECTIONS lists: CONNECTIONS="8 64"):
#   get   a GetObject of a 1 KiB object from `serve --dialect aws` (each request's
#         signature verified, routed, validated, answered from the emulator's state),
#         beside a GET of the same 1 KiB from nginx-light;
#   json  an UpdateSnapshot of the cluster API (PUT /v1/snapshots/snap-1 with a JSON
#         body: signature, route, the body parsed and validated, the platform's
#         handler, the answer's JSON), beside the same PUT to nginx answering the
#         same JSON with `return 200`.
# Rounds alternate the servers; the medians of requests per second and their ratio
# to nginx's are printed. A second cloudlua (the build before a change) is served
# too when given, alternated with the first in the same rounds.
# With SERVE_CALLGRIND=1 each serve runs under valgrind's callgrind instead, and the
# instructions it spends per request of each kind (wrk -c1 for [seconds]; the load
# beside does not move them) are printed rather than rates.
# Setup, Debian: apt-get install -y --no-install-recommends nginx-light wrk
set -euo pipefail
CLOUDLUA=$(realpath "${1:-build/cloudlua}")
ROUNDS=${2:-${ROUNDS:-3}}
SECONDS_EACH=${3:-5}
CONNECTIONS=${CONNECTIONS:-1 8}
OTHER=${4:+$(realpath "$4")}
command -v nginx >/dev/null && command -v wrk >/dev/null || { echo "install nginx-light and wrk"; exit 2; }
source "$(dirname "$0")/lib.sh"  # WORK, removed at exit with the servers started
SERVE_PIDS=()
trap 'for p in "${SERVE_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; cleanup' EXIT
for v in $(compgen -e | grep '^CLOUDLUA_'); do unset "$v"; done
export CLOUDLUA_CONFIG_FILE=/dev/null CLOUDLUA_DIALECT=aws
export CLOUDLUA_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY CLOUDLUA_SECRET_ACCESS_KEY=cloudlua-emulator-secret
head -c 1024 /dev/urandom | base64 -w0 | head -c 1024 >"$WORK/object"
printf '%s' '{"snapshot":{"description":"bench"}}' >"$WORK/update.json"

# sign NAME METHOD URL SERVICE [BODY_FILE]: the signed request as a wrk script,
# $WORK/NAME.lua, and its headers for curl, $WORK/NAME.headers (Host left to each).
sign() {
  NAME=$WORK/$1 METHOD=$2 URL=$3 SERVICE=$4 BODY=${5:-} "$CLOUDLUA" -e '
    local body = os.getenv("BODY") ~= "" and assert(io.open(os.getenv("BODY"), "rb")):read("a") or nil
    local storage = os.getenv("SERVICE") == "s3"
    local headers = body and { { "Content-Type", "application/json" } } or nil
    local s = cloud.sign{ method = os.getenv("METHOD"), url = os.getenv("URL"), headers = headers, body = body,
                          region = "jp-east-1", service = os.getenv("SERVICE"), dialect = "aws",
                          access_key_id = os.getenv("CLOUDLUA_ACCESS_KEY_ID"),
                          secret_access_key = os.getenv("CLOUDLUA_SECRET_ACCESS_KEY"),
                          normalize = not storage, double_encode = not storage, sign_body = storage }
    local script = assert(io.open(os.getenv("NAME") .. ".lua", "w"))
    local list = assert(io.open(os.getenv("NAME") .. ".headers", "w"))
    script:write(("wrk.method = %q\n"):format(os.getenv("METHOD")))
    if body then script:write(("wrk.body = %q\n"):format(body)) end
    for _, h in ipairs(s.headers) do
      if h[1]:lower() ~= "host" then
        script:write(("wrk.headers[%q] = %q\n"):format(h[1], h[2]))
        list:write(h[1], ": ", h[2], "\n")
      end
    end
    script:close()
    list:close()'
}

# check NAME METHOD URL [BODY_FILE]: the signed request answered 2xx; its body printed.
check() {
  local headers=() h
  while IFS= read -r h; do headers+=(-H "$h"); done <"$WORK/$1.headers"
  curl -sf -X "$2" "${headers[@]}" ${4:+--data-binary @"$4"} "$3" ||
    { echo "the signed $1 request is refused: $(curl -s -X "$2" "${headers[@]}" ${4:+--data-binary @"$4"} "$3" | head -c 300)" >&2; exit 1; }
}

# start_serve NAME BINARY: `BINARY serve`, the object put into it, its two signed
# requests as NAME.get and NAME.json; sets URL_NAME_get and URL_NAME_json.
start_serve() {
  local name=$1 bin=$2 storage cluster
  if [ "${SERVE_CALLGRIND:-}" = 1 ]; then
    valgrind --tool=callgrind --callgrind-out-file="$WORK/$name.callgrind" "$bin" serve --dialect aws \
      >"$WORK/$name.out" 2>"$WORK/$name.err" &
  else
    "$bin" serve --dialect aws >"$WORK/$name.out" 2>"$WORK/$name.err" &
  fi
  SERVE_PIDS+=($!)
  printf -v "PID_$name" %s $!
  until grep -q '^access_key_id' "$WORK/$name.out" 2>/dev/null; do sleep 0.05; done
  storage=$(awk '$1 == "storage" { print $2 }' "$WORK/$name.out")
  cluster=$(awk '$1 == "cluster" { print $2 }' "$WORK/$name.out")
  CLOUDLUA_ENDPOINT_STORAGE=$storage OBJECT=$WORK/object "$CLOUDLUA" -e '
    cloud.storage.create_bucket{ Bucket = "bench" }
    cloud.storage.put_object{ Bucket = "bench", Object = "object", Body = assert(io.open(os.getenv("OBJECT"), "rb")):read("a") }'
  sign "$name.get" GET "$storage/bench/object" s3
  sign "$name.json" PUT "$cluster/v1/snapshots/snap-1" cluster "$WORK/update.json"
  check "$name.get" GET "$storage/bench/object" >"$WORK/check"
  cmp -s "$WORK/check" "$WORK/object" || { echo "$name's GetObject does not answer the object" >&2; exit 1; }
  check "$name.json" PUT "$cluster/v1/snapshots/snap-1" "$WORK/update.json" >"$WORK/$name.answer.json"
  printf -v "URL_${name}_get" %s "$storage/bench/object"
  printf -v "URL_${name}_json" %s "$cluster/v1/snapshots/snap-1"
}

SERVERS=(serve)
start_serve serve "$CLOUDLUA"
if [ -n "$OTHER" ]; then SERVERS+=(other); start_serve other "$OTHER"; fi

# Instructions per request of each serve under callgrind: counted from zero over a
# wrk run at one connection, dumped, divided by the requests wrk counted.
if [ "${SERVE_CALLGRIND:-}" = 1 ]; then
  echo "serve under callgrind, wrk -c1 ${SECONDS_EACH}s per request kind: instructions per request"
  for kind in get json; do
    line=$(printf '  %-4s' "$kind")
    for s in "${SERVERS[@]}"; do
      pid=PID_$s url=URL_${s}_$kind
      callgrind_control -z "${!pid}" >/dev/null 2>&1
      n=$(wrk -t1 -c1 -d"${SECONDS_EACH}s" -s "$WORK/$s.$kind.lua" "${!url}" | awk '/requests in/ { print $1 }')
      callgrind_control -d "$kind" "${!pid}" >/dev/null 2>&1
      ir=$(ls -t "$WORK/$s.callgrind".* | head -1 | xargs awk '/^summary:/ { print $2 }')
      line+=$(awk -v s="$s" -v ir="$ir" -v n="$n" 'BEGIN { printf "   %s %.1fK (%d requests)", s, ir / n / 1000, n }')
    done
    echo "$line"
  done
  exit 0
fi

# nginx: the object as a file, and serve's own answer to the UpdateSnapshot (its JSON,
# its length) with `return 200` to the same PUT. The requests sent to it are serve's.
NGINX_PORT=$(free_port)
mkdir -p "$WORK/www"
cp "$WORK/object" "$WORK/www/object"
ANSWER=$(sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g" "$WORK/serve.answer.json")
start_nginx "$NGINX_PORT" "root $WORK/www;
    location / { default_type application/octet-stream; }
    location /v1/ { default_type application/json; return 200 '$ANSWER'; }"
cp "$WORK/serve.get.lua" "$WORK/nginx.get.lua"
cp "$WORK/serve.json.lua" "$WORK/nginx.json.lua"
URL_nginx_get=http://127.0.0.1:$NGINX_PORT/object
URL_nginx_json=http://127.0.0.1:$NGINX_PORT/v1/snapshots/snap-1
[ "$(curl -s -X PUT --data-binary @"$WORK/update.json" "$URL_nginx_json")" = "$(cat "$WORK/serve.answer.json")" ] ||
  { echo "nginx does not answer serve's JSON" >&2; exit 1; }

# Requests per second of wrk with C connections replaying the request NAME.KIND.
rate() {
  local name=$1 kind=$2 c=$3 threads=$(( $3 < 2 ? 1 : 2 )) url
  url=URL_${name}_$kind
  wrk -t"$threads" -c"$c" -d"${SECONDS_EACH}s" -s "$WORK/$name.$kind.lua" "${!url}" | awk '/^Requests\/sec/ { print $2 }'
}

echo "serve vs nginx, wrk ${SECONDS_EACH}s x $ROUNDS rounds, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  serve: $CLOUDLUA${OTHER:+; other: $OTHER}"
echo "  get: signed GetObject of 1 KiB (nginx: the file); json: signed UpdateSnapshot (nginx: return 200 of serve's JSON, $(wc -c <"$WORK/serve.answer.json") bytes)"
for kind in get json; do
  for c in $CONNECTIONS; do
    for s in "${SERVERS[@]}" nginx; do : >"$WORK/rates.$s"; done
    for _ in $(seq "$ROUNDS"); do
      for s in "${SERVERS[@]}" nginx; do rate "$s" "$kind" "$c" >>"$WORK/rates.$s"; done
    done
    N=$(median <"$WORK/rates.nginx")
    record "serve: signed $kind, wrk -c$c" nginx "$N" requests/s
    ranges=$(sort -g "$WORK/rates.nginx" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "nginx %.0f-%.0f", lo, hi }')
    line=$(printf '  %-4s -c%-2d nginx %8.0f/s' "$kind" "$c" "$N")
    for s in "${SERVERS[@]}"; do
      S=$(median <"$WORK/rates.$s")
      record "serve: signed $kind, wrk -c$c" "$([ "$s" = serve ] && echo cloudlua || echo "$s")" "$S" requests/s
      line+=$(awk -v s="$S" -v n="$N" -v name="$s" 'BEGIN { printf "   %s %8.0f/s (%.2f)", name, s, s / n }')
      ranges+=$(sort -g "$WORK/rates.$s" | awk -v name="$s" 'NR == 1 { lo = $1 } { hi = $1 } END { printf "  %s %.0f-%.0f", name, lo, hi }')
    done
    echo "$line"
    echo "             rounds: $ranges"
  done
done
