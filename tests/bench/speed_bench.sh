#!/usr/bin/env bash
# cloudlua's speed beside curl, lua5.4, wrk and boto3, against nginx on loopback
# answering canned bodies (not ctest; no test asserts a time). Run by hand:
#
#   ./setup.sh bench                                      # installs the tools, builds Release, runs this
#   tests/bench/speed_bench.sh [build-release/cloudlua] [rounds]   # default 7 rounds
#
#  (a) a whole process making one call: `cloudlua -e '<get_object>'` beside `curl`
#      fetching the same URL: wall time (a batch of runs per round) and peak memory
#      (/usr/bin/time -f %M);
#  (b) a process doing nothing: `cloudlua -e ''` beside `curl --version` and `lua5.4 -e ''`;
#  (c) per call, in one process: a loop of calls (storage: get_object; JSON API:
#      update_snapshot) beside `wrk -c1 -t1` on the same URL (the loopback floor) and
#      boto3 making the same kind of call (S3 get_object; Lambda's REST-JSON
#      update_function_configuration, a PUT with a JSON body like update_snapshot);
#  (d) a 10,000-part CompleteMultipartUpload in-process beside boto3's: the whole call
#      as a script waits for it (the Lua table in, converted, validated, serialised,
#      signed, sent, nginx's canned answer parsed, the result out), and beside it the
#      call's meta.elapsed, which starts after the table was converted, validated and
#      serialised (it is not the figure to set beside boto3's).
# Commands alternate round by round; medians and ratios are printed.
# Needs nginx (nginx-light), wrk, curl, lua5.4, python3-boto3 and /usr/bin/time (the
# `time` package): `./setup.sh bench` installs them. Use a Release build.
set -euo pipefail
CLOUDLUA=$(realpath "${1:-build-release/cloudlua}")
ROUNDS=${2:-${ROUNDS:-7}}
BATCH=${BATCH:-20}     # processes per round in (a) and (b)
CALLS=${CALLS:-2000}   # calls per round in (c)
PARTS=${PARTS:-10000}  # parts in (d)

missing=""
for tool in nginx wrk curl lua5.4 python3; do command -v "$tool" >/dev/null || missing="$missing $tool"; done
[ -x /usr/bin/time ] || missing="$missing /usr/bin/time"
python3 -c 'import boto3' 2>/dev/null || missing="$missing boto3"
if [ -n "$missing" ]; then
  echo "missing:$missing" >&2
  echo "install them with ./setup.sh bench, or: apt-get install -y nginx-light wrk curl lua5.4 python3-boto3 time" >&2
  exit 2
fi
[ -x "$CLOUDLUA" ] || { echo "no cloudlua at $CLOUDLUA (./setup.sh bench builds build-release)" >&2; exit 2; }

source "$(dirname "$0")/lib.sh"  # WORK, removed at exit with the servers started

# --- nginx on loopback, one canned answer per kind of call -------------------------
PORT=$(free_port)
LOCATIONS=$(cat <<CONF
    location = /bench/object {
      default_type application/octet-stream;
      add_header ETag '"5eb63bbbe01eeed093cb22bb8f5acdc3"';
      return 200 "hello world";
    }
    location /bench/big {
      default_type application/xml;
      return 200 '<?xml version="1.0" encoding="UTF-8"?>\n<CompleteMultipartUploadResult><Location>http://127.0.0.1/bench/big</Location><Bucket>bench</Bucket><Key>big</Key><ETag>"3858f62230ac3c915f300c664312c11f-$PARTS"</ETag></CompleteMultipartUploadResult>';
    }
    location /v1/snapshots/ {
      default_type application/json;
      return 200 '{"snapshot":{"name":"snap-1","status":"AVAILABLE","description":"bench","resourceVersion":"7","createTime":"2026-01-01T00:00:00Z"}}';
    }
    location /2015-03-31/functions/ {
      default_type application/json;
      return 200 '{"FunctionName":"snap-1","Description":"bench","State":"Active"}';
    }
CONF
)
NGINX_WORKERS=1 start_nginx "$PORT" "$LOCATIONS" "client_max_body_size 64m;"
BASE="http://127.0.0.1:$PORT"

