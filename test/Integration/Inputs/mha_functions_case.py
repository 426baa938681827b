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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mha_block import heads, merge, random_block  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(7)
B, T, E, H, HKV, D = 2, 11, 32, 4, 2, 8
block = random_block(rng, B, T, E, H, HKV, D)
table = rng.standard_normal((H, 2 * T - 1), dtype=np.float32)
doc = np.array([0] * 4 + [1] * 5 + [2] * 2, dtype=np.int32)

q, k, v = heads(block, H, HKV, D)
i, j = np.arange(T)[:, None], np.arange(T)[None, :]
keep = (doc[i] == doc[j]) & (j <= i)
o = np.zeros((B, H, T, D))
for b in range(B):
    for h in range(H):
        s = q[b, h] @ k[b, h // (H // HKV)].T / np.sqrt(D) + table[h, i - j + T - 1]
        s = np.where(keep, s, -np.inf)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        o[b, h] = p @ v[b, h // (H // HKV)] / p.sum(1, keepdims=True)
y = merge(block, o)
for name, a in dict(**block,
                    table=table, doc=doc, expect=y.astype(np.float32)).items():
    np.save(os.path.join(out, name + ".npy"), a)
