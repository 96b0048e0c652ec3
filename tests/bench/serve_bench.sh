#!/usr/bin/env bash
# `cloudlua serve` under load beside nginx, measured side by side (not ctest; no test
# asserts a time). Run by hand: tests/bench/serve_bench.sh [build/cloudlua] [rounds] [seconds]
#
# wrk replays one signed request over and over: a GetObject of a 1 KiB object from
# `serve --dialect aws` (each request's signature verified, routed, validated, answered
# from the emulator's state), and a GET of a canned 1 KiB body from nginx-light on
# the same loopback, at 1 and at 8 connections. Rounds alternate the two servers;
# the medians of requests per second and their ratio are printed.
# Setup, Debian: apt-get install -y --no-install-recommends nginx-light wrk
set -euo pipefail
CLOUDLUA=$(realpath "${1:-build/cloudlua}")
ROUNDS=${2:-3}
SECONDS_EACH=${3:-5}
command -v nginx >/dev/null && command -v wrk >/dev/null || { echo "install nginx-light and wrk"; exit 2; }
source "$(dirname "$0")/lib.sh"  # WORK, removed at exit with the servers started

# nginx answering every GET with the same 1 KiB body.
head -c 1024 /dev/urandom | base64 -w0 | head -c 1024 >"$WORK/object"
NGINX_PORT=$(free_port)
mkdir -p "$WORK/www"
cp "$WORK/object" "$WORK/www/object"
start_nginx "$NGINX_PORT" "root $WORK/www; location / { default_type application/octet-stream; }"

# serve, with the object put into it, and the signed GET of it as a wrk script.
CLOUDLUA_CONFIG_FILE=/dev/null "$CLOUDLUA" serve --dialect aws >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVE_PID=$!
until grep -q '^access_key_id' "$WORK/serve.out" 2>/dev/null; do sleep 0.05; done
export CLOUDLUA_CONFIG_FILE=/dev/null CLOUDLUA_DIALECT=aws
export CLOUDLUA_ENDPOINT_STORAGE=$(awk '$1 == "storage" { print $2 }' "$WORK/serve.out")
export CLOUDLUA_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY CLOUDLUA_SECRET_ACCESS_KEY=cloudlua-emulator-secret
OBJECT=$WORK/object "$CLOUDLUA" -e '
  local f = assert(io.open(os.getenv("OBJECT"), "rb"))
  cloud.storage.create_bucket{ Bucket = "bench" }
  cloud.storage.put_object{ Bucket = "bench", Object = "object", Body = f:read("a") }
  local url = os.getenv("CLOUDLUA_ENDPOINT_STORAGE") .. "/bench/object"
  local s = cloud.sign{ method = "GET", url = url, region = "jp-east-1", service = "s3", dialect = "aws",
                        access_key_id = os.getenv("CLOUDLUA_ACCESS_KEY_ID"),
                        secret_access_key = os.getenv("CLOUDLUA_SECRET_ACCESS_KEY"),
                        normalize = false, double_encode = false, sign_body = true }
  local script, headers = assert(io.open(os.getenv("OBJECT") .. ".wrk.lua", "w")), assert(io.open(os.getenv("OBJECT") .. ".headers", "w"))
  script:write("wrk.method = \"GET\"\n")
  for _, h in ipairs(s.headers) do
    if h[1]:lower() ~= "host" then
      script:write(("wrk.headers[%q] = %q\n"):format(h[1], h[2]))
      headers:write(h[1], ": ", h[2], "\n")
    end
  end
  script:close()
  headers:close()'
SERVE_URL="$CLOUDLUA_ENDPOINT_STORAGE/bench/object"
curl_headers=()
while IFS= read -r h; do curl_headers+=(-H "$h"); done <"$WORK/object.headers"
curl -sf -o "$WORK/check" "${curl_headers[@]}" "$SERVE_URL" && cmp -s "$WORK/check" "$WORK/object" ||
  { echo "the signed request is refused by serve: $(curl -s "${curl_headers[@]}" "$SERVE_URL" | head -c 300)"; exit 1; }

# Requests per second of wrk against URL with C connections (and the signed headers).
rate() {
  local url=$1 c=$2 threads=$(( $2 < 2 ? 1 : 2 ))
  wrk -t"$threads" -c"$c" -d"${SECONDS_EACH}s" -s "$WORK/object.wrk.lua" "$url" | awk '/^Requests\/sec/ { print $2 }'
}

echo "serve GetObject (1 KiB, signed) vs nginx (canned 1 KiB), wrk ${SECONDS_EACH}s x $ROUNDS rounds, $(nproc) cores"
for c in 1 8; do
  : >"$WORK/serve.$c"; : >"$WORK/nginx.$c"
  for _ in $(seq "$ROUNDS"); do
    rate "$SERVE_URL" "$c" >>"$WORK/serve.$c"
    rate "http://127.0.0.1:$NGINX_PORT/object" "$c" >>"$WORK/nginx.$c"
  done
  S=$(median <"$WORK/serve.$c"); N=$(median <"$WORK/nginx.$c")
  awk -v c="$c" -v s="$S" -v n="$N" 'BEGIN { printf "  -c%-2d serve %8.0f req/s   nginx %8.0f req/s   serve/nginx %.2f\n", c, s, n, s / n }'
done
