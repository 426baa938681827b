#!/usr/bin/env python3
"""sdpa_grad_case.py DIR CASE: inputs and float64 expected results of
sdpa-grad.mlir's function @CASE. The expected dQ, dK, dV are
torch.autograd's gradients of the plain attention formula (written out
here, not attn's), evaluated in float64 on the inputs as the test passes
them; O and the row log-sum-exp, which the backward takes, come from the
same float64 forward. A row that keeps no key gives O = 0, lse = -inf and
zero gradients."""
import os
import sys

import numpy as np
import torch

out, case = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(11)


def attention(q, k, v, scale, causal=None, softcap=None, mask=None, slopes=None,
              lens=None, window=None):
    """(O, lse) in float64; q [B,H,Tq,D], k/v [B,Hkv,Tk,*]."""
    b, h, tq, _ = q.shape
    hkv, tk = k.shape[1], k.shape[2]
    kk = k.repeat_interleave(h // hkv, dim=1)
    vv = v.repeat_interleave(h // hkv, dim=1)
    s = scale * q @ kk.transpose(-1, -2)
    if softcap is not None:
        s = softcap * torch.tanh(s / softcap)
    L = torch.tensor(lens if lens is not None else [tk] * b, dtype=torch.float64)
    i = torch.arange(tq, dtype=torch.float64)[None, None, :, None]
    j = torch.arange(tk, dtype=torch.float64)[None, None, None, :]
    Lb = L[:, None, None, None]
    if slopes is not None:
        s = s - torch.tensor(slopes, dtype=torch.float64)[None, :, None, None] * (
            i + Lb - tq - j).abs()
    keep = torch.ones(b, h, tq, tk, dtype=torch.bool)
    if mask is not None:
        if mask.dtype == torch.bool:
            keep = keep & mask
        else:
            s = s + mask
    diag = i if causal == "top_left" else i + Lb - tq
    if causal is not None:
        keep = keep & (j <= diag)
    if window is not None:
        left, right = window
        if left is not None:
            keep = keep & (j >= diag - left)
        if right is not None:
            keep = keep & (j <= diag + right)
    keep = keep & (j < Lb)
    s = s.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None].masked_fill(lse[..., None] == float("-inf"), 0.0))
    p = p.masked_fill(~keep, 0.0)
    return p @ vv, lse


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def run(args, dtype, **kw):
    """Saves the inputs (q, k, v, o, do, lse, then the extras in `args`),
    and the expected gradients."""
    q, k, v = (torch.tensor(a.astype(np.float64), requires_grad=True)
               for a in (args["q"], args["k"], args["v"]))
    o, lse = attention(q, k, v, **kw)
    do = randn(*o.shape)
    if dtype != np.float32:
        do = do.astype(dtype)
    dq, dk, dv = torch.autograd.grad(o, (q, k, v), torch.tensor(do.astype(np.float64)))
    for name in ("dq", "dk", "dv"):
        assert torch.isfinite(locals()[name]).all()
    # The forward's partial results and the gradients the test expects:
    # f32, f64 for f64.
    acc = np.float64 if dtype == np.float64 else np.float32
    files = dict(q=args["q"], k=args["k"], v=args["v"],
                 o=o.detach().numpy().astype(dtype), do=do,
                 lse=lse.detach().numpy().astype(acc))
    files.update(args.get("extra", {}))
    files.update(dq=dq.numpy().astype(acc), dk=dk.numpy().astype(acc),
                 dv=dv.numpy().astype(acc))
    for name, a in files.items():
        np.save(os.path.join(out, name + ".npy"), a)


if case == "gqa_causal_softcap_lengths":
    # bottom-right causal against key lengths 53 and 20: rows 0..16 of
    # batch row 1 keep no key.
    B, H, HKV, TQ, TK, D, DV = 2, 4, 2, 37, 53, 16, 24
    lens = np.array([53, 20], dtype=np.int32)
    run(dict(q=randn(B, H, TQ, D), k=randn(B, HKV, TK, D), v=randn(B, HKV, TK, DV),
             extra=dict(lens=lens)), np.float32,
        scale=0.3, causal="bottom_right", softcap=5.0, lens=list(lens))
elif case == "additive_alibi_window":
    B, H, T, D = 1, 2, 29, 32
    mask = randn(T, T)
    slopes = np.array([0.25, 0.0625], dtype=np.float32)
    run(dict(q=randn(B, H, T, D), k=randn(B, H, T, D), v=randn(B, H, T, D),
             extra=dict(mask=mask, slopes=slopes)), np.float32,
        scale=1 / np.sqrt(D), causal="top_left", mask=torch.tensor(mask.astype(np.float64)),
        slopes=list(slopes), window=(7, None))
