"""blaster
{"launch": [{"kernel": "rmsnorm_positions", "grid": "ceil_div(B*H*W, BLOCK)",
             "args": ["out", "x", "B", "C", "H*W", "eps"]}],
 "params": {"BLOCK": [128], "num_warps": [4]}}
"""
# Honest: each program normalizes BLOCK neighbouring positions, reading one channel of all of
# them per step, so that the loads of a step are contiguous.
# expect: passed
import triton
import triton.language as tl


@triton.jit
def rmsnorm_positions(out_ptr, x_ptr, batches, channels, plane, eps, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = p < batches * plane
    base = (p // plane).to(tl.int64) * channels * plane + p % plane
    xs = x_ptr + base
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for c in range(0, channels):
        v = tl.load(xs, mask=mask, other=0.0).to(tl.float32)
        total += v * v
        xs += plane
    scale = tl.rsqrt(total / channels + eps)
    xs = x_ptr + base
    outs = out_ptr + base
    for c in range(0, channels):
        v = tl.load(xs, mask=mask, other=0.0).to(tl.float32)
        tl.store(outs, (v * scale).to(tl.float16), mask=mask)
        xs += plane
        outs += plane
