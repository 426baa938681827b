#!/usr/bin/env python3
"""Writes the decode programs of bench/serving_bench.py as attn-run programs
with their inputs, for same-run A/B comparisons of two builds
(bench/compare_builds.py PROGRAM.mlir:INPUTS.npz):

  python3 bench/serving_programs.py DIR [--tk 32768]

GQA decode, B 1, H 32, Hkv 8, D 128, Tq 1, bottom-right causal with key
lengths; the same keys in every cache:
- contiguous_f32: K/V [1, 8, Tk, 128] f32;
- paged_f32_nhd16, paged_f32_hnd16, paged_f32_nhd256: attn.gather_pages
  of f32 caches in shuffled blocks of 16 / 256 tokens, NHD [blocks, BS,
  Hkv, D] or HND [blocks, Hkv, BS, D];
- contiguous_int8, paged_int8_nhd16: int8 K/V with one f32 scale per
  token and K/V head (attn.dequantize), contiguous or paged NHD in blocks
  of 16."""
import argparse
import os

import numpy as np

B, H, HKV, D = 1, 32, 8, 128


def t(*shape, e="f32"):
    return "tensor<%sx%s>" % ("x".join(map(str, shape)), e)


def sdpa(k_t, tk):
    tq = t(B, H, 1, D)
    kv = t(B, HKV, tk, D)
    return ("  %%o = attn.sdpa %%q, %%k, %%v key_lengths(%%len) "
            "{causal = #attn.causal<bottom_right>}\n"
            "      : (%s, %s, %s, tensor<1xi32>) -> %s\n"
            "  return %%o : %s\n}\n" % (tq, kv, kv, tq, tq))


def gather(name, cache_t, table_t, tk, layout):
    attr = " {layout = #attn.kv_layout<hnd>}" if layout == "hnd" else ""
    return ("  %%%s = attn.gather_pages %%%sc, %%table lengths(%%len)%s\n"
            "      : (%s, %s, tensor<1xi32>) -> %s\n"
            % (name, name, attr, cache_t, table_t, t(B, HKV, tk, D)))


def program(tk, paged=None, int8=False):
    """paged: None or (layout, block size)."""
    tq = t(B, H, 1, D)
    if paged is None:
        shape, sshape = (B, HKV, tk, D), (B, HKV, tk)
    else:
        layout, bs = paged
        nb = tk // bs
        shape = (nb, bs, HKV, D) if layout == "nhd" else (nb, HKV, bs, D)
        sshape = shape[:3]
    ft = t(*shape)
    args, body = ["%q: " + tq], ""
    for name in "kv":
        src = name + ("c" if paged else "")
        if int8:
            args += ["%%%sq: %s" % (name, t(*shape, e="i8")), "%%%ss: %s" % (name, t(*sshape))]
            body += ("  %%%s = attn.dequantize %%%sq, %%%ss : (%s, %s) -> %s\n"
                     % (src, name, name, t(*shape, e="i8"), t(*sshape), ft))
        else:
            args.append("%%%s: %s" % (src, ft))
    if paged:
        table_t = t(B, tk // paged[1], e="i32")
        args.append("%table: " + table_t)
        body += gather("k", ft, table_t, tk, paged[0]) + gather("v", ft, table_t, tk, paged[0])
    args.append("%len: tensor<1xi32>")
    return ("func.func @decode(%s) -> %s {\n" % (", ".join(args), tq)) + body + sdpa(ft, tk)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--tk", type=int, default=32768)
    ap.add_argument("--only", default=None, help="comma-separated program names")
    ap.add_argument("--block-sizes", default=None,
                    help="extra paged f32 programs, comma-separated block sizes, "
                    "NHD, or hnd<BS> for HND")
    a = ap.parse_args()
    tk = a.tk
    os.makedirs(a.dir, exist_ok=True)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((B, H, 1, D), dtype=np.float32)
    k = rng.standard_normal((B, HKV, tk, D), dtype=np.float32)
    v = rng.standard_normal((B, HKV, tk, D), dtype=np.float32)
    lens = np.array([tk], dtype=np.int32)

    def quantize(x):
        scale = (np.abs(x).max(axis=-1) / 127).astype(np.float32)
        return np.round(x / scale[..., None]).astype(np.int8), scale

    def paged(x, layout, bs):
        """[1, Hkv, Tk, ...] as shuffled blocks, and the table."""
        perm = np.random.default_rng(bs).permutation(tk // bs)
        rows = x[0].swapaxes(0, 1)  # [Tk, Hkv, ...]
        blocks = rows.reshape((tk // bs, bs) + rows.shape[1:])
        if layout == "hnd":
            blocks = blocks.swapaxes(1, 2)
        out = np.empty_like(blocks)
        out[perm] = blocks
        return np.ascontiguousarray(out), perm.astype(np.int32)[None, :]

    kq, ks = quantize(k)
    vq, vs = quantize(v)
    cases = {"contiguous_f32": (None, False), "paged_f32_nhd16": (("nhd", 16), False),
             "paged_f32_hnd16": (("hnd", 16), False), "paged_f32_nhd256": (("nhd", 256), False),
             "contiguous_int8": (None, True), "paged_int8_nhd16": (("nhd", 16), True)}
    for bs in (a.block_sizes.split(",") if a.block_sizes else []):
        layout = "hnd" if bs.startswith("hnd") else "nhd"
        bs = bs[3:] if layout == "hnd" else bs
        cases["paged_f32_%s%s" % (layout, bs)] = ((layout, int(bs)), False)
    for name, (pg, int8) in cases.items():
        if a.only and name not in a.only.split(","):
            continue
        arrays = {"q": q, "len": lens}
        if int8:
            src = {"kq": kq, "ks": ks, "vq": vq, "vs": vs}
        else:
            src = {"kc" if pg else "k": k, "vc" if pg else "v": v}
        for key, x in src.items():
            if pg:
                arrays[key], arrays["table"] = paged(x, *pg)
            else:
                arrays[key] = x
        open(os.path.join(a.dir, name + ".mlir"), "w").write(program(tk, pg, int8))
        np.savez(os.path.join(a.dir, name + ".npz"), **arrays)
        print(os.path.join(a.dir, name + ".mlir") + ":" + os.path.join(a.dir, name + ".npz"))


if __name__ == "__main__":
    main()
