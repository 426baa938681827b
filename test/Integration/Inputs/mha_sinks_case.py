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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mha_block import heads, merge, random_block  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(5)
B, T, E, H, HKV, D = 2, 9, 32, 4, 2, 8
block = random_block(rng, B, T, E, H, HKV, D)
sinks = np.array([0.5, 60.0, -2.0, 1.5], dtype=np.float32)

q, k, v = heads(block, H, HKV, D)
o = np.zeros((B, H, T, D))
for b in range(B):
    for h in range(H):
        s = q[b, h] @ k[b, h // (H // HKV)].T / np.sqrt(D)
        s = np.where(np.arange(T)[None, :] <= np.arange(T)[:, None], s, -np.inf)
        m = np.maximum(s.max(axis=1), sinks[h])[:, None]
        p = np.exp(s - m)
        o[b, h] = p @ v[b, h // (H // HKV)] / (np.exp(sinks[h] - m) + p.sum(1, keepdims=True))
y = merge(block, o)
for name, a in dict(**block,
                    sinks=sinks, expect=y.astype(np.float32)).items():
    np.save(os.path.join(out, name + ".npy"), a)
