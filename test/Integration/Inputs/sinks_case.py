#!/usr/bin/env python3
"""sinks_case.py DIR [tensor-core]: inputs and the float64 expected output
of sinks.mlir:
attention sinks (one logit per query head in every row's softmax
denominator, weighing no value), with m = max(max_j s_ij, sink_h),
o_i = sum_j exp(s_ij - m) v_j / (exp(sink_h - m) + sum_j exp(s_ij - m)),
a row that sees no key giving 0. Head 1's sink is larger than every score;
batch row 1 has key length 0 (no key at all). expect_lse.npy is the
log of each row's denominator, sink included (sinks-lse.mlir). With
`tensor-core`, the f16 case of sinks.mlir's @sinks_f16 instead (tc_*.npy:
Tq 70, Tk 150, D 64, the tensor-core kernel's shape), the same sinks.
With `far-sinks`, that f16 case with every head's sink 12 to 18 above its
largest score over each row's keys (so at least that far above every
visible one) and a key in every row (far_*.npy): P = exp(s - m)
would be an f16 subnormal (or 0) if m were the sink, so the f32 output of
sdpa_partial shows whether P was rounded there; q32, k32, v32 are the
same values in f32 for the TF32 kernel."""
import os
import sys

import numpy as np

out = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else ""
tensor_core = mode in ("tensor-core", "far-sinks")
rng = np.random.default_rng(3)
B, H, HKV, TQ, TK, D = (2, 4, 2, 70, 150, 64) if tensor_core else (2, 4, 2, 5, 300, 32)
dtype = np.float16 if tensor_core else np.float32
q = rng.standard_normal((B, H, TQ, D)).astype(dtype)
k = rng.standard_normal((B, HKV, TK, D)).astype(dtype)
v = rng.standard_normal((B, HKV, TK, D)).astype(dtype)
sinks = np.array([0.5, 40.0, -3.0, 2.0], dtype=np.float32)
lens = np.array([TK - 17, 0], dtype=np.int32)
if mode == "far-sinks":
    lens = np.array([TK - 17, 90], dtype=np.int32)
    top = np.full(H, -np.inf)
    for b in range(B):
        for h in range(H):
            s = q[b, h].astype(np.float64) @ k[b, h // (H // HKV), :lens[b]].astype(np.float64).T
            top[h] = max(top[h], (s / np.sqrt(D)).max())
    sinks = (top + np.array([12.0, 15.0, 18.0, 13.5])).astype(np.float32)
expect = np.zeros((B, H, TQ, D))
# The log of each row's denominator, sink included: log(exp(sink_h) +
# sum_j exp(s_ij)) (sink_h for a row with no key): sdpa_partial's lse.
expect_lse = np.zeros((B, H, TQ))
for b in range(B):
    n = lens[b]
    for h in range(H):
        kk = k[b, h // (H // HKV), :n].astype(np.float64)
        vv = v[b, h // (H // HKV), :n].astype(np.float64)
        s = q[b, h].astype(np.float64) @ kk.T / np.sqrt(D)
        j = np.arange(n)[None, :]
        i = np.arange(TQ)[:, None]
        s = np.where(j <= i + n - TQ, s, -np.inf)  # bottom-right causal
        m = np.maximum(s.max(axis=1, initial=-np.inf), sinks[h])[:, None]
        p = np.exp(s - m)
        den = np.exp(sinks[h] - m) + p.sum(axis=1, keepdims=True)
        expect[b, h] = (p / den) @ vv
        expect_lse[b, h] = (m + np.log(den))[:, 0]
arrays = dict(q=q, k=k, v=v, sinks=sinks, lens=lens, expect=expect.astype(np.float32),
              expect_lse=expect_lse.astype(np.float32))
if mode == "far-sinks":  # the same values in f32 for the TF32 kernel (exact in TF32)
    arrays.update(q32=q.astype(np.float32), k32=k.astype(np.float32), v32=v.astype(np.float32))
prefix = {"tensor-core": "tc_", "far-sinks": "far_"}.get(mode, "")
for name, a in arrays.items():
    np.save(os.path.join(out, prefix + name + ".npy"), a)
