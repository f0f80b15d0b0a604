"""blaster
{"launch": [{"kernel": "softmax_rows", "grid": "B", "args": ["out", "x", "D"]}],
 "params": {"BLOCK": [4096, 16384], "num_warps": [8, 16]}}
"""
# One program per row, in fp32. A row of at most BLOCK elements is read once and kept in
# registers from the max to the store; a longer row is read twice: one pass folds each tile into
# a running (max, sum of exp(x - max)), the second writes exp(x - max) / sum. A row whose length
# is a multiple of 8 starts 16-byte aligned, and the kernel tells Triton so, so that those rows
# move in 16-byte accesses.
import triton
import triton.language as tl


@triton.jit
def softmax_row(out_ptr, x_ptr, row, n, BLOCK: tl.constexpr):
    x_row = x_ptr + row * n
    out_row = out_ptr + row * n
    cols = tl.arange(0, BLOCK)
    if n <= BLOCK:
        mask = cols < n
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        # Elements past the row are -inf: exp gives 0, so neither the max nor the sum sees them.
        e = tl.exp(x - tl.max(x, axis=0))
        inverse = 1.0 / tl.sum(e, axis=0)
        tl.store(out_row + cols, (e * inverse).to(tl.float16), mask=mask)
    else:
        m = float("-inf")
        s = 0.0
        for start in range(0, n, BLOCK):
            mask = start + cols < n
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
            # Every tile holds at least one element of the row, so m_new is finite.
            m_new = tl.maximum(m, tl.max(x, axis=0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        inverse = 1.0 / s
        for start in range(0, n, BLOCK):
            mask = start + cols < n
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_row + start + cols, (tl.exp(x - m) * inverse).to(tl.float16), mask=mask)


@triton.jit
def softmax_rows(out_ptr, x_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    if D % 8 == 0:
        # The same D, written so that Triton's analysis knows it is a multiple of 8.
        softmax_row(out_ptr, x_ptr, row, (D // 8) * 8, BLOCK)
    else:
        softmax_row(out_ptr, x_ptr, row, D, BLOCK)
