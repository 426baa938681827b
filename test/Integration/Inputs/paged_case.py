#!/usr/bin/env python3
"""paged_case.py DIR: writes a paged-KV decode/prefill case for
paged-kv.mlir into DIR: q, the K/V caches, a shuffled block table (ids past
each sequence's length are garbage), the lengths, and the expected output
from gathering the pages in NumPy and plain float64 attention (bottom-right
causal against each sequence's own length)."""
import os
import sys

import numpy as np


def paged_attention(q, kc, vc, table, lens, bs):
    """Float64 attention of q [B, H, Tq, D] against the first lens[b] keys
    of each sequence, gathered from the NHD caches kc, vc [NB, BS, Hkv, D]
    through `table`; bottom-right causal against each sequence's own
    length, 0 for a row that sees no key."""
    b_n, h_n, tq, d = q.shape
    g = h_n // kc.shape[2]
    expect = np.zeros(q.shape[:3] + (vc.shape[-1],))
    for b, n in enumerate(lens):
        if n == 0:  # no key: every row is 0
            continue
        j = np.arange(n)
        k = kc[table[b, j // bs], j % bs].astype(np.float64)  # [n, HKV, D]
        v = vc[table[b, j // bs], j % bs].astype(np.float64)
        for h in range(h_n):
            s = q[b, h].astype(np.float64) @ k[:, h // g].T / np.sqrt(d)
            i = np.arange(tq)[:, None]
            s = np.where(j[None, :] <= i + n - tq, s, -np.inf)
            m = s.max(axis=1, keepdims=True)
            m = np.where(np.isfinite(m), m, 0)
            p = np.exp(s - m)
            l = p.sum(axis=1, keepdims=True)
            expect[b, h] = np.where(l > 0, p / np.where(l > 0, l, 1), 0) @ v[:, h // g]
    return expect


if __name__ == "__main__":
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
    expect = paged_attention(q, kc, vc, table, lens, BS)
    bad = table.copy()
    bad[1, 5] = NB  # used: sequence 1 fills all 6 blocks
    for name, a in dict(q=q, kc=kc, vc=vc, table=table, bad=bad, lens=lens,
                        expect=expect.astype(np.float32)).items():
        np.save(os.path.join(out, name + ".npy"), a)
