#!/usr/bin/env python3
"""differentiate_sinks_case.py DIR: inputs and float64 expected gradients of
differentiate-sinks.mlir: attention sinks (one logit per query head in
every row's softmax denominator, weighing no value) differentiated by
torch.autograd in float64. @fused is an attn.sdpa with sinks, GQA, key
lengths (batch row 1 has none: its output is 0 and its sinks' gradient 0)
and bottom-right causal; @chain the primitive chain with attn.softmax's
sinks. The loss is Σ out·dout with dout the extra input; head 1's sink is
larger than every score."""
import os
import sys

import numpy as np
import torch

out = sys.argv[1]
rng = np.random.default_rng(17)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def save(name, a):
    np.save(os.path.join(out, name + ".npy"), np.asarray(a))


def t64(a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def attend(s, sinks, v):
    """softmax over [s, sink] with the sink's column dropped, then · v."""
    b, h, tq, _ = s.shape
    col = sinks[None, :, None, None].expand(b, h, tq, 1)
    p = torch.softmax(torch.cat([s, col], -1), -1)[..., :-1]
    return p @ v


def case(prefix, q, k, v, sinks, keep, scale):
    dout = randn(*q.shape[:3], v.shape[3])
    tq, tk, tv, ts = t64(q), t64(k), t64(v), t64(sinks)
    g = q.shape[1] // k.shape[1]
    kk, vv = tk.repeat_interleave(g, 1), tv.repeat_interleave(g, 1)
    s = (tq @ kk.transpose(-1, -2)) * scale
    s = s.masked_fill(~torch.as_tensor(keep), -np.inf)
    o = attend(s, ts, vv)
    (o * torch.tensor(dout, dtype=torch.float64)).sum().backward()
    for name, a in (("q", q), ("k", k), ("v", v), ("sinks", sinks), ("dout", dout)):
        save(prefix + name, a)
    for name, t in (("dq", tq), ("dk", tk), ("dv", tv), ("dsinks", ts)):
        save(prefix + name, t.grad.numpy().astype(np.float32))


# @fused: B 2, H 4, Hkv 2, Tq 3, Tk 20, D 16, bottom-right causal with key lengths.
B, H, HKV, TQ, TK, D = 2, 4, 2, 3, 20, 16
lens = np.array([13, 0], dtype=np.int32)
i = np.arange(TQ)[:, None]
j = np.arange(TK)[None, :]
keep = np.stack([(j < n) & (j <= i + n - TQ) for n in lens])[:, None]  # [B, 1, Tq, Tk]
save("f_lens", lens)
case("f_", randn(B, H, TQ, D), randn(B, HKV, TK, D), randn(B, HKV, TK, D),
     np.array([0.5, 30.0, -2.0, 1.0], dtype=np.float32), keep, 1 / np.sqrt(D))

# @chain: B 1, H 2, T 6, D 8, top-left causal, scale 0.35.
T = 6
keep = (np.arange(T)[None, :] <= np.arange(T)[:, None])[None, None]
case("c_", randn(1, 2, T, 8), randn(1, 2, T, 8), randn(1, 2, T, 8),
     np.array([-1.0, 0.75], dtype=np.float32), keep, 0.35)