elif case == "bool_mask_mqa":
    # rows 3 and 10 of batch row 0 keep no key.
    B, H, TQ, TK, D = 2, 3, 12, 19, 8
    keep = rng.random((B, 1, TQ, TK)) < 0.6
    keep[0, 0, 3] = False
    keep[0, 0, 10] = False
    run(dict(q=randn(B, H, TQ, D), k=randn(B, 1, TK, D), v=randn(B, 1, TK, D),
             extra=dict(mask=keep)), np.float32,
        scale=1 / np.sqrt(D), mask=torch.tensor(keep))
elif case == "float64":
    # f64.mlir: everything in float64 (the reference lowering computes in
    # f64): GQA, bottom-right causal, softcap, an additive mask.
    B, H, HKV, TQ, TK, D, DV = 2, 4, 2, 9, 13, 8, 6
    q, k, v = (randn(*s).astype(np.float64) for s in
               ((B, H, TQ, D), (B, HKV, TK, D), (B, HKV, TK, DV)))
    mask = randn(1, 1, TQ, TK).astype(np.float64)
    run(dict(q=q, k=k, v=v, extra=dict(mask=mask)), np.float64, scale=0.375,
        causal="bottom_right", softcap=2.5, mask=torch.tensor(mask))
elif case == "half":
    B, H, T, D = 1, 2, 33, 16
    q, k, v = (randn(B, H, T, D).astype(np.float16) for _ in range(3))
    run(dict(q=q, k=k, v=v), np.float16, scale=0.25, causal="top_left")
elif case == "half_d64":
    # gpu-partial.mlir's tensor-core case: f16, D 64, GQA, Tq 77 (two Q
    # blocks of 64), bottom-right causal against key lengths 90 and 40:
    # rows 0..36 of batch row 1 keep no key.
    B, H, HKV, TQ, TK, D = 2, 4, 2, 77, 90, 64
    lens = np.array([90, 40], dtype=np.int32)
    q, k, v = (randn(*s).astype(np.float16) for s in
               ((B, H, TQ, D), (B, HKV, TK, D), (B, HKV, TK, D)))
    run(dict(q=q, k=k, v=v, extra=dict(lens=lens)), np.float16, scale=0.125,
        causal="bottom_right", lens=list(lens))
elif case == "documents_mask_function":
    # sdpa-grad-mask-mod.mlir: a mask function reading captured document
    # ids; here the same rule as a bool mask: causal within a document,
    # and rows 5.. of document 0 keep no key. GQA, T 45 (no tile multiple).
    B, H, HKV, T, D = 2, 4, 2, 45, 16
    doc = np.array([0] * 12 + [1] * 20 + [2] * 13, dtype=np.int32)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    keep = (doc[i] == doc[j]) & (j <= i) & ((doc[i] > 0) | (i < 5))
    run(dict(q=randn(B, H, T, D), k=randn(B, HKV, T, D), v=randn(B, HKV, T, D),
             extra=dict(doc=doc)), np.float32,
        scale=0.25, mask=torch.tensor(np.broadcast_to(keep, (B, H, T, T)).copy()))
elif case == "score_function":
    # sdpa-grad-functions.mlir: the score function 8·tanh(s/8) + bias[i - j + 44]
    # (bias a captured table [89] that gets no gradient) and the mask
    # function j <= i; here the same formula in torch. GQA, T 45, D 16.
    B, H, HKV, T, D = 1, 4, 2, 45, 16
    bias = (randn(2 * T - 1) * 0.5).astype(np.float32)
    args = dict(q=randn(B, H, T, D), k=randn(B, HKV, T, D), v=randn(B, HKV, T, D),
                extra=dict(bias=bias))
    q, k, v = (torch.tensor(args[n].astype(np.float64), requires_grad=True) for n in "qkv")
    kk, vv = k.repeat_interleave(H // HKV, 1), v.repeat_interleave(H // HKV, 1)
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    s = 0.25 * q @ kk.transpose(-1, -2)
    s = 8.0 * torch.tanh(s / 8.0) + torch.tensor(bias.astype(np.float64))[i - j + T - 1]
    s = s.masked_fill(~(j <= i), float("-inf"))
    lse = torch.logsumexp(s, -1)
    o = torch.softmax(s, -1) @ vv
    do = randn(*o.shape)
    dq, dk, dv = torch.autograd.grad(o, (q, k, v), torch.tensor(do.astype(np.float64)))
    files = dict(q=args["q"], k=args["k"], v=args["v"], o=o.detach().numpy().astype(np.float32),
                 do=do, lse=lse.detach().numpy().astype(np.float32), bias=bias,
                 dq=dq.numpy().astype(np.float32), dk=dk.numpy().astype(np.float32),
                 dv=dv.numpy().astype(np.float32))
    for name, a in files.items():
        np.save(os.path.join(out, name + ".npy"), a)
else:
    sys.exit("unknown case " + case)
