#!/usr/bin/env bash
# boto3 (Debian's python3-boto3) using serve's control plane, its requests signed with
# botocore's SigV4Auth (tests/interop/boto3_control.py): a 503 injected on GetObject,
# the clock advanced, an unsigned control request refused. Skipped (77) without boto3,
# failed then under CLOUDLUA_REQUIRE_INTEROP=1.
PYTHON=/usr/bin/python3
source "$(dirname "$0")/lib.sh"
require_peer "$PYTHON" python3-boto3
require_boto3 "$PYTHON" "Debian package python3-boto3"

start_serve --dialect aws
isolate_boto3
"$PYTHON" "$(dirname "$0")/../interop/boto3_control.py" "$CLOUDLUA_ENDPOINT_STORAGE" || fail "the boto3 control flow failed (see above)"
echo "boto3_control_test: ok"
