"""blaster
{"launch": [{"kernel": "swiglu_tokens", "grid": ["ceil_div(I, BLOCK)", "T"],
             "args": ["out", "x", "I"]}],
 "params": {"BLOCK": [512, 1024, 4096], "num_warps": [4, 8]}}
"""
# A program per BLOCK outputs of one token (the grid's y), in fp32: the gate is the first half
# of the token's row of x and the up projection the second, out[t, j] = silu(x[t, j]) *
# x[t, I + j] with silu(a) = a / (1 + exp(-a)), as swiglu_packs.cu, rounded once to bf16. Where I
# is a multiple of 8 both halves of every token start 16-byte aligned, and the kernel tells
# Triton so. Small blocks give a one-token decode more programs; large ones a prefill fewer.
import triton
import triton.language as tl


@triton.jit
def swiglu_block(out_ptr, x_ptr, token, width, BLOCK: tl.constexpr):
    j = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = j < width
    gate_row = x_ptr + token * 2 * width
    g = tl.load(gate_row + j, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(gate_row + width + j, mask=mask, other=0.0).to(tl.float32)
    # Where exp(-g) overflows (g < -88) the quotient is -0, the limit silu tends to.
    silu = g / (1.0 + tl.exp(-g))
    tl.store(out_ptr + token * width + j, (silu * u).to(tl.bfloat16), mask=mask)


@triton.jit
def swiglu_tokens(out_ptr, x_ptr, I, BLOCK: tl.constexpr):
    token = tl.program_id(1).to(tl.int64)
    if I % 8 == 0:
        # The same I, written so that Triton's analysis knows it is a multiple of 8.
        swiglu_block(out_ptr, x_ptr, token, (I // 8) * 8, BLOCK)
    else:
        swiglu_block(out_ptr, x_ptr, token, I, BLOCK)
