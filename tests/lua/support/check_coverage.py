#!/usr/bin/env python3
"""Reads the reports of `cloudlua test --coverage DIR` as CI dashboards do and prints
what they hold, for tests/lua/test_runner_test.lua to compare: a line per file,
"FILE LF LH", then its lines as "FILE:LINE HITS". Exit status 1, with the broken rule,
when one is.

Rules: DIR/cobertura.xml is well-formed XML (xml.etree); its root is <coverage> with
line-rate, lines-valid and lines-covered, its counts the sums of its <line>s; each
<package> holds <classes> of <class> with a filename (relative: no leading /) and a
line-rate, each <line> a number and hits. DIR/lcov.info is records of TN, SF, DA, LF,
LH and end_of_record, LF and LH the counts of its DA lines; both reports hold the same
files and lines.
Usage: check_coverage.py DIR"""
import sys
import xml.etree.ElementTree as ET


def broken(rule):
    print("coverage: " + rule)
    sys.exit(1)


def cobertura(path):
    """{file: {line: hits}} of a Cobertura report, its rules checked."""
    root = ET.parse(path).getroot()
    if root.tag != "coverage":
        broken("the root is <%s>, not <coverage>" % root.tag)
    files = {}
    for c in root.iter("class"):
        name = c.get("filename")
        if not name or name.startswith("/"):
            broken("a class with no relative filename: %r" % name)
        float(c.get("line-rate"))
        files[name] = {int(l.get("number")): int(l.get("hits")) for l in c.iter("line")}
    valid = sum(len(lines) for lines in files.values())
    covered = sum(1 for lines in files.values() for hits in lines.values() if hits > 0)
    if (int(root.get("lines-valid")), int(root.get("lines-covered"))) != (valid, covered):
        broken("lines-valid and lines-covered are not the sums of the lines")
    rate = covered / valid if valid else 1.0
    if abs(float(root.get("line-rate")) - rate) > 0.0001:
        broken("line-rate %s is not %d/%d" % (root.get("line-rate"), covered, valid))
    return files


def lcov(path):
    """{file: {line: hits}} of an lcov tracefile, its rules checked."""
    files, current = {}, None
    for text in open(path, encoding="utf-8").read().splitlines():
        key, _, value = text.partition(":")
        if key == "TN":
            continue
        if key == "SF":
            current = files.setdefault(value, {})
        elif key == "DA":
            line, hits = value.split(",")[:2]
            current[int(line)] = int(hits)
        elif key in ("LF", "LH"):
            want = len(current) if key == "LF" else sum(1 for h in current.values() if h > 0)
            if int(value) != want:
                broken("%s:%s where the DA lines give %d" % (key, value, want))
        elif text == "end_of_record":
            current = None
        else:
            broken("an unknown line: %r" % text)
    return files


def main():
    folder = sys.argv[1]
    xml_files, lcov_files = cobertura(folder + "/cobertura.xml"), lcov(folder + "/lcov.info")
    if xml_files != lcov_files:
        broken("cobertura.xml and lcov.info differ")
    for name in sorted(lcov_files):
        lines = lcov_files[name]
        print("%s %d %d" % (name, len(lines), sum(1 for h in lines.values() if h > 0)))
        for line in sorted(lines):
            print("%s:%d %d" % (name, line, lines[line]))


main()
