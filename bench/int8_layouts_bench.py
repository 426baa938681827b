#!/usr/bin/env python3
"""flash_attn_with_kvcache on a contiguous int8 cache (B 1, H 32, Hkv 8,
D 128, T 32768, one f32 scale per token and head) in the NHD and the HND
layout, alternating in one process, 9 rounds, medians:

  PYTHONPATH=build/python /usr/bin/python3 bench/int8_layouts_bench.py

An NHD cache goes through the paged kernel as one block per sequence, an
HND one through the contiguous kernel (python/attn_mlir/serving.py)."""
import statistics
import time

import numpy as np

import attn_mlir

B, H, HKV, D, T = 1, 32, 8, 128, 32768


def quantize(x):
    scale = (np.abs(x).max(-1) / 127).astype(np.float32)
    return np.round(x / scale[..., None]).astype(np.int8), scale


def main():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((B, 1, H, D), dtype=np.float32)
    kq, ks = quantize(rng.standard_normal((B, T, HKV, D), dtype=np.float32))
    vq, vs = quantize(rng.standard_normal((B, T, HKV, D), dtype=np.float32))
    hnd = [np.ascontiguousarray(x.swapaxes(1, 2)) for x in (kq, vq, ks, vs)]
    lens = np.array([T], dtype=np.int32)
    kvc = attn_mlir.flash_attn_with_kvcache
    progs = {
        "NHD": lambda: kvc(q, kq, vq, cache_seqlens=lens, k_scale=ks, v_scale=vs),
        "HND": lambda: kvc(q, hnd[0], hnd[1], cache_seqlens=lens, k_scale=hnd[2],
                           v_scale=hnd[3], kv_layout="HND"),
    }
    diff = np.abs(np.asarray(progs["NHD"]()) - np.asarray(progs["HND"]())).max()
    print("NHD vs HND max diff", diff)
    times = {name: [] for name in progs}
    for _ in range(9):
        for name, f in progs.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    for name, ts in times.items():
        print("int8 cache %s: %.2f ms" % (name, 1e3 * statistics.median(ts)))


if __name__ == "__main__":
    main()
