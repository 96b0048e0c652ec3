#!/usr/bin/env bash
# boto3 (Debian's python3-boto3, run by /usr/bin/python3) against `cloudlua serve
# --dialect aws`: tests/interop/boto3_flow.py makes a bucket, puts a small object,
# upload_file's a 12 MiB file in 5 MiB parts, lists with the ListObjectsV2 paginator,
# download_file's both and compares, completes an upload created with ChecksumAlgorithm
# SHA256 with right, wrong and missing part checksums, heads, deletes, removes the
# bucket; a presigned GET with ResponseContentType and the other response-* overrides,
# head_object and get_object with PartNumber, an UNSIGNED get_object refused AccessDenied.
# Skipped (77) when boto3 is not installed, failed then under
# CLOUDLUA_REQUIRE_INTEROP=1. boto3_current_test.sh runs the same flow with a current boto3.
PYTHON=/usr/bin/python3  # explicitly Debian's: PATH may hold another python first
source "$(dirname "$0")/lib.sh"
require_peer "$PYTHON" python3-boto3
require_boto3 "$PYTHON" "Debian package python3-boto3"

start_serve --dialect aws
isolate_boto3
"$PYTHON" "$(dirname "$0")/../interop/boto3_flow.py" "$CLOUDLUA_ENDPOINT_STORAGE" "$WORK" || fail "the boto3 flow failed (see above)"
echo "boto3_test: ok"
