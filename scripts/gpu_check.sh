#!/usr/bin/env bash
# The GPU half of blaster's checks, in one call on a machine with a GPU and a build carried over
# from the build machine (CONTRIBUTING.md, "Running on a GPU"): the GPU tests, PyTorch's copy
# bandwidth beside blaster's ceilings, and a bench of every core10 task.
#
#   scripts/gpu_check.sh tests            the GPU tests (scripts/test.sh --gpu-only)
#   scripts/gpu_check.sh copy             PyTorch's 2 GiB copy and blaster's memory ceilings
#   scripts/gpu_check.sh bench [TASK...]  `blaster bench --json` of each core10 task (default all),
#                                         the canonical case, and relu's and matvec's large ones
#
# Results go to $OUT (default ./gpu-check), one JSON per bench, and a table per step on stdout.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=${OUT:-gpu-check}
mkdir -p "$out"
step=${1:-}
shift || true

summarize() {  # bench JSON files -> one line per variant
  python3 - "$@" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    try:
        r = json.load(open(path))
    except Exception as e:
        print(f"{path}: unreadable ({e})")
        continue
    m = r.get("memory_ceilings", {})
    print(f"== {r['task']} case {r['case']} ({r['shape']}), {r['timing']['mode']}: "
          f"copy {m.get('copy', {}).get('bytes_per_second', 0) / 1e9:.0f} GB/s, "
          f"read {m.get('read', {}).get('bytes_per_second', 0) / 1e9:.0f}, "
          f"write {m.get('write', {}).get('bytes_per_second', 0) / 1e9:.0f}, "
          f"L2 {m.get('l2', {}).get('bytes_per_second', 0) / 1e9:.0f}")
    for x in r["results"]:
        roof = x.get("roofline", {})
        p = x.get("poisoned_launches") or {}
        med = lambda v: sorted(v)[len(v) // 2] if v else float("nan")
        pc = med(p.get("poisoned_us", [])) / med(p.get("control_us", [])) if p else float("nan")
        ch = med(p.get("control_us", [])) / p["hot_us"] if p and p.get("hot_us") else float("nan")
        time = x.get("time_us")
        print(f"  {x['variant'][:44]:<44} {x['status']:<8} {x['reason'] or '':<18} "
              f"{time if time is not None else float('nan'):>10.2f} us "
              f"{x.get('speedup') or float('nan'):>6.2f}x "
              f"{roof.get('level', '-'):>7} {roof.get('pct', float('nan')):>6.1f}% roof "
              f"poisoned/control {pc:.3f} control/hot {ch:.3f}")
        if x["status"] != "passed" and x.get("message"):
            print(f"      {x['message'][:200]}")
EOF
}

case "$step" in
  tests)
    scripts/test.sh --gpu-only --no-build
    ;;
  copy)
    python3 scripts/benchmark_pytorch.py --copy-only --out "$out/pytorch-copy.json"
    build/blaster bench --task relu --case large --mode hot --samples 10 --json \
      >"$out/bench-relu-large-ceilings.json"
    python3 - "$out/pytorch-copy.json" "$out/bench-relu-large-ceilings.json" <<'EOF'
import json, sys
torch = json.load(open(sys.argv[1]))["copy"]
m = json.load(open(sys.argv[2]))["memory_ceilings"]
t = torch["bytes_per_second"]
print(f"PyTorch copy (2 GiB each way, hot): {t / 1e9:.1f} GB/s")
for name in ("copy", "read", "write", "l2"):
    c = m[name]
    print(f"blaster {name:<5} {c['bytes_per_second'] / 1e9:8.1f} GB/s  "
          f"{c['bytes_per_second'] / t:6.3f}x PyTorch's copy  spread {100 * c['spread']:.2f}%  "
          f"{c['config']}")
print(f"peak (memory clock x bus width): {m['peak_bytes_per_second'] / 1e9:.1f} GB/s")
EOF
    ;;
  bench)
    tasks=("$@")
    ((${#tasks[@]} > 0)) || tasks=(matvec matmul_smallk relu softmax gelu rmsnorm layernorm \
      sum_dim1 newgelu cross_entropy)
    files=()
    for task in "${tasks[@]}"; do
      build/blaster bench --task "$task" --json >"$out/bench-$task.json" || true
      files+=("$out/bench-$task.json")
      if [[ $task == relu || $task == matvec ]]; then
        build/blaster bench --task "$task" --case large --mode hot --json \
          >"$out/bench-$task-large.json" || true
        files+=("$out/bench-$task-large.json")
      fi
    done
    summarize "${files[@]}"
    ;;
  *)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
