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
  of 16;
- contiguous_fp8, paged_fp8_nhd16: fp8 e4m3 K/V (f8E4M3FN, the codes
  from attn_mlir's encoder: build/python on the path) with one f32 scale
  per tensor (vLLM's), contiguous or paged NHD in blocks of 16."""
import argparse
import os
import sys

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


def program(tk, paged=None, quant=None):
    """paged: None or (layout, block size); quant: None, "i8" (per-token
    scales) or "f8E4M3FN" (one scale per tensor)."""
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
        if quant:
            st = "tensor<f32>" if quant == "f8E4M3FN" else t(*sshape)
            args += ["%%%sq: %s" % (name, t(*shape, e=quant)), "%%%ss: %s" % (name, st)]
            body += ("  %%%s = attn.dequantize %%%sq, %%%ss : (%s, %s) -> %s\n"
                     % (src, name, name, t(*shape, e=quant), st, ft))
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

    def fp8(x):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "build", "python"))
        from attn_mlir.serving import _encode_e4m3
        scale = np.float32(np.abs(x).max() / 448)
        return _encode_e4m3(x / scale), scale

    kq, ks = quantize(k)
    vq, vs = quantize(v)
    cases = {"contiguous_f32": (None, None), "paged_f32_nhd16": (("nhd", 16), None),
             "paged_f32_hnd16": (("hnd", 16), None), "paged_f32_nhd256": (("nhd", 256), None),
             "contiguous_int8": (None, "i8"), "paged_int8_nhd16": (("nhd", 16), "i8"),
             "contiguous_fp8": (None, "f8E4M3FN"), "paged_fp8_nhd16": (("nhd", 16), "f8E4M3FN")}
    for bs in (a.block_sizes.split(",") if a.block_sizes else []):
        layout = "hnd" if bs.startswith("hnd") else "nhd"
        bs = bs[3:] if layout == "hnd" else bs
        cases["paged_f32_%s%s" % (layout, bs)] = ((layout, int(bs)), None)
    for name, (pg, quant) in cases.items():
        if a.only and name not in a.only.split(","):
            continue
        arrays = {"q": q, "len": lens}
        if quant == "i8":
            src = {"kq": kq, "ks": ks, "vq": vq, "vs": vs}
        elif quant:
            (k8, k8s), (v8, v8s) = fp8(k), fp8(v)
            arrays["ks"], arrays["vs"] = k8s, v8s
            src = {"kq": k8, "vq": v8}
        else:
            src = {"kc" if pg else "k": k, "vc" if pg else "v": v}
        for key, x in src.items():
            if pg:
                arrays[key], arrays["table"] = paged(x, *pg)
            else:
                arrays[key] = x
        open(os.path.join(a.dir, name + ".mlir"), "w").write(program(tk, pg, quant))
        np.savez(os.path.join(a.dir, name + ".npz"), **arrays)
        print(os.path.join(a.dir, name + ".mlir") + ":" + os.path.join(a.dir, name + ".npz"))


if __name__ == "__main__":
    main()
