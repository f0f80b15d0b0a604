#!/usr/bin/env python3
"""Times PyTorch eager and torch.compile on every case of a blaster suite, on this machine's GPU.

The protocol follows blaster's definitions, so that `blaster portfolio --pytorch FILE` compares
like with like:
  hot    back-to-back calls between two CUDA events, the count calibrated to about --sample-ms,
         the median over samples of the time per call;
  graph  the same calls captured once in a CUDA graph and replayed (blaster's graph mode);
  cold   a buffer twice the L2 written before each single call, timed by CUDA events.
Samples continue until the relative noise is at most --max-noise or --budget seconds pass. A
method that fails is kept with status "failed: why"; one whose noise stays above 5% is kept
with status "unstable". Inputs follow each task.json (shapes, dtypes, the case's symbols).

It also times PyTorch's own device-to-device copy of 2 GiB (bytes read plus written over the
time, hot), the number blaster's copy ceiling is held against; --copy-only times just that.

  python3 scripts/benchmark_pytorch.py --suite core10 --out pytorch-h200.json
  python3 scripts/benchmark_pytorch.py --suite core10 --list     # the cases, no GPU needed
  python3 scripts/benchmark_pytorch.py --copy-only               # PyTorch's copy bandwidth
"""

import argparse
import datetime
import json
import math
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# KernelBench level-1 semantics of every task a suite may name: inputs by buffer name.
MODELS = {
    "matvec": lambda t, i, s: t.matmul(i["A"], i["B"]),
    "matmul_smallk": lambda t, i, s: t.matmul(i["A"], i["B"]),
    "relu": lambda t, i, s: t.relu(i["x"]),
    "softmax": lambda t, i, s: t.softmax(i["x"], dim=1),
    "gelu": lambda t, i, s: t.nn.functional.gelu(i["x"]),
    "rmsnorm": lambda t, i, s: i["x"] / t.sqrt(t.mean(i["x"] ** 2, dim=1, keepdim=True) + s["eps"]),
    "layernorm": lambda t, i, s: t.nn.functional.layer_norm(
        i["x"], i["x"].shape[1:], i["weight"], i["bias"], s["eps"]),
    "sum_dim1": lambda t, i, s: t.sum(i["x"], dim=1, keepdim=True),
    "newgelu": lambda t, i, s: 0.5 * i["x"] * (1.0 + t.tanh(
        math.sqrt(2.0 / math.pi) * (i["x"] + 0.044715 * t.pow(i["x"], 3.0)))),
    "cross_entropy": lambda t, i, s: t.nn.functional.cross_entropy(i["logits"], i["targets"]),
    # The inference suite: what a PyTorch serving stack calls for each op.
    "rms_norm": lambda t, i, s: t.nn.functional.rms_norm(
        i["x"], (s["H"],), i["weight"], s["eps"]),
    "fused_add_rms_norm": lambda t, i, s: fused_add_rms_norm(t, i, s),
    "swiglu": lambda t, i, s: t.nn.functional.silu(i["x"][:, :s["I"]]) * i["x"][:, s["I"]:],
    "rope": lambda t, i, s: (rotate_half(t, i["q"], i, s), rotate_half(t, i["k"], i, s)),
    "embedding_gather": lambda t, i, s: t.nn.functional.embedding(i["ids"], i["table"]),
    "per_token_quant": lambda t, i, s: per_token_quant(t, i),
    "gemv": lambda t, i, s: t.nn.functional.linear(i["x"], i["w"]),
    "logits_topk": lambda t, i, s: t.topk(i["logits"], s["K"], dim=1),
    "moe_route": lambda t, i, s: moe_route(t, i, s),
    "decode_attention": lambda t, i, s: decode_attention(t, i, s),
    "top_p_sample": lambda t, i, s: top_p_sample(t, i, s),
    "kv_append": lambda t, i, s: kv_append(i, s),
}
# torch.compile's mode per task, as the same-GPU anchors used it.
COMPILE_MODES = {"matvec": "max-autotune-no-cudagraphs",
                 "matmul_smallk": "max-autotune-no-cudagraphs"}
DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
          "i32": "int32", "i64": "int64"}


def fused_add_rms_norm(torch, inputs, symbols):
    residual = inputs["x"] + inputs["residual"]
    return torch.nn.functional.rms_norm(residual, (symbols["H"],), inputs["weight"],
                                        symbols["eps"]), residual


def rotate_half(torch, x, inputs, symbols):
    """The rotate-half rotary embedding of x[T, heads, D] at each token's position."""
    half = symbols["D"] // 2
    cos_sin = inputs["cos_sin"][inputs["positions"]].unsqueeze(1)  # [T, 1, D]
    cos, sin = cos_sin[..., :half], cos_sin[..., half:]
    first, second = x[..., :half], x[..., half:]
    return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)


