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
once and times torch.autograd.grad with retain_graph); torch runs on
every core (torch.set_num_threads(os.cpu_count())).

Then: the peak memory growth of one backward at T 2048 and 16384 (each
in a fresh process: the resident set's high-water mark during the call,
reset through /proc/self/clear_refs, above the resident set before it;
the new dQ, dK, dV count), and forward +
backward of the GPT-2 small attention block (T 512, B 1, E 768, 12
heads, causal) against nn.MultiheadAttention: attn_mlir.nn
.MultiheadAttention (projections and attention compiled, forward and
backward), and torch's nn.Linear projections around attn_mlir's
attention. `--only gpt2` runs the block alone."""

import argparse
import json
import math
import os
import statistics
import subprocess
import time

import torch

import attn_mlir
import attn_mlir.nn

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


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError("no %s in /proc/self/status" % field)


def memory_child(t):
    """Runs in a fresh process: MiB the resident set peaks above its size
    before one backward at length t (the peak reset through
    /proc/self/clear_refs first); prints t, that and the MiB of the
    tensors the call reads and writes."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 12, t, 64, generator=g).requires_grad_() for _ in range(3))
    out = ours(q, k, v, False)
    do = torch.randn(out.shape, generator=g)
    small = [x.detach()[:, :, :64].clone().requires_grad_() for x in (q, k, v)]
    torch.autograd.grad(ours(*small, False), small, torch.ones(1, 12, 64, 64))  # compile
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current resident set
    before = _status_kib("VmRSS")
    torch.autograd.grad(out, (q, k, v), do)
    peak = _status_kib("VmHWM")
    tensors = 8 * 12 * t * 64 * 4 / 2**20  # q, k, v, O, dO, dQ, dK, dV
    print("%d %.1f %.1f" % (t, (peak - before) / 1024.0, tensors))


def gpt2_block(rounds):
    """Forward + backward of nn.MultiheadAttention against
    attn_mlir.nn.MultiheadAttention (the same weights) and against torch's
    projections around attn_mlir's attention; median seconds of each and
    the largest output difference."""
    e, h, t = 768, 12, 512
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(e, h, batch_first=True)
    module = attn_mlir.nn.MultiheadAttention(e, h, batch_first=True)
    module.load_state_dict(mha.state_dict())
    causal = torch.ones(t, t, dtype=torch.bool).triu(1)

    def theirs(x):
        return mha(x, x, x, attn_mask=causal, need_weights=False)[0]

    def ours_module(x):
        return module(x, x, x, is_causal=True, need_weights=False)[0]

    def ours_attention(x):
        qkv = torch.nn.functional.linear(x, mha.in_proj_weight, mha.in_proj_bias)
        q, k, v = (y.reshape(1, t, h, e // h).transpose(1, 2) for y in qkv.split(e, dim=-1))
        o = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True)
        return mha.out_proj(o.transpose(1, 2).reshape(1, t, e))

    x = torch.randn(1, t, e, requires_grad=True)
    variants = (("module", ours_module), ("attention", ours_attention), ("torch", theirs))
    err = max((f(x) - theirs(x)).abs().max().item() for _, f in variants[:2])
    times = {name: [] for name, _ in variants}
    for _ in range(rounds + 1):
        for name, f in variants:
            t0 = time.perf_counter()
            f(x).sum().backward()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts[1:]) for name, ts in times.items()}, err


def print_gpt2(rounds):
    ts, err = gpt2_block(rounds)
    print("GPT-2 small attention block, T 512, causal, forward + backward (median of %d):"
          % rounds)
    print()
    print("| variant | ms | nn.MultiheadAttention / variant |")
    print("|---|---|---|")
    for name, label in (("module", "attn_mlir.nn.MultiheadAttention"),
                        ("attention", "nn.Linear + attn_mlir attention"),
                        ("torch", "nn.MultiheadAttention")):
        print("| %s | %.1f | %.2fx |" % (label, ts[name] * 1e3, ts["torch"] / ts[name]))
    print()
    print("max |output difference| %.2g" % err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lengths", default="512,1024,2048")
    ap.add_argument("--only", choices=["gpt2"], help="run one part")
    ap.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    torch.set_num_threads(os.cpu_count())
    if args.memory_child:
        memory_child(args.memory_child)
        return
    if args.only == "gpt2":
        print("torch %s, %d threads" % (torch.__version__, torch.get_num_threads()))
        print_gpt2(args.rounds)
        return
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
    print()
    print("| T | backward's peak memory growth MiB (dQ, dK, dV included) | q, k, v, O, dO, dQ, dK, dV (f32) MiB |")
    print("|---|---|---|")
    for t in (2048, 16384):
        out = subprocess.run([os.sys.executable, os.path.abspath(__file__),
                              "--memory-child", str(t)], check=True, capture_output=True,
                             text=True).stdout.split()
        print("| %s | %s | %s |" % tuple(out))
    print()
    print_gpt2(args.rounds)


if __name__ == "__main__":
    main()
