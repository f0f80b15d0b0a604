#!/usr/bin/env python3
"""Measures what a second GPU buys a portfolio: the same cases on one GPU, then on several.

Runs `blaster portfolio` twice over the same suite, each from a fresh home: first with
`--gpus FIRST`, then with `--gpus LIST`, and compares the two. The report (Markdown on stdout,
JSON with --json-out) holds each side's wall time and cases per hour, the ratio of the two, and
per case the best variant, its speedup over the baseline with its 95% interval and its verdict on
each side; a case agrees when both sides give the same verdict and each side's speedup lies
within the other's interval. Exit status: 0 when every case agrees and the ratio is at least
--goal, 1 when not, 2 on bad input or a portfolio that failed.

With --canonical, the suite is cut to each entry's canonical case (written beside the homes as
<suite>-canonical.json), which keeps a core10 comparison within a few minutes a side.

  scripts/scaling.py --suite core10 --canonical --gpus 0,1 --work /tmp/scaling
"""

import argparse
import datetime
import json
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def suite_file(name_or_file, canonical, work):
    path = pathlib.Path(name_or_file)
    if not path.is_file():
        path = ROOT / "portfolio" / "suites" / f"{name_or_file}.json"
    if not path.is_file():
        sys.exit(f"scaling.py: --suite {name_or_file}: no such suite file or name under "
                 f"portfolio/suites/")
    if not canonical:
        return path
    suite = json.loads(path.read_text())
    suite["name"] += "-canonical"
    suite["title"] += " (canonical cases only)"
    for entry in suite["entries"]:
        entry["cases"] = [c for c in entry["cases"] if c["case"] == "canonical"][:1]
    suite["entries"] = [e for e in suite["entries"] if e["cases"]]
    cut = work / f"{suite['name']}.json"
    cut.write_text(json.dumps(suite, indent=1) + "\n")
    return cut


def run_side(args, suite, gpus, name):
    home = args.work / name
    out = args.work / f"{name}-bundle"
    command = [args.blaster, "--home", str(home), "portfolio", "--suite", str(suite),
               "--gpus", gpus, "--out", str(out), "--fresh"]
    if args.sessions:
        command += ["--sessions", str(args.sessions)]
    if args.no_sanitize:
        command.append("--no-sanitize")
    print(f"scaling.py: {' '.join(command)}", file=sys.stderr, flush=True)
    started = time.monotonic()
    with open(args.work / f"{name}.log", "w") as log:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"scaling.py: the portfolio on GPUs {gpus} exited with {done.returncode}; see "
                 f"{args.work / (name + '.log')}")
    results = json.loads((out / "results.json").read_text())
    rows = results["rows"]
    return {"gpus": gpus, "wall_s": wall, "cases": len(rows),
            "cases_per_hour": 3600.0 * len(rows) / wall, "device": results["device"]["name"],
            "rows": {f"{r['task']}/{r['case']}": r for r in rows}}


def best_of(row):
    best = row.get("best") or {}
    return {"variant": best.get("variant"), "verdict": best.get("verdict"),
            "speedup": best.get("speedup"), "low": best.get("speedup_low"),
            "high": best.get("speedup_high")}


def within(point, other):
    return (point is not None and other["low"] is not None and other["high"] is not None
            and other["low"] <= point <= other["high"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", required=True, help="a suite's name or file")
    parser.add_argument("--gpus", default="0,1", help="the GPUs of the second side (default 0,1)")
    parser.add_argument("--canonical", action="store_true", help="only each entry's canonical case")
    parser.add_argument("--sessions", type=int, default=0, help="sessions per case (default: the suite's)")
    parser.add_argument("--no-sanitize", action="store_true", help="passed on to the portfolio")
    parser.add_argument("--goal", type=float, default=1.8, help="cases per hour, several over one")
    parser.add_argument("--work", type=pathlib.Path, required=True, help="folder for homes, bundles, logs")
    parser.add_argument("--blaster", default=str(ROOT / "build" / "blaster"))
    parser.add_argument("--json-out", type=pathlib.Path, help="also write the comparison as JSON")
    args = parser.parse_args()
    gpus = [g for g in args.gpus.split(",") if g]
    if len(gpus) < 2:
        sys.exit("scaling.py: --gpus names the GPUs of the second side: at least two (0,1)")
    args.work.mkdir(parents=True, exist_ok=True)
    suite = suite_file(args.suite, args.canonical, args.work)

    one = run_side(args, suite, gpus[0], "one")
    several = run_side(args, suite, ",".join(gpus), "several")
    ratio = several["cases_per_hour"] / one["cases_per_hour"]
    cases = []
    for key, row in one["rows"].items():
        a = best_of(row)
        b = best_of(several["rows"].get(key, {}))
        agrees = (a["verdict"] == b["verdict"] and within(a["speedup"], b)
                  and within(b["speedup"], a))
        cases.append({"case": key, "one": a, "several": b, "agrees": agrees})
    met = ratio >= args.goal and all(c["agrees"] for c in cases)

    def speedup(s):
        if s["speedup"] is None:
            return "-"
        if s["low"] is None:
            return f"{s['speedup']:.2f}x"
        return f"{s['speedup']:.2f}x [{s['low']:.2f}, {s['high']:.2f}]"

    print(f"# Scaling: {one['device']}, {datetime.date.today()}\n")
    print(f"Suite {suite.name}, the same {one['cases']} cases on both sides.\n")
    print("| GPUs | wall time | cases | cases per hour |")
    print("|---|---:|---:|---:|")
    for side in (one, several):
        print(f"| {side['gpus']} | {side['wall_s']:.0f} s | {side['cases']} | "
              f"{side['cases_per_hour']:.1f} |")
    print(f"\nCases per hour on {len(gpus)} GPUs over one: **{ratio:.2f}x** "
          f"(goal {args.goal:.2f}x: {'met' if ratio >= args.goal else 'missed'}).\n")
    print(f"| case | best on {gpus[0]} | speedup | verdict | best on {','.join(gpus)} | speedup "
          f"| verdict | agrees |")
    print("|---|---|---:|---|---|---:|---|---|")
    for c in cases:
        a, b = c["one"], c["several"]
        print(f"| {c['case']} | {a['variant']} | {speedup(a)} | {a['verdict']} | {b['variant']} | "
              f"{speedup(b)} | {b['verdict']} | {'yes' if c['agrees'] else 'NO'} |")
    if args.json_out:
        args.json_out.write_text(json.dumps(
            {"suite": suite.name, "device": one["device"], "goal": args.goal, "ratio": ratio,
             "met": met, "sides": [{k: v for k, v in s.items() if k != "rows"}
                                   for s in (one, several)],
             "cases": cases}, indent=1) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
