#!/usr/bin/env python3
"""int8_case.py DIR: writes int8-kv.mlir's cases into DIR: float K/V
quantised per (batch, head, token) to int8 with symmetric scales
(max |x| / 127), and the expected outputs from dequantising in NumPy and
plain float64 attention.

- decode_*: B 2, H 8 on Hkv 2 (GQA), Tq 1, Tk 77, D 64, key lengths
  [77, 30], bottom-right causal (the decode tile reads the int8 rows);
- prefill_*: B 1, H 2, Tq 20, Tk 20, D 32, top-left causal (the prefill
  tile takes the dequantized floats)."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(11)


def quantize(x):
    scale = np.abs(x).max(axis=-1) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    return np.round(x / scale[..., None]).astype(np.int8), scale


def attention(q, k, v, lens, causal):
    b_, h_, tq, d = q.shape
    hkv = k.shape[1]
    out = np.zeros((b_, h_, tq, v.shape[-1]))
    for b in range(b_):
        n = lens[b]
        for h in range(h_):
            kk, vv = k[b, h // (h_ // hkv), :n], v[b, h // (h_ // hkv), :n]
            s = q[b, h].astype(np.float64) @ kk.T / np.sqrt(d)
            i, j = np.arange(tq)[:, None], np.arange(n)[None, :]
            diag = i + n - tq if causal == "bottom_right" else i
            s = np.where(j <= diag, s, -np.inf)
            m = s.max(axis=1, keepdims=True)
            m = np.where(np.isfinite(m), m, 0)
            p = np.exp(s - m)
            l = p.sum(axis=1, keepdims=True)
            out[b, h] = np.where(l > 0, p / np.where(l > 0, l, 1), 0) @ vv
    return out.astype(np.float32)


def case(name, b, h, hkv, tq, tk, d, lens, causal):
    q = rng.standard_normal((b, h, tq, d), dtype=np.float32)
    kq, ks = quantize(rng.standard_normal((b, hkv, tk, d)))
    vq, vs = quantize(rng.standard_normal((b, hkv, tk, d)))
    k = kq.astype(np.float64) * ks[..., None]
    v = vq.astype(np.float64) * vs[..., None]
    arrays = dict(q=q, kq=kq, ks=ks, vq=vq, vs=vs,
                  expect=attention(q, k, v, lens, causal))
    if lens is not None and len(lens) == b and name == "decode":
        arrays["lens"] = np.array(lens, dtype=np.int32)
    for key, a in arrays.items():
        np.save(os.path.join(out, "%s_%s.npy" % (name, key)), a)


case("decode", 2, 8, 2, 1, 77, 64, [77, 30], "bottom_right")
case("prefill", 1, 2, 2, 20, 20, 32, [20], "top_left")

# A scale array one token short of the cache: refused before the call.
np.save(os.path.join(out, "decode_ks_short.npy"),
        np.load(os.path.join(out, "decode_ks.npy"))[:, :, :-1].copy())