# cloudlua and boto3 see only this: nginx's endpoints and made-up credentials.
for v in $(compgen -e | grep -E '^(CLOUDLUA|AWS)_' || true); do unset "$v"; done
export CLOUDLUA_CONFIG_FILE=/dev/null CLOUDLUA_ENDPOINT_STORAGE=$BASE CLOUDLUA_ENDPOINT_CLUSTER=$BASE
export CLOUDLUA_ACCESS_KEY_ID=bench CLOUDLUA_SECRET_ACCESS_KEY=bench-secret CLOUDLUA_REGION=jp-east-1
export HOME=$WORK AWS_CONFIG_FILE=$WORK/none AWS_SHARED_CREDENTIALS_FILE=$WORK/none AWS_EC2_METADATA_DISABLED=true
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_DEFAULT_REGION=jp-east-1
export BASE CALLS PARTS

ONE_CALL="cloud.storage.get_object{ Bucket = 'bench', Object = 'object' }"

# seconds NAME COMMAND...: runs the command $BATCH times; appends the mean seconds per run to $WORK/NAME.
seconds() {
  local name=$1 start end
  shift
  start=$(date +%s%N)
  for _ in $(seq "$BATCH"); do "$@" >/dev/null 2>&1; done
  end=$(date +%s%N)
  awk -v ns=$((end - start)) -v n="$BATCH" 'BEGIN { print ns / n / 1e9 }' >>"$WORK/$name"
}
# peak NAME COMMAND...: appends the command's peak resident KiB to $WORK/NAME.rss.
peak() {
  local name=$1
  shift
  /usr/bin/time -f %M -o "$WORK/rss.out" "$@" >/dev/null 2>&1
  cat "$WORK/rss.out" >>"$WORK/$name.rss"
}
# row LABEL NAME BASE_NAME: median ms (and peak MiB when measured) of NAME, and its ratio to BASE_NAME.
row() {
  local t b r="" br=""
  t=$(median <"$WORK/$2"); b=$(median <"$WORK/$3")
  local figure peer=${2#*_}
  case $2 in
    a_*) figure="a whole process making one call to nginx" ;;
    b_*) figure="a process that starts and exits" ;;
    d_*) figure="$PARTS-part CompleteMultipartUpload, the whole call" ;;
  esac
  [ "$peer" = lua ] && peer=lua5.4
  [ "$peer" = elapsed ] && figure="$PARTS-part CompleteMultipartUpload, its meta.elapsed" peer=cloudlua
  record "$figure" "$peer" "$t" s
  [ -f "$WORK/$2.rss" ] && r=$(median <"$WORK/$2.rss") && br=$(median <"$WORK/$3.rss")
  awk -v l="$1" -v t="$t" -v b="$b" -v r="$r" -v br="$br" 'BEGIN {
    printf "    %-44s %8.2f ms %6.2fx", l, t * 1000, t / b
    if (r != "") printf "   %6.1f MiB %5.2fx", r / 1024, r / br
    printf "\n" }'
}

echo "nginx-light on 127.0.0.1:$PORT; $(nproc) cores; $ROUNDS rounds; $CLOUDLUA"
"$CLOUDLUA" -e "$ONE_CALL" || { echo "cloudlua cannot call nginx" >&2; exit 1; }

echo "(a) a whole process making one call ($BATCH runs per round; ratio to curl's)"
for _ in $(seq "$ROUNDS"); do
  seconds a_cloudlua "$CLOUDLUA" -e "$ONE_CALL"; peak a_cloudlua "$CLOUDLUA" -e "$ONE_CALL"
  seconds a_curl curl -s -o /dev/null "$BASE/bench/object"; peak a_curl curl -s -o /dev/null "$BASE/bench/object"
done
row "cloudlua -e '<get_object>'" a_cloudlua a_curl
row "curl $BASE/bench/object" a_curl a_curl

echo "(b) a process doing nothing ($BATCH runs per round; ratio to curl --version's)"
for _ in $(seq "$ROUNDS"); do
  seconds b_cloudlua "$CLOUDLUA" -e ''; peak b_cloudlua "$CLOUDLUA" -e ''
  seconds b_curl curl --version; peak b_curl curl --version
  seconds b_lua lua5.4 -e ''; peak b_lua lua5.4 -e ''
done
row "cloudlua -e ''" b_cloudlua b_curl
row "curl --version" b_curl b_curl
row "lua5.4 -e ''" b_lua b_curl

