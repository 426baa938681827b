#!/usr/bin/env python3
"""mha_functions_case.py DIR: inputs and the float64 expected output of
mha-functions.mlir: attn.mha whose score function adds a per-head
relative-position bias read from a captured table [H, 2T-1] at
(h, i - j + T - 1), and whose mask function keeps the keys of the query's
own document (captured ids [T]) at or before it; written out in NumPy:
Q/K/V projections with biases, heads split (H 4 over Hkv 2), heads merged,
output projection with bias."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
B, T, E, H, HKV, D = 2, 11, 32, 4, 2, 8
x = rng.standard_normal((B, T, E), dtype=np.float32)
wq = rng.standard_normal((H * D, E), dtype=np.float32) * 0.3
wk = rng.standard_normal((HKV * D, E), dtype=np.float32) * 0.3
wv = rng.standard_normal((HKV * D, E), dtype=np.float32) * 0.3
wo = rng.standard_normal((E, H * D), dtype=np.float32) * 0.3
bq, bk, bv = (rng.standard_normal(n, dtype=np.float32) for n in (H * D, HKV * D, HKV * D))
bo = rng.standard_normal(E, dtype=np.float32)
table = rng.standard_normal((H, 2 * T - 1), dtype=np.float32)
doc = np.array([0] * 4 + [1] * 5 + [2] * 2, dtype=np.int32)

f = {n: a.astype(np.float64) for n, a in dict(x=x, wq=wq, wk=wk, wv=wv, wo=wo, bq=bq,
                                              bk=bk, bv=bv, bo=bo).items()}
q = (f["x"] @ f["wq"].T + f["bq"]).reshape(B, T, H, D).transpose(0, 2, 1, 3)
k = (f["x"] @ f["wk"].T + f["bk"]).reshape(B, T, HKV, D).transpose(0, 2, 1, 3)
v = (f["x"] @ f["wv"].T + f["bv"]).reshape(B, T, HKV, D).transpose(0, 2, 1, 3)
i, j = np.arange(T)[:, None], np.arange(T)[None, :]
keep = (doc[i] == doc[j]) & (j <= i)
o = np.zeros((B, H, T, D))
for b in range(B):
    for h in range(H):
        s = q[b, h] @ k[b, h // (H // HKV)].T / np.sqrt(D) + table[h, i - j + T - 1]
        s = np.where(keep, s, -np.inf)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        o[b, h] = p @ v[b, h // (H // HKV)] / p.sum(1, keepdims=True)
y = o.transpose(0, 2, 1, 3).reshape(B, T, H * D) @ f["wo"].T + f["bo"]
for name, a in dict(x=x, wq=wq, wk=wk, wv=wv, wo=wo, bq=bq, bk=bk, bv=bv, bo=bo,
                    table=table, doc=doc, expect=y.astype(np.float32)).items():
    np.save(os.path.join(out, name + ".npy"), a)
