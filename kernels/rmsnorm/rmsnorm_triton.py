"""blaster
{"launch": [{"kernel": "rmsnorm_planes", "grid": ["ceil_div(H*W, BLOCK_P)", "B"],
             "args": ["out", "x", "C", "H*W", "eps"]}],
 "params": {"BLOCK_C": [64], "BLOCK_P": [64, 128, 256], "num_warps": [4, 8]}}
"""
# RMSNorm over the channels of NCHW: a program owns BLOCK_P neighbouring positions of one image
# and reduces over the channels, which lie H*W apart, as a [BLOCK_C, BLOCK_P] tile whose rows are
# contiguous. Up to BLOCK_C channels the tile is read once and kept in registers from the sum of
# squares to the store; more channels are read twice. As rmsnorm_vec_regs.cu: fp32 sums,
# scale = rsqrt(sum / C + eps), out = x * scale in fp16. Where H*W is a multiple of 8 every
# channel's row starts 16-byte aligned, and the kernel tells Triton so. Offsets are 64-bit: C*H*W
# may pass 2^31 within the task's ranges.
import triton
import triton.language as tl


@triton.jit
def rmsnorm_tile(out_ptr, x_ptr, image, channels, plane, eps, BLOCK_C: tl.constexpr,
                 BLOCK_P: tl.constexpr):
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    c = tl.arange(0, BLOCK_C)
    base = image * channels * plane
    p_ok = p < plane
    if channels <= BLOCK_C:
        offsets = base + (c.to(tl.int64) * plane)[:, None] + p[None, :]
        mask = (c < channels)[:, None] & p_ok[None, :]
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        scale = tl.rsqrt(tl.sum(x * x, axis=0) / channels + eps)
        tl.store(out_ptr + offsets, (x * scale[None, :]).to(tl.float16), mask=mask)
    else:
        total = tl.zeros([BLOCK_P], dtype=tl.float32)
        for c0 in range(0, channels, BLOCK_C):
            offsets = base + ((c0 + c).to(tl.int64) * plane)[:, None] + p[None, :]
            mask = (c0 + c < channels)[:, None] & p_ok[None, :]
            x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            total += tl.sum(x * x, axis=0)
        scale = tl.rsqrt(total / channels + eps)
        for c0 in range(0, channels, BLOCK_C):
            offsets = base + ((c0 + c).to(tl.int64) * plane)[:, None] + p[None, :]
            mask = (c0 + c < channels)[:, None] & p_ok[None, :]
            x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_ptr + offsets, (x * scale[None, :]).to(tl.float16), mask=mask)


@triton.jit
def rmsnorm_planes(out_ptr, x_ptr, C, plane, eps, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    image = tl.program_id(1).to(tl.int64)
    if plane % 8 == 0:
        # The same H*W, written so that Triton's analysis knows it is a multiple of 8.
        rmsnorm_tile(out_ptr, x_ptr, image, C, (plane // 8) * 8, eps, BLOCK_C, BLOCK_P)
    else:
        rmsnorm_tile(out_ptr, x_ptr, image, C, plane, eps, BLOCK_C, BLOCK_P)
