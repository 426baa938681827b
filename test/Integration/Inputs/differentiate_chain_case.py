#!/usr/bin/env python3
"""differentiate_chain_case.py DIR: inputs and float64 expected gradients of
differentiate-chain.mlir. @chain is attention written as the primitive
chain (GQA, rope on Q (rotate_half) and K (interleaved) from shared
tables, scores, scale, softcap, top-left causal mask plus an additive
[1,1,T,T] mask, softmax, dropout, weighted sum); @dropout_sdpa an attn.sdpa
with dropout (which attn-differentiate turns into an sdpa_partial and an
sdpa_grad with its rate and seed).
torch.autograd differentiates the same formulas in float64; dropout's
keep mask is the dialect's generator (attn.dropout: splitmix64 of the seed
and the flat index of [B,H,Tq,Tk]) in numpy, test/Python/attn_ref.py's
dropout_keep. The loss is
Σ out·dout with dout the extra input."""
import os
import sys

import numpy as np
import torch

# attn.dropout's generator in numpy, shared with the Python tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Python"))
from attn_ref import dropout_keep  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(11)
B, H, HKV, T, D = 1, 4, 2, 6, 8
HALF = 4


def randn(*shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def dropout(p, rate, seed):
    keep = dropout_keep(tuple(p.shape), rate, seed)
    factor = float(np.float32(1.0 / (1.0 - float(np.float32(rate)))))
    return torch.where(keep, p * factor, torch.zeros_like(p))


def rope(x, cos, sin, interleaved):
    if interleaved:
        p, q = x[..., 0:2 * HALF:2], x[..., 1:2 * HALF:2]
    else:
        p, q = x[..., :HALF], x[..., HALF:2 * HALF]
    yp, yq = p * cos - q * sin, q * cos + p * sin
    if interleaved:
        y = torch.stack((yp, yq), dim=-1).reshape(x.shape)
    else:
        y = torch.cat((yp, yq), dim=-1)
    return y


def grouped(x):
    return x.repeat_interleave(H // HKV, dim=1)


def save(name, a):
    np.save(os.path.join(out, name + ".npy"), np.asarray(a, dtype=np.float32))


# @chain
q, k, v = randn(B, H, T, D), randn(B, HKV, T, D), randn(B, HKV, T, D)
angles = rng.uniform(0.0, 3.0, (T, HALF))
cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
m = randn(1, 1, T, T, scale=0.5)
dout = randn(B, H, T, D)
arrays = {"q": q, "k": k, "v": v, "cos": cos, "sin": sin, "m": m}
t = {n: torch.tensor(a.astype(np.float64), requires_grad=True) for n, a in arrays.items()}
qr = rope(t["q"], t["cos"], t["sin"], interleaved=False)
kr = rope(t["k"], t["cos"], t["sin"], interleaved=True)
s = qr @ grouped(kr).transpose(-2, -1) * float(np.float32(0.35))
s = 2.0 * torch.tanh(s / 2.0)
s = (s + t["m"]).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
p = dropout(torch.softmax(s, dim=-1), 0.25, 7)
o = p @ grouped(t["v"])
grads = torch.autograd.grad(o, list(t.values()), torch.tensor(dout.astype(np.float64)))
for n, a in arrays.items():
    save(n, a)
save("dout", dout)
for n, g in zip(arrays, grads):
    save("d" + n, g.numpy())

# @dropout_sdpa: GQA, bottom-right causal, scale 1/sqrt(D), dropout 0.3 seed 5
T2 = 9
q2, k2, v2 = randn(2, H, 5, D), randn(2, HKV, T2, D), randn(2, HKV, T2, D)
dout2 = randn(2, H, 5, D)
t2 = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in (q2, k2, v2)]
s2 = t2[0] @ grouped(t2[1]).transpose(-2, -1) * float(np.float32(1.0 / np.sqrt(D)))
s2 = s2.masked_fill(~torch.ones(5, T2, dtype=torch.bool).tril(T2 - 5), float("-inf"))
o2 = dropout(torch.softmax(s2, dim=-1), 0.3, 5) @ grouped(t2[2])
grads2 = torch.autograd.grad(o2, t2, torch.tensor(dout2.astype(np.float64)))
for n, a in zip(("q2", "k2", "v2"), (q2, k2, v2)):
    save(n, a)
save("dout2", dout2)
for n, g in zip(("dq2", "dk2", "dv2"), grads2):
    save(n, g.numpy())
# The forward too, to pin the generator: the sdpa's own output.
save("o2", o2.detach().numpy())

# @masked_sdpa: GQA, top-left causal, an additive [T, T] mask argument whose
# adjoint attn-differentiate asks attn.sdpa_grad for (grad_mask).
q3, k3, v3 = randn(1, H, T, D), randn(1, HKV, T, D), randn(1, HKV, T, D)
m3 = randn(T, T, scale=0.5)
dout3 = randn(1, H, T, D)
t3 = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in (q3, k3, v3, m3)]
s3 = t3[0] @ grouped(t3[1]).transpose(-2, -1) * float(np.float32(1.0 / np.sqrt(D))) + t3[3]
s3 = s3.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
o3 = torch.softmax(s3, dim=-1) @ grouped(t3[2])
grads3 = torch.autograd.grad(o3, t3, torch.tensor(dout3.astype(np.float64)))
for n, a in zip(("q3", "k3", "v3", "m3"), (q3, k3, v3, m3)):
    save(n, a)
save("dout3", dout3)
for n, g in zip(("dq3", "dk3", "dv3", "dm3"), grads3):
    save(n, g.numpy())
