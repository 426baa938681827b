#!/usr/bin/env python3
"""ring_matrix.py MPIRUN ATTN_RUN WORKDIR: runs ring attention
(attn-run --pipeline=ring under mpirun) over a grid of cases and checks each
gathered output against the single-node reference pipeline run on the whole
inputs (attn-run --compare-with=reference, on rank 0). Prints one line per
case and "ring matrix: N cases passed"; exits 1 on the first failure.

Each case: T, ranks, causal kind, layout, H, Hkv, D, Dv, dtype, mask
("sinks": no mask, attention sinks [H], replicated on every rank; "mods": a
score function adding a relative-position bias table [2T - 1] (a capture,
replicated) and a mask function keeping each 100-token document's keys,
both at global positions).
"""
import json
import os
import shlex
import subprocess
import sys

MPIRUN, ATTN_RUN, WORK = sys.argv[1], sys.argv[2], sys.argv[3]

CASES = [
    # T, np, causal, layout, H, Hkv, D, Dv, dtype, mask
    (256, 1, "top_left", "zigzag", 4, 2, 64, 64, "f32", "none"),
    (256, 4, "top_left", "unit", 4, 2, 64, 64, "f32", "none"),
    (1000, 4, "none", "contiguous", 2, 2, 32, 48, "f32", "keypad"),
    (1000, 4, "top_left", "zigzag", 2, 1, 128, 64, "f32", "none"),
    (255, 3, "bottom_right", "contiguous", 2, 2, 64, 64, "f32", "keep"),
    (384, 3, "none", "striped", 2, 2, 64, 64, "f16", "keep"),
    (2048, 4, "bottom_right", "striped", 2, 1, 64, 64, "f32", "none"),
    (2048, 2, "top_left", "contiguous", 2, 2, 64, 64, "f16", "add"),
    # masks with each layout's block split: zigzag with query-row and
    # key-column chunks, striped with strided mask columns
    (512, 4, "top_left", "zigzag", 2, 1, 64, 64, "f32", "add"),
    (512, 2, "none", "zigzag", 2, 2, 64, 64, "f32", "keypad"),
    (384, 3, "top_left", "striped", 2, 2, 64, 64, "f32", "keep"),
    # attention sinks, merged once per row after the last block
    (384, 3, "top_left", "zigzag", 4, 2, 64, 64, "f32", "sinks"),
    (256, 2, "none", "contiguous", 2, 2, 64, 64, "f16", "sinks"),
    # score and mask functions on global positions, every layout
    (384, 3, "top_left", "zigzag", 4, 2, 64, 64, "f32", "mods"),
    (256, 4, "none", "striped", 2, 1, 32, 32, "f32", "mods"),
    (300, 3, "bottom_right", "contiguous", 2, 2, 64, 64, "f16", "mods"),
]


def mod_functions(T, operands):
    """The "mods" case's captures, operand types and regions."""
    t = f"tensor<{2 * T - 1}xf32>"
    score = (f"score_mod {{\n  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, "
             f"%t: {t}):\n"
             f"    %c = arith.constant {T - 1} : index\n"
             f"    %d = arith.subi %i, %j : index\n"
             f"    %n = arith.addi %d, %c : index\n"
             f"    %x = tensor.extract %t[%n] : {t}\n"
             f"    %y = arith.addf %s, %x : f32\n"
             f"    attn.yield %y : f32\n  }}")
    mask = (f"mask_mod {{\n  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: {t}):\n"
            f"    %c = arith.constant 100 : index\n"
            f"    %di = arith.divsi %i, %c : index\n"
            f"    %dj = arith.divsi %j, %c : index\n"
            f"    %same = arith.cmpi eq, %di, %dj : index\n"
            f"    attn.yield %same : i1\n  }}")
    return f", %m: {t}", " captures(%m)", f"{operands}, {t}", f"{score} {mask}"


def mlir(T, causal, layout, H, Hkv, D, Dv, dt, mask):
    q = f"tensor<1x{H}x{T}x{D}x{dt}>"
    k = f"tensor<1x{Hkv}x{T}x{D}x{dt}>"
    v = f"tensor<1x{Hkv}x{T}x{Dv}x{dt}>"
    o = f"tensor<1x{H}x{T}x{Dv}x{dt}>"
    attrs = []
    if causal != "none":
        attrs.append(f"causal = #attn.causal<{causal}>")
    attrs.append("attn.ring" if layout == "unit" else f"attn.ring = #attn.ring<{layout}>")
    if mask == "mods":
        margs, caps, types, regions = mod_functions(T, f"{q}, {k}, {v}")
        return (f"func.func @f(%q: {q}, %k: {k}, %v: {v}{margs}) -> {o} {{\n"
                f"  %o = attn.sdpa %q, %k, %v{caps} {{{', '.join(attrs)}}} {regions}\n"
                f"      : ({types}) -> {o}\n"
                f"  return %o : {o}\n}}\n")
    mt = {"none": "", "keep": f"tensor<1x1x{T}x{T}xi1>", "add": f"tensor<{T}x{T}x{dt}>",
          "keypad": f"tensor<1x1x1x{T}xi1>", "sinks": f"tensor<{H}xf32>"}[mask]
    margs = f", %m: {mt}" if mt else ""
    mop = (" sinks(%m)" if mask == "sinks" else ", %m") if mt else ""
    mtype = f", {mt}" if mt else ""
    return (f"func.func @f(%q: {q}, %k: {k}, %v: {v}{margs}) -> {o} {{\n"
            f"  %o = attn.sdpa %q, %k, %v{mop} {{{', '.join(attrs)}}}\n"
            f"      : ({q}, {k}, {v}{mtype}) -> {o}\n"
            f"  return %o : {o}\n}}\n")


passed = 0
for i, (T, np, causal, layout, H, Hkv, D, Dv, dt, mask) in enumerate(CASES):
    path = os.path.join(WORK, f"case{i}.mlir")
    with open(path, "w") as f:
        f.write(mlir(T, causal, layout, H, Hkv, D, Dv, dt, mask))
    cmd = shlex.split(MPIRUN) + ["-np", str(np), ATTN_RUN, path, "--pipeline=ring",
                                 "--random-inputs", f"--seed={i}",
                                 "--compare-with=reference", "--json", "--quiet"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    name = f"T={T} P={np} causal={causal} layout={layout} H={H}/{Hkv} D={D}/{Dv} {dt} mask={mask}"
    if p.returncode != 0:
        sys.stdout.write(p.stdout.decode() + p.stderr.decode())
        sys.exit(f"FAIL {name}: exit status {p.returncode}")
    report = json.loads(p.stdout.decode().strip().splitlines()[-1])
    rel = report["errors"][0]["max_rel_error"]
    tol = 1e-5 if dt == "f32" else 2e-3
    ok = rel <= tol and report["ranks"] == np
    print(f"{'PASS' if ok else 'FAIL'} {name}: max_rel_error {rel:.3g} (tolerance {tol:g}), "
          f"bytes sent per rank {report['bytes_sent_per_rank']}")
    if not ok:
        sys.exit(1)
    passed += 1
print(f"ring matrix: {passed} cases passed")
