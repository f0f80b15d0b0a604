#!/usr/bin/env bash
# The GPU half of blaster's checks, in one call on a machine with a GPU and a build carried over
# from the build machine (CONTRIBUTING.md, "Running on a GPU"): the GPU tests, PyTorch's copy
# bandwidth beside blaster's ceilings, and a bench of every core10 task.
#
#   scripts/gpu_check.sh tests            the GPU tests (scripts/test.sh --gpu-only)
#   scripts/gpu_check.sh copy             PyTorch's 2 GiB copy and blaster's memory ceilings
#   scripts/gpu_check.sh bench [TASK...]  `blaster bench --json` of each core10 task (default all),
#                                         the canonical case, and relu's and matvec's large ones
#   scripts/gpu_check.sh drawn [TASK...]  every candidate of each task (default: all of them) through
#                                         the gate, which adds the shapes it draws from the task's
#                                         ranges, with a short timing: an honest kernel rejected on
#                                         a drawn case shows here with the case's name and shape
#   scripts/gpu_check.sh ncu              `blaster profile --ncu` of rmsnorm_vec_regs,
#                                         layernorm_resident and matmul_smallk_mma: every counter
#                                         beside Nsight Compute's, and the farthest apart
#   scripts/gpu_check.sh stalls           `blaster profile` of rmsnorm_vec_regs and layernorm_resident
#                                         in five fresh processes beside one `--ncu` run: CUPTI's
#                                         range of each counter over the processes, ncu's value
#                                         beside it (scripts/counter_spread.py)
#   scripts/gpu_check.sh gaps [NAME...]   `blaster bench --confirm --profile` of the core10 cases
#                                         furthest from their goals, each with its diagnosis lines
#                                         (matmul, matmul-large, layernorm, softmax-large,
#                                         cross-entropy-large; a large case takes about 5 minutes);
#                                         matmul's beside PyTorch's times on the same card
#   scripts/gpu_check.sh tune [TASK...]   `blaster tune` of each infer task's candidates at the
#                                         suite's cases (default: the tasks with no table for this
#                                         GPU) for at most $LIMIT seconds (default 540), into
#                                         kernels/<task>/tuned/ and $OUT/tuned.tar.gz;
#                                         `tar xf tuned.tar.gz` in the checkout on the build
#                                         machine takes the tables in
#   scripts/gpu_check.sh loop             an optimize session of 10 steps killed after KILL_AFTER
#                                         seconds (default 60) and resumed, its trajectory
#                                         exported signed, then `verify --remeasure 3` of it
#   scripts/gpu_check.sh infer i/N|all [SEED]
#                                         shard i of N (or the whole suite) of `blaster portfolio
#                                         --suite infer` for at most $LIMIT seconds (default 540),
#                                         its home in $OUT/infer-i.tar.gz (infer-all.tar.gz). SEED
#                                         is that file from an earlier call, or a portfolio bundle
#                                         (a checked-in partial one, say), merged into the fresh
#                                         home: the portfolio resumes after the cases it holds. On
#                                         the build machine, `blaster merge` the homes, then
#                                         `portfolio --suite infer --recorded` writes the bundle.
#                                         ALL_PARAMS=1 times every configuration, for a GPU with
#                                         no tuned tables: then `tune --from-runs` the tables, and
#                                         `portfolio --recorded --all-params --tables`
#
# Results go to $OUT (default ./gpu-check), one JSON per bench, and a table per step on stdout.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=${OUT:-gpu-check}
mkdir -p "$out"
step=${1:-}
shift || true

usage() {  # the header comment
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
}

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

