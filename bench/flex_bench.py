#!/usr/bin/env python3
"""Score and mask functions against the named features and the dense call,
in one process, alternating, on the CPU pipeline (attn_mlir.flex_attention
vs attn_mlir.scaled_dot_product_attention). Prints a Markdown table of the
median times and the ratios issue 35 asks for.

  PYTHONPATH=build/python /usr/bin/python3 bench/flex_bench.py [--rounds 7]

Programs: B 1, H 12, D 64, f32, T 2048 for the function-vs-named rows;
H 4, T 8192 for the sparsity rows (a sliding window of 256, 8 documents of
T/8, with and without a passed block mask; the window in float arithmetic,
which only a block mask lets the kernel skip); create_block_mask (the
compiled attn.block_mask, kernel cached) against evaluating the mask on
the whole [H, T, T] index grid with torch and reducing it per tile (what
create_block_mask did before), H 4, T 8192; training steps (forward and
backward) with functions on the fused backward against the primitive
chain's route, H 4, T 2048. With --dynamic, the
flex calls run the kernels compiled with dynamic batch and lengths (the
ones a second shape gets) instead of the first shape's static ones."""

import argparse
import statistics
import time

import torch

import attn_mlir


def grid_block_mask(mask_mod, H, L, bq, bk):
    """The lists from mask_mod evaluated eagerly on the [1, H, L, L] grid
    (L a multiple of the blocks), reduced per tile with torch."""
    ar = torch.arange
    keep = mask_mod(ar(1)[:, None, None, None], ar(H)[None, :, None, None],
                    ar(L)[None, None, :, None], ar(L)[None, None, None, :])
    keep = torch.as_tensor(keep).expand(1, H, L, L)
    tiles = keep.reshape(1, H, L // bq, bq, L // bk, bk)
    anyk, allk = tiles.any(5).any(3), tiles.all(5).all(3)
    lists = []
    for sel in (anyk & ~allk, allk):
        num = sel.sum(-1, dtype=torch.int32)
        # Ascending block numbers first: sort the selected ones to the front.
        idx = torch.sort((~sel).to(torch.int8), dim=-1, stable=True).indices.to(torch.int32)
        lists += [num, idx]
    return lists


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--t", type=int, default=2048)
    ap.add_argument("--t-sparse", type=int, default=8192)
    ap.add_argument("--t-grad", type=int, default=2048)
    ap.add_argument("--only", default="", help="run the rows whose name holds this")
    ap.add_argument("--dynamic", action="store_true",
                    help="time flex_attention's dynamic-shape kernels (a first call at "
                         "another batch size takes the static one)")
    args = ap.parse_args()
    torch.manual_seed(0)

    rows = []
    T = args.t
    q, k, v = (torch.randn(1, 12, T, 64) for _ in range(3))
    slopes = torch.tensor([2.0 ** (-8 * (i + 1) / 12) for i in range(12)])
    rel = torch.randn(12, 2 * T - 1) * 0.1
    sdpa = attn_mlir.scaled_dot_product_attention
    flex = attn_mlir.flex_attention
    # Each row: name, target, the flex call as a function of (q, k, v), its
    # inputs, and the call it is compared with.
    pairs = [
        ("softcap 30 as score_mod vs named softcap", 1.15,
         lambda q, k, v: flex(q, k, v, score_mod=lambda s, b, h, i, j: torch.tanh(s / 30.0) * 30.0),
         (q, k, v), lambda: sdpa(q, k, v, softcap=30.0)),
        ("ALiBi as score_mod vs named ALiBi", 1.15,
         lambda q, k, v: flex(q, k, v, score_mod=lambda s, b, h, i, j: s - slopes[h] * (i - j).abs()),
         (q, k, v), lambda: sdpa(q, k, v, alibi_slopes=slopes)),
        ("causal as mask_mod vs named causal", 1.10,
         lambda q, k, v: flex(q, k, v, mask_mod=lambda b, h, i, j: j <= i),
         (q, k, v), lambda: sdpa(q, k, v, is_causal=True)),
        ("relative bias table as score_mod vs plain sdpa", 1.30,
         lambda q, k, v: flex(q, k, v, score_mod=lambda s, b, h, i, j: s + rel[h, i - j + T - 1]),
         (q, k, v), lambda: sdpa(q, k, v)),
    ]
    TS = args.t_sparse
    qs, ks, vs = (torch.randn(1, 4, TS, 64) for _ in range(3))
    doc = torch.repeat_interleave(torch.arange(8, dtype=torch.int32), TS // 8)

    def window(b, h, i, j):
        return (j <= i) & (i - j < 256)

    def docs(b, h, i, j):
        return doc[i] == doc[j]

    def float_window(b, h, i, j):
        # The same window in float arithmetic: the kernel's own bounds
        # cannot follow it, a block mask's lists can.
        d = (i - j).float()
        return (d >= 0.0) & (d < 256.0)
    docs_bm = attn_mlir.create_block_mask(docs, None, None, TS, TS, BLOCK_SIZE=128)
    float_bm = attn_mlir.create_block_mask(float_window, None, None, TS, TS, BLOCK_SIZE=128)
    dense = lambda: sdpa(qs, ks, vs)  # noqa: E731
    sparse = (qs, ks, vs)
    pairs += [
        ("sliding window 256 as mask_mod vs dense, T %d (speedup)" % TS, 10.0,
         lambda q, k, v: flex(q, k, v, mask_mod=window), sparse, dense),
        ("8 documents as mask_mod vs dense, T %d (speedup)" % TS, 5.0,
         lambda q, k, v: flex(q, k, v, mask_mod=docs), sparse, dense),
        ("8 documents with a block mask vs dense, T %d (speedup)" % TS, 5.0,
         lambda q, k, v: flex(q, k, v, block_mask=docs_bm), sparse, dense),
        ("window 256 in float arithmetic as mask_mod vs dense, T %d (speedup)" % TS, None,
         lambda q, k, v: flex(q, k, v, mask_mod=float_window), sparse, dense),
        ("window 256 in float arithmetic with a block mask vs dense, T %d (speedup)" % TS,
         10.0, lambda q, k, v: flex(q, k, v, block_mask=float_bm), sparse, dense),
    ]
    # Training: forward + backward (flex_attention, then torch.autograd.grad
    # of q, k, v) on the fused backward (attn.sdpa_grad with the functions
    # as regions) against the primitive chain's [B, H, L, S] route, which a
    # score function reading a captured tensor that requires grad takes
    # (here a zero [1] tensor added to the score, whose gradient the chain
    # also computes): every function took that route before 2026-12-06.
    TG = args.t_grad
    qg, kg, vg = (torch.randn(1, 4, TG, 64) for _ in range(3))
    dog = torch.randn(1, 4, TG, 64)
    docg = torch.repeat_interleave(torch.arange(8, dtype=torch.int32), TG // 8)
    relg = torch.randn(4, 2 * TG - 1) * 0.1
    zero = torch.zeros(1, requires_grad=True)

    def docs_causal(b, h, i, j):
        return (docg[i] == docg[j]) & (j <= i)

    def softcap_rel(s, b, h, i, j):
        return 30.0 * torch.tanh(s / 30.0) + relg[h, i - j + TG - 1]

    def train_step(score_mod, mask_mod):
        def step(q, k, v):
            q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
            out = flex(q, k, v, score_mod=score_mod, mask_mod=mask_mod)
            return torch.autograd.grad(out, (q, k, v), dog)
        return step

    def on_chain(score_mod):
        return lambda s, b, h, i, j: (score_mod(s, b, h, i, j) if score_mod else s) + zero[0]
    for name, score_mod, mask_mod in (
            ("8 causal documents as mask_mod", None, docs_causal),
            ("softcap + relative bias table as score_mod, causal mask_mod", softcap_rel,
             lambda b, h, i, j: j <= i)):
        pairs.append(("forward+backward, %s, fused vs the chain, H 4, T %d (speedup)"
                      % (name, TG), None, train_step(score_mod, mask_mod), (qg, kg, vg),
                      lambda sm=score_mod, mm=mask_mod: train_step(on_chain(sm), mm)(qg, kg, vg)))
    cbm = attn_mlir.create_block_mask
    for name, fn in (("causal", lambda b, h, i, j: j <= i), ("8 documents", docs),
                     ("window 256 in float arithmetic", float_window)):
        pairs.append(("create_block_mask, %s, H 4, T %d vs the grid in torch (speedup)"
                      % (name, TS), None,
                      lambda q, k, v, fn=fn: cbm(fn, None, 4, TS, TS, BLOCK_SIZE=128), (),
                      lambda fn=fn: grid_block_mask(fn, 4, TS, 128, 128)))
    print("| program | function (ms) | other (ms) | ratio | target |")
    print("|---|---|---|---|---|")
    for name, target, call, inputs, b in pairs:
        if args.only not in name:
            continue
        if args.dynamic:
            # A first call at batch 2 takes the static kernel; the timed
            # shape then gets the dynamic one (flex.py, _FIRST_SHAPE).
            if inputs:
                call(*(torch.cat([t, t]) for t in inputs))
        a = lambda: call(*inputs) if inputs else call(None, None, None)  # noqa: E731
        a()
        b()
        ta, tb = [], []
        for _ in range(args.rounds):
            for fn, acc in ((a, ta), (b, tb)):
                t0 = time.perf_counter()
                fn()
                acc.append(time.perf_counter() - t0)
        ma, mb = statistics.median(ta), statistics.median(tb)
        speedup = "speedup" in name
        ratio = mb / ma if speedup else ma / mb
        if target is None:
            goal = "none"
        else:
            ok = ratio >= target if speedup else ratio <= target
            goal = "%s %.2f%s" % ("≥" if speedup else "≤", target, "" if ok else " (missed)")
        print("| %s | %.1f | %.1f | %.2f× | %s |" % (name, ma * 1e3, mb * 1e3, ratio, goal),
              flush=True)


if __name__ == "__main__":
    main()
