#!/usr/bin/env python3
"""The attention backward (attn.sdpa_grad through the cpu pipeline, via
attn_mlir.scaled_dot_product_attention under torch.autograd) against torch
autograd of the math path (softmax(q·kᵀ·scale + causal)·v), in one
process, alternating; and its effective rate against the machine's f32
FMA peak (attn-fma-peak, measured in the same run).

  PYTHONPATH=build/python /usr/bin/python3 bench/training_bench.py [--rounds 3]
      [--lengths 256,512,1024]

Program (issue 37): B 1, H 12, D 64, f32, non-causal and causal. The
backward's FLOPs are counted as 2.5x the forward's (4·B·H·T²·D; halved
when causal), FlashAttention's convention. Prints a Markdown table of the
median backward times (forward excluded: each round runs the forward
once and times torch.autograd.grad with retain_graph)."""

import argparse
import json
import math
import os
import statistics
import subprocess
import time

import torch

import attn_mlir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def peak(threads):
    cmd = [os.path.join(ROOT, "build", "bin", "attn-fma-peak"), "--threads=%d" % threads,
           "--seconds=2"]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return out["gflops"], " ".join(cmd[1:])


def torch_math(q, k, v, causal):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        t = s.shape[-1]
        s = s.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def ours(q, k, v, causal):
    return attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=causal)


def backward_time(fn, t, causal, rounds_out):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 12, t, 64, generator=g).requires_grad_() for _ in range(3))
    out = fn(q, k, v, causal)
    do = torch.randn(out.shape, generator=g)
    torch.autograd.grad(out, (q, k, v), do, retain_graph=True)  # warm (compile)
    t0 = time.perf_counter()
    torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
    rounds_out.append(time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lengths", default="256,512,1024")
    args = ap.parse_args()
    # The machine's peak (every core), though the backward's reference
    # route runs on one thread today.
    gflops_peak, cmd = peak(os.cpu_count())
    print("f32 FMA peak: %.1f GFLOP/s (attn-fma-peak %s); torch %s, %d threads"
          % (gflops_peak, cmd, torch.__version__, torch.get_num_threads()))
    print()
    print("| T | causal | attn backward ms | torch autograd ms | speed-up | attn GFLOP/s | % of peak |")
    print("|---|---|---|---|---|---|---|")
    for t in [int(x) for x in args.lengths.split(",")]:
        for causal in (False, True):
            times = {"attn": [], "torch": []}
            for _ in range(args.rounds):
                backward_time(ours, t, causal, times["attn"])
                backward_time(torch_math, t, causal, times["torch"])
            a, b = statistics.median(times["attn"]), statistics.median(times["torch"])
            flops = 2.5 * 4 * 12 * t * t * 64 * (0.5 if causal else 1.0)
            rate = flops / a / 1e9
            print("| %d | %s | %.1f | %.1f | %.2fx | %.2f | %.1f %% |"
                  % (t, "yes" if causal else "no", a * 1e3, b * 1e3, b / a, rate,
                     100 * rate / gflops_peak))


if __name__ == "__main__":
    main()
