#!/usr/bin/env bash
# The boto3 flow of boto3_test.sh (tests/interop/boto3_flow.py) with a current boto3,
# which sends a checksum with every part and again in the completion: the python3 named
# by CLOUDLUA_BOTO3_PYTHON, else the first python3 on PATH that is not Debian's
# (/usr/bin/python3, whose python3-boto3 boto3_test.sh runs). Skipped (77) when there is
# none: Debian's packages hold no current boto3, so ./setup.sh test cannot install one.
# One that is found but cannot import boto3 skips too, and fails under
# CLOUDLUA_REQUIRE_INTEROP=1.
source "$(dirname "$0")/lib.sh"
PYTHON=${CLOUDLUA_BOTO3_PYTHON:-}
if [ -z "$PYTHON" ]; then
  PYTHON=$(command -v python3 || true)
  case "$(readlink -f "${PYTHON:-/usr/bin/python3}")" in
    "$(readlink -f /usr/bin/python3)") PYTHON="" ;;
  esac
fi
if [ -z "$PYTHON" ]; then
  echo "SKIP: no python3 but Debian's (set CLOUDLUA_BOTO3_PYTHON to one with a current boto3)"
  exit 77
fi
require_boto3 "$PYTHON"
# The interpreter itself, not a shim (pyenv's finds its python through HOME, changed below).
PYTHON=$("$PYTHON" -c 'import sys; print(sys.executable)')

start_serve --dialect aws
isolate_boto3
"$PYTHON" "$(dirname "$0")/../interop/boto3_flow.py" "$CLOUDLUA_ENDPOINT_STORAGE" "$WORK" || fail "the boto3 flow failed (see above)"
echo "boto3_current_test: ok"
