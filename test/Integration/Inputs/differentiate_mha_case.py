#!/usr/bin/env python3
"""differentiate_mha_case.py DIR: inputs and float64 expected gradients of
differentiate-mha.mlir's @block_grad: a causal GQA self-attention block
(4 query heads, 2 key/value heads, head dim 8, biases) plus a residual-free
output, differentiated by torch.autograd in float64 on the plain formula
(x·Wᵀ + b projections, heads split, softmax, heads merged, output
projection). The loss is Σ y·dy with dy the extra input."""
import os
import sys

import numpy as np
import torch

out = sys.argv[1]
rng = np.random.default_rng(5)
B, T, E, H, HKV, D = 2, 9, 32, 4, 2, 8


def randn(*shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


x = randn(B, T, E)
wq, wk, wv = randn(H * D, E, scale=0.3), randn(HKV * D, E, scale=0.3), randn(HKV * D, E, scale=0.3)
wo = randn(E, H * D, scale=0.3)
bq, bk, bv, bo = randn(H * D), randn(HKV * D), randn(HKV * D), randn(E)
dy = randn(B, T, E)
names = ["x", "wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo"]
arrays = [x, wq, wk, wv, wo, bq, bk, bv, bo]
t = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in arrays]
tx, twq, twk, twv, two, tbq, tbk, tbv, tbo = t


def heads(y, n):
    return y.reshape(B, T, n, D).transpose(1, 2)


q = heads(tx @ twq.T + tbq, H)
k = heads(tx @ twk.T + tbk, HKV).repeat_interleave(H // HKV, dim=1)
v = heads(tx @ twv.T + tbv, HKV).repeat_interleave(H // HKV, dim=1)
s = q @ k.transpose(-2, -1) / np.sqrt(D)
s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
o = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, H * D)
y = o @ two.T + tbo
grads = torch.autograd.grad(y, t, torch.tensor(dy.astype(np.float64)))
for n, a in zip(names, arrays):
    np.save(os.path.join(out, n + ".npy"), a)
np.save(os.path.join(out, "dy.npy"), dy)
for n, g in zip(names, grads):
    np.save(os.path.join(out, "d" + n + ".npy"), g.numpy().astype(np.float32))
