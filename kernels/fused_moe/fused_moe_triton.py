"""blaster
{"launch": [{"kernel": "fused_moe_stages", "grid": 1,
             "args": ["C", "A", "W", "topk_ids", "sorted_ids", "block_experts", "padded_count",
                      "M*TOPK", "TOPK", "E", "2*N", "K",
                      "M*TOPK + min(E, M*TOPK) * (BLOCK_SIZE_M - 1)", "0"]},
            {"kernel": "fused_moe_stages",
             "grid": "ceil_div(M*TOPK + min(E, M*TOPK) * (BLOCK_SIZE_M - 1), BLOCK_SIZE_M) * ceil_div(2*N, BLOCK_SIZE_N)",
             "args": ["C", "A", "W", "topk_ids", "sorted_ids", "block_experts", "padded_count",
                      "M*TOPK", "TOPK", "E", "2*N", "K",
                      "M*TOPK + min(E, M*TOPK) * (BLOCK_SIZE_M - 1)", "1"]}],
 "scratch": {"sorted_ids": "(M*TOPK + min(E, M*TOPK) * (BLOCK_SIZE_M - 1)) * 4",
             "block_experts": "ceil_div(M*TOPK + min(E, M*TOPK) * (BLOCK_SIZE_M - 1), BLOCK_SIZE_M) * 4",
             "padded_count": 4},
 "params": {"BLOCK_SIZE_M": [16, 64], "BLOCK_SIZE_N": [64, 128], "BLOCK_SIZE_K": [64, 128],
            "GROUP_SIZE_M": [1, 16], "num_warps": [4, 8], "num_stages": [3]}}
"""
# The grouped product of a mixture-of-experts layer as the engines run it, in two launches of
# one kernel (a plan's launches share one @triton.jit function; `stage` picks the work):
#
# stage 0, one program: the slots (token m's j-th expert is slot m * TOPK + j) sorted by expert
#   into sorted_ids, each expert's run of slots padded with the value M*TOPK (no slot) to a
#   multiple of BLOCK_SIZE_M; block_experts[b] is the expert of block b of BLOCK_SIZE_M ids, and
#   padded_count the length of the padded list. Within an expert the slots keep their order (a
#   prefix sum places them), so the list, and so every launch, is the same each time. An expert
#   with no slots has no blocks.
# stage 1, a program per block of BLOCK_SIZE_M sorted ids and BLOCK_SIZE_N output columns: the
#   block's tokens (gathered rows of A) times its expert's W transposed, over K in steps of
#   BLOCK_SIZE_K, in fp32 on the tensor cores, rounded once to bf16 into C's rows of those
#   slots. Blocks are numbered in groups of GROUP_SIZE_M along M, so that the programs running
#   together share column tiles of an expert's W while they are in the L2. The grid is sized
#   for the longest padded list M*TOPK + min(E, M*TOPK) * (BLOCK_SIZE_M - 1) (every expert
#   used, each with a block it fills by one); programs past padded_count load nothing and store
#   nothing, and padding ids store nothing.
#
# Where K and 2N are multiples of 8 every row of A, W and C starts 16-byte aligned, and the
# kernel tells Triton so (the same sizes, written as multiples of 8), so that its loads and
# stores are vectors; other sizes take the same code without that promise. The params are the
# keys of the engines' tuned tables.
import triton
import triton.language as tl


