#!/usr/bin/env python3
"""What a Python call costs beyond its kernel: fresh pages and threads.

  PYTHONPATH=build/python /usr/bin/python3 bench/call_memory_bench.py [--rounds 5]

1. The block cache (lib/AotRuntime/GuardedAlloc.cpp, releaseBlock): the
   compiled code's large blocks (scratch, and results once copied out)
   are kept for the next call instead of going back to libc, which unmaps
   them and page-faults them in again on every call. For each length T,
   one child process per setting (ATTN_BLOCK_CACHE_MB=0, then the default),
   alternating, `--rounds` times: attn_mlir.scaled_dot_product_attention
   forward on torch tensors (no grad) and its backward
   (torch.autograd.grad of a forward that requires grad), B 1, H 12, D 64,
   f32, non-causal; each child warms up (compile, then 5 calls) and times
   the median of 20 calls, and counts minor page faults per call
   (getrusage). Prints the medians over rounds.
2. Thread count after `import torch`: a kernel compiled with threads=0
   (all CPUs) before torch is imported, timed before and after the import
   (torch sets its OpenMP thread count at import; the JIT's kernels now
   compile their count in, see lib/Runtime/Jit.cpp).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys


def child(length, kind):
    import resource
    import time

    import numpy as np

    def timed(fn):
        for _ in range(6):
            fn()
        times, f0 = [], resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(20):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 20
        return statistics.median(times) * 1e3, faults

    if kind == "threads":
        from attn_mlir import _attn_mlir
        from attn_mlir._cache import CACHE
        spec = _attn_mlir.SdpaSpec()
        spec.batch, spec.heads, spec.kv_heads = 1, 12, 12
        spec.query_len, spec.key_len = length, length
        spec.head_dim, spec.value_dim = 64, 64
        text = spec.to_mlir()
        kernel = CACHE.get(("bench", text), lambda: text, "sdpa", "cpu")
        rng = np.random.default_rng(0)
        ins = [rng.standard_normal((1, 12, length, 64), dtype=np.float32) for _ in range(3)]
        out = np.empty((1, 12, length, 64), np.float32)
        before = timed(lambda: kernel.call(ins, [out]))[0]
        import torch  # noqa: F401  (what is measured: the import's effect)
        after = timed(lambda: kernel.call(ins, [out]))[0]
        return {"before_import_ms": before, "after_import_ms": after}

    import torch

    import attn_mlir
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 12, length, 64) for _ in range(3))
    with torch.no_grad():
        fwd = timed(lambda: attn_mlir.scaled_dot_product_attention(q, k, v))
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    o = attn_mlir.scaled_dot_product_attention(qg, kg, vg)
    do = torch.randn_like(o)
    bwd = timed(lambda: torch.autograd.grad(o, (qg, kg, vg), do, retain_graph=True))
    return {"forward_ms": fwd[0], "forward_faults": fwd[1],
            "backward_ms": bwd[0], "backward_faults": bwd[1]}


def run_child(length, kind, env_extra):
    env = dict(os.environ, **env_extra)
    out = subprocess.run([sys.executable, __file__, "--child", str(length), kind],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lengths", default="512,2048")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(int(a.child[0]), a.child[1])))
        return
    settings = (("no cache (ATTN_BLOCK_CACHE_MB=0)", {"ATTN_BLOCK_CACHE_MB": "0"}),
                ("block cache (default)", {}))
    print("| T | setting | forward ms | faults/call | backward ms | faults/call |")
    print("|---|---|---|---|---|---|")
    for length in (int(x) for x in a.lengths.split(",")):
        runs = {name: [] for name, _ in settings}
        for _ in range(a.rounds):
            for name, env in settings:
                runs[name].append(run_child(length, "calls", env))
        for name, _ in settings:
            med = {key: statistics.median(r[key] for r in runs[name]) for key in runs[name][0]}
            print("| %d | %s | %.2f | %.0f | %.2f | %.0f |"
                  % (length, name, med["forward_ms"], med["forward_faults"],
                     med["backward_ms"], med["backward_faults"]))
    r = [run_child(512, "threads", {}) for _ in range(a.rounds)]
    print("\nforward kernel (T 512), compiled before `import torch`: %.2f ms before the "
          "import, %.2f ms after (medians of %d rounds)"
          % (statistics.median(x["before_import_ms"] for x in r),
             statistics.median(x["after_import_ms"] for x in r), a.rounds))


if __name__ == "__main__":
    main()