def per_token_quant(torch, inputs):
    x = inputs["x"].float()
    scale = (x.abs().amax(dim=1, keepdim=True) / 448.0).clamp(min=1.0 / (448.0 * 512.0))
    return (x / scale).to(torch.float8_e4m3fn), scale


def moe_route(torch, inputs, symbols):
    probabilities = torch.softmax(inputs["logits"].float(), dim=1)
    weights, experts = torch.topk(probabilities, 2, dim=1)
    weights = weights / weights.sum(dim=1, keepdim=True)
    flat = experts.flatten()
    order = torch.argsort(flat, stable=True)
    # Counted by a scatter: bincount asks the host for its length, which a graph cannot capture.
    counts = torch.zeros(symbols["E"] + 1, dtype=flat.dtype, device=flat.device)
    counts.scatter_add_(0, flat + 1, torch.ones_like(flat))
    return weights, experts, order, counts.cumsum(0)


def decode_attention(torch, inputs, symbols):
    """Each sequence's C tokens gathered through its block table, then SDPA with grouped heads.
    The cases a suite times have every sequence C tokens long, so no mask is passed (one would
    rule out the flash backend)."""
    batch, context = symbols["B"], symbols["C"]
    pages = inputs["block_table"].flatten()

    def gather(cache):  # [NB, BS, KH, D] -> [B, KH, C, D]
        rows = cache.index_select(0, pages).view(batch, -1, *cache.shape[2:])
        return rows[:, :context].transpose(1, 2)

    out = torch.nn.functional.scaled_dot_product_attention(
        inputs["q"].unsqueeze(2), gather(inputs["k_cache"]), gather(inputs["v_cache"]),
        scale=symbols["scale"], enable_gqa=True)
    return out.squeeze(2)


def kv_append(inputs, symbols):
    """vLLM's cache write in PyTorch: each new row copied to its slot in place."""
    row = symbols["KH"] * symbols["D"]
    slots = inputs["slot_mapping"].long()
    for source, cache in (("key", "k_cache"), ("value", "v_cache")):
        inputs[cache].view(-1, row).index_copy_(0, slots, inputs[source].view(-1, row))
    return inputs["k_cache"], inputs["v_cache"]


def top_p_sample(torch, inputs, symbols):
    """Sort-based nucleus sampling, as serving stacks filter top-p: the sorted probabilities'
    running sums give the nucleus and, against u times its mass, the token."""
    probabilities = torch.softmax(inputs["logits"].float(), dim=1)
    ordered, order = torch.sort(probabilities, dim=1, descending=True, stable=True)
    running = ordered.cumsum(dim=1)
    level = torch.full((running.shape[0], 1), symbols["p"], device=running.device)
    last = torch.searchsorted(running, level).clamp(max=running.shape[1] - 1)
    threshold = inputs["u"].unsqueeze(1) * running.gather(1, last)
    position = torch.minimum(torch.searchsorted(running, threshold, right=True), last)
    return order.gather(1, position).squeeze(1)


def evaluate(expression, symbols):
    """A task.json size expression: integers, symbols, + - * / and parentheses."""
    if isinstance(expression, (int, float)):
        return int(expression)
    allowed = set("0123456789+-*/() _") | set("".join(symbols))
    if not set(expression) <= allowed:
        raise ValueError(f"cannot evaluate shape expression {expression!r}")
    return int(eval(expression.replace("/", "//"), {"__builtins__": {}}, dict(symbols)))


def suite_cases(suite_name):
    path = pathlib.Path(suite_name)
    if path.suffix != ".json":
        path = ROOT / "portfolio" / "suites" / f"{suite_name}.json"
    suite = json.loads(path.read_text())
    for entry in suite["entries"]:
        task = json.loads((ROOT / "tasks" / entry["task"] / "task.json").read_text())
        for item in entry["cases"]:
            case = next(c for c in task["cases"] if c["name"] == item["case"])
            symbols = {name: spec["value"] for name, spec in task["symbols"].items()
                       if "value" in spec}
            symbols.update(case["symbols"])
            yield item, task, case, symbols


def timed_modes(requested, item, case):
    """The modes to time a case in: those asked for, where "case" is the one the suite times it in
    (the suite entry's mode, else the case's own, else hot)."""
    modes = []
    for mode in requested:
        mode = item.get("mode", case.get("mode", "hot")) if mode == "case" else mode
        if mode not in modes:
            modes.append(mode)
    return modes


