#!/usr/bin/env python3
"""How far CUPTI's counters of one kernel move from one process to the next, beside Nsight
Compute's: whether a counter that ncu and CUPTI disagree on by more than 5% disagrees by more
than CUPTI does with itself across fresh processes (fresh allocations, fresh placement), which is
how ncu's passes run.

    python3 scripts/counter_spread.py RUN.json... --ncu NCU.json [--over 0.05]

Each RUN.json is `blaster --json profile ...` from a process of its own; NCU.json is `blaster
--json profile ... --ncu`, whose results carry ncu's values beside CUPTI's. Per variant, kernel
and counter, it prints CUPTI's least and most value over the runs, their spread (most over least
- 1), ncu's value and how far it lies outside CUPTI's range (0 inside), and marks the counters
where ncu lies further from CUPTI's range than `--over` of its width. Exits 0; 2 for input it
cannot read.
"""

import argparse
import json
import sys


def counters_of(report, key):
    """{(variant, kernel, counter): value} of the report's `key` profile ("counters" or "ncu")."""
    out = {}
    for result in report.get("results", []):
        profile = (result.get("diagnostics") or {}).get(key)
        if not profile:
            continue
        for kernel in profile.get("kernels", []):
            for name, value in kernel.get("counters", {}).items():
                out[(result.get("variant", "?"), kernel.get("kernel", "?"), name)] = value
    return out


def outside(value, low, high):
    """How far `value` lies outside [low, high], relative to the range's larger end; 0 inside."""
    scale = max(abs(low), abs(high), 1e-12)
    if value < low:
        return (low - value) / scale
    if value > high:
        return (value - high) / scale
    return 0.0


def rows(runs, ncu, over):
    """One row per counter that every run and ncu report, sorted by how far ncu lies outside."""
    keys = set(ncu)
    for run in runs:
        keys &= set(run)
    table = []
    for key in keys:
        values = [run[key] for run in runs]
        low, high = min(values), max(values)
        spread = high / low - 1.0 if low > 0 else 0.0
        beyond = outside(ncu[key], low, high)
        table.append({"variant": key[0], "kernel": key[1], "counter": key[2], "cupti_low": low,
                      "cupti_high": high, "cupti_spread": spread, "ncu": ncu[key],
                      "ncu_outside": beyond, "flagged": beyond > over})
    table.sort(key=lambda r: (-r["ncu_outside"], r["variant"], r["counter"]))
    return table


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"counter_spread.py: {path}: {e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="blaster --json profile outputs, one per process")
    parser.add_argument("--ncu", required=True, help="blaster --json profile --ncu output")
    parser.add_argument("--over", type=float, default=0.05,
                        help="flag ncu values this far outside CUPTI's range (default 0.05)")
    args = parser.parse_args()
    if len(args.runs) < 2:
        parser.error("two runs at least: a spread needs two processes")
    runs = [counters_of(read(p), "counters") for p in args.runs]
    ncu_report = read(args.ncu)
    table = rows(runs, counters_of(ncu_report, "ncu"), args.over)
    if not table:
        print("no counter is in every run and in ncu's profile")
        return
    print(f"{'variant':44} {'counter':48} {'CUPTI low':>12} {'CUPTI high':>12} {'spread':>8} "
          f"{'ncu':>12} {'outside':>8}")
    for r in table:
        mark = "  <-" if r["flagged"] else ""
        print(f"{r['variant'][:44]:44} {r['counter'][:48]:48} {r['cupti_low']:12.4g} "
              f"{r['cupti_high']:12.4g} {100 * r['cupti_spread']:7.2f}% {r['ncu']:12.4g} "
              f"{100 * r['ncu_outside']:7.2f}%{mark}")
    flagged = sum(r["flagged"] for r in table)
    print(f"{flagged} of {len(table)} counters: ncu lies more than {100 * args.over:g}% outside "
          f"CUPTI's range over {len(runs)} processes")


if __name__ == "__main__":
    main()
