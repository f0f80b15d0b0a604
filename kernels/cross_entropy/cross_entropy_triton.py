"""blaster
{"launch": [{"kernel": "cross_entropy_rows", "grid": "ceil_div(N, TILE / BLOCK_C)",
             "args": ["loss", "block_sum", "logits", "targets", "N", "C",
                      "ceil_div(N, TILE / BLOCK_C)", "0"]},
            {"kernel": "cross_entropy_rows", "grid": 1,
             "args": ["loss", "block_sum", "logits", "targets", "N", "C",
                      "ceil_div(N, TILE / BLOCK_C)", "1"]}],
 "scratch": {"block_sum": "ceil_div(N, TILE / BLOCK_C) * 4"},
 "params": {"BLOCK_C": [16, 1024], "TILE": [1024, 4096], "num_warps": [4, 8]}}
"""
# Two launches of one kernel, as cross_entropy_split.cu does with two: in phase 0 a program
# takes TILE / BLOCK_C rows as a [rows, BLOCK_C] tile, folds each row's classes BLOCK_C at a
# time into a running (max, sum of exp(x - max)) in fp32, so the logits are read once, and
# writes the sum of its rows' losses logsumexp(row) - row[target]; in phase 1 one program adds
# those sums in a fixed order and writes their mean. No atomics: the loss is the same to the
# bit on every run. BLOCK_C = 16 fits the short rows of the canonical case (C = 10) many rows to a
# program; BLOCK_C = 1024 streams long rows. Where C is a multiple of 8 rows start 16-byte
# aligned, and the kernel tells Triton so.
import triton
import triton.language as tl


@triton.jit
def block_loss_sum(sums_ptr, logits_ptr, targets_ptr, n_rows, n_classes, ROWS: tl.constexpr,
                   BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_rows
    row_start = logits_ptr + rows.to(tl.int64) * n_classes
    cols = tl.arange(0, BLOCK_C)
    m = tl.full([ROWS], float("-inf"), tl.float32)
    s = tl.zeros([ROWS], dtype=tl.float32)
    for c0 in range(0, n_classes, BLOCK_C):
        mask = row_ok[:, None] & (c0 + cols < n_classes)[None, :]
        x = tl.load(row_start[:, None] + (c0 + cols)[None, :], mask=mask,
                    other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=1))
        # Rows past the end are -inf throughout; a shift of 0 keeps them at exp(-inf) = 0
        # instead of exp(-inf - -inf).
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - shift) + tl.sum(tl.exp(x - shift[:, None]), axis=1)
        m = m_new
    target = tl.load(targets_ptr + rows, mask=row_ok, other=0)
    target_logit = tl.load(row_start + target, mask=row_ok, other=0.0).to(tl.float32)
    loss = tl.where(row_ok, m + tl.log(s) - target_logit, 0.0)
    tl.store(sums_ptr + tl.program_id(0), tl.sum(loss, axis=0))


@triton.jit
def cross_entropy_rows(loss_ptr, block_sum_ptr, logits_ptr, targets_ptr, N, C, blocks, phase,
                       BLOCK_C: tl.constexpr, TILE: tl.constexpr):
    # The scratch comes as bytes; each program's sum is one fp32 value.
    sums = block_sum_ptr.to(tl.pointer_type(tl.float32))
    if phase == 0:
        if C % 8 == 0:
            # The same C, written so that Triton's analysis knows it is a multiple of 8.
            block_loss_sum(sums, logits_ptr, targets_ptr, N, (C // 8) * 8, TILE // BLOCK_C,
                           BLOCK_C)
        else:
            block_loss_sum(sums, logits_ptr, targets_ptr, N, C, TILE // BLOCK_C, BLOCK_C)
    else:
        k = tl.arange(0, TILE)
        total = 0.0
        for first in range(0, blocks, TILE):
            total += tl.sum(tl.load(sums + first + k, mask=first + k < blocks, other=0.0), axis=0)
        tl.store(loss_ptr, total / N)
