#!/usr/bin/env python3
"""Renders the benchmark tables of docs/performance.md and README.md from the results
files that tests/bench's scripts write (tests/bench/results/<script>.jsonl, a JSON line
per figure: run, figure, peer, value, unit, rounds, date, build, commit, load).

A document holds a table where it says

    <!-- render BENCH [figures=REGEX] -->
    ...whatever was rendered last...
    <!-- /render -->

and the lines between are replaced by the newest figures of results/BENCH.jsonl: a row per
figure (in the order the run measured them; with figures=, only those whose name the
regular expression matches; with figures=^NAME:, a name and a colon, that is left out
of the names shown), a column per tool (cloudlua first), each peer's figure with its
ratio to cloudlua's (taken from the run cloudlua's figure came from: never a ratio
across runs), and a line saying when, with which build, under what load. The figures
of tests/bench/ab.sh -r STEP (results/ab.jsonl) have the columns before and after,
with after's ratio to before's.

    tests/bench/render.py            rewrite the documents
    tests/bench/render.py --check    exit 1 when a document differs from its results, a
                                     table has no results, or tests/bench/all.sh leaves a
                                     benchmark out
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "bench" / "results"
DOCUMENTS = [ROOT / "docs" / "performance.md", ROOT / "README.md"]
BLOCK = re.compile(r"(<!-- render (\S+)(?: figures=([^>]*?))? -->\n)(.*?)(<!-- /render -->)", re.S)


def newest(bench):
    """The newest line of each (figure, peer) in results/BENCH.jsonl, in the order the
    figures were first measured (a script run at two sizes adds the second's figures)."""
    path = RESULTS / f"{bench}.jsonl"
    if not path.exists():
        return []
    latest = {}
    for text in path.read_text().splitlines():
        if text.strip():
            line = json.loads(text)
            key = line["figure"], line["peer"]
            if key not in latest or line["run"] >= latest[key]["run"]:
                latest[key] = line
    return list(latest.values())


def number(value, unit):
    """A figure as a person reads it: three significant digits, thousands grouped."""
    if abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.3g}" if value else "0"
    return f"{text} {unit}".strip()


def table(bench, selection):
    """The markdown lines of BENCH's newest figures, restricted to those selected."""
    run = newest(bench)
    if not run:
        return [f"(no figures yet: run `tests/bench/{bench}.sh`, then `tests/bench/render.py`)"]
    wanted = re.compile(selection) if selection else None
    figures, peers, cell = [], [], {}
    for line in run:
        if wanted and not wanted.search(line["figure"]):
            continue
        if line["figure"] not in figures:
            figures.append(line["figure"])
        if line["peer"] not in peers:
            peers.append(line["peer"])
        cell[line["figure"], line["peer"]] = line
    peers.sort(key=lambda p: p != "cloudlua")  # the base: cloudlua, else the first measured (ab's "before")
    # A peer's figure only from the run its row's base was measured in: a ratio is taken
    # side by side, never across runs (a peer measured by hand once drops out).
    for (figure, peer), line in list(cell.items()):
        base = cell.get((figure, peers[0]))
        if peer != peers[0] and base and line["run"] != base["run"]:
            del cell[figure, peer]
    peers = [p for p in peers if any(key[1] == p for key in cell)]
    out = ["| figure | " + " | ".join(peers) + " |", "|---" * (len(peers) + 1) + "|"]
    # figures=^STEP: (a name and a colon, no pattern: ab's steps) leaves "STEP: " out of the rows
    prefix = re.match(r"\^([^\\^$.|?*+()\[\]{}]+:)$", selection or "")
    for figure in figures:
        base = cell.get((figure, peers[0]))
        shown_name = figure[len(prefix.group(1)):].strip() if prefix else figure
        row = []
        for peer in peers:
            line = cell.get((figure, peer))
            if line is None:
                row.append("-")
                continue
            text = number(line["value"], line["unit"])
            if peer != peers[0] and base and base["value"]:
                text += f" ({line['value'] / base['value']:.2g}x)"
            row.append(text)
        out.append(f"| {shown_name} | " + " | ".join(row) + " |")
    shown = [cell[key] for key in cell]
    loads = sorted(line["load"] for line in shown)
    runs = sorted({line["run"] for line in shown})
    builds = sorted({(line.get("build") or "unknown") + (" " + line["commit"] if line.get("commit") else "")
                     for line in shown})
    rounds = sorted({line["rounds"] for line in shown if line.get("rounds")})
    out.append("")
    out.append(f"`tests/bench/{bench}.sh`, run {', '.join(runs)}; build {', '.join(builds)}; load average "
               f"{loads[0]:.1f}-{loads[-1]:.1f}"
               f"{'; medians of ' + '/'.join(map(str, rounds)) + ' rounds' if rounds else ''}. "
               f"A {'peer' if peers[0] == 'cloudlua' else 'column'}'s ratio is its figure over {peers[0]}'s.")
    return out


def render(text):
    def block(m):
        return m.group(1) + "\n".join(table(m.group(2), m.group(3))) + "\n" + m.group(5)
    return BLOCK.sub(block, text)


def main():
    check = sys.argv[1:] == ["--check"]
    stale = []
    for doc in DOCUMENTS:
        if not doc.exists():
            continue
        old = doc.read_text()
        new = render(old)
        if new != old:
            stale.append(doc.relative_to(ROOT))
            if not check:
                doc.write_text(new)
    if check and stale:
        print("render.py: not rendered from tests/bench/results: " + ", ".join(map(str, stale))
              + " (run tests/bench/render.py)", file=sys.stderr)
        return 1
    if check:
        return 1 if missing_figures() or unplanned_benchmarks() else 0
    return 0


def missing_figures():
    """The tables of the documents that have no results yet, each named on stderr."""
    missing = [(doc.relative_to(ROOT), m.group(2)) for doc in DOCUMENTS if doc.exists()
               for m in BLOCK.finditer(doc.read_text()) if not newest(m.group(2))]
    for doc, bench in missing:
        print(f"render.py: {doc}: no figures of {bench} (run tests/bench/all.sh build-release/cloudlua {bench})",
              file=sys.stderr)
    return missing


def unplanned_benchmarks():
    """The benchmarks of tests/bench that tests/bench/all.sh does not run, named on stderr."""
    plan = (ROOT / "tests" / "bench" / "all.sh").read_text()
    left = [p.stem for p in sorted((ROOT / "tests" / "bench").glob("*_bench.sh")) if f'"{p.stem}|' not in plan]
    for name in left:
        print(f"render.py: tests/bench/all.sh does not run {name}", file=sys.stderr)
    return left


if __name__ == "__main__":
    sys.exit(main())
