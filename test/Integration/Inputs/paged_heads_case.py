#!/usr/bin/env python3
"""paged_heads_case.py DIR: paged NHD decode cases for paged-every-head.mlir
in DIR, where the CPU kernel runs every K/V head in one work item: q
[3, 8, 1, 32] (GQA, 4 K/V heads), K/V caches [NB, BS, 4, 32] with blocks
of 16 and of 1 token holding the same keys (blocks of 16 in HND too), shuffled block tables (ids
past each sequence's length are garbage), lengths 640 (the table's
capacity), 1 and 37; a single long sequence (633 keys, key splits); sinks
and ALiBi slopes for the features entry; and the expected outputs from
gathering the pages in NumPy and plain float64 attention."""
import os
import sys

import numpy as np

from paged_case import paged_attention

out = sys.argv[1]
rng = np.random.default_rng(23)
B, H, HKV, D, MB16 = 4, 8, 4, 32, 40
CAP = MB16 * 16


def paged(keys, bs, extra):
    """keys [B, CAP, HKV, D] as a shuffled cache of blocks of `bs` tokens
    (`extra` spare blocks) and its table, garbage past each length."""
    mb = CAP // bs
    nb = B * mb + extra
    cache = rng.standard_normal((nb, bs) + keys.shape[2:], dtype=np.float32)
    table = rng.permutation(nb)[: B * mb].reshape(B, mb).astype(np.int32)
    for b in range(B):
        for i in range(mb):
            cache[table[b, i]] = keys[b, i * bs:(i + 1) * bs]
    return cache, table


k = rng.standard_normal((B, CAP, HKV, D), dtype=np.float32)
v = rng.standard_normal((B, CAP, HKV, D), dtype=np.float32)
lens = np.array([CAP, 1, 37, 0], dtype=np.int32)
q = rng.standard_normal((B, H, 1, D), dtype=np.float32)
kc16, table16 = paged(k, 16, 5)
vc16 = np.empty_like(kc16)
vc16[:] = rng.standard_normal(vc16.shape)
for b in range(B):
    for i in range(MB16):
        vc16[table16[b, i]] = v[b, i * 16:(i + 1) * 16]
kc1, table1 = paged(k, 1, 7)
vc1 = np.empty_like(kc1)
vc1[:] = rng.standard_normal(vc1.shape)
for b in range(B):
    for i in range(CAP):
        vc1[table1[b, i]] = v[b, i:i + 1]
for b, n in enumerate(lens):
    table16[b, (n + 15) // 16:] = 1000 + b  # never used
    table1[b, n:] = 2000 + b
expect = paged_attention(q, kc16, vc16, table16, lens, 16)
# One long sequence: more keys than a thread's share, so they are split.
long_lens = np.array([633], dtype=np.int32)
expect_long = paged_attention(q[:1], kc16, vc16, table16[:1], long_lens, 16)
sinks = rng.uniform(-1, 3, H).astype(np.float32)
slopes = (2.0 ** -np.arange(1, H + 1)).astype(np.float32)
arrays = dict(q=q, kc16=kc16, vc16=vc16, table16=table16, kc1=kc1, vc1=vc1, table1=table1,
              kc16_hnd=np.ascontiguousarray(kc16.transpose(0, 2, 1, 3)),
              vc16_hnd=np.ascontiguousarray(vc16.transpose(0, 2, 1, 3)),
              lens=lens, q_long=q[:1].copy(), table_long=table16[:1].copy(),
              lens_long=long_lens, sinks=sinks, slopes=slopes,
              expect=expect.astype(np.float32), expect_long=expect_long.astype(np.float32))
for name, a in arrays.items():
    np.save(os.path.join(out, name + ".npy"), a)
