#!/usr/bin/env python3
"""paged_case.py DIR: writes a paged-KV decode/prefill case for
paged-kv.mlir into DIR: q, the K/V caches, a shuffled block table (ids past
each sequence's length are garbage), the lengths, and the expected output
from gathering the pages in NumPy and plain float64 attention (bottom-right
causal against each sequence's own length)."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
B, H, HKV, TQ, D, NB, BS, MB = 3, 4, 2, 3, 32, 20, 4, 6
q = rng.standard_normal((B, H, TQ, D), dtype=np.float32)
kc = rng.standard_normal((NB, BS, HKV, D), dtype=np.float32)
vc = rng.standard_normal((NB, BS, HKV, D), dtype=np.float32)
lens = np.array([9, 24, 3], dtype=np.int32)  # not a multiple of BS, full, short
table = rng.permutation(NB)[: B * MB].reshape(B, MB).astype(np.int32)
for b, n in enumerate(lens):
    table[b, (n + BS - 1) // BS:] = 1000 + b  # never used
expect = np.zeros((B, H, TQ, D))
for b, n in enumerate(lens):
    j = np.arange(n)
    k = kc[table[b, j // BS], j % BS].astype(np.float64)  # [n, HKV, D]
    v = vc[table[b, j // BS], j % BS].astype(np.float64)
    for h in range(H):
        s = q[b, h].astype(np.float64) @ k[:, h // (H // HKV)].T / np.sqrt(D)
        i = np.arange(TQ)[:, None]
        s = np.where(j[None, :] <= i + n - TQ, s, -np.inf)
        m = s.max(axis=1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        p = np.exp(s - m)
        l = p.sum(axis=1, keepdims=True)
        expect[b, h] = np.where(l > 0, p / np.where(l > 0, l, 1), 0) @ v[:, h // (H // HKV)]
bad = table.copy()
bad[1, 5] = NB  # used: sequence 1 fills all 6 blocks
for name, a in dict(q=q, kc=kc, vc=vc, table=table, bad=bad, lens=lens,
                    expect=expect.astype(np.float32)).items():
    np.save(os.path.join(out, name + ".npy"), a)
