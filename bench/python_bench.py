#!/usr/bin/env python3
"""attn_mlir from Python: call overhead and end-to-end times, one run.

  PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--repeat N] [--json]

1. Overhead of a small call (B 1, H 8, T 128, D 64, float32): the median
   time of attn_mlir.scaled_dot_product_attention on NumPy arrays and on
   torch tensors, against the median of the same kernel called through the
   C++ API (attn::Kernel::call timed in C++, Kernel.time_calls), same
   buffers, same run. The difference is what Python adds.
2. End to end against PyTorch eager, medians in ms: the GPT-2 small
   attention block (nn.MultiheadAttention(768, 12), biases, causal, B 1,
   T 128, need_weights=False) vs MultiheadAttention.from_torch; and a
   T = 2048 causal sdpa (B 1, H 12, D 64) vs torch's math path written out
   (PyTorch 1.13 has no F.scaled_dot_product_attention).
The first call of each configuration (the compile) is not timed.
"""

import argparse
import json
import math
import statistics
import time

import numpy as np
import torch

import attn_mlir
from attn_mlir._cache import CACHE


def median_time(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def eager_sdpa(q, k, v, causal):
    s = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.shape[-1]))
    if causal:
        t = s.shape[-1]
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    res = {"torch_threads": torch.get_num_threads(), "torch": torch.__version__}

    # 1. the small call
    qn = np.random.default_rng(0).standard_normal((1, 8, 128, 64), dtype=np.float32)
    sdpa = attn_mlir.scaled_dot_product_attention
    attn_mlir.clear_cache()
    sdpa(qn, qn, qn)
    kernel = next(iter(CACHE._entries.values())).kernel
    out = np.empty_like(qn)
    cpp = statistics.median(kernel.time_calls([qn, qn, qn], [out], args.repeat * 4))
    py_np = median_time(lambda: sdpa(qn, qn, qn), args.repeat * 4)
    qt = torch.from_numpy(qn)
    py_t = median_time(lambda: sdpa(qt, qt, qt), args.repeat * 4)
    res["small_call_us"] = {"cpp_api": cpp * 1e6, "python_numpy": py_np * 1e6,
                            "python_torch": py_t * 1e6,
                            "overhead_numpy": (py_np - cpp) * 1e6,
                            "overhead_torch": (py_t - cpp) * 1e6}

    # 2a. the GPT-2 small block
    mha = torch.nn.MultiheadAttention(768, 12, batch_first=True).eval()
    with torch.no_grad():
        mha.in_proj_bias.normal_(0, 0.02)
        mha.out_proj.bias.normal_(0, 0.02)
    fast = attn_mlir.MultiheadAttention.from_torch(mha)
    x = torch.randn(1, 128, 768)
    causal = torch.ones(128, 128, dtype=torch.bool).triu(1)
    with torch.no_grad():
        t_torch = median_time(lambda: mha(x, x, x, attn_mask=causal, need_weights=False),
                              args.repeat)
        t_ours = median_time(lambda: fast(x, x, x, is_causal=True, need_weights=False),
                             args.repeat)
        err = (fast(x, x, x, is_causal=True, need_weights=False)[0]
               - mha(x, x, x, attn_mask=causal, need_weights=False)[0]).abs().max().item()
    res["gpt2_block_ms"] = {"torch_mha": t_torch * 1e3, "attn_mlir": t_ours * 1e3,
                            "max_abs_diff": err}

    # 2b. T = 2048 causal sdpa
    q, k, v = (torch.randn(1, 12, 2048, 64) for _ in range(3))
    reps = max(3, args.repeat // 10)
    t_torch = median_time(lambda: eager_sdpa(q, k, v, True), reps)
    t_ours = median_time(lambda: sdpa(q, k, v, is_causal=True), reps)
    err = (sdpa(q, k, v, is_causal=True) - eager_sdpa(q, k, v, True)).abs().max().item()
    res["sdpa_t2048_ms"] = {"torch_eager": t_torch * 1e3, "attn_mlir": t_ours * 1e3,
                            "max_abs_diff": err}

    if args.json:
        print(json.dumps(res, indent=1))
        return
    s = res["small_call_us"]
    print("torch %s, %d threads" % (res["torch"], res["torch_threads"]))
    print("small call B1 H8 T128 D64 f32 (median us): C++ API %.1f, Python on NumPy %.1f "
          "(+%.1f), on torch %.1f (+%.1f)" % (s["cpp_api"], s["python_numpy"],
                                              s["overhead_numpy"], s["python_torch"],
                                              s["overhead_torch"]))
    g = res["gpt2_block_ms"]
    print("GPT-2 block B1 T128 causal (median ms): nn.MultiheadAttention %.2f, "
          "attn_mlir %.2f (max |diff| %.1e)" % (g["torch_mha"], g["attn_mlir"],
                                                 g["max_abs_diff"]))
    t = res["sdpa_t2048_ms"]
    print("sdpa B1 H12 T2048 D64 causal (median ms): torch eager %.1f, attn_mlir %.1f "
          "(max |diff| %.1e)" % (t["torch_eager"], t["attn_mlir"], t["max_abs_diff"]))


if __name__ == "__main__":
    main()
