#!/usr/bin/env python3
"""block_mask_case.py DIR: the document ids and the expected lists of
block-mask.mlir, from the mask evaluated on the whole index grid:
documents of packed sequences, causal, a per-head bound on the key
(h = 1 drops keys 24..), B = 1, H = 2, 30 queries by 27 keys in blocks of
8 x 6 (tail tiles of 6 rows and 3 keys). A tile is full where every
position inside the grid is kept, partial where some but not all are;
the lists hold each row's KV blocks in ascending order, zeros after."""
import os
import sys

import numpy as np

out = sys.argv[1]
B, H, LQ, LK, BQ, BK = 1, 2, 30, 27, 8, 6
doc = np.array([0] * 11 + [1] * 9 + [2] * 10, dtype=np.int32)
i = np.arange(LQ)[:, None]
j = np.arange(LK)[None, :]
keep = np.zeros((B, H, LQ, LK), dtype=bool)
for h in range(H):
    keep[0, h] = (doc[i] == doc[j]) & (j <= i) & (j < 27 - 3 * h)
NQ, NK = -(-LQ // BQ), -(-LK // BK)
lists = {kind: (np.zeros((B, H, NQ), np.int32), np.zeros((B, H, NQ, NK), np.int32))
         for kind in ("partial", "full")}
for h in range(H):
    for m in range(NQ):
        for n in range(NK):
            tile = keep[0, h, m * BQ:(m + 1) * BQ, n * BK:(n + 1) * BK]
            kind = "full" if tile.all() else "partial" if tile.any() else None
            if kind:
                count, idx = lists[kind]
                idx[0, h, m, count[0, h, m]] = n
                count[0, h, m] += 1
np.save(os.path.join(out, "doc.npy"), doc)
for name, a in (("kn", lists["partial"][0]), ("ki", lists["partial"][1]),
                ("fn", lists["full"][0]), ("fi", lists["full"][1])):
    np.save(os.path.join(out, name + ".npy"), a)
