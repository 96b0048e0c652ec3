#!/usr/bin/env bash
# boto3 (Debian's python3-boto3) against `cloudlua serve --dialect aws` where S3 is
# exact about a corner (tests/interop/boto3_conformance.py): copy-source conditions,
# PartNumber's parts count and InvalidPartNumber, an empty continuation-token, an empty
# Content-Length, Content-Encoding kept as sent, malformed and wrong checksums, the
# whole-object checksum of CompleteMultipartUpload, a browser form signed the older way
# (AWSAccessKeyId, signature); then a serve in us-east-1, where re-creating one's own
# bucket is 200. Skipped (77) when boto3 is not installed, failed then under
# CLOUDLUA_REQUIRE_INTEROP=1.
PYTHON=/usr/bin/python3  # explicitly Debian's: PATH may hold another python first
source "$(dirname "$0")/lib.sh"
require_peer "$PYTHON" python3-boto3
require_boto3 "$PYTHON" "Debian package python3-boto3"
SCRIPT="$(dirname "$0")/../interop/boto3_conformance.py"

start_serve --dialect aws
isolate_boto3
"$PYTHON" "$SCRIPT" "$CLOUDLUA_ENDPOINT_STORAGE" jp-east-1 || fail "the conformance checks failed (see above)"
stop_serve TERM
start_serve --dialect aws --region us-east-1
"$PYTHON" "$SCRIPT" "$CLOUDLUA_ENDPOINT_STORAGE" us-east-1 || fail "the us-east-1 checks failed (see above)"
echo "boto3_conformance_test: ok"
