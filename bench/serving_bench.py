#!/usr/bin/env python3
"""Paged KV decode against the contiguous decode, in one process,
alternating, on the CPU pipeline; and the K/V read rate of each against the
machine's read bandwidth (attn-fma-peak --bandwidth, measured in the same
run). Prints a Markdown table of median times.

  PYTHONPATH=build/python /usr/bin/python3 bench/serving_bench.py [--rounds 9]

Program (issue 36): B 1, H 32, Hkv 8, D 128, f32, Tk 32768, Tq 1.
- contiguous: attn.sdpa on K/V [1, 8, Tk, 128] with key lengths
  (the decode kernel every earlier measurement used), compiled with the
  same dynamic batch as the paged call;
- paged: flash_attn_with_kvcache with a block table of shuffled blocks of
  16 and of 256 tokens, in both cache layouts (NHD [blocks, 16, Hkv, D],
  FlashAttention's; HND [blocks, Hkv, 16, D]);
- one block: flash_attn_with_kvcache on a contiguous cache (one block
  per sequence), both layouts.

And a ragged batch (flash_attn_varlen_func) of 16 causal sequences of 64
to 4096 tokens (H 8, D 64) against 16 separate calls of
scaled_dot_product_attention, and the same for 16 sequences of 64.

And (--only int8) the same decode on an int8 cache (attn.dequantize, one
f32 scale per token and head, values quantised from the f32 cache), and on
the same values as a paged int8 cache (shuffled blocks of 16, NHD, through
flash_attn_with_kvcache) beside the f32 cache paged the same way, against
the f32 and the f16 cache, with each
one's error against float64 attention on the dequantised K/V.
And (--only step) two continuous-batching steps: ragged queries (prefill
chunks and one-token decodes) on one paged cache, one varlen call against
the padded-query route it replaced, against separate calls and against
PyTorch eager attention a sequence.
And (--only int8prefill) a prefill chunk of 256 on a paged f32 and int8
cache, beside the cost of dequantizing the int8 caches whole.
--only decode|ragged|int8|step|int8prefill runs one part."""

import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np
import torch

import attn_mlir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bandwidth(build, mib, threads):
    cmd = [os.path.join(build, "bin", "attn-fma-peak"), "--bandwidth=%d" % mib,
           "--threads=%d" % threads]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return out["gbps"], " ".join(cmd[1:])


def quantize(x):
    """Symmetric int8 codes of x and one f32 scale per row (max |x| -> 127)."""
    scale = (np.abs(x).max(axis=-1) / 127).astype(np.float32)
    return np.round(x / scale[..., None]).astype(np.int8), scale


def alternate(progs, rounds):
    """{name: [seconds per round]}, the programs run in turn each round."""
    times = {name: [] for name in progs}
    for _ in range(rounds):
        for name, f in progs.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def ragged(rounds):
    """16 causal sequences of 64 .. 4096 tokens: one varlen call against the
    sum of 16 separate calls (each timed in the same round)."""
    H, D = 8, 64
    lens = [int(round(64 * 64 ** (i / 15))) for i in range(16)]  # 64 .. 4096
    seqs = [tuple(torch.randn(n, H, D) for _ in range(3)) for n in lens]
    q, k, v = (torch.cat([s[i] for s in seqs]) for i in range(3))
    cu = torch.tensor([0] + list(np.cumsum(lens)), dtype=torch.int32)
    varlen = lambda: attn_mlir.flash_attn_varlen_func(  # noqa: E731
        q, k, v, cu, cu, max(lens), max(lens), causal=True)
    sdpa = attn_mlir.scaled_dot_product_attention
    heads_first = [tuple(t.transpose(0, 1).contiguous() for t in s) for s in seqs]
    separate = lambda: [sdpa(a, b, c, is_causal=True) for a, b, c in heads_first]  # noqa
    out = varlen()
    for (a, b, c), lo, hi in zip(heads_first, cu[:-1], cu[1:]):
        assert (out[lo:hi].transpose(0, 1) - sdpa(a, b, c, is_causal=True)).abs().max() < 1e-4
    short = [tuple(t[:, :64] for t in s) for s in heads_first]
    qs, ks, vs = (torch.cat([s[i].transpose(0, 1) for s in short]) for i in range(3))
    cus = torch.arange(0, 64 * 17, 64, dtype=torch.int32)
    progs = {"varlen, 16 sequences of 64 .. 4096": varlen,
             "16 separate calls": separate,
             "varlen, 16 sequences of 64": lambda: attn_mlir.flash_attn_varlen_func(
                 qs, ks, vs, cus, cus, 64, 64, causal=True),
             "16 separate calls of 64": lambda: [sdpa(a, b, c, is_causal=True)
                                                 for a, b, c in short]}
    t = alternate(progs, rounds)
    print("Ragged batch, H %d, D %d, f32, causal, lengths %s; %d rounds alternating"
          % (H, D, lens, rounds))
    print()
    print("| program | median (ms) |")
    print("|---|---|")
    for name, m in t.items():
        print("| %s | %.2f |" % (name, 1e3 * m))
    print()
    print("varlen / separate: %.2f (lengths 64 .. 4096), %.2f (16 × 64)"
          % (t["varlen, 16 sequences of 64 .. 4096"] / t["16 separate calls"],
             t["varlen, 16 sequences of 64"] / t["16 separate calls of 64"]))


