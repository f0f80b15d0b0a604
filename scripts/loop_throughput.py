#!/usr/bin/env python3
"""How many verdicts an optimization loop gets per hour on this GPU.

Runs `blaster optimize` with a proposer that sends one candidate over and over (its params pinned
to their first values, so that each step is one variant), once with the same source every step
(the compile cached after the first) and once with a new comment in every step (NVRTC compiles
each), and prints steps per hour and where a step's time goes, from each step's recorded phases.

  scripts/loop_throughput.py --task rmsnorm --candidate kernels/rmsnorm/rmsnorm_vec_regs.cu
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HEADER = re.compile(r"/\*\s*blaster\s*(\{.*?\})\s*\*/", re.S)
PHASES = ["probe", "references", "compile", "gate", "timing", "counters"]


def read(path):
    with open(path) as f:
        return f.read()


def pinned(source):
    """The candidate with every param reduced to its first value: one variant."""
    match = HEADER.search(source)
    if not match:
        sys.exit("the candidate has no /* blaster {...} */ launch plan")
    plan = json.loads(match.group(1))
    plan["params"] = {name: values[:1] for name, values in plan.get("params", {}).items()}
    return source[: match.start(1)] + json.dumps(plan, indent=1) + source[match.end(1) :]


def propose(source_file, fresh):
    """The proposer side: one reply per request line, until the input ends."""
    source = read(source_file)
    for step, _ in enumerate(sys.stdin, start=1):
        text = source + (f"\n// step {step}\n" if fresh else "")
        print(json.dumps({"source": text, "hypothesis": "the same kernel again", "tags": ["throughput"]}),
              flush=True)


def run(args, fresh, home):
    me = os.path.abspath(__file__)
    # This very interpreter: the proposer's box passes PATH on, but not what a shim may need.
    proposer = f"{sys.executable} {me} --propose {args.pinned_file}" + (" --fresh" if fresh else "")
    command = [args.blaster, "--root", args.root, "--home", home, "optimize", "--task", args.task,
               "--proposer", proposer, "--steps", str(args.steps), "--sessions", str(args.sessions),
               "--json"]
    if args.no_profile:
        command.append("--no-profile")
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout)


def summarize(name, result):
    steps = result["steps"]
    bad = [s for s in steps if s["status"] != "ok"]
    if bad:
        sys.exit(f"{name}: step {bad[0]['step']} was {bad[0]['reason']}: {bad[0]['message']}")
    later = steps[1:] or steps
    per_step = statistics.mean(s["elapsed_s"] for s in later)
    row = {"mode": name, "steps": len(steps), "first_s": steps[0]["elapsed_s"], "step_s": per_step,
           "per_hour": 3600.0 / per_step}
    for phase in PHASES:
        row[phase] = statistics.mean(s.get("phase_ms", {}).get(phase, 0.0) for s in later)
    row["other"] = 1000.0 * per_step - sum(row[p] for p in PHASES)
    speedups = [s["speedup"] for s in later if s.get("speedup") is not None]
    if len(speedups) < len(later):
        sys.exit(f"{name}: {len(later) - len(speedups)} steps passed without a speedup")
    row["speedup"] = statistics.median(speedups)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--propose", help=argparse.SUPPRESS)
    parser.add_argument("--fresh", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--blaster", default="build/blaster")
    parser.add_argument("--root", default=".")
    parser.add_argument("--task", default="rmsnorm")
    parser.add_argument("--candidate", default="kernels/rmsnorm/rmsnorm_vec_regs.cu")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=2, help="timing sessions per step")
    parser.add_argument("--no-profile", action="store_true", help="steps without counters")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--save", metavar="DIR", help="also write each run's optimize --json there")
    args = parser.parse_args()
    if args.propose:
        return propose(args.propose, args.fresh)

    with tempfile.TemporaryDirectory(prefix="blaster-throughput-") as scratch:
        args.pinned_file = os.path.join(scratch, os.path.basename(args.candidate))
        with open(args.pinned_file, "w") as f:
            f.write(pinned(read(args.candidate)))
        rows = []
        for name, fresh in (("cached compile", False), ("compiled every step", True)):
            home = os.path.join(scratch, name.split()[0])
            result = run(args, fresh, home)
            if args.save:
                os.makedirs(args.save, exist_ok=True)
                with open(os.path.join(args.save, name.split()[0] + ".json"), "w") as f:
                    json.dump(result, f, indent=1)
            rows.append(summarize(name, result))
    device = result.get("device") or {}
    if args.json:
        print(json.dumps({"device": device, "task": args.task, "case": result["case"],
                          "sessions": args.sessions, "counters": not args.no_profile, "rows": rows},
                         indent=1))
        return
    print(f"{device.get('name', '?')}, task {args.task} ({result['case']}: {result['shape']}, "
          f"{result['dtype']}), {args.sessions} timing sessions per step, "
          f"counters {'off' if args.no_profile else 'on'}; per step after the first, mean [ms]:\n")
    print("| mode | steps | first step [s] | step [s] | steps/hour | " + " | ".join(PHASES) +
          " | other | speedup |")
    print("|---" * (len(PHASES) + 7) + "|")
    for r in rows:
        print(f"| {r['mode']} | {r['steps']} | {r['first_s']:.2f} | {r['step_s']:.2f} | "
              f"{r['per_hour']:.0f} | " + " | ".join(f"{r[p]:.0f}" for p in PHASES) +
              f" | {r['other']:.0f} | {r['speedup']:.2f}x |")


if __name__ == "__main__":
    main()
