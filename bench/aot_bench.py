#!/usr/bin/env python3
"""Ahead-of-time vs JIT on the CPU: the same attn functions compiled by
attn-aot into a shared library (called through ctypes on NumPy buffers) and
by the JIT (attn_mlir.compile), timed in one run on the same inputs.

    PYTHONPATH=build/python /usr/bin/python3 bench/aot_bench.py [--repeat N]

Prints one row per function: the median time of each and their ratio, the
max difference between the two outputs, and the size of the AOT object
next to libMLIR + libLLVM, which the JIT needs. Results: bench/logs/.
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gpu_check  # noqa: E402  (the ctypes binding of attn-c/Aot.h)
import python_bench  # noqa: E402  (its median timer)

SHAPES = [
    # name, B, H, Hkv, Tq, Tk, D, causal
    ("sdpa_t2048_causal", 1, 12, 12, 2048, 2048, 64, "top_left"),
    ("sdpa_t1024", 1, 12, 12, 1024, 1024, 64, None),
    ("decode_gqa_tk8192", 1, 32, 8, 1, 8192, 128, "bottom_right"),
    ("small_t128", 1, 8, 8, 128, 128, 64, None),
]


def mlir(name, b, h, hkv, tq, tk, d, causal):
    q = f"tensor<{b}x{h}x{tq}x{d}xf32>"
    kv = f"tensor<{b}x{hkv}x{tk}x{d}xf32>"
    attrs = f" {{causal = #attn.causal<{causal}>}}" if causal else ""
    return (f"func.func @{name}(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
            f"  %o = attn.sdpa %q, %k, %v{attrs} : ({q}, {kv}, {kv}) -> {q}\n"
            f"  return %o : {q}\n}}\n")


def median_ms(fn, repeat):
    return python_bench.median_time(fn, repeat) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    import attn_mlir
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as work:
        objects, texts = [], {}
        for s in SHAPES:
            texts[s[0]] = mlir(*s)
            src = os.path.join(work, s[0] + ".mlir")
            open(src, "w").write(texts[s[0]])
            subprocess.run([os.path.join(BUILD, "bin", "attn-aot"), src, "-o", work],
                           check=True, stdout=subprocess.DEVNULL)
            objects.append(os.path.join(work, s[0] + ".o"))
        lib_path = os.path.join(work, "libbench.so")
        subprocess.run(["cc", "-shared", "-o", lib_path] + objects +
                       ["-L" + os.path.join(BUILD, "lib"), "-lattn_aot",
                        "-L/usr/lib/llvm-22/lib", "-lomp",
                        "-Wl,-rpath," + os.path.join(BUILD, "lib") + ":/usr/lib/llvm-22/lib"],
                       check=True)
        lib = ctypes.CDLL(lib_path)
        gpu_check.load_symbols(lib)
        obj_kb = sum(os.path.getsize(o) for o in objects) / len(objects) / 1024
        rt_kb = os.path.getsize(os.path.join(BUILD, "lib", "libattn_aot.so")) / 1024
        jit_mb = sum(os.path.getsize(p) for p in ("/usr/lib/llvm-22/lib/libMLIR.so",
                                                    "/usr/lib/llvm-22/lib/libLLVM.so")
                     if os.path.exists(p)) / 2**20
        print(f"aot_bench: {os.cpu_count()} CPUs, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')}; "
              f"AOT object {obj_kb:.0f} KiB per function + libattn_aot {rt_kb:.0f} KiB; "
              f"the JIT needs libMLIR + libLLVM {jit_mb:.0f} MiB")
        print(f"{'function':<20} {'AOT ms':>8} {'JIT ms':>8} {'AOT/JIT':>8} {'max|diff|':>10}")
        for name, b, h, hkv, tq, tk, d, _ in SHAPES:
            q = rng.standard_normal((b, h, tq, d), dtype=np.float32)
            k = rng.standard_normal((b, hkv, tk, d), dtype=np.float32)
            v = rng.standard_normal((b, hkv, tk, d), dtype=np.float32)
            out = np.empty_like(q)
            address = gpu_check.kernel_address(lib, name)
            jit = attn_mlir.compile(texts[name])
            aot_ms = median_ms(lambda: gpu_check.call(lib, address, [q, k, v], out), a.repeat)
            jit_out = jit(q, k, v)
            jit_ms = median_ms(lambda: jit(q, k, v), a.repeat)
            diff = float(np.abs(out - jit_out).max())
            print(f"{name:<20} {aot_ms:>8.2f} {jit_ms:>8.2f} {aot_ms / jit_ms:>8.2f} {diff:>10.2e}",
                  flush=True)


if __name__ == "__main__":
    main()
