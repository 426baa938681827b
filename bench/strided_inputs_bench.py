#!/usr/bin/env python3
"""Compiled sdpa called with strided inputs against the same values
contiguous, alternating in one process:

  PYTHONPATH=build/python /usr/bin/python3 bench/strided_inputs_bench.py [--ts 256,1024,2048]

B 1, H 12, D 64, f32, causal; q, k, v of PyTorch's [B, T, H, D] layout
passed as [B, H, T, D] views (NumPy transposes: the runtime packs them),
or as contiguous [B, H, T, D] copies made once. 7 rounds of 10 calls,
medians (ms a call). Then the same through scaled_dot_product_attention,
which passes such views tokens-first to a kernel that transposes them in
its IR (read in place, docs/serving.md *Tokens-first arrays*): `views`
(read in place), `packed` (the same views through the compiled function
above, packed by the runtime: what sdpa did before) and `contiguous`."""
import argparse
import statistics
import time

import numpy as np

import attn_mlir


def case(t):
    """The compiled causal sdpa on [1, 12, t, 64] operands, and q, k, v as
    [1, 12, t, 64] views of [1, t, 12, 64] arrays and as contiguous
    copies."""
    ty = "tensor<1x12x%dx64xf32>" % t
    f = attn_mlir.compile(
        "func.func @f(%q: T, %k: T, %v: T) -> T {\n"
        "  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : (T, T, T) -> T\n"
        "  return %o : T\n}\n".replace("T", ty))
    rng = np.random.default_rng(0)
    views = [rng.standard_normal((1, t, 12, 64), dtype=np.float32).transpose(0, 2, 1, 3)
             for _ in range(3)]
    return f, views, [np.ascontiguousarray(x) for x in views]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ts", default="256,1024,2048")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    for t in map(int, a.ts.split(",")):
        f, views, dense = case(t)
        np.testing.assert_allclose(f(*views), f(*dense), rtol=0, atol=0)
        res = {"strided": [], "contiguous": []}
        for _ in range(a.rounds):
            for name, args in (("strided", views), ("contiguous", dense)):
                t0 = time.perf_counter()
                for _ in range(10):
                    f(*args)
                res[name].append((time.perf_counter() - t0) / 10 * 1e3)
        s, c = statistics.median(res["strided"]), statistics.median(res["contiguous"])
        print("T %5d  strided %8.3f ms  contiguous %8.3f ms  ratio %.2f" % (t, s, c, s / c))
    print()
    sdpa = attn_mlir.scaled_dot_product_attention
    for t in map(int, a.ts.split(",")):
        f, views, dense = case(t)
        np.testing.assert_allclose(sdpa(*views, is_causal=True), f(*dense), rtol=0, atol=2e-6)
        progs = {"views": lambda: sdpa(*views, is_causal=True), "packed": lambda: f(*views),
                 "contiguous": lambda: sdpa(*dense, is_causal=True)}
        for g in progs.values():  # compiled before timing
            g()
        res = {n: [] for n in progs}
        for _ in range(a.rounds):
            for name, g in progs.items():
                t0 = time.perf_counter()
                for _ in range(10):
                    g()
                res[name].append((time.perf_counter() - t0) / 10 * 1e3)
        m = {n: statistics.median(v) for n, v in res.items()}
        print("sdpa T %5d  views %8.3f ms  packed %8.3f ms  contiguous %8.3f ms  "
              "views/contiguous %.2f  views/packed %.2f"
              % (t, m["views"], m["packed"], m["contiguous"], m["views"] / m["contiguous"],
                 m["views"] / m["packed"]))


if __name__ == "__main__":
    main()
