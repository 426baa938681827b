#!/usr/bin/env python3
"""paged_case.py DIR [tensor-core]: writes a paged-KV decode/prefill case
for paged-kv.mlir into DIR: q, the K/V caches, a shuffled block table (ids
past each sequence's length are garbage), the lengths, and the expected
output from gathering the pages in NumPy and plain float64 attention
(bottom-right causal against each sequence's own length). With
`tensor-core`, the f16 cases of paged-tensor-core.mlir instead: a prefill
chunk (Tq 70, D 64) and a decode step (D 128), blocks of 16 (and their
q, caches in f32: *_q32, *_kc32, *_vc32)."""
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


def tensor_core_cases(out):
    """Two f16 cases in NHD caches of blocks of 16 with shuffled tables:
    `chunk` (B 3, H 4 on Hkv 2, Tq 70, D 64; lengths 83, 96 = the table's
    capacity, and 5: rows that see no key) and `decode` (B 2, H 4 on Hkv
    2, Tq 1, D 128; lengths 47 and 96)."""
    rng = np.random.default_rng(11)
    NB, BS, MB, HKV = 20, 16, 6, 2
    for name, b_n, h_n, tq, d, lens in (("chunk", 3, 4, 70, 64, [83, 96, 5]),
                                         ("decode", 2, 4, 1, 128, [47, 96])):
        q = rng.standard_normal((b_n, h_n, tq, d)).astype(np.float16)
        kc = rng.standard_normal((NB, BS, HKV, d)).astype(np.float16)
        vc = rng.standard_normal((NB, BS, HKV, d)).astype(np.float16)
        lens = np.array(lens, dtype=np.int32)
        table = np.stack([rng.permutation(NB)[:MB] for _ in range(b_n)]).astype(np.int32)
        for b, n in enumerate(lens):
            table[b, (n + BS - 1) // BS:] = 1000 + b  # never used
        expect = paged_attention(q, kc, vc, table, lens, BS)
        # q32, kc32, vc32: the same values in f32 for the TF32 kernel (an
        # f16 value is exact in TF32: 10 mantissa bits, a wider exponent).
        for part, a in dict(q=q, kc=kc, vc=vc, table=table, lens=lens,
                            expect=expect.astype(np.float32), q32=q.astype(np.float32),
                            kc32=kc.astype(np.float32), vc32=vc.astype(np.float32)).items():
            np.save(os.path.join(out, "%s_%s.npy" % (name, part)), a)


if __name__ == "__main__":
    out = sys.argv[1]
    if sys.argv[2:] == ["tensor-core"]:
        tensor_core_cases(out)
        sys.exit(0)
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