def int8_decode(rounds, tk, build):
    """The contiguous decode on f32, f16 and int8 caches, alternating."""
    B, H, HKV, D = 1, 32, 8, 128
    rng = np.random.default_rng(0)
    q = rng.standard_normal((B, H, 1, D), dtype=np.float32)
    k = rng.standard_normal((B, HKV, tk, D), dtype=np.float32)
    v = rng.standard_normal((B, HKV, tk, D), dtype=np.float32)

    kq, ks = quantize(k)
    vq, vs = quantize(v)

    def text(elt, quant):
        t = lambda *s, e=elt: "tensor<%sx%s>" % ("x".join(map(str, s)), e)  # noqa: E731
        tq, tkv, ts = t(B, H, 1, D), t(B, HKV, tk, D), t(B, HKV, tk, e="f32")
        if not quant:
            return ("func.func @decode(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
                    "  %%o = attn.sdpa %%q, %%k, %%v : (%s, %s, %s) -> %s\n"
                    "  return %%o : %s\n}\n" % (tq, tkv, tkv, tq, tq, tkv, tkv, tq, tq))
        t8, tf = t(B, HKV, tk, D, e="i8"), t(B, HKV, tk, D, e="f32")
        return ("func.func @decode(%%q: %s, %%kq: %s, %%ks: %s, %%vq: %s, %%vs: %s) -> %s {\n"
                "  %%k = attn.dequantize %%kq, %%ks : (%s, %s) -> %s\n"
                "  %%v = attn.dequantize %%vq, %%vs : (%s, %s) -> %s\n"
                "  %%o = attn.sdpa %%q, %%k, %%v : (%s, %s, %s) -> %s\n"
                "  return %%o : %s\n}\n"
                % (tq, t8, ts, t8, ts, tq, t8, ts, tf, t8, ts, tf, tq, tf, tf, tq, tq))

    f32 = attn_mlir.compile(text("f32", False))
    f16 = attn_mlir.compile(text("f16", False))
    i8 = attn_mlir.compile(text("f32", True))
    q16, k16, v16 = (x.astype(np.float16) for x in (q, k, v))
    # The same int8 values as a paged cache: shuffled blocks of 16 tokens
    # (NHD), scales [blocks, 16, Hkv], through flash_attn_with_kvcache.
    bs = 16
    perm = rng.permutation(tk // bs)
    def paged(x):
        rows = x[0].swapaxes(0, 1)  # [Tk, Hkv, ...]
        blocks = rows.reshape((tk // bs, bs) + rows.shape[1:])
        out = np.empty_like(blocks)
        out[perm] = blocks
        return np.ascontiguousarray(out)
    pkq, pks, pvq, pvs = paged(kq), paged(ks), paged(vq), paged(vs)
    table = perm.astype(np.int32)[None, :]
    lens = np.array([tk], dtype=np.int32)
    qf = np.ascontiguousarray(q.swapaxes(1, 2))  # [B, 1, H, D]
    pk, pv = paged(k), paged(v)
    def f32_paged():
        out = attn_mlir.flash_attn_with_kvcache(qf, pk, pv, cache_seqlens=lens, block_table=table)
        return np.asarray(out).swapaxes(1, 2)
    def i8_paged():
        out = attn_mlir.flash_attn_with_kvcache(qf, pkq, pvq, cache_seqlens=lens,
                                                block_table=table, k_scale=pks, v_scale=pvs)
        return np.asarray(out).swapaxes(1, 2)
    progs = {"f32 cache": lambda: f32(q, k, v), "f16 cache": lambda: f16(q16, k16, v16),
             "int8 cache + f32 scales": lambda: i8(q, kq, ks, vq, vs),
             "f32 paged (blocks of 16)": f32_paged,
             "int8 paged (blocks of 16) + f32 scales": i8_paged}
    # Each against float64 attention on the K/V it holds (f16 and int8:
    # the rounded values), so the error is the kernel's, not the format's.
    def reference(kk, vv, qq):
        kk, vv, qq = (np.asarray(x, dtype=np.float64) for x in (kk, vv, qq))
        kk, vv = np.repeat(kk, H // HKV, 1), np.repeat(vv, H // HKV, 1)
        s = qq @ kk.transpose(0, 1, 3, 2) / np.sqrt(D)
        p = np.exp(s - s.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ vv
    refs = {"f32 cache": reference(k, v, q), "f16 cache": reference(k16, v16, q16),
            "int8 cache + f32 scales": reference(kq * ks[..., None].astype(np.float64),
                                                 vq * vs[..., None].astype(np.float64), q)}
    refs["int8 paged (blocks of 16) + f32 scales"] = refs["int8 cache + f32 scales"]
    refs["f32 paged (blocks of 16)"] = refs["f32 cache"]
    errs = {}
    for name, f in progs.items():
        out = np.asarray(f(), dtype=np.float64)
        errs[name] = np.abs(out - refs[name]).max() / np.abs(refs[name]).max()
    times = alternate(progs, rounds)
    gbps, cmd = bandwidth(build, 1024, os.cpu_count())
    nbytes = {"f32 cache": 2 * HKV * tk * D * 4, "f16 cache": 2 * HKV * tk * D * 2,
              "int8 cache + f32 scales": 2 * HKV * tk * (D + 4),
              "int8 paged (blocks of 16) + f32 scales": 2 * HKV * tk * (D + 4),
              "f32 paged (blocks of 16)": 2 * HKV * tk * D * 4}
    base = times["f32 cache"]
    print("int8 decode: B %d, H %d, Hkv %d, D %d, Tk %d, %d rounds alternating; read "
          "bandwidth %.1f GB/s (attn-fma-peak %s)" % (B, H, HKV, D, tk, rounds, gbps, cmd))
    print()
    print("| cache | median (ms) | f32 / this | K/V read (GB/s) | of bandwidth | max rel. error vs float64 |")
    print("|---|---|---|---|---|---|")
    for name, m in times.items():
        print("| %s | %.2f | %.2f× | %.1f | %.0f %% | %.1e |"
              % (name, 1e3 * m, base / m, nbytes[name] / m / 1e9,
                 100 * nbytes[name] / m / 1e9 / gbps, errs[name]))


def step(rounds, lq, lk, title):
    """A continuous-batching step: sequences prefilling chunks (lq[b] > 1
    queries, the chunk ending at the context lk[b]) and decoding one token,
    H 32, Hkv 8, D 128, f32, causal, keys in one paged NHD cache of blocks
    of 16 at shuffled ids. One flash_attn_varlen_func with the block table
    (attn.sdpa_varlen), against the route it replaced (the queries padded
    to [B, max_q, H, D], each sequence's at the end of its rows, one
    flash_attn_with_kvcache, the real rows copied out), against one
    flash_attn_with_kvcache call a sequence, and against PyTorch eager a
    sequence (its pages gathered into dense K/V, then softmax(Q·Kᵀ·scale
    + the bottom-right causal mask)·V: what a serving loop without a
    paged kernel does)."""
    H, HKV, D, BS = 32, 8, 128, 16
    mb = max(-(-n // BS) for n in lk)
    nb = sum(-(-n // BS) for n in lk) + 8
    perm = torch.randperm(nb)
    table = torch.zeros(len(lk), mb, dtype=torch.int32)
    used = 0
    for b, n in enumerate(lk):
        nblk = -(-n // BS)
        table[b, :nblk] = perm[used:used + nblk]
        used += nblk
    kc, vc = torch.randn(nb, BS, HKV, D), torch.randn(nb, BS, HKV, D)
    q = torch.randn(sum(lq), H, D)
    cuq = torch.tensor([0] + list(np.cumsum(lq)), dtype=torch.int32)
    cuk = torch.tensor([0] + list(np.cumsum(lk)), dtype=torch.int32)
    starts = cuq[:-1].tolist()
    lens = torch.tensor(lk, dtype=torch.int32)
    kvc = attn_mlir.flash_attn_with_kvcache
    maxq = max(lq)

    def varlen():
        return attn_mlir.flash_attn_varlen_func(q, kc, vc, cuq, cuk, maxq, max(lk), causal=True,
                                                block_table=table)

    def padded():
        qp = torch.zeros(len(lq), maxq, H, D)
        for b, (s, n) in enumerate(zip(starts, lq)):
            qp[b, maxq - n:] = q[s:s + n]
        o = kvc(qp, kc, vc, cache_seqlens=lens, block_table=table, causal=True)
        return torch.cat([o[b, maxq - n:] for b, n in enumerate(lq)])

    def separate():
        return torch.cat([kvc(q[s:s + n][None], kc, vc, cache_seqlens=lens[b:b + 1],
                              block_table=table[b:b + 1], causal=True)[0]
                          for b, (s, n) in enumerate(zip(starts, lq))])

    def eager():
        outs = []
        for b, (s, n, nk) in enumerate(zip(starts, lq, lk)):
            blocks = table[b, :-(-nk // BS)].long()
            k = kc[blocks].reshape(-1, HKV, D)[:nk].transpose(0, 1).repeat_interleave(H // HKV, 0)
            v = vc[blocks].reshape(-1, HKV, D)[:nk].transpose(0, 1).repeat_interleave(H // HKV, 0)
            scores = q[s:s + n].transpose(0, 1) @ k.transpose(1, 2) / D ** 0.5
            keep = torch.arange(nk)[None, :] <= torch.arange(n)[:, None] + nk - n
            p = torch.softmax(scores.masked_fill(~keep, float("-inf")), -1)
            outs.append((p @ v).transpose(0, 1))
        return torch.cat(outs)

    progs = {"varlen with block_table": varlen, "padded queries (before)": padded,
             "separate calls": separate, "PyTorch eager a sequence": eager}
    ref = eager()
    for name, f in progs.items():
        assert (f() - ref).abs().max() < 1e-4, name
    t = alternate(progs, rounds)
    print("%s: H %d, Hkv %d, D %d, f32, causal, paged NHD blocks of %d; query lengths %s, "
          "key lengths %s; torch %s, %d threads; %d rounds alternating"
          % (title, H, HKV, D, BS, lq, lk, torch.__version__, torch.get_num_threads(), rounds))
    print()
    print("| program | median (ms) | varlen / program |")
    print("|---|---|---|")
    for name, m in t.items():
        print("| %s | %.2f | %.2f |" % (name, 1e3 * m, t["varlen with block_table"] / m))


def steps(rounds):
    torch.set_num_threads(os.cpu_count())  # (Debian's torch starts with 1)
    step(rounds, [256, 256] + [1] * 14,
         [1024, 2048] + [int(round(512 * 8 ** (i / 13))) for i in range(14)],
         "Step A (2 prefill chunks of 256, 14 decodes)")
    print()
    step(rounds, [512] + [1] * 8, [2048] + [int(round(1024 * 4 ** (i / 7))) for i in range(8)],
         "Step B (issue 36: 1 prefill chunk of 512, 8 decodes)")


def int8_prefill(rounds, tk):
    """A prefill chunk of 256 queries at the end of a context of tk tokens
    (B 1, H 32, Hkv 8, D 128, bottom-right causal) against a paged NHD
    cache of blocks of 16 at shuffled ids, f32 and int8 (one f32 scale per
    token and head), through flash_attn_with_kvcache; and attn.dequantize
    of the two int8 caches alone, compiled through the CPU pipeline: what
    a prefill that takes the dequantized floats (the route before the
    prefill tile read int8 in place) paid on top of the f32 prefill."""
    B, H, HKV, D, TQ, BS = 1, 32, 8, 128, 256, 16
    rng = np.random.default_rng(1)
    nb = tk // BS
    perm = rng.permutation(nb).astype(np.int32)
    kc = rng.standard_normal((nb, BS, HKV, D), dtype=np.float32)
    vc = rng.standard_normal((nb, BS, HKV, D), dtype=np.float32)

    kq, ks = quantize(kc)
    vq, vs = quantize(vc)
    q = rng.standard_normal((B, TQ, H, D), dtype=np.float32)
    table, lens = perm[None, :], np.array([tk], dtype=np.int32)
    kvc = attn_mlir.flash_attn_with_kvcache
    t8 = "tensor<%dx%dx%dx%dxi8>" % (nb, BS, HKV, D)
    ts = "tensor<%dx%dx%dxf32>" % (nb, BS, HKV)
    tf = "tensor<%dx%dx%dx%dxf32>" % (nb, BS, HKV, D)
    deq = attn_mlir.compile(
        "func.func @deq(%%kq: %s, %%ks: %s, %%vq: %s, %%vs: %s) -> (%s, %s) {\n"
        "  %%k = attn.dequantize %%kq, %%ks : (%s, %s) -> %s\n"
        "  %%v = attn.dequantize %%vq, %%vs : (%s, %s) -> %s\n"
        "  return %%k, %%v : %s, %s\n}\n"
        % (t8, ts, t8, ts, tf, tf, t8, ts, tf, t8, ts, tf, tf, tf))
    progs = {
        "f32 paged": lambda: kvc(q, kc, vc, cache_seqlens=lens, block_table=table, causal=True),
        "int8 paged": lambda: kvc(q, kq, vq, cache_seqlens=lens, block_table=table, causal=True,
                                  k_scale=ks, v_scale=vs),
        "dequantize both int8 caches alone": lambda: deq(kq, ks, vq, vs)}
    k64 = (kq * ks[..., None].astype(np.float64))[perm].reshape(-1, HKV, D)
    v64 = (vq * vs[..., None].astype(np.float64))[perm].reshape(-1, HKV, D)
    k64, v64 = (np.repeat(x.transpose(1, 0, 2), H // HKV, 0) for x in (k64, v64))
    s_ = q[0].transpose(1, 0, 2).astype(np.float64) @ k64.transpose(0, 2, 1) / np.sqrt(D)
    keep = np.arange(tk)[None, :] <= np.arange(TQ)[:, None] + tk - TQ
    s_ = np.where(keep, s_, -np.inf)
    p_ = np.exp(s_ - s_.max(-1, keepdims=True))
    want = ((p_ / p_.sum(-1, keepdims=True)) @ v64).transpose(1, 0, 2)
    err = np.abs(np.asarray(progs["int8 paged"]())[0] - want).max() / np.abs(want).max()
    t = alternate(progs, rounds)
    print("int8 prefill chunk: B %d, Tq %d at the end of Tk %d, H %d, Hkv %d, D %d, causal, "
          "paged NHD blocks of %d; %d rounds alternating; int8 max rel. error vs float64 on "
          "the dequantised K/V %.1e" % (B, TQ, tk, H, HKV, D, BS, rounds, err))
    print()
    print("| program | median (ms) |")
    print("|---|---|")
    for name, m in t.items():
        print("| %s | %.2f |" % (name, 1e3 * m))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--tk", type=int, default=32768)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", choices=["decode", "ragged", "int8", "step", "int8prefill"],
                    default=None)
    args = ap.parse_args()
    torch.manual_seed(0)
    if args.only in (None, "int8prefill"):
        int8_prefill(args.rounds, 8192)
        print()
        if args.only == "int8prefill":
            return
    if args.only in (None, "step"):
        steps(args.rounds)
        print()
        if args.only == "step":
            return
    if args.only in (None, "int8"):
        int8_decode(args.rounds, args.tk, args.build)
        print()
        if args.only == "int8":
            return
    if args.only != "decode":
        ragged(args.rounds)
        print()
        if args.only == "ragged":
            return
    B, H, HKV, D, TK = 1, 32, 8, 128, args.tk
    q = torch.randn(B, 1, H, D)
    k = torch.randn(B, HKV, TK, D)
    v = torch.randn(B, HKV, TK, D)
    lens = torch.tensor([TK], dtype=torch.int32)
    text = """func.func @decode(%q: tensor<?x32x1x128xf32>, %k: tensor<?x8x?x128xf32>,
                  %v: tensor<?x8x?x128xf32>, %len: tensor<?xi32>) -> tensor<?x32x1x128xf32> {
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<?x32x1x128xf32>, tensor<?x8x?x128xf32>, tensor<?x8x?x128xf32>, tensor<?xi32>)
        -> tensor<?x32x1x128xf32>
  return %o : tensor<?x32x1x128xf32>
}"""
    contiguous = attn_mlir.compile(text)
    qh = q.transpose(1, 2).contiguous()
    progs = {"contiguous sdpa": lambda: contiguous(qh, k, v, lens).transpose(1, 2)}
    kvc = attn_mlir.flash_attn_with_kvcache
    for bs in (16, 256):
        nb = TK // bs
        perm = torch.randperm(nb)
        # Block i of the sequence is physical block perm[i].
        kc = torch.empty(nb, bs, HKV, D)
        vc = torch.empty(nb, bs, HKV, D)
        kc[perm] = k[0].permute(1, 0, 2).reshape(nb, bs, HKV, D)
        vc[perm] = v[0].permute(1, 0, 2).reshape(nb, bs, HKV, D)
        table = perm[None, :].to(torch.int32)
        progs["paged NHD, block %d" % bs] = (lambda kc=kc, vc=vc, table=table: kvc(
            q, kc, vc, cache_seqlens=lens, block_table=table, causal=True))
        kh = kc.permute(0, 2, 1, 3).contiguous()
        vh = vc.permute(0, 2, 1, 3).contiguous()
        progs["paged HND, block %d" % bs] = (lambda kh=kh, vh=vh, table=table: kvc(
            q, kh, vh, cache_seqlens=lens, block_table=table, causal=True, kv_layout="HND"))
    kflat = k.permute(0, 2, 1, 3).contiguous()
    vflat = v.permute(0, 2, 1, 3).contiguous()
    progs["one block NHD (contiguous cache)"] = lambda: kvc(q, kflat, vflat, cache_seqlens=lens,
                                                            causal=True)
    progs["one block HND (contiguous cache)"] = lambda: kvc(q, k, v, cache_seqlens=lens,
                                                            causal=True, kv_layout="HND")
    ref = progs["contiguous sdpa"]()
    for name, f in progs.items():
        err = (f() - ref).abs().max().item()
        assert err < 1e-5, (name, err)
    times = {name: [] for name in progs}
    for _ in range(args.rounds):
        for name, f in progs.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    kv_bytes = 2 * B * HKV * TK * D * 4
    gbps, cmd = bandwidth(args.build, 1024, os.cpu_count())
    base = statistics.median(times["contiguous sdpa"])
    print("B %d, H %d, Hkv %d, D %d, Tk %d, f32, %d rounds alternating; read bandwidth "
          "%.1f GB/s (attn-fma-peak %s)" % (B, H, HKV, D, TK, args.rounds, gbps, cmd))
    print()
    print("| program | median (ms) | vs contiguous | K/V read (GB/s) | of bandwidth |")
    print("|---|---|---|---|---|")
    for name, ts in times.items():
        m = statistics.median(ts)
        print("| %s | %.2f | %.2f× | %.1f | %.0f %% |"
              % (name, 1e3 * m, m / base, kv_bytes / m / 1e9, 100 * kv_bytes / m / 1e9 / gbps))


if __name__ == "__main__":
    main()