def make_inputs(torch, task, symbols):
    inputs = {}
    for name, buffer in task["buffers"].items():
        if buffer["role"] not in ("input", "inout"):
            continue
        shape = [evaluate(d, symbols) for d in buffer["shape"]]
        dtype = getattr(torch, DTYPES[buffer["dtype"]])
        init = buffer.get("init", {"dist": "normal"})
        if init["dist"] == "int_range":
            low, high = evaluate(init["low"], symbols), evaluate(init["high"], symbols)
            inputs[name] = torch.randint(low, high + 1, shape, device="cuda", dtype=dtype)
        elif init["dist"] == "distinct":
            low, high = evaluate(init["low"], symbols), evaluate(init["high"], symbols)
            count = math.prod(shape)
            drawn = torch.randperm(high - low + 1, device="cuda")[:count] + low
            inputs[name] = drawn.view(shape).to(dtype)
        elif init["dist"] == "uniform":
            low, high = init["low"], init["high"]
            inputs[name] = (low + (high - low) * torch.rand(shape, device="cuda")).to(dtype)
        else:
            inputs[name] = torch.randn(shape, device="cuda", dtype=torch.float32).to(dtype)
    return inputs


def relative_noise(samples):
    return statistics.pstdev(samples) / statistics.fmean(samples) if len(samples) > 1 else 0.0


def sample_until(take, args):
    import time
    samples, began = [], time.monotonic()
    while len(samples) < args.max_samples:
        samples.append(take())
        if len(samples) >= args.min_samples and (
                relative_noise(samples) <= args.max_noise or time.monotonic() - began > args.budget):
            break
    return samples


