#!/usr/bin/env python3
"""Builds the GPU check bundle: everything a lent GPU machine (no MLIR, no
compiler, no network; at most 64 MiB carried) needs to check and time our
GPU kernels against torch with its own python3.

    python3 bench/gpu_bundle.py [--build build] [--out build/gpu-bundle]
                                [--chips sm_80,sm_90] [--self-test-dir DIR]

writes into --out:
    libattn_gpu_check.so  every kernel of the check (attn-aot --pipeline=gpu,
                          one fatbin per chip each; the check shapes also as
                          <name>_dev, and every timing kernel, built
                          --device-resident for torch's device tensors)
                          linked with the AOT
                          runtime; needs libc, libstdc++ and, at run time,
                          the CUDA driver (the versions it needs are printed)
    manifest.json         each kernel's name, shapes, dtype, mask, causal
    gpu_check.py          the driver (copied from bench/)
and checks the folder is under 64 MiB. With --self-test-dir it also builds
the same correctness kernels for the CPU (attn-aot --pipeline=cpu) there, so
that `gpu_check.py --self-test` can run the driver's correctness path on
this machine (ctest gpu-bundle). bench/GPU.md says how to run the bundle.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 64 * 1024 * 1024

MLIR_TYPE = {"f32": "f32", "f16": "f16", "bf16": "bf16"}

# Correctness: both causal kinds, T not a multiple of the tile, GQA, a
# boolean and an additive mask, D 64 and 128, f32/f16/bf16.
CHECKS = [
    dict(name="causal_tl_f32", b=2, h=4, hkv=4, tq=100, tk=100, d=64, dtype="f32", causal="top_left"),
    dict(name="causal_br_f16", b=2, h=4, hkv=4, tq=77, tk=130, d=64, dtype="f16", causal="bottom_right"),
    dict(name="gqa_d128_bf16", b=1, h=8, hkv=2, tq=129, tk=129, d=128, dtype="bf16"),
    dict(name="bool_mask_f32", b=2, h=4, hkv=4, tq=65, tk=190, d=64, dtype="f32", mask="bool"),
    dict(name="additive_mask_f16", b=2, h=4, hkv=4, tq=96, tk=96, d=128, dtype="f16", mask="additive"),
    dict(name="decode_gqa_bf16", b=4, h=32, hkv=8, tq=1, tk=1000, d=128, dtype="bf16", causal="bottom_right"),
    dict(name="causal_gqa_f16", b=1, h=16, hkv=4, tq=300, tk=300, d=64, dtype="f16", causal="top_left"),
    # f32 through the tensor-core kernel with TF32 operands (attn-aot --tf32).
    dict(name="causal_br_tf32", b=2, h=8, hkv=2, tq=130, tk=200, d=128, dtype="f32",
         causal="bottom_right", tf32=True),
    dict(name="bool_mask_tf32", b=2, h=4, hkv=4, tq=65, tk=190, d=64, dtype="f32", mask="bool",
         tf32=True),
    # Score and mask functions on the tensor-core kernel (fn, FUNCTIONS
    # below): a linear relative bias and a causal window of 48.
    dict(name="window_bias_fn_bf16", b=2, h=8, hkv=2, tq=150, tk=150, d=128, dtype="bf16",
         fn="window_bias"),
    # Attention sinks on the tensor-core kernel (m starts at the sink, l at 1).
    dict(name="sinks_causal_f16", b=2, h=8, hkv=2, tq=100, tk=130, d=64, dtype="f16",
         causal="bottom_right", sinks=True),
]

# The backward (attn.sdpa_grad: the CUDA-core dK/dV and dQ kernels,
# docs/gpu.md): GQA, both causal kinds, an additive mask, D 64 and 128,
# f32/f16/bf16, T not a multiple of the tile. Host buffers only.
GRAD_CHECKS = [
    dict(name="grad_causal_gqa_f32", grad=True, b=2, h=4, hkv=2, tq=100, tk=130, d=64,
         dtype="f32", causal="bottom_right"),
    dict(name="grad_mask_f16", grad=True, b=1, h=4, hkv=4, tq=77, tk=77, d=64, dtype="f16",
         mask="additive"),
    dict(name="grad_d128_bf16", grad=True, b=1, h=8, hkv=2, tq=129, tk=129, d=128,
         dtype="bf16", causal="top_left"),
]
CHECKS += GRAD_CHECKS
# Paged decode and a paged prefill chunk: K/V read in place from caches
# [NB, BS, Hkv, D] through a shuffled block table, per-sequence lengths
# (the tensor-core kernel's cp.async tile loads through the table).
CHECKS += [dict(name="paged_decode_f16", paged=True, b=3, h=8, hkv=2, tq=1, tk=96, d=64,
                dtype="f16", causal="bottom_right", block_size=16, num_blocks=24),
           dict(name="paged_chunk_f16", paged=True, b=3, h=8, hkv=2, tq=70, tk=96, d=128,
                dtype="f16", causal="bottom_right", block_size=16, num_blocks=24),
           # f32: the CUDA-core kernel's loads through the table.
           dict(name="paged_decode_f32", paged=True, b=3, h=8, hkv=2, tq=1, tk=96, d=64,
                dtype="f32", causal="bottom_right", block_size=16, num_blocks=24)]
# A continuous-batching step: attn.sdpa_varlen with a block table (a kernel
# a sequence, its rows of Q and its row of the table staged through dense
# host buffers), prefill chunks, decodes and an empty sequence.
CHECKS += [dict(name="varlen_paged_f16", varlen=True, b=1, h=8, hkv=2, tq=26, tk=64, d=64,
                dtype="f16", causal="bottom_right", block_size=16, num_blocks=24,
                lens_q=[5, 1, 0, 20], lens_k=[37, 64, 9, 20])]
# A training step's forward (attn.sdpa_partial: O and the row log-sum-exp;
# f32 on the CUDA-core kernel, f16 on the tensor-core one). Host buffers
# only.
CHECKS += [dict(name="partial_causal_gqa_f32", partial=True, b=2, h=4, hkv=2, tq=100, tk=130,
                d=64, dtype="f32", causal="bottom_right"),
           dict(name="partial_causal_gqa_f16", partial=True, b=2, h=4, hkv=2, tq=100, tk=130,
                d=64, dtype="f16", causal="bottom_right")]

# Timing: B 4, H 16, against torch's SDPA backends on the same shapes.
TIMINGS = [
    dict(name=f"time_{dt}_d{d}_t{t}_{'causal' if c else 'full'}", b=4, h=16, hkv=16, tq=t, tk=t,
         d=d, dtype=dt, causal="top_left" if c else None, timing=True)
    for dt in ("f16", "bf16") for d in (64, 128) for t in (1024, 4096, 8192) for c in (False, True)
    if (dt == "f16" and t < 8192) or (dt == "bf16" and d == 128 and t >= 4096)
]
# (bf16 D 128 T 8192 is the tensor-core kernel's target shape: >= 35 % of the
# bf16 matmul rate and >= 0.8x torch's flash backend; causal >= 1.7x faster.)
# f32 as TF32 against torch with allow_tf32 and a TF32 matmul.
TIMINGS += [
    dict(name=f"time_tf32_d{d}_t4096_{'causal' if c else 'full'}", b=4, h=16, hkv=16, tq=4096,
         tk=4096, d=d, dtype="f32", causal="top_left" if c else None, timing=True, tf32=True)
    for d in (64, 128) for c in (False, True)
]
# Causal written as a mask function (the tensor-core kernel's tiles bounded
# by it) against the named causal row above and torch's causal SDPA.
TIMINGS += [dict(name="time_bf16_d128_t4096_causal_fn", b=4, h=16, hkv=16, tq=4096, tk=4096,
                 d=128, dtype="bf16", fn="causal", timing=True)]

# The backward, B 4, H 16, D 64, T 1024, against torch autograd's backward
# of each SDPA backend (FLOPs: 2.5x the forward's).
TIMINGS += [
    dict(name=f"time_grad_{dt}_d64_t1024_{'causal' if c else 'full'}", grad=True, b=4, h=16,
         hkv=16, tq=1024, tk=1024, d=64, dtype=dt, causal="top_left" if c else None, timing=True)
    for dt in ("f32", "bf16") for c in (False, True)
]

# The score_mod / mask_mod regions of each `fn` (gpu_check.py's float64
# reference computes the same: reference()).
FUNCTIONS = {
    "window_bias": """ score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %c0 = arith.constant 0 : index
    %nd = arith.subi %c0, %d : index
    %a = arith.maxsi %d, %nd : index
    %ai = arith.index_cast %a : index to i64
    %af = arith.sitofp %ai : i64 to f32
    %c = arith.constant 0.0625 : f32
    %t = arith.mulf %af, %c : f32
    %n = arith.subf %s, %t : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c48 = arith.constant 48 : index
    %d = arith.subi %i, %j : index
    %causal = arith.cmpi sle, %j, %i : index
    %near = arith.cmpi slt, %d, %c48 : index
    %keep = arith.andi %causal, %near : i1
    attn.yield %keep : i1
  }""",
    "causal": """ mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    attn.yield %keep : i1
  }""",
}


def mlir_for(k):
    t = MLIR_TYPE[k["dtype"]]
    q = f"tensor<{k['b']}x{k['h']}x{k['tq']}x{k['d']}x{t}>"
    kv = f"tensor<{k['b']}x{k['hkv']}x{k['tk']}x{k['d']}x{t}>"
    args, ops, types = [f"%q: {q}", f"%k: {kv}", f"%v: {kv}"], ["%q", "%k", "%v"], [q, kv, kv]
    mask = k.get("mask")
    if mask:
        mt = (f"tensor<{k['b']}x1x{k['tq']}x{k['tk']}xi1>" if mask == "bool"
              else f"tensor<{k['b']}x{k['h']}x{k['tq']}x{k['tk']}x{t}>")
        args.append(f"%m: {mt}")
        ops.append("%m")
        types.append(mt)
    attrs = f" {{causal = #attn.causal<{k['causal']}>}}" if k.get("causal") else ""
    attrs += FUNCTIONS[k["fn"]] if k.get("fn") else ""
    if k.get("varlen"):
        bs, nb, n = k["block_size"], k["num_blocks"], len(k["lens_q"])
        cache = f"tensor<{nb}x{bs}x{k['hkv']}x{k['d']}x{t}>"
        cu, table = f"tensor<{n + 1}xi32>", f"tensor<{n}x{k['tk'] // bs}xi32>"
        return (f"func.func @{k['name']}(%q: {q}, %kc: {cache}, %vc: {cache}, %cuq: {cu}, "
                f"%cuk: {cu}, %t: {table}) -> {q} {{\n"
                f"  %o = attn.sdpa_varlen %q, %kc, %vc, %cuq, %cuk block_table(%t){attrs} : "
                f"({q}, {cache}, {cache}, {cu}, {cu}, {table}) -> {q}\n"
                f"  return %o : {q}\n}}\n")
    if k.get("paged"):
        bs, nb = k["block_size"], k["num_blocks"]
        mb = k["tk"] // bs
        cache = f"tensor<{nb}x{bs}x{k['hkv']}x{k['d']}x{t}>"
        table, lens = f"tensor<{k['b']}x{mb}xi32>", f"tensor<{k['b']}xi32>"
        return (f"func.func @{k['name']}(%q: {q}, %kc: {cache}, %vc: {cache}, %t: {table}, "
                f"%l: {lens}) -> {q} {{\n"
                f"  %k = attn.gather_pages %kc, %t lengths(%l) : ({cache}, {table}, {lens}) -> {kv}\n"
                f"  %v = attn.gather_pages %vc, %t lengths(%l) : ({cache}, {table}, {lens}) -> {kv}\n"
                f"  %o = attn.sdpa %q, %k, %v key_lengths(%l){attrs} : ({q}, {kv}, {kv}, {lens}) -> {q}\n"
                f"  return %o : {q}\n}}\n")
    if k.get("partial"):
        # O in f32 whatever the operands (sdpa_partial's partial results).
        o = f"tensor<{k['b']}x{k['h']}x{k['tq']}x{k['d']}xf32>"
        lse = f"tensor<{k['b']}x{k['h']}x{k['tq']}xf32>"
        return (f"func.func @{k['name']}({', '.join(args)}) -> ({o}, {lse}) {{\n"
                f"  %o, %lse = attn.sdpa_partial {', '.join(ops)}{attrs} : "
                f"({', '.join(types)}) -> ({o}, {lse})\n"
                f"  return %o, %lse : {o}, {lse}\n}}\n")
    if k.get("grad"):
        # (q, k, v, o, do, lse[, mask]) -> (dq, dk, dv)
        lse = f"tensor<{k['b']}x{k['h']}x{k['tq']}xf32>"
        gargs = args[:3] + [f"%o: {q}", f"%do: {q}", f"%lse: {lse}"] + args[3:]
        gops = ops[:3] + ["%o", "%do", "%lse"] + ops[3:]
        gtypes = types[:3] + [q, q, lse] + types[3:]
        res = f"{q}, {kv}, {kv}"
        return (f"func.func @{k['name']}({', '.join(gargs)}) -> ({res}) {{\n"
                f"  %dq, %dk, %dv = attn.sdpa_grad {', '.join(gops)}{attrs} : "
                f"({', '.join(gtypes)}) -> ({res})\n"
                f"  return %dq, %dk, %dv : {res}\n}}\n")
    sinks = ""
    if k.get("sinks"):  # attention sinks: one f32 logit per query head
        args.append(f"%sinks: tensor<{k['h']}xf32>")
        types.append(f"tensor<{k['h']}xf32>")
        sinks = " sinks(%sinks)"
    return (f"func.func @{k['name']}({', '.join(args)}) -> {q} {{\n"
            f"  %o = attn.sdpa {', '.join(ops)}{sinks}{attrs} : ({', '.join(types)}) -> {q}\n"
            f"  return %o : {q}\n}}\n")


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        sys.exit(f"gpu_bundle: {' '.join(cmd)} failed:\n{r.stdout}")
    return r.stdout


def compile_all(build, kernels, pipeline, extra, work):
    objects = []
    for k in kernels:
        src = os.path.join(work, k["name"] + ".mlir")
        with open(src, "w") as f:
            f.write(mlir_for(k))
        flags = ["--device-resident"] if k.get("device") else []
        if k.get("tf32") and pipeline == "gpu":
            flags.append("--tf32")
        run([os.path.join(build, "bin", "attn-aot"), src, f"--pipeline={pipeline}",
             f"--name={k['name']}", "-o", work] + extra + flags)
        objects.append(os.path.join(work, k["name"] + ".o"))
    return objects


def link(build, objects, out, extra_libs=()):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        sys.exit("gpu_bundle: no C compiler (cc) to link the bundle")
    runtime = os.path.join(build, "lib", "libAttnAotRuntime.a")
    run([cc, "-shared", "-o", out] + objects +
        ["-Wl,--whole-archive", runtime, "-Wl,--no-whole-archive",
         "-lstdc++", "-ldl", "-lm", "-Wl,--no-undefined"] + list(extra_libs))


def newest_versions(path):
    """The newest GLIBC_ and GLIBCXX_ symbol versions the library needs."""
    try:
        out = subprocess.run(["objdump", "-T", path], stdout=subprocess.PIPE, text=True).stdout
    except OSError:
        return "?"
    newest = {}
    for line in out.splitlines():
        for part in line.split():
            part = part.strip("()")
            for prefix in ("GLIBCXX_", "GLIBC_"):
                if part.startswith(prefix):
                    v = tuple(int(x) for x in part[len(prefix):].split(".") if x.isdigit())
                    newest[prefix] = max(newest.get(prefix, v), v)
                    break
    return ", ".join(p + ".".join(map(str, v)) for p, v in sorted(newest.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--chips", default="sm_80,sm_90")
    ap.add_argument("--self-test-dir", default=None)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    out = os.path.abspath(a.out or os.path.join(build, "gpu-bundle"))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    # The check shapes twice (host buffers; device buffers as <name>_dev;
    # the training step's on host buffers only), the timing shapes on device
    # buffers only.
    kernels = CHECKS + [dict(k, name=k["name"] + "_dev", device=True) for k in CHECKS
                        if not (k.get("grad") or k.get("partial") or k.get("paged") or
                                k.get("varlen"))] + \
        [dict(k, device=True) for k in TIMINGS]
    with tempfile.TemporaryDirectory() as work:
        objects = compile_all(build, kernels, "gpu", [f"--gpu-chips={a.chips}"], work)
        lib = os.path.join(out, "libattn_gpu_check.so")
        link(build, objects, lib)
    manifest = {"chips": a.chips.split(","), "library": "libattn_gpu_check.so",
                "kernels": [dict(k, check=not k.get("timing", False)) for k in kernels]}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    shutil.copy(os.path.join(ROOT, "bench", "gpu_check.py"), out)
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print(f"gpu_bundle: {out}: {len(kernels)} kernels for {a.chips}, {size / 2**20:.2f} MiB "
          f"(limit 64 MiB); newest symbol versions it needs: {newest_versions(lib)}")
    if size >= LIMIT:
        sys.exit("gpu_bundle: the bundle is over 64 MiB")

    if a.self_test_dir:
        st = os.path.abspath(a.self_test_dir)
        shutil.rmtree(st, ignore_errors=True)
        os.makedirs(st)
        with tempfile.TemporaryDirectory() as work:
            objects = compile_all(build, CHECKS, "cpu", [], work)
            omp = run(["sh", "-c", "ls /usr/lib/llvm-22/lib/libomp.so"]).strip()
            link(build, objects, os.path.join(st, "libattn_gpu_check.so"),
                 [omp, "-Wl,-rpath," + os.path.dirname(omp)])
        with open(os.path.join(st, "manifest.json"), "w") as f:
            json.dump(dict(manifest, kernels=[dict(k, check=True) for k in CHECKS],
                           chips=["cpu"]), f, indent=1)
        print(f"gpu_bundle: CPU self-test library in {st}")


if __name__ == "__main__":
    main()
