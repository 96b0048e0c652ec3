#!/usr/bin/env bash
# boto3 (Debian's python3-boto3) using serve's control plane, its requests signed with
# botocore's SigV4Auth (tests/interop/boto3_control.py): a 503 injected on GetObject,
# the clock advanced, an unsigned control request refused. Skipped (77) without boto3,
# failed then under CLOUDLUA_REQUIRE_INTEROP=1.
PYTHON=/usr/bin/python3
source "$(dirname "$0")/lib.sh"
require_peer "$PYTHON" python3-boto3
if ! "$PYTHON" -c 'import boto3' 2>/dev/null; then
  [ "${CLOUDLUA_REQUIRE_INTEROP:-0}" = 1 ] && fail "boto3 not importable by $PYTHON (Debian package python3-boto3)"
  echo "SKIP: boto3 not importable by $PYTHON (Debian package python3-boto3)"
  exit 77
fi

start_serve --dialect aws
for v in $(compgen -e | grep '^AWS_' || true); do unset "$v"; done
export HOME="$WORK" AWS_CONFIG_FILE="$WORK/no-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/no-credentials"
export AWS_EC2_METADATA_DISABLED=true
"$PYTHON" "$(dirname "$0")/../interop/boto3_control.py" "$CLOUDLUA_ENDPOINT_STORAGE" || fail "the boto3 control flow failed (see above)"
echo "boto3_control_test: ok"
