#!/usr/bin/env python3
"""Checks a JUnit XML report against the rules the test reporters of GitLab, Jenkins and
GitHub rely on, and prints what it holds, one line per suite and per case, for
tests/lua/junit_test.lua to compare. Exit status 1, with the broken rule, when one is.

Rules: the file is well-formed XML; the root is <testsuites> with tests, failures,
errors, skipped (integers) and time (seconds); each <testsuite> has name, tests,
failures, errors, skipped and time, its counts those of its <testcase>s; the root's
counts are the sums of its suites'; each <testcase> has classname, name and time and
at most one of <failure>, <error> (each with a message) and <skipped>.
Usage: check_junit.py REPORT"""
import sys
import xml.etree.ElementTree as ET

COUNTS = ("tests", "failures", "errors", "skipped")


def broken(rule):
    print("junit: " + rule)
    sys.exit(1)


def number(node, attribute, kind):
    value = node.get(attribute)
    if value is None:
        broken("<%s> has no %s" % (node.tag, attribute))
    try:
        n = kind(value)
    except ValueError:
        broken("<%s %s=%r> is not a number" % (node.tag, attribute, value))
    if n < 0:
        broken("<%s %s=%r> is negative" % (node.tag, attribute, value))
    return n


def outcome(case):
    found = [c for c in case if c.tag in ("failure", "error", "skipped")]
    if len(found) > 1:
        broken("a testcase has more than one outcome")
    if not found:
        return "passed", ""
    o = found[0]
    if o.tag in ("failure", "error") and o.get("message") is None:
        broken("a <%s> has no message" % o.tag)
    return o.tag, o.get("message", "")


def main(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        broken("not well-formed: %s" % e)
    if root.tag != "testsuites":
        broken("the root is <%s>, not <testsuites>" % root.tag)
    totals = dict.fromkeys(COUNTS, 0)
    number(root, "time", float)
    for suite in root:
        if suite.tag != "testsuite":
            broken("<%s> under <testsuites>" % suite.tag)
        if not suite.get("name"):
            broken("a testsuite has no name")
        number(suite, "time", float)
        seen = dict.fromkeys(COUNTS, 0)
        lines = []
        for case in suite:
            if case.tag != "testcase":
                continue
            for a in ("classname", "name"):
                if case.get(a) is None:
                    broken("a testcase has no %s" % a)
            number(case, "time", float)
            kind, message = outcome(case)
            seen["tests"] += 1
            if kind == "failure":
                seen["failures"] += 1
            elif kind != "passed":
                seen[kind if kind == "skipped" else "errors"] += 1
            lines.append("case %s | %s | %s | %s" % (case.get("classname"), case.get("name"), kind, message))
        for a in COUNTS:
            if number(suite, a, int) != seen[a]:
                broken("testsuite %s says %s=%s, its cases %d" % (suite.get("name"), a, suite.get(a), seen[a]))
            totals[a] += seen[a]
        print("suite %s %s" % (suite.get("name"), " ".join("%s=%d" % (a, seen[a]) for a in COUNTS)))
        print("\n".join(lines))
    for a in COUNTS:
        if number(root, a, int) != totals[a]:
            broken("testsuites says %s=%s, its suites %d" % (a, root.get(a), totals[a]))
    print("total " + " ".join("%s=%d" % (a, totals[a]) for a in COUNTS))


main(sys.argv[1])
