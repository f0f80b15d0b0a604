"""blaster
{"launch": [{"kernel": "rms_norm_tokens", "grid": "T", "args": ["out", "x", "weight", "H", "eps"]}],
 "params": {"BLOCK": [4096, 8192], "num_warps": [4, 8, 16]}}
"""
# One program per token, in fp32. A token of at most BLOCK elements is read once and kept in
# registers from the sum of squares to the store; a longer one is read twice. As
# rms_norm_regs.cu: scale = rsqrt(sum(x^2) / H + eps), out = x * scale * weight, rounded once to
# bf16. Where H is a multiple of 8 every token starts 16-byte aligned, and the kernel tells
# Triton so.
import triton
import triton.language as tl


@triton.jit
def rms_norm_token(out_ptr, x_ptr, w_ptr, token, hidden, eps, BLOCK: tl.constexpr):
    x_row = x_ptr + token * hidden
    out_row = out_ptr + token * hidden
    cols = tl.arange(0, BLOCK)
    if hidden <= BLOCK:
        mask = cols < hidden
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        scale = tl.rsqrt(tl.sum(x * x, axis=0) / hidden + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + cols, (x * scale * w).to(tl.bfloat16), mask=mask)
    else:
        total = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, hidden, BLOCK):
            mask = start + cols < hidden
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            total += x * x
        scale = tl.rsqrt(tl.sum(total, axis=0) / hidden + eps)
        for start in range(0, hidden, BLOCK):
            mask = start + cols < hidden
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_row + start + cols, (x * scale * w).to(tl.bfloat16), mask=mask)


@triton.jit
def rms_norm_tokens(out_ptr, x_ptr, w_ptr, H, eps, BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    if H % 8 == 0:
        # The same H, written so that Triton's analysis knows it is a multiple of 8.
        rms_norm_token(out_ptr, x_ptr, w_ptr, token, (H // 8) * 8, eps, BLOCK)
    else:
        rms_norm_token(out_ptr, x_ptr, w_ptr, token, H, eps, BLOCK)