def time_method(torch, fn, mode, args, l2_bytes):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def burst(calls):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1000.0  # [us]

    burst(3)  # warm-up: compilation, autotuning and first touch stay out of the numbers
    per_call = burst(4) / 4
    inner = max(1, min(100000, round(args.sample_ms * 1000.0 / max(per_call, 1e-3))))
    if mode == "hot":
        samples = sample_until(lambda: burst(inner) / inner, args)
    elif mode == "graph":
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()  # allocations of the call happen before capture
            with torch.cuda.graph(graph, stream=stream):
                for _ in range(inner):
                    fn()
        torch.cuda.current_stream().wait_stream(stream)
        graph.replay()

        def replay():
            start.record()
            graph.replay()
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop) * 1000.0 / inner
        samples = sample_until(replay, args)
    else:
        flush = torch.empty(2 * l2_bytes // 4, dtype=torch.int32, device="cuda")

        def cold():
            flush.fill_(0x5A5A5A5A)
            return burst(1)
        samples = sample_until(cold, args)
    return statistics.median(samples), relative_noise(samples), len(samples)


def copy_bandwidth(torch, args):
    """PyTorch's device-to-device copy of 2 GiB each way, hot: bytes read plus written."""
    nbytes = 2 << 30
    src = torch.full((nbytes // 2,), 1.0, dtype=torch.float16, device="cuda")
    dst = torch.empty_like(src)
    median, noise, count = time_method(torch, lambda: dst.copy_(src), "hot", args, 0)
    del src, dst
    torch.cuda.empty_cache()
    return {"bytes_moved": 2 * nbytes, "time_us": median, "noise": noise, "samples": count,
            "bytes_per_second": 2 * nbytes / (median * 1e-6)}


def resumed_cases(path, device):
    """The cases an earlier --out holds, where it was timed on this GPU model: a ratio of times
    from two models would compare the GPUs."""
    try:
        earlier = json.loads(pathlib.Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"--resume {path}: not JSON ({e}); give another --out or drop --resume")
    if not isinstance(earlier, dict) or not isinstance(earlier.get("cases"), list):
        raise ValueError(f"--resume {path}: not a file this script wrote (no \"cases\" list)")
    timed_on = (earlier.get("environment") or {}).get("device")
    if timed_on != device:
        raise ValueError(f"--resume {path}: its cases were timed on {timed_on or 'an unnamed GPU'}, "
                         f"this GPU is {device}; give another --out or drop --resume")
    return earlier["cases"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="core10", help="a suite name or .json file")
    parser.add_argument("--out", help="the JSON file to write (default: stdout)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--copy-only", action="store_true",
                        help="time PyTorch's 2 GiB device-to-device copy and nothing else")
    parser.add_argument("--modes", default="hot,graph,cold",
                        help='comma-separated modes; "case" is the mode the suite times each case in')
    parser.add_argument("--tasks", help="comma-separated tasks of the suite to time (default: all)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the cases --out already holds and time only the others")
    parser.add_argument("--sample-ms", type=float, default=1.0)
    parser.add_argument("--max-noise", type=float, default=0.005)
    parser.add_argument("--min-samples", type=int, default=10)
    parser.add_argument("--max-samples", type=int, default=1000)
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of sampling at most")
    args = parser.parse_args()

    cases = list(suite_cases(args.suite))
    if args.tasks:
        wanted = set(args.tasks.split(","))
        unknown = wanted - {task["name"] for _, task, _, _ in cases}
        if unknown:
            print(f"benchmark_pytorch.py: suite {args.suite} has no task {', '.join(sorted(unknown))}",
                  file=sys.stderr)
            return 2
        cases = [c for c in cases if c[1]["name"] in wanted]
    if args.list:
        for _, task, case, symbols in cases:
            print(task["name"], case["name"], " ".join(f"{k}={v}" for k, v in symbols.items()))
        return 0

    import torch
    if not torch.cuda.is_available():
        print("benchmark_pytorch.py: no CUDA GPU is visible to PyTorch", file=sys.stderr)
        return 3
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 64 << 20)
    modes = [m for m in args.modes.split(",") if m]
    out = {
        "environment": {"torch": torch.__version__, "cuda": torch.version.cuda,
                        "device": props.name, "sm_count": props.multi_processor_count,
                        "date": datetime.datetime.now(datetime.timezone.utc).isoformat()},
        "protocol": {"modes": modes, "sample_ms": args.sample_ms, "max_noise": args.max_noise,
                     "min_samples": args.min_samples, "max_samples": args.max_samples,
                     "budget_s": args.budget, "compile_modes": COMPILE_MODES,
                     "clock": "CUDA events"},
        "copy": None,  # measured once --resume has been checked
        "cases": [],
    }
    if args.resume and args.out and pathlib.Path(args.out).exists():
        try:
            out["cases"] = resumed_cases(args.out, props.name)
        except ValueError as e:
            print(f"benchmark_pytorch.py: {e}", file=sys.stderr)
            return 2
        done = {(c["task"], c["case"]) for c in out["cases"]}
        cases = [c for c in cases if (c[1]["name"], c[2]["name"]) not in done]
    out["copy"] = copy_bandwidth(torch, args)
    print(f"PyTorch copy: {out['copy']['bytes_per_second'] / 1e9:.1f} GB/s", file=sys.stderr)
    if args.copy_only:
        cases = []
    for item, task, case, symbols in cases:
        name = task["name"]
        entry = {"task": name, "case": case["name"], "symbols": symbols, "methods": {}}
        print(f"{name} {case['name']}", file=sys.stderr)
        try:
            inputs = make_inputs(torch, task, symbols)
        except Exception as e:  # an input that does not fit is a failure of every method
            entry["methods"] = {m: {"status": f"failed: {type(e).__name__}: {e}"}
                                for m in ("eager", "compile")}
            out["cases"].append(entry)
            continue
        model = MODELS[name]
        eager = lambda: model(torch, inputs, symbols)
        methods = {"eager": eager}
        # Every case's lambda shares one code object: without a reset, dynamo's recompile limit
        # would silently hand later cases back to eager.
        torch._dynamo.reset()
        try:
            compiled = torch.compile(lambda i: model(torch, i, symbols),
                                     mode=COMPILE_MODES.get(name, "default"))
            methods["compile"] = lambda: compiled(inputs)
        except Exception as e:
            entry["methods"]["compile"] = {"status": f"failed: {type(e).__name__}: {e}"}
        for method, fn in methods.items():
            result = {"status": "ok"}
            for mode in timed_modes(modes, item, case):
                try:
                    median, noise, count = time_method(torch, fn, mode, args, l2_bytes)
                    result[f"{mode}_us"] = median
                    result[f"{mode}_noise"] = noise
                    result[f"{mode}_samples"] = count
                    if noise > 0.05 and result["status"] == "ok":
                        result["status"] = "unstable"
                except Exception as e:
                    result[f"{mode}_error"] = f"{type(e).__name__}: {e}"
                    result["status"] = f"failed: {type(e).__name__}: {e}"
            entry["methods"][method] = result
        del inputs
        torch.cuda.empty_cache()
        out["cases"].append(entry)
        if args.out:  # after every case, so that an interrupted run keeps what it measured
            write_atomically(pathlib.Path(args.out), json.dumps(out, indent=1) + "\n")
    if args.out:
        write_atomically(pathlib.Path(args.out), json.dumps(out, indent=1) + "\n")
    else:
        sys.stdout.write(json.dumps(out, indent=1) + "\n")
    return 0


def write_atomically(path, text):
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    partial.replace(path)


if __name__ == "__main__":
    sys.exit(main())