# (c) microseconds per call, each in one process.
cloudlua_calls() {
  KIND=$1 "$CLOUDLUA" -e '
    local n, kind = tonumber(os.getenv("CALLS")), os.getenv("KIND")
    local call = kind == "storage" and function() return cloud.storage.get_object{ Bucket = "bench", Object = "object" } end
      or function() return cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "bench" } } end
    for _ = 1, 50 do call() end  -- connected and warm
    local start = cloud.clock()
    for _ = 1, n do call() end
    print((cloud.clock() - start) / n)'
}
boto3_calls() {
  KIND=$1 python3 -c '
import os, time, boto3
from botocore.config import Config
n, kind, base = int(os.environ["CALLS"]), os.environ["KIND"], os.environ["BASE"]
if kind == "storage":
    s3 = boto3.client("s3", endpoint_url=base, config=Config(s3={"addressing_style": "path"}))
    call = lambda: s3.get_object(Bucket="bench", Key="object")["Body"].read()
else:
    fn = boto3.client("lambda", endpoint_url=base)
    call = lambda: fn.update_function_configuration(FunctionName="snap-1", Description="bench")
for _ in range(50): call()
start = time.perf_counter()
for _ in range(n): call()
print((time.perf_counter() - start) / n)'
}
wrk_calls() {
  wrk -t1 -c1 -d2s "$BASE$1" | awk '/Requests\/sec/ { print 1 / $2 }'
}

echo "(c) per call in one process ($CALLS calls per round; over the wrk -c1 floor)"
for kind in storage json; do
  url=/bench/object; [ $kind = json ] && url=/v1/snapshots/snap-1
  for _ in $(seq "$ROUNDS"); do
    cloudlua_calls $kind >>"$WORK/c_cloudlua_$kind"
    wrk_calls $url >>"$WORK/c_wrk_$kind"
    boto3_calls $kind >>"$WORK/c_boto3_$kind"
  done
  c=$(median <"$WORK/c_cloudlua_$kind"); w=$(median <"$WORK/c_wrk_$kind"); p=$(median <"$WORK/c_boto3_$kind")
  record "per call over the wrk -c1 floor, $kind" cloudlua "$(awk -v c="$c" -v w="$w" 'BEGIN { print (c - w) * 1e6 }')" us
  record "per call over the wrk -c1 floor, $kind" boto3 "$(awk -v p="$p" -v w="$w" 'BEGIN { print (p - w) * 1e6 }')" us
  awk -v k=$kind -v c="$c" -v w="$w" -v p="$p" 'BEGIN {
    printf "    %-8s wrk -c1 %6.1f us/call | cloudlua %6.1f us (+%.1f over wrk) | boto3 %7.1f us (+%.1f over wrk) | boto3/cloudlua overhead %.0fx\n",
      k, w * 1e6, c * 1e6, (c - w) * 1e6, p * 1e6, (p - w) * 1e6, (p - w) / (c - w) }'
done

# (d) seconds of one PARTS-part completion, in one process (median of 5 in-process):
# the whole call, then its meta.elapsed.
cloudlua_complete() {
  "$CLOUDLUA" -e '
    local parts, times, elapsed = {}, {}, {}
    for n = 1, tonumber(os.getenv("PARTS")) do parts[n] = { PartNumber = n, ETag = ("\"%032x\""):format(n) } end
    local args = { Bucket = "bench", Object = "big", uploadId = "upload-1", Part = parts }
    cloud.storage.complete_multipart_upload(args)
    for i = 1, 5 do
      local start = cloud.clock()
      local _, meta = cloud.storage.complete_multipart_upload(args)
      times[i], elapsed[i] = cloud.clock() - start, meta.elapsed
    end
    table.sort(times)
    table.sort(elapsed)
    print(times[3], elapsed[3])'
}
boto3_complete() {
  python3 -c '
import os, time, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=os.environ["BASE"], config=Config(s3={"addressing_style": "path"}))
parts = [{"PartNumber": n, "ETag": "\"%032x\"" % n} for n in range(1, int(os.environ["PARTS"]) + 1)]
call = lambda: s3.complete_multipart_upload(Bucket="bench", Key="big", UploadId="upload-1", MultipartUpload={"Parts": parts})
call()
times = []
for _ in range(5):
    start = time.perf_counter(); call(); times.append(time.perf_counter() - start)
print(sorted(times)[2])'
}

echo "(d) one $PARTS-part CompleteMultipartUpload in one process"
for _ in $(seq "$ROUNDS"); do
  cloudlua_complete | tee -a "$WORK/d_both" | awk '{ print $1 }' >>"$WORK/d_cloudlua"
  boto3_complete >>"$WORK/d_boto3"
done
awk '{ print $2 }' "$WORK/d_both" >"$WORK/d_elapsed"
row "cloudlua complete_multipart_upload, whole" d_cloudlua d_cloudlua
row "  (its meta.elapsed: after Lua -> JSON, validation, serialising)" d_elapsed d_cloudlua
row "boto3 complete_multipart_upload, whole" d_boto3 d_cloudlua
