#!/usr/bin/env python3
"""fp8_case.py DIR: writes fp8-kv.mlir's cases into DIR. fp8 e4m3
(OCP E4M3FN) values are written as their bytes (uint8 .npy files); the
codes are taken from the format's definition here, independently of the
compiler (a table of all 256 values, nearest code by search):

- codes_*: every one of the 256 codes once, as a [1, 1, 1, 256] tensor,
  and its values (NaN for S.1111.111);
- pick_*: a decode whose softmax picks one key per head (B 1, H = Hkv
  16, Tq 1, Tk 16, D 16): head h scores key h at 25 and the others at 0,
  so output row h is V's row h, and V's 16 rows hold every code except
  the two NaNs (replaced by 0): each code decoded by the kernel, exactly;
- nan_*: the same decode with a NaN code in V's row 5 of head 3: the
  output of head 3 at that column is NaN, the rest as before;
- decode_*: B 2, H 8 on Hkv 2 (GQA), Tq 1, Tk 77, D 64, key lengths
  [77, 30], bottom-right causal, one scale per tensor (vLLM's
  k_scale / v_scale) and (tok_*) one per token and head;
- paged_*: the decode's keys in a paged NHD cache of blocks of 16
  (shuffled blocks, garbage table entries past the lengths);
- prefill_*: B 1, H 2, Tq 20, Tk 20, D 32, top-left causal (the prefill
  tile takes the dequantized floats).
Expected outputs: the decoded values (float64) times the scales, plain
float64 attention."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(12)


def code_value(c):
    e, m = (c >> 3) & 15, c & 7
    if c & 0x7F == 0x7F:
        v = np.nan
    elif e == 0:
        v = m * 2.0 ** -9
    else:
        v = (1 + m / 8) * 2.0 ** (e - 7)
    return -v if c & 0x80 else v


VALUES = np.array([code_value(c) for c in range(256)])
FINITE = np.array([c for c in range(128) if c != 0x7F])  # increasing values


def encode(x):
    """Nearest e4m3 code of each float (ties to the even code), saturating
    at 448."""
    a = np.minimum(np.abs(x), 448.0)
    pos = VALUES[FINITE]
    i = np.clip(np.searchsorted(pos, a), 1, len(pos) - 1)
    lo, hi = pos[i - 1], pos[i]
    pick_lo = (a - lo < hi - a) | ((a - lo == hi - a) & ((FINITE[i - 1] & 1) == 0))
    code = np.where(pick_lo, FINITE[i - 1], FINITE[i])
    code = np.where(a <= pos[0], 0, code)
    return (code | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)


def decode(c):
    return VALUES[c.astype(np.int64)]


def attention(q, k, v, lens, causal, scale=None):
    b_, h_, tq, d = q.shape
    hkv = k.shape[1]
    scale = 1 / np.sqrt(d) if scale is None else scale
    res = np.zeros((b_, h_, tq, v.shape[-1]))
    for b in range(b_):
        n = lens[b] if lens is not None else k.shape[2]
        for h in range(h_):
            kk, vv = k[b, h // (h_ // hkv), :n], v[b, h // (h_ // hkv), :n]
            s = q[b, h].astype(np.float64) @ kk.T * scale
            i, j = np.arange(tq)[:, None], np.arange(n)[None, :]
            if causal:
                diag = i + n - tq if causal == "bottom_right" else i
                s = np.where(j <= diag, s, -np.inf)
            m = s.max(axis=1, keepdims=True) if n else np.zeros((tq, 1))
            m = np.where(np.isfinite(m), m, 0)
            p = np.exp(s - m)
            l = p.sum(axis=1, keepdims=True)
            res[b, h] = np.where(l > 0, p / np.where(l > 0, l, 1), 0) @ vv
    return res.astype(np.float32)


def save(name, **arrays):
    for key, a in arrays.items():
        np.save(os.path.join(out, "%s_%s.npy" % (name, key)), a)


# Every code, and its value.
codes = np.arange(256, dtype=np.uint8)
save("codes", x=codes.reshape(1, 1, 1, 256), s=np.float32(1.0),
     expect=VALUES.reshape(1, 1, 1, 256).astype(np.float32))

# One key per head: K[h] = identity (1.0 is 0x38), q[h] = 100·e_h.
grid = codes.reshape(16, 16).copy()
grid[grid & 0x7F == 0x7F] = 0
kq = np.tile(np.where(np.eye(16) > 0, 0x38, 0).astype(np.uint8), (1, 16, 1, 1))
vq = np.tile(grid, (1, 16, 1, 1))
q = np.zeros((1, 16, 1, 16), dtype=np.float32)
for h in range(16):
    q[0, h, 0, h] = 100.0
pick = attention(q, decode(kq), decode(vq), None, None)
save("pick", q=q, kq=kq, vq=vq, s=np.float32(1.0), expect=pick)
vnan = vq.copy()
vnan[0, 3, 5, 7] = 0x7F
pick[0, 3, 0, 7] = np.nan
save("nan", vq=vnan, expect=pick)

# Random data: per-tensor scales (amax / 448, vLLM's), and per-token ones.
b, h, hkv, tk, d = 2, 8, 2, 77, 64
lens = np.array([77, 30], dtype=np.int32)
q = rng.standard_normal((b, h, 1, d), dtype=np.float32)
kf = rng.standard_normal((b, hkv, tk, d)) * 3
vf = rng.standard_normal((b, hkv, tk, d))
kf[0, 0, 3, :8] = 1e-4  # subnormal codes after scaling
ks, vs = np.float32(np.abs(kf).max() / 448), np.float32(np.abs(vf).max() / 448)
kq, vq = encode(kf / ks), encode(vf / vs)
assert ((kq & 0x78) == 0).sum() > 8, "the case should hold subnormal codes"
k, v = decode(kq) * np.float64(ks), decode(vq) * np.float64(vs)
save("decode", q=q, kq=kq, ks=ks, vq=vq, vs=vs, lens=lens,
     expect=attention(q, k, v, lens, "bottom_right"))
kts = (np.abs(kf).max(axis=-1) / 448).astype(np.float32)
vts = (np.abs(vf).max(axis=-1) / 448).astype(np.float32)
kq2, vq2 = encode(kf / kts[..., None]), encode(vf / vts[..., None])
k2, v2 = decode(kq2) * kts[..., None], decode(vq2) * vts[..., None]
save("tok", kq=kq2, ks=kts, vq=vq2, vs=vts,
     expect=attention(q, k2, v2, lens, "bottom_right"))

# The decode's K/V (per-tensor scales) in a paged NHD cache: blocks of 16,
# 5 a sequence, shuffled among 12 physical blocks.
bs, mb, nb = 16, 5, 12
perm = rng.permutation(nb)
table = np.full((b, mb), 999, dtype=np.int32)  # garbage past the lengths
kc = np.zeros((nb, bs, hkv, d), dtype=np.uint8)
vc = np.zeros((nb, bs, hkv, d), dtype=np.uint8)
for bi in range(b):
    for blk in range((lens[bi] + bs - 1) // bs):
        phys = perm[bi * mb + blk]
        table[bi, blk] = phys
        rows = slice(blk * bs, min((blk + 1) * bs, tk))
        n = rows.stop - rows.start
        kc[phys, :n] = kq[bi, :, rows].transpose(1, 0, 2)
        vc[phys, :n] = vq[bi, :, rows].transpose(1, 0, 2)
save("paged", kc=kc, vc=vc, table=table)

# Prefill (the tiles take the dequantized floats).
qp = rng.standard_normal((1, 2, 20, 32), dtype=np.float32)
kp = rng.standard_normal((1, 2, 20, 32))
vp = rng.standard_normal((1, 2, 20, 32))
kpq, vpq = encode(kp / 0.01), encode(vp / 0.01)
save("prefill", q=qp, kq=kpq, vq=vpq, s=np.float32(0.01),
     expect=attention(qp, decode(kpq) * np.float64(np.float32(0.01)),
                      decode(vpq) * np.float64(np.float32(0.01)), [20], "top_left"))
