#!/usr/bin/env python3
"""The table at the top of docs/project-tests.md: each feature, its test files, its ctest
entries, their labels and how long they take.

    tests/suites.py [BUILD_DIR]      print the table (default build); BUILD_DIR must
                                     have run the suite once (ctest keeps each entry's
                                     average time in Testing/Temporary/CTestCostData.txt)

The features and their files are listed here; the entries, labels and times come from
ctest itself (`ctest -N --show-only=json-v1`, its cost data) and the Catch2 binary's
list of cases with their source files, so the table says what the suite is, not what
someone remembered of it. A Catch2 case is matched as "unit/FILE.cpp: NAME", every
other entry by its ctest name.
"""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

# feature, test files, ctest -R pattern
FEATURES = [
    ("Signing, verification, aws-chunked bodies", "unit/sigv4_test.cpp, aws_chunked_test.cpp, streamed_upload_test.cpp",
     r"^unit/(sigv4|aws_chunked|streamed_upload)_test"),
    ("The model: limits, validation, protocol, help", "unit/model_test.cpp, limits_test.cpp, protocol_test.cpp, "
     "xml_writer_test.cpp, help_test.cpp, bounds_test.cpp, mime_test.cpp, dates_test.cpp, body_test.cpp",
     r"^unit/(model|limits|protocol|xml_writer|help|bounds|mime|dates|body)_test"),
    ("Transport, client, retries, trust", "unit/transport_test.cpp, client_test.cpp, client_trust_test.cpp, "
     "loop_test.cpp, config_test.cpp, scale_test.cpp, pattern_test.cpp", r"^unit/(transport|client|client_trust|loop|config|scale|pattern)_test"),
    ("Hostile input, redaction, recordings", "unit/hostile_input_test.cpp, redact_test.cpp, cassette_test.cpp",
     r"^unit/(hostile_input|redact|cassette)_test"),
    ("The emulator in process", "unit/emulator_*_test.cpp, blob_test.cpp, checksum_test.cpp",
     r"^unit/(emulator_\w+|blob|checksum)_test"),
    ("The REPL and Lua errors", "unit/repl_terminal_test.cpp, lua_errors_test.cpp, repl/tmux_test.sh",
     r"^(unit/(repl_terminal|lua_errors)_test|repl\.)"),
    ("The Lua API end to end", "lua/*_test.lua", r"^lua\."),
    ("The harness's matchers and waits", "helpers/*_test.lua", r"^helpers\."),
    ("Every operation", "regression/*_test.lua", r"^regression\."),
    ("The automation scripts", "scripts/*_test.lua", r"^scripts\."),
    ("serve driven from outside", "serve/*_test.sh", r"^serve\."),
    ("Real peers: aws-cli, s3cmd, rclone, boto3, s3rver", "serve/{awscli,s3cmd,rclone,boto3*}_test.sh, interop/",
     r"^(serve\.(awscli|s3cmd|rclone|boto3)|interop\.)"),
    ("Fuzz targets, short runs", "fuzz/fuzz_*.cpp", r"^fuzz\."),
    ("The repository's own rules", "luacheck, clang_format, lua_file_length, install/install_test.sh, bench/render.py, files_home_test.sh, tour",
     r"^(luacheck|clang_format|lua_file_length|install|docs\.|tour|ctest_environment|files_home)"),
]


def entries(build):
    """{name: [labels]} of every ctest entry."""
    out = subprocess.run(["ctest", "-N", "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True)
    result = {}
    for t in json.loads(out.stdout)["tests"]:
        labels = [p["value"] for p in t.get("properties", []) if p["name"] == "LABELS"]
        result[t["name"]] = labels[0] if labels else []
    return result


def unit_files():
    """{case name: "unit/FILE.cpp"} of the Catch2 cases, read from their TEST_CASE lines."""
    files = {}
    for source in sorted((ROOT / "tests" / "unit").glob("*.cpp")):
        text = source.read_text(errors="replace")
        for m in re.finditer(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', text):
            literals = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))
            name = "".join(literals).encode().decode("unicode_escape").encode("latin-1").decode("utf-8")
            files[name] = f"unit/{source.name}"
    return files


def times(build):
    """{name: average seconds} of the runs ctest remembers (its cost data: NAME RUNS SECONDS)."""
    data = pathlib.Path(build) / "Testing" / "Temporary" / "CTestCostData.txt"
    seconds = {}
    for line in data.read_text(errors="replace").splitlines() if data.exists() else []:
        if line.startswith("---"):
            break
        m = re.match(r"^(.*) (\d+) ([\d.]+)$", line)
        if m:
            seconds[m.group(1)] = float(m.group(3))
    return seconds


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    all_entries, took, files = entries(build), times(build), unit_files()
    print("| feature | test files (under tests/) | entries (`ctest -R`, or Catch2's source file) | label | entries, seconds (summed) |")
    print("|---|---|---|---|---|")
    for feature, listed, pattern in FEATURES:
        names = [n for n in all_entries if re.search(pattern, f"{files[n]}: {n}" if n in files else n)]
        labels = sorted({label for n in names for label in all_entries[n]} - {"long"})
        total = sum(took.get(n, 0) for n in names)
        cell = pattern.replace("|", "\\|")  # a pipe in a table's cell, code or not, is escaped
        print(f"| {feature} | {listed.replace('|', chr(92) + '|')} | `{cell}` | {', '.join(labels) or '-'} | "
              f"{len(names)}, {total:.0f} s |")
    matched = {n for _, _, pattern in FEATURES for n in all_entries
               if re.search(pattern, f"{files[n]}: {n}" if n in files else n)}
    rest = sorted(set(all_entries) - matched)
    if rest:
        print(f"\n{len(rest)} entries in no feature: " + ", ".join(rest[:10]) + (" ..." if len(rest) > 10 else ""))


if __name__ == "__main__":
    main()