pytorch_ratio() {  # PyTorch's times, the best confirmed candidate of a gaps table, their ratio
  python3 - "$@" <<'EOF'
import json, re, sys
pytorch, table, case = sys.argv[1:]
try:
    methods = next(c["methods"] for c in json.load(open(pytorch))["cases"]
                   if c["task"] == "matmul_smallk" and c["case"] == case)
except Exception as e:
    sys.exit(f"PyTorch: no times for the {case} case ({e}); see pytorch-matmul.log")
times = {m: v["hot_us"] for m, v in methods.items() if v.get("hot_us")}
confirmed = [(float(row[2]), row[0]) for row in (line.split() for line in open(table))
             if len(row) > 3 and re.match(r"[a-z_]+\[", row[0]) and row[1] == "passed"
             and "screened" not in row]
if not times or not confirmed:
    sys.exit(f"PyTorch: nothing to compare in the {case} case")
best, fastest = min(confirmed), min(times, key=times.get)
print("PyTorch, hot: " + ", ".join(f"{m} {t:.2f} us" for m, t in times.items()) +
      f" · {best[1]} {best[0]:.2f} us: {times[fastest] / best[0]:.2f}x of {fastest}")
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
  drawn)
    tasks=("$@")
    ((${#tasks[@]} > 0)) || mapfile -t tasks < <(find tasks -mindepth 2 -maxdepth 2 -name task.json |
      xargs -n1 dirname | xargs -n1 basename | sort)
    files=()
    for task in "${tasks[@]}"; do
      build/blaster bench --task "$task" --budget 0.05 --min-samples 3 --samples 50 --json \
        >"$out/drawn-$task.json" 2>"$out/drawn-$task.log" || true
      files+=("$out/drawn-$task.json")
    done
    summarize "${files[@]}"
    ;;
  ncu)
    for task_candidate in rmsnorm/rmsnorm_vec_regs layernorm/layernorm_resident \
      matmul_smallk/matmul_smallk_mma; do
      task=${task_candidate%%/*}
      build/blaster profile --task "$task" --candidate "kernels/$task_candidate.cu" --ncu \
        >"$out/ncu-$task.txt" 2>&1 || true
      echo "== $task_candidate"
      grep -E "diagnosis|counters beside|apart" "$out/ncu-$task.txt" || tail -3 "$out/ncu-$task.txt"
    done
    ;;
  stalls)
    # ncu runs the worker once per pass, each a fresh process; CUPTI counts its five runs in one.
    # A counter that moves across fresh processes as far as ncu lies from CUPTI is placement,
    # not a disagreement.
    for task_candidate in rmsnorm/rmsnorm_vec_regs layernorm/layernorm_resident; do
      task=${task_candidate%%/*}
      runs=()
      for i in 1 2 3 4 5; do
        build/blaster --json profile --task "$task" --candidate "kernels/$task_candidate.cu" \
          >"$out/stalls-$task-$i.json" 2>"$out/stalls-$task-$i.log" || true
        runs+=("$out/stalls-$task-$i.json")
      done
      build/blaster --json profile --task "$task" --candidate "kernels/$task_candidate.cu" --ncu \
        >"$out/stalls-$task-ncu.json" 2>"$out/stalls-$task-ncu.log" || true
      echo "== $task_candidate"
      python3 scripts/counter_spread.py "${runs[@]}" --ncu "$out/stalls-$task-ncu.json" || true
    done
    ;;
  gaps)
    names=("$@")
    ((${#names[@]} > 0)) || names=(matmul matmul-large layernorm softmax-large cross-entropy-large)
    for name in "${names[@]}"; do
      case "$name" in
        matmul) args=(--task matmul_smallk --case canonical) ;;
        matmul-large) args=(--task matmul_smallk --case large) ;;
        layernorm) args=(--task layernorm) ;;
        softmax-large) args=(--task softmax --case large) ;;
        cross-entropy-large) args=(--task cross_entropy --case large) ;;
        *)
          echo "gpu_check.sh gaps: no case named $name (see --help)" >&2
          exit 2
          ;;
      esac
      build/blaster bench "${args[@]}" --confirm --confirm-best 2 --profile \
        >"$out/gaps-$name.txt" 2>&1 || true
      echo "== $name"
      grep -E "^(candidate|init|memory ceilings|[a-z_]+\[)|diagnosis|A/A" "$out/gaps-$name.txt" ||
        tail -3 "$out/gaps-$name.txt"
      if [[ $name == matmul* ]]; then
        # The goal is PyTorch's fastest method, timed on this card in the same call.
        [[ -f $out/pytorch-matmul.json ]] ||
          python3 scripts/benchmark_pytorch.py --suite core10 --tasks matmul_smallk --modes hot \
            --out "$out/pytorch-matmul.json" >"$out/pytorch-matmul.log" 2>&1 || true
        pytorch_ratio "$out/pytorch-matmul.json" "$out/gaps-$name.txt" "${args[-1]}" || true
      fi
    done
    ;;
  tune)
    limit=${LIMIT:-540}
    deadline=$((SECONDS + limit))
    tasks=("$@")
    if ((${#tasks[@]} == 0)); then
      gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) || true
      device=${gpu// /_}
      for task in $(python3 -c 'import json
suite = json.load(open("portfolio/suites/infer.json"))
print(" ".join(dict.fromkeys(e["task"] for e in suite["entries"])))'); do
        compgen -G "kernels/$task/tuned/*/*device_name=$device,*" >/dev/null || tasks+=("$task")
      done
    fi
    for task in "${tasks[@]}"; do
      cases=$(python3 -c 'import json, sys
suite = json.load(open("portfolio/suites/infer.json"))
cases = [c["case"] for e in suite["entries"] if e["task"] == sys.argv[1] for c in e["cases"]]
print(",".join(cases))' \
        "$task")
      # The symbol a table's entries are keyed by: tokens, but a GEMV's rows and attention's
      # sequences.
      case "$task" in
        gemv) size=M ;;
        decode_attention) size=B ;;
        *) size=T ;;
      esac
      for candidate in "kernels/$task"/*.cu; do
        name=$(basename "$candidate" .cu)
        left=$((deadline - SECONDS))
        if ((left <= 0)); then
          echo "== $task/$name: not tuned, the $limit s of LIMIT are spent"
          continue
        fi
        timeout "$left" build/blaster tune --task "$task" --candidate "$candidate" \
          --cases "$cases" --size "$size" >"$out/tune-$name.txt" 2>&1 || true
        echo "== $task/$name at $cases"
        grep -vE "^blaster: " "$out/tune-$name.txt" | head -40 || true
        # After each table, so that a call cut short still returns the tables it finished.
        tar czf "$out/tuned.tar.gz" kernels/*/tuned
      done
    done
    ;;
  infer)
    shard=${1:?"gpu_check.sh infer: name the shard, e.g. 1/4, or all"}
    seed=${2:-}
    i=${shard%%/*}
    work=$(mktemp -d)
    home=$work/home
    mkdir "$home"
    if [[ -d $seed ]]; then
      build/blaster --home "$home" merge "$seed"
    elif [[ -n $seed ]]; then
      tar xf "$seed" -C "$home"
    fi
    args=(--suite infer)
    [[ $shard == all ]] || args+=(--shard "$shard")
    # The runs the bundle's tables come from, where this GPU has none: every configuration timed,
    # whatever a table names.
    [[ ${ALL_PARAMS:-0} == 1 ]] && args+=(--all-params)
    # Stopped at its limit, the portfolio resumes from its store when started again. The shard's
    # own bundle stays behind: the merged home writes the whole one.
    timeout "${LIMIT:-540}" build/blaster --home "$home" portfolio "${args[@]}" \
      --out "$work/bundle" >"$out/infer-$i.txt" 2>&1 || true
    tar czf "$out/infer-$i.tar.gz" -C "$home" .
    grep -vE "^blaster: " "$out/infer-$i.txt" | tail -60 || true
    ;;
  loop)
    # The loop's evidence end to end: an optimize session of ten steps by the built-in proposer,
    # blaster killed part way (after KILL_AFTER seconds, default 60) and the session resumed,
    # its trajectory exported signed, verified, and three of its steps measured again.
    home=$out/loop-home
    rm -rf "$home" "$out/loop-export" "$out"/loop-key.*
    build/blaster --home "$home" optimize --task rmsnorm --proposer params --steps 10 \
      >"$out/loop-1.txt" 2>&1 &
    pid=$!
    sleep "${KILL_AFTER:-60}"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    build/blaster --home "$home" optimize --resume latest >"$out/loop-2.txt" 2>&1 || true
    build/blaster keygen --out "$out/loop-key" >/dev/null
    build/blaster --home "$home" trajectories export --run latest --out "$out/loop-export" \
      --sign "$out/loop-key.key" >"$out/loop-3.txt" 2>&1 || true
    echo "== the session, before and after the kill"
    tail -5 "$out/loop-1.txt" || true
    tail -15 "$out/loop-2.txt" || true
    echo "== verify --remeasure 3"
    build/blaster verify "$out/loop-export" --pubkey "$out/loop-key.pub" --remeasure 3 || true
    ;;
  -h | --help)
    usage
    ;;
  *)
    usage
    exit 2
    ;;
esac