@triton.jit
def align_slots(ids_ptr, sorted_ids, block_experts, padded_count, num_slots, num_experts,
                BLOCK_SIZE_M: tl.constexpr, SCAN: tl.constexpr):
    tl.static_assert(SCAN >= BLOCK_SIZE_M)
    lanes = tl.arange(0, SCAN)
    start = 0  # where the current expert's run begins in sorted_ids
    for expert in range(0, num_experts):
        count = 0
        for first_slot in range(0, num_slots, SCAN):
            slots = first_slot + lanes
            ids = tl.load(ids_ptr + slots, mask=slots < num_slots, other=-1)
            hits = (ids == expert).to(tl.int32)
            places = start + count + tl.cumsum(hits, axis=0) - 1
            tl.store(sorted_ids + places, slots, mask=hits > 0)
            count += tl.sum(hits, axis=0)
        padded = tl.cdiv(count, BLOCK_SIZE_M) * BLOCK_SIZE_M
        # The run's last block filled up with num_slots, which is no slot: fewer than SCAN.
        fill = count + lanes
        tl.store(sorted_ids + start + fill, tl.zeros([SCAN], dtype=tl.int32) + num_slots,
                 mask=fill < padded)
        blocks = padded // BLOCK_SIZE_M
        for first_block in range(0, blocks, SCAN):
            block = first_block + lanes
            tl.store(block_experts + start // BLOCK_SIZE_M + block,
                     tl.zeros([SCAN], dtype=tl.int32) + expert, mask=block < blocks)
        start += padded
    tl.store(padded_count, start)


@triton.jit
def grouped_product(c_ptr, a_ptr, w_ptr, sorted_ids, block_experts, padded_count, num_slots,
                    topk, n2, K, em, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                    BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(0)
    blocks_m = tl.cdiv(em, BLOCK_SIZE_M)
    blocks_n = tl.cdiv(n2, BLOCK_SIZE_N)
    per_group = GROUP_SIZE_M * blocks_n
    first_m = (pid // per_group) * GROUP_SIZE_M
    group_m = tl.minimum(blocks_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + (pid % per_group) % group_m
    pid_n = (pid % per_group) // group_m

    padded = tl.load(padded_count)
    active = pid_m * BLOCK_SIZE_M < padded
    ids = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    slots = tl.load(sorted_ids + ids, mask=ids < padded, other=num_slots)
    live = slots < num_slots
    # An idle program reads block 0's expert, which stage 0 always writes, and uses none of it.
    expert = tl.load(block_experts + tl.where(active, pid_m, 0)).to(tl.int64)
    tokens = (slots // topk).to(tl.int64)
    cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    col_ok = cols < n2
    ks = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + tokens[:, None] * K + ks[None, :]
    w_ptrs = w_ptr + expert * n2 * K + (cols[None, :] * K + ks[:, None])
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    depth = tl.where(active, K, 0)
    for k in range(0, depth, BLOCK_SIZE_K):
        k_ok = ks < K - k
        a = tl.load(a_ptrs, mask=live[:, None] & k_ok[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_SIZE_K
        w_ptrs += BLOCK_SIZE_K
    c_ptrs = c_ptr + slots[:, None].to(tl.int64) * n2 + cols[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=live[:, None] & col_ok[None, :])


@triton.jit
def fused_moe_stages(c_ptr, a_ptr, w_ptr, ids_ptr, sorted_ptr, blocks_ptr, padded_ptr,
                     num_slots, topk, num_experts, n2, K, em, stage,
                     BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                     BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    # The scratch comes as bytes; all three hold int32.
    sorted_ids = sorted_ptr.to(tl.pointer_type(tl.int32))
    block_experts = blocks_ptr.to(tl.pointer_type(tl.int32))
    padded_count = padded_ptr.to(tl.pointer_type(tl.int32))
    if stage == 0:
        align_slots(ids_ptr, sorted_ids, block_experts, padded_count, num_slots, num_experts,
                    BLOCK_SIZE_M, 1024)
    elif (K % 8 == 0) & (n2 % 8 == 0):
        # The same K and 2N, written so that Triton's analysis knows they are multiples of 8.
        grouped_product(c_ptr, a_ptr, w_ptr, sorted_ids, block_experts, padded_count, num_slots,
                        topk, (n2 // 8) * 8, (K // 8) * 8, em, BLOCK_SIZE_M, BLOCK_SIZE_N,
                        BLOCK_SIZE_K, GROUP_SIZE_M)
    else:
        grouped_product(c_ptr, a_ptr, w_ptr, sorted_ids, block_experts, padded_count, num_slots,
                        topk, n2, K, em, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, GROUP_SIZE_M)
