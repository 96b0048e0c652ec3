#!/usr/bin/env python3
"""The table at the top of docs/project-tests.md: each feature, its test files, its ctest
entries (a pattern for `ctest -R`), their label and how long they took in the last run.

    tests/suites.py [BUILD_DIR]      print the table from BUILD_DIR's last ctest run
                                     (Testing/Temporary/LastTest.log; default build)

The features and their files are listed here; the entries, labels and times come from
ctest itself (`ctest -N --show-only=json-v1` and the last run's log), so the table says
what the suite is, not what someone remembered of it.
"""
import json
import pathlib
import re
import subprocess
import sys

# feature, test files, ctest -R pattern
FEATURES = [
    ("Signing, verification, aws-chunked bodies", "unit/sigv4_test.cpp, aws_chunked_test.cpp, streamed_upload_test.cpp",
     r"^(sigv4|aws-chunked|streamed|chunk)"),
    ("The model: limits, validation, protocol, help", "unit/model_test.cpp, limits_test.cpp, protocol_test.cpp, "
     "xml_writer_test.cpp, help_test.cpp, bounds_test.cpp", r"^(model|limits|protocol|xml|help|bounds|validation)"),
    ("Transport, client, retries, trust", "unit/transport_test.cpp, client_test.cpp, client_trust_test.cpp, "
     "loop_test.cpp, config_test.cpp", r"^(transport|client|loop|config|trust|retr)"),
    ("Hostile input, redaction, recordings", "unit/hostile_input_test.cpp, redact_test.cpp, cassette_test.cpp",
     r"^(hostile|redact|cassette|record)"),
    ("The emulator in process", "unit/emulator_*_test.cpp, blob_test.cpp, checksum_test.cpp", r"^(emulator|blob|checksum|One owner|A link|A snapshots)"),
    ("The Lua API end to end", "lua/*_test.lua", r"^lua\."),
    ("The harness's matchers and waits", "helpers/*_test.lua", r"^helpers\."),
    ("Every operation", "regression/*_test.lua", r"^regression\."),
    ("The automation scripts", "scripts/*_test.lua", r"^scripts\."),
    ("serve driven from outside", "serve/*_test.sh", r"^serve\."),
    ("Real peers: aws-cli, s3cmd, rclone, boto3, s3rver", "serve/{awscli,s3cmd,rclone,boto3*}_test.sh, interop/",
     r"^(serve\.(awscli|s3cmd|rclone|boto3)|interop\.)"),
    ("Fuzz targets, short runs", "fuzz/fuzz_*.cpp", r"^fuzz\."),
    ("The repository's own rules", "luacheck, install/install_test.sh, bench/render.py, tour", r"^(luacheck|install|docs\.|tour|ctest_environment)"),
]


def entries(build):
    """{name: [labels]} of every ctest entry."""
    out = subprocess.run(["ctest", "-N", "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True)
    tests = json.loads(out.stdout)["tests"]
    result = {}
    for t in tests:
        labels = []
        for p in t.get("properties", []):
            if p["name"] == "LABELS":
                labels = p["value"]
        result[t["name"]] = labels
    return result


def times(build):
    """{name: seconds} of the last run."""
    log = pathlib.Path(build) / "Testing" / "Temporary" / "LastTest.log"
    seconds, name = {}, None
    for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
        m = re.match(r'^\d+/\d+ Test: (.*)$', line)
        if m:
            name = m.group(1)
        m = re.match(r'^"(.*)" end time:', line)
        m2 = re.match(r'^Test time = +([\d.]+) sec', line)
        if m2 and name:
            seconds[name] = float(m2.group(1))
    return seconds


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    all_entries, took = entries(build), times(build)
    print("| feature | test files (under tests/) | entries (`ctest -R`) | label | entries, time in the last run |")
    print("|---|---|---|---|---|")
    for feature, files, pattern in FEATURES:
        names = [n for n in all_entries if re.search(pattern, n)]
        labels = sorted({label for n in names for label in all_entries[n]} - {"long"})
        total = sum(took.get(n, 0) for n in names)
        print(f"| {feature} | {files} | `{pattern}` | {', '.join(labels) or '-'} | {len(names)}, {total:.0f} s |")


if __name__ == "__main__":
    main()
