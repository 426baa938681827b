#!/usr/bin/env python3
"""varlen_case.py DIR: writes varlen.mlir's cases into DIR: a ragged batch
of 5 sequences along the rows of q [1, 8, 125, 32] and k, v [1, 2, 160,
32] (GQA 4:1), query lengths 5, 0, 1, 37, 70 (3 rows of no sequence at
the end) and key lengths 5, 3, 9, 37, 100, and the expected outputs from
plain float64 attention of each sequence's rows (rows of no sequence:
0):

- causal_*: bottom-right causal; tl_*: top-left causal; full_*: no mask;
- feat_*: bottom-right causal with a window (16, 0), softcap 20, ALiBi
  slopes and attention sinks (one larger than every score);
- bad_*: offsets out of order and past the rows (the compiled code clamps
  them: qs = clamp(cu[b], 0, T), qe = max(clamp(cu[b+1], 0, T), qs)),
  expected by the same rule;
- kc, vc, table (varlen-paged.mlir): the same keys in paged caches of
  blocks of 16 rows, NHD [16, 16, 2, 32] (HND in kch, vch), each
  sequence's blocks at shuffled ids, the table's [5, 7] entries past a
  sequence's blocks stale (out of range, never read); the expected
  outputs are the contiguous ones; badtable: a used entry 16 (= NB);
  longk: cu_seqlens_k with a sequence of 113 keys (past MB·BS = 112);
- qt, kt, vt: q, k, v tokens-first, [1, T, heads, D], contiguous."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(17)
H, HKV, D = 8, 2, 32
LQ, LK = [5, 0, 1, 37, 70], [5, 3, 9, 37, 100]
TQ, TK = sum(LQ) + 3, sum(LK)
q = rng.standard_normal((1, H, TQ, D), dtype=np.float32)
k = rng.standard_normal((1, HKV, TK, D), dtype=np.float32)
v = rng.standard_normal((1, HKV, TK, D), dtype=np.float32)
slopes = (2.0 ** -np.arange(1, H + 1)).astype(np.float32)
sinks = np.array([0.5, -1, 0, 2, 40, -3, 1, 0.25], dtype=np.float32)


def cu(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)


def ranges(c, total):
    """(start, length) of each sequence, clamped as the compiled code does."""
    res = []
    for b in range(len(c) - 1):
        s = min(max(int(c[b]), 0), total)
        e = max(min(max(int(c[b + 1]), 0), total), s)
        res.append((s, e - s))
    return res


def attention(cq, ck, causal=None, window=None, softcap=0.0, alibi=None, sink=None):
    res = np.zeros((1, H, TQ, D))
    scale = 1 / np.sqrt(D)
    for (qs, lq), (ks, lk) in zip(ranges(cq, TQ), ranges(ck, TK)):
        if lq == 0 or lk == 0:
            continue
        i = np.arange(lq)[:, None]
        j = np.arange(lk)[None, :]
        diag = i + lk - lq if causal != "top_left" else i
        keep = np.ones((lq, lk), dtype=bool)
        if causal:
            keep &= j <= diag
        if window is not None:
            keep &= j >= diag - window[0]
            keep &= j <= diag + window[1]
        for h in range(H):
            g = h // (H // HKV)
            s = q[0, h, qs:qs + lq].astype(np.float64) @ k[0, g, ks:ks + lk].T.astype(
                np.float64) * scale
            if softcap:
                s = softcap * np.tanh(s / softcap)
            if alibi is not None:
                s = s - alibi[h] * np.abs(i + lk - lq - j)
            s = np.where(keep, s, -np.inf)
            m = s.max(axis=1, keepdims=True)
            if sink is not None:
                m = np.maximum(m, sink[h])
            m = np.where(np.isfinite(m), m, 0)
            p = np.exp(s - m)
            l = p.sum(axis=1, keepdims=True)
            if sink is not None:
                l = l + np.exp(sink[h] - m)
            res[0, h, qs:qs + lq] = np.where(l > 0, p / np.where(l > 0, l, 1), 0) @ v[
                0, g, ks:ks + lk].astype(np.float64)
    return res.astype(np.float32)


cq, ck = cu(LQ), cu(LK)
for name, a in dict(q=q, k=k, v=v, cuq=cq, cuk=ck, slopes=slopes, sinks=sinks).items():
    np.save(os.path.join(out, name + ".npy"), a)
# Tokens-first copies [1, T, heads, D] (the layout flash_attn_varlen_func
# takes), for varlen.mlir's @tokens_first.
for name, a in dict(qt=q, kt=k, vt=v).items():
    np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(a.transpose(0, 2, 1, 3)))
np.save(os.path.join(out, "causal_expect.npy"), attention(cq, ck, "bottom_right"))
np.save(os.path.join(out, "tl_expect.npy"), attention(cq, ck, "top_left"))
np.save(os.path.join(out, "full_expect.npy"), attention(cq, ck))
np.save(os.path.join(out, "feat_expect.npy"),
        attention(cq, ck, "bottom_right", (16, 0), 20.0, slopes, sinks))
badq = np.array([0, 40, 10, -7, 500, 125], dtype=np.int32)
badk = np.array([3, 1, 90, 160, 2, 999], dtype=np.int32)
np.save(os.path.join(out, "badq.npy"), badq)
np.save(os.path.join(out, "badk.npy"), badk)
np.save(os.path.join(out, "bad_expect.npy"), attention(badq, badk, "bottom_right"))

# Paged: sequence b's key j at block table[b, j // BS], row j % BS.
BS, MB, NB = 16, 7, 16
ids = rng.permutation(NB)
table = np.full((len(LK), MB), 1000, dtype=np.int32)  # stale: never read
kc = rng.standard_normal((NB, BS, HKV, D), dtype=np.float32)
vc = rng.standard_normal((NB, BS, HKV, D), dtype=np.float32)
used = 0
for b, (ks, lk) in enumerate(ranges(ck, TK)):
    for i in range(-(-lk // BS)):
        table[b, i] = ids[used]
        used += 1
    for j in range(lk):
        kc[table[b, j // BS], j % BS] = k[0, :, ks + j]
        vc[table[b, j // BS], j % BS] = v[0, :, ks + j]
badtable = table.copy()
badtable[4, 6] = NB
longk = ck.copy()
longk[5:] += 13
for name, a in dict(kc=kc, vc=vc, kch=kc.transpose(0, 2, 1, 3).copy(),
                    vch=vc.transpose(0, 2, 1, 3).copy(), table=table, badtable=badtable,
                    longk=longk).items():
    np.save(os.path.join(out, name + ".npy"), a)
