#!/usr/bin/env python3
"""mha_sinks_case.py DIR: inputs and the float64 expected output of
mha-sinks.mlir: attn.mha with attention sinks, written out in NumPy:
Q/K/V projections with biases, heads split (H 4 over Hkv 2), top-left
causal attention whose softmax denominator also holds exp(sink_h)
(m = max(max_j s_ij, sink_h); the sink weighs no value), heads merged,
output projection with bias. Head 1's sink is larger than every score."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(5)
B, T, E, H, HKV, D = 2, 9, 32, 4, 2, 8
x = rng.standard_normal((B, T, E), dtype=np.float32)
wq = rng.standard_normal((H * D, E), dtype=np.float32) * 0.3
wk = rng.standard_normal((HKV * D, E), dtype=np.float32) * 0.3
wv = rng.standard_normal((HKV * D, E), dtype=np.float32) * 0.3
wo = rng.standard_normal((E, H * D), dtype=np.float32) * 0.3
bq, bk, bv = (rng.standard_normal(n, dtype=np.float32) for n in (H * D, HKV * D, HKV * D))
bo = rng.standard_normal(E, dtype=np.float32)
sinks = np.array([0.5, 60.0, -2.0, 1.5], dtype=np.float32)

f = {n: a.astype(np.float64) for n, a in dict(x=x, wq=wq, wk=wk, wv=wv, wo=wo, bq=bq,
                                              bk=bk, bv=bv, bo=bo).items()}
q = (f["x"] @ f["wq"].T + f["bq"]).reshape(B, T, H, D).transpose(0, 2, 1, 3)
k = (f["x"] @ f["wk"].T + f["bk"]).reshape(B, T, HKV, D).transpose(0, 2, 1, 3)
v = (f["x"] @ f["wv"].T + f["bv"]).reshape(B, T, HKV, D).transpose(0, 2, 1, 3)
o = np.zeros((B, H, T, D))
for b in range(B):
    for h in range(H):
        s = q[b, h] @ k[b, h // (H // HKV)].T / np.sqrt(D)
        s = np.where(np.arange(T)[None, :] <= np.arange(T)[:, None], s, -np.inf)
        m = np.maximum(s.max(axis=1), sinks[h])[:, None]
        p = np.exp(s - m)
        o[b, h] = p @ v[b, h // (H // HKV)] / (np.exp(sinks[h] - m) + p.sum(1, keepdims=True))
y = o.transpose(0, 2, 1, 3).reshape(B, T, H * D) @ f["wo"].T + f["bo"]
for name, a in dict(x=x, wq=wq, wk=wk, wv=wv, wo=wo, bq=bq, bk=bk, bv=bv, bo=bo,
                    sinks=sinks, expect=y.astype(np.float32)).items():
    np.save(os.path.join(out, name + ".npy"), a)
