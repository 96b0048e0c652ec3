#!/usr/bin/env bash
# A 60 MiB PutObject and GetObject with curl against `cloudlua serve`, beside floors
# (not ctest; run by hand): tests/bench/large_body_bench.sh [build-release/cloudlua] [rounds] [MiB]
#
# serve reads the body as it arrives into a file of its folder of bytes, hashes it on
# the way (SHA-256 for x-amz-content-sha256, MD5 for the ETag) and makes the object
# from that file; a GET sends the stored bytes. The PUT is set beside nginx-light
# taking the same PUT (its DAV module: the body read into a file, then renamed into
# place) and the time to hash the file with sha256sum and md5sum (what any S3 server
# must do with it); the GET beside nginx sending the same file from disk (page cache).
# The two servers' requests alternate within each round; medians of the rounds are
# printed, with ratios and what serve's PUT adds over nginx's (issue 23's figure).
# Setup, Debian: apt-get install -y --no-install-recommends nginx-light curl
set -euo pipefail
CLOUDLUA=$(realpath "${1:-build-release/cloudlua}")
ROUNDS=${2:-${ROUNDS:-3}}
MIB=${3:-60}
command -v nginx >/dev/null || { echo "install nginx-light"; exit 2; }
source "$(dirname "$0")/lib.sh"  # WORK, removed at exit with the servers started

mkdir -p "$WORK/www" "$WORK/dav"
chmod 755 "$WORK" "$WORK/www"  # nginx's workers read the file as another user
chmod 777 "$WORK/dav"          # ... and write the PUT there
# Text bytes (base64): cloud.sign takes its body as a string with no NUL in it.
(set +o pipefail; head -c "$((MIB << 20))" /dev/urandom | base64 -w0 | head -c "$((MIB << 20))" >"$WORK/www/object"; chmod 644 "$WORK/www/object")
NGINX_PORT=$(free_port)
start_nginx "$NGINX_PORT" "root $WORK/www; location / { default_type application/octet-stream; }
  location /dav/ { root $WORK; dav_methods PUT; client_max_body_size 0; client_body_buffer_size 1m; }"

CLOUDLUA_CONFIG_FILE=/dev/null "$CLOUDLUA" serve --dialect aws >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVE_PID=$!
until grep -q '^access_key_id' "$WORK/serve.out" 2>/dev/null; do sleep 0.05; done
export CLOUDLUA_CONFIG_FILE=/dev/null CLOUDLUA_DIALECT=aws
export CLOUDLUA_ENDPOINT_STORAGE=$(awk '$1 == "storage" { print $2 }' "$WORK/serve.out")
export CLOUDLUA_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY CLOUDLUA_SECRET_ACCESS_KEY=cloudlua-emulator-secret
# Signed PUT and GET headers, one file each (a signature holds for 15 minutes).
OBJECT=$WORK/www/object OUT=$WORK "$CLOUDLUA" -e '
  cloud.storage.create_bucket{ Bucket = "bench" }
  local body = assert(io.open(os.getenv("OBJECT"), "rb")):read("a")
  local url = os.getenv("CLOUDLUA_ENDPOINT_STORAGE") .. "/bench/object"
  for _, m in ipairs{ "PUT", "GET" } do
    local s = cloud.sign{ method = m, url = url, region = "jp-east-1", service = "s3", dialect = "aws",
                          body = m == "PUT" and body or "",
                          access_key_id = os.getenv("CLOUDLUA_ACCESS_KEY_ID"),
                          secret_access_key = os.getenv("CLOUDLUA_SECRET_ACCESS_KEY"),
                          normalize = false, double_encode = false, sign_body = true }
    local out = assert(io.open(os.getenv("OUT") .. "/" .. m .. ".headers", "w"))
    for _, h in ipairs(s.headers) do
      if h[1]:lower() ~= "host" then out:write(h[1], ": ", h[2], "\n") end
    end
    out:close()
  end'
headers() { local a=(); while IFS= read -r h; do a+=(-H "$h"); done <"$WORK/$1.headers"; printf '%s\0' "${a[@]}"; }
mapfile -d '' PUT_H < <(headers PUT)
mapfile -d '' GET_H < <(headers GET)
URL="$CLOUDLUA_ENDPOINT_STORAGE/bench/object"
secs() { /usr/bin/env python3 -c 'import sys, time, subprocess; t = time.monotonic(); subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); print(round(time.monotonic() - t, 4))' "$@"; }

for _ in $(seq "$ROUNDS"); do
  curl -s -o "$WORK/put.out" -w "%{time_total}\n" -T "$WORK/www/object" -H "Expect:" "${PUT_H[@]}" "$URL" >>"$WORK/put"
  curl -sf -o /dev/null -w "%{time_total}\n" -T "$WORK/www/object" -H "Expect:" "${PUT_H[@]}" \
    "http://127.0.0.1:$NGINX_PORT/dav/object" >>"$WORK/nginx.put"
  secs sh -c "sha256sum '$WORK/www/object'; md5sum '$WORK/www/object'" >>"$WORK/hash"
  grep -q "<Error>" "$WORK/put.out" && { echo "PutObject refused: $(head -c 300 "$WORK/put.out")"; exit 1; }
  curl -sf -o "$WORK/got" -w '%{time_total}\n' "${GET_H[@]}" "$URL" >>"$WORK/get"
  curl -s -o "$WORK/got.nginx" -w '%{time_total}\n' "http://127.0.0.1:$NGINX_PORT/object" >>"$WORK/nginx.get"
done
grep -q "<Error>" "$WORK/put.out" && { echo "PutObject refused: $(head -c 300 "$WORK/put.out")"; exit 1; }
cmp -s "$WORK/got.nginx" "$WORK/www/object" || { echo "nginx did not send the file: $(head -c 300 "$WORK/got.nginx")"; exit 1; }
cmp -s "$WORK/got" "$WORK/www/object" || { echo "serve's GetObject did not give the bytes put"; exit 1; }
cmp -s "$WORK/dav/object" "$WORK/www/object" || { echo "nginx did not store the PUT"; exit 1; }
P=$(median <"$WORK/put") H=$(median <"$WORK/hash") G=$(median <"$WORK/get") N=$(median <"$WORK/nginx.get")
NP=$(median <"$WORK/nginx.put")
record "serve: PutObject of $MIB MiB with curl" cloudlua "$P" s
record "serve: PutObject of $MIB MiB with curl" "nginx (DAV PUT)" "$NP" s
record "serve: GetObject of $MIB MiB with curl" cloudlua "$G" s
record "serve: GetObject of $MIB MiB with curl" nginx "$N" s
echo "$MIB MiB with curl, $ROUNDS rounds, medians, $(nproc) cores"
awk -v p="$P" -v h="$H" -v m="$MIB" 'BEGIN { printf "  PutObject  serve %.3f s (%.0f MiB/s)   sha256sum+md5sum %.3f s   serve/floor %.1fx\n", p, m / p, h, p / h }'
awk -v p="$P" -v n="$NP" 'BEGIN { printf "  PutObject  serve %.3f s   nginx PUT (DAV) %.3f s   serve/nginx %.1fx   serve adds %.3f s\n", p, n, p / n, p - n }'
awk -v g="$G" -v n="$N" -v m="$MIB" 'BEGIN { printf "  GetObject  serve %.3f s (%.0f MiB/s)   nginx %.3f s   serve/nginx %.1fx\n", g, m / g, n, g / n }'
