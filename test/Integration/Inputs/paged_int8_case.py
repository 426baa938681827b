#!/usr/bin/env python3
"""paged_int8_case.py DIR: a paged int8 K/V case for paged-int8.mlir in
DIR: q, int8 K/V caches with one f32 scale per (block, slot, K/V head) in
both layouts (nhd [NB, BS, Hkv, D], hnd [NB, Hkv, BS, D]), a shuffled
block table (ids past each sequence's length are garbage), the lengths, and
the expected outputs of a decode (Tq 1) and a chunked prefill (Tq 3): the
pages gathered and dequantized in NumPy, then float64 attention,
bottom-right causal against each sequence's own length."""
import os
import sys

import numpy as np

from paged_case import paged_attention

out = sys.argv[1]
rng = np.random.default_rng(11)
B, H, HKV, D, NB, BS, MB = 3, 8, 2, 64, 20, 4, 6
kq = rng.integers(-127, 128, (NB, BS, HKV, D), dtype=np.int8)
vq = rng.integers(-127, 128, (NB, BS, HKV, D), dtype=np.int8)
ks = rng.uniform(0.001, 0.02, (NB, BS, HKV)).astype(np.float32)
vs = rng.uniform(0.001, 0.02, (NB, BS, HKV)).astype(np.float32)
lens = np.array([9, 24, 3], dtype=np.int32)  # not a multiple of BS, full, short
table = rng.permutation(NB)[: B * MB].reshape(B, MB).astype(np.int32)
for b, n in enumerate(lens):
    table[b, (n + BS - 1) // BS:] = 1000 + b  # never used
kf = kq.astype(np.float64) * ks[..., None]
vf = vq.astype(np.float64) * vs[..., None]


def attention(q):
    return paged_attention(q, kf, vf, table, lens, BS).astype(np.float32)


q1 = rng.standard_normal((B, H, 1, D), dtype=np.float32)
q3 = rng.standard_normal((B, H, 3, D), dtype=np.float32)
arrays = dict(q1=q1, q3=q3, kq=kq, vq=vq, ks=ks, vs=vs, table=table, lens=lens,
              kq_hnd=np.ascontiguousarray(kq.transpose(0, 2, 1, 3)),
              vq_hnd=np.ascontiguousarray(vq.transpose(0, 2, 1, 3)),
              ks_hnd=np.ascontiguousarray(ks.transpose(0, 2, 1)),
              vs_hnd=np.ascontiguousarray(vs.transpose(0, 2, 1)),
              expect1=attention(q1), expect3=attention(q3))
for name, a in arrays.items():
    np.save(os.path.join(out, name + ".npy"), a)
