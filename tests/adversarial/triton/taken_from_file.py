"""blaster
{"launch": [{"kernel": "rmsnorm_positions", "grid": "ceil_div(B*H*W, BLOCK)",
             "args": ["out", "x", "B", "C", "H*W", "eps"]}],
 "source": "honest_rmsnorm.py::rmsnorm_positions",
 "params": {"BLOCK": [64, 256], "num_warps": [2, 8]}}
"""
# Honest: the kernel of honest_rmsnorm.py, taken from that file by name as an engine's kernel
# would be taken from the user's checkout, at other block sizes and warp counts.
# expect: passed
