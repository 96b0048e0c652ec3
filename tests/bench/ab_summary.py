#!/usr/bin/env python3
"""The summary of a tests/bench/ab.sh run: each figure's median over the turns of each
side, and B/A (below 1: B takes less). With --record STEP the medians are also appended
to tests/bench/results/ab.jsonl, as figures named "STEP: figure" measured by "before"
and "after" (their commit "A -> B"), which docs/performance.md renders (render.py): a change's gain
against the main it started from, kept beside the goals it works towards.

    ab_summary.py [--record STEP] FOLDER A B NAME_A NAME_B SCRIPT...

FOLDER holds ab.sh's turns (A-B.BENCH.A.jsonl and .B.jsonl: tests/bench/lib.sh's lines).
"""
import datetime
import json
import pathlib
import statistics
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "ab.jsonl"


def turns(folder, a, b, bench):
    """{(figure, peer, unit): {"A": [values], "B": [values]}}, a value a turn, and the
    highest load average a turn ran under."""
    sides, load = {}, 0.0
    for side in "AB":
        path = pathlib.Path(folder) / f"{a}-{b}.{bench}.{side}.jsonl"
        for text in path.read_text().splitlines() if path.exists() else []:
            line = json.loads(text)
            sides.setdefault((line["figure"], line["peer"], line["unit"]), {}).setdefault(side, []).append(line["value"])
            load = max(load, line["load"])
    return sides, load


def main(argv):
    step = None
    if argv[:1] == ["--record"]:
        step, argv = argv[1], argv[2:]
    folder, a, b, name_a, name_b, *scripts = argv
    now_load = pathlib.Path("/proc/loadavg").read_text().split()[0]
    print(f"A = {name_a}, B = {name_b}; medians of each side's turns, load average now {now_load}")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    recorded = []
    for script in scripts:
        bench = pathlib.Path(script).stem
        print(f"\n{bench}")
        print(f"  {'figure':<60} {'tool':<14} {'A':>12} {'B':>12} {'B/A':>6}")
        sides, load = turns(folder, a, b, bench)
        for (figure, peer, unit), values in sides.items():
            ma, mb = (statistics.median(values[side]) if side in values else None for side in "AB")
            ratio = f"{mb / ma:.2f}" if ma and mb is not None else "-"
            shown = lambda v: "-" if v is None else f"{v:.4g} {unit}"
            print(f"  {figure[:60]:<60} {peer[:14]:<14} {shown(ma):>12} {shown(mb):>12} {ratio:>6}")
            if step and peer == "cloudlua":
                for side, value in (("before", ma), ("after", mb)):
                    if value is not None:
                        recorded.append({"run": now, "figure": f"{step}: {figure}",
                                         "peer": side, "value": value, "unit": unit,
                                         "rounds": min(len(v) for v in values.values()),
                                         "date": now[:10], "build": "Release", "commit": f"{name_a} -> {name_b}",
                                         "load": load})
    if recorded:
        with RESULTS.open("a") as out:
            out.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in recorded)
        print(f"\n{len(recorded)} medians recorded in {RESULTS.relative_to(RESULTS.parents[3])} as '{step}'")


if __name__ == "__main__":
    main(sys.argv[1:])
