#!/usr/bin/env python3
"""differentiate_score_mod_case.py DIR: inputs and float64 expected gradients
of differentiate-score-mod.mlir: an attn.sdpa with a score function

    c = 5·tanh(0.2·s)
    f = c + bias[i − j + 5]          where i >= j   (a relative-position table,
    f = 0.1·c² − exp(−|c|)·0.5       elsewhere        captured, constant)

differentiated by torch.autograd in float64 (the loss is Σ out·dout with
dout the extra input), GQA, no mask. Then the same with the tables as
learned arguments (@flex_tables: tab [H, 11] and kb [T] require grad):

    f = c + tab[h, i − j + 5]                             where i >= j
    f = 0.1·c² − exp(−|c|)·0.5 + kb[min(j + 2, T − 1)]·tab[h, 0]   elsewhere

(a read clamped into the table's shape, as attn.score_mod reads), whose
expected dtab and dkb sum the scores' adjoints at each read's element."""
import os
import sys

import numpy as np
import torch

out = sys.argv[1]
rng = np.random.default_rng(23)
B, H, HKV, T, D = 1, 4, 2, 6, 8
BIAS = np.array([0.3, -0.2, 0.1, 0.0, 0.5, -0.4, 0.25, 0.6, -0.1, 0.2, -0.3], dtype=np.float32)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


q, k, v, dout = randn(B, H, T, D), randn(B, HKV, T, D), randn(B, HKV, T, D), randn(B, H, T, D)
tq, tk, tv = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (q, k, v))
kk, vv = tk.repeat_interleave(H // HKV, 1), tv.repeat_interleave(H // HKV, 1)
s = (tq @ kk.transpose(-1, -2)) / np.sqrt(D)
c = 5 * torch.tanh(0.2 * s)
i = torch.arange(T)[:, None]
j = torch.arange(T)[None, :]
bias = torch.tensor(BIAS, dtype=torch.float64)[(i - j + 5).clamp(0, 10)]
f = torch.where(i >= j, c + bias, 0.1 * c * c - torch.exp(-c.abs()) * 0.5)
o = torch.softmax(f, -1) @ vv
(o * torch.tensor(dout, dtype=torch.float64)).sum().backward()

tq2, tk2, tv2 = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (q, k, v))
TAB, KB = randn(H, 11), randn(T)
ttab, tkb = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (TAB, KB))
kk2, vv2 = tk2.repeat_interleave(H // HKV, 1), tv2.repeat_interleave(H // HKV, 1)
c2 = 5 * torch.tanh(0.2 * (tq2 @ kk2.transpose(-1, -2)) / np.sqrt(D))
h = torch.arange(H)[:, None, None]
f2 = torch.where(i >= j, c2 + ttab[h, i - j + 5],
                 0.1 * c2 * c2 - torch.exp(-c2.abs()) * 0.5
                 + tkb[(j + 2).clamp(max=T - 1)] * ttab[h, 0])
o2 = torch.softmax(f2, -1) @ vv2
(o2 * torch.tensor(dout, dtype=torch.float64)).sum().backward()
for name, a in (("tab", TAB), ("kb", KB), ("o2", o2.detach().numpy()),
                ("dq2", tq2.grad.numpy()), ("dk2", tk2.grad.numpy()), ("dv2", tv2.grad.numpy()),
                ("dtab", ttab.grad.numpy()), ("dkb", tkb.grad.numpy())):
    np.save(os.path.join(out, name + ".npy"), np.asarray(a, dtype=np.float32))
for name, a in (("q", q), ("k", k), ("v", v), ("dout", dout), ("o", o.detach().numpy()),
                ("dq", tq.grad.numpy()), ("dk", tk.grad.numpy()), ("dv", tv.grad.numpy())):
    np.save(os.path.join(out, name + ".npy"), np.asarray(a, dtype=np.float32))
