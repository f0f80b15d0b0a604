"""blaster
{"launch": [{"kernel": "layernorm_chunks", "grid": ["ceil_div(C*H*W, CHUNK)", "B"],
             "args": ["out", "x", "weight", "bias", "partial", "C*H*W", "eps", "0"]},
            {"kernel": "layernorm_chunks", "grid": ["ceil_div(C*H*W, CHUNK)", "B"],
             "args": ["out", "x", "weight", "bias", "partial", "C*H*W", "eps", "1"]}],
 "scratch": {"partial": "B * ceil_div(C*H*W, CHUNK) * 8"},
 "params": {"CHUNK": [2048, 4096, 8192], "num_warps": [4, 8]}}
"""
# A row of C*H*W elements (4 Mi in the canonical case) is split in chunks of CHUNK, one program
# per chunk of a row, in two launches of one kernel, as layernorm_split.cu does with two: the
# first (phase 0) writes each chunk's mean and sum of squared deviations around that mean, the
# second (phase 1) merges a row's chunks and normalizes its own chunk. The merge is the exact
# pairwise formula: mean = sum(n_i * mean_i) / N, M2 = sum(M2_i + n_i * (mean_i - mean)^2), in a
# fixed order, so every program of a row gets the same bits and squares are never taken around
# a mean far from the data. out = (x - mean) * rsqrt(M2 / N + eps) * weight + bias, in fp16.
# Where C*H*W is a multiple of 8 rows start 16-byte aligned, and the kernel tells Triton so.
import triton
import triton.language as tl


@triton.jit
def layernorm_chunk(out_ptr, x_ptr, w_ptr, b_ptr, stats_ptr, n, eps, phase,
                    CHUNK: tl.constexpr, MERGE: tl.constexpr):
    chunk = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    chunks = tl.cdiv(n, CHUNK)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = cols < n
    x_row = x_ptr + row * n
    stats = stats_ptr + row * chunks * 2  # (mean, M2) per chunk of this row
    x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    if phase == 0:
        count = tl.minimum(n - chunk * CHUNK, CHUNK).to(tl.float32)
        mean = tl.sum(x, axis=0) / count
        d = tl.where(mask, x - mean, 0.0)
        tl.store(stats + chunk * 2, mean)
        tl.store(stats + chunk * 2 + 1, tl.sum(d * d, axis=0))
    else:
        k = tl.arange(0, MERGE)
        total = 0.0
        for first in range(0, chunks, MERGE):
            i = first + k
            size = tl.minimum(n - i * CHUNK, CHUNK).to(tl.float32)
            means = tl.load(stats + i * 2, mask=i < chunks, other=0.0)
            total += tl.sum(tl.where(i < chunks, size * means, 0.0), axis=0)
        mean = total / n
        m2 = 0.0
        for first in range(0, chunks, MERGE):
            i = first + k
            size = tl.minimum(n - i * CHUNK, CHUNK).to(tl.float32)
            means = tl.load(stats + i * 2, mask=i < chunks, other=0.0)
            squares = tl.load(stats + i * 2 + 1, mask=i < chunks, other=0.0)
            d = means - mean
            m2 += tl.sum(tl.where(i < chunks, squares + size * d * d, 0.0), axis=0)
        scale = tl.rsqrt(m2 / n + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * scale * w + b
        tl.store(out_ptr + row * n + cols, y.to(tl.float16), mask=mask)


@triton.jit
def layernorm_chunks(out_ptr, x_ptr, w_ptr, b_ptr, partial_ptr, N, eps, phase,
                     CHUNK: tl.constexpr):
    # The scratch comes as bytes; each chunk's statistics are two fp32 values.
    stats_ptr = partial_ptr.to(tl.pointer_type(tl.float32))
    if N % 8 == 0:
        # The same N, written so that Triton's analysis knows it is a multiple of 8.
        layernorm_chunk(out_ptr, x_ptr, w_ptr, b_ptr, stats_ptr, (N // 8) * 8, eps, phase, CHUNK,
                        1024)
    else:
        layernorm_chunk(out_ptr, x_ptr, w_ptr, b_ptr, stats_ptr, N, eps, phase, CHUNK, 1024)
