"""Per-call time of attn_mlir.scaled_dot_product_attention on short
sequences (B 1, H 12, D 64, f32, fresh output each call, as PyTorch code
calls it): the cost around the kernel (binding, packing, the result's way
into the output) is largest there.

    PYTHONPATH=build/python python3 bench/python_short_calls.py [T ...]

prints one line per T: the median over 7 rounds of the mean of 20 calls
(ms), after 5 warm-up calls. Compare two builds by running it with each
build's PYTHONPATH, alternating (bench/NOTES.md, 2026-12-07: *Results
written into the caller's outputs*).
"""
import sys
import time

import torch

import attn_mlir


def per_call_ms(t, rounds=7, calls=20):
    q, k, v = (torch.randn(1, 12, t, 64) for _ in range(3))
    f = attn_mlir.scaled_dot_product_attention
    for _ in range(5):
        f(q, k, v)
    ts = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            f(q, k, v)
        ts.append((time.perf_counter() - start) / calls * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    for t in [int(a) for a in sys.argv[1:]] or [256, 512, 1024]:
        print(f"T {t}: {per_call_ms(t):.3f} ms")


if __name__ == "__main__":
    main()
