#!/usr/bin/env python3
"""K/V repeated for GQA in generic IR, raised by attn-raise, three ways:

  tiled   K/V repeated with `repeat` (head h reads K/V head h mod Hkv):
          raised to a GQA sdpa with Q's heads reordered and the output's
          back (two head transposes);
  inter   K/V repeated with `repeat_interleave` (h floordiv G): raised to a
          GQA sdpa as they are;
  copy    the sdpa over the G-fold K/V copy (what a tiled repeat raised to
          before K/V repeated by tiling were read through).

Each program is written here as torch-mlir would emit it (linalg.broadcast +
collapse_shape for the repeat, a generic Q·Kᵀ, a max/sub/exp/sum/div
softmax, a generic P·V; `copy` is the attn.sdpa over the collapsed
broadcast) and timed with `attn-run --pipeline=cpu [--raise]`, alternating
the three for ROUNDS rounds; prints each one's medians.

  python3 bench/raise_repeat.py [--build build] [--rounds 3]
      [--shape H,HKV,TQ,TK,D ...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def generic(h, hkv, tq, tk, d, tiled):
    g = h // hkv
    b5 = f"tensor<1x{g}x{hkv}x{tk}x{d}xf32>" if tiled else f"tensor<1x{hkv}x{g}x{tk}x{d}xf32>"
    q, kv = f"tensor<1x{h}x{tq}x{d}xf32>", f"tensor<1x{hkv}x{tk}x{d}xf32>"
    kr, s4, r3 = f"tensor<1x{h}x{tk}x{d}xf32>", f"tensor<1x{h}x{tq}x{tk}xf32>", f"tensor<1x{h}x{tq}xf32>"
    par4 = '"parallel", "parallel", "parallel", "parallel"'
    return f"""#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
func.func @f(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant {d ** -0.5} : f32
  %eb = tensor.empty() : {b5}
  %kb = linalg.broadcast ins(%k : {kv}) outs(%eb : {b5}) dimensions = [{1 if tiled else 2}]
  %vb = linalg.broadcast ins(%v : {kv}) outs(%eb : {b5}) dimensions = [{1 if tiled else 2}]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : {b5} into {kr}
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : {b5} into {kr}
  %s0 = tensor.empty() : {s4}
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : {s4}) -> {s4}
  %s = linalg.generic {{indexing_maps = #qk, iterator_types = [{par4}, "reduction"]}}
      ins(%q, %kr : {q}, {kr}) outs(%sz : {s4}) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  }} -> {s4}
  %x = linalg.generic {{indexing_maps = [#id4, #id4], iterator_types = [{par4}]}}
      ins(%s : {s4}) outs(%s0 : {s4}) {{
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %c : f32
    linalg.yield %t : f32
  }} -> {s4}
  %r0 = tensor.empty() : {r3}
  %m0 = linalg.fill ins(%ninf : f32) outs(%r0 : {r3}) -> {r3}
  %m = linalg.reduce ins(%x : {s4}) outs(%m0 : {r3}) dimensions = [3]
    (%a: f32, %acc: f32) {{ %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }}
  %ex = linalg.generic {{indexing_maps = [#id4, #row, #id4], iterator_types = [{par4}]}}
      ins(%x, %m : {s4}, {r3}) outs(%s0 : {s4}) {{
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %t = arith.subf %a, %mx : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  }} -> {s4}
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : {r3}) -> {r3}
  %sum = linalg.reduce ins(%ex : {s4}) outs(%z1 : {r3}) dimensions = [3]
    (%a: f32, %acc: f32) {{ %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }}
  %p = linalg.generic {{indexing_maps = [#id4, #row, #id4], iterator_types = [{par4}]}}
      ins(%ex, %sum : {s4}, {r3}) outs(%s0 : {s4}) {{
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  }} -> {s4}
  %o0 = tensor.empty() : {q}
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : {q}) -> {q}
  %o = linalg.generic {{indexing_maps = #pv, iterator_types = [{par4}, "reduction"]}}
      ins(%p, %vr : {s4}, {kr}) outs(%oz : {q}) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  }} -> {q}
  return %o : {q}
}}
"""


def copied(h, hkv, tq, tk, d):
    g = h // hkv
    b5 = f"tensor<1x{g}x{hkv}x{tk}x{d}xf32>"
    q, kv, kr = (f"tensor<1x{h}x{tq}x{d}xf32>", f"tensor<1x{hkv}x{tk}x{d}xf32>",
                 f"tensor<1x{h}x{tk}x{d}xf32>")
    return f"""func.func @f(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %eb = tensor.empty() : {b5}
  %kb = linalg.broadcast ins(%k : {kv}) outs(%eb : {b5}) dimensions = [1]
  %vb = linalg.broadcast ins(%v : {kv}) outs(%eb : {b5}) dimensions = [1]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : {b5} into {kr}
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : {b5} into {kr}
  %o = attn.sdpa %q, %kr, %vr {{scale = {d ** -0.5} : f32}} : ({q}, {kr}, {kr}) -> {q}
  return %o : {q}
}}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--shape", action="append",
                    help="H,HKV,TQ,TK,D (default: 16,4,512,512,64 16,4,2048,2048,64 "
                         "16,4,16,8192,64)")
    a = ap.parse_args()
    shapes = [tuple(map(int, s.split(","))) for s in (a.shape or
              ["16,4,512,512,64", "16,4,2048,2048,64", "16,4,16,8192,64"])]
    run = os.path.join(a.build, "bin", "attn-run")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in shapes:
            files = {}
            for kind, text in (("tiled", generic(*shape, tiled=True)),
                               ("inter", generic(*shape, tiled=False)),
                               ("copy", copied(*shape))):
                files[kind] = os.path.join(tmp, kind + ".mlir")
                with open(files[kind], "w") as f:
                    f.write(text)
            times = {k: [] for k in files}
            for _ in range(a.rounds):
                for kind, path in files.items():
                    cmd = [run, path, "--pipeline=cpu", "--random-inputs", "--seed=1",
                           "--repeat=%d" % a.repeat] + ([] if kind == "copy" else ["--raise"])
                    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         text=True)
                    m = re.search(r"median ([0-9.]+) ms", out.stdout)
                    if out.returncode or not m:
                        sys.exit("raise_repeat: %s failed:\n%s" % (" ".join(cmd), out.stdout))
                    times[kind].append(float(m.group(1)))
            print("H %d Hkv %d Tq %d Tk %d D %d: " % shape + ", ".join(
                "%s %s ms" % (k, " ".join("%.3f" % t for t in v)) for k, v in times.items()),
                flush=True)


if __name__ == "__main__":
    main()
