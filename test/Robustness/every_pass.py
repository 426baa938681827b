#!/usr/bin/env python3
"""Runs every attn pass and pipeline, with -verify-each, over .mlir files and
checks that each run either succeeds or fails with a diagnostic (exit 1):
never a crash (a signal or LLVM's crash banner) and never a hang (timeout).

  every_pass.py ATTN_OPT [--generate N --seed S --dir D] FILE_OR_DIR...

With --generate it first writes N random programs into D (random shapes:
static, dynamic, 1, primes; random scale/causal/mask/dropout/layout/bias
options; GQA; primitive chains in random legal and illegal orders) and
checks them too.
"""
import argparse
import os
import random
import subprocess
import sys

PASSES = [
    "--canonicalize",
    "--attn-decompose",
    "--attn-decompose=keep-sdpa",
    "--attn-fuse",
    "--convert-attn-to-linalg",
    "--convert-attn-to-loops",
    "--convert-attn-to-loops=tile-q=8 tile-k=16",
    "--attn-decompose --convert-attn-to-linalg",
    "--attn-reference-pipeline",
    "--attn-cpu-pipeline",
    "--attn-cpu-pipeline=tile-q=4 tile-k=16 threads=1",
    "--convert-attn-to-gpu",
    "--convert-attn-to-gpu=tile-q=5 tile-k=3",
    "--convert-attn-to-gpu --attn-emulate-gpu-schedule",
    "--attn-gpu-schedule-pipeline",
    "--attn-gpu-pipeline=lower-to-llvm=false",
    "--attn-gpu-pipeline=chip=sm_80",
]


def dims(rng):
    return rng.choice([1, 2, 3, 5, 7, 13, 16, 64, -1])


def ty(shape, elt="f32"):
    return "tensor<" + "x".join("?" if d < 0 else str(d) for d in shape) + "x" + elt + ">"


def random_sdpa(rng, name):
    b, tq, tk = dims(rng), dims(rng), dims(rng)
    hkv = rng.choice([1, 2, 3])
    h = hkv * rng.choice([1, 2, 4])
    d, dv = rng.choice([1, 3, 8, 16, 80]), rng.choice([1, 5, 8, 64])
    elt = rng.choice(["f32", "f32", "f16", "bf16"])
    if rng.random() < 0.2:
        d = -1
    q, k, v = ty([b, h, tq, d], elt), ty([b, hkv, tk, d], elt), ty([b, hkv, tk, dv], elt)
    out = ty([b, h, tq, dv], elt)
    attrs = []
    if rng.random() < 0.5:
        attrs.append("scale = %s : f32" % rng.choice(["0.125", "1.0", "3.5", "1.0e-3"]))
    if rng.random() < 0.6:
        attrs.append("causal = #attn.causal<%s>" % rng.choice(["top_left", "bottom_right"]))
    if rng.random() < 0.2:
        attrs.append("dropout_rate = 0.25 : f32")
        attrs.append("dropout_seed = %d : i64" % rng.randint(-5, 5))
    args = ["%%q: %s" % q, "%%k: %s" % k, "%%v: %s" % v]
    ops = ["%q", "%k", "%v"]
    types = [q, k, v]
    if rng.random() < 0.5:
        mshape = rng.choice([[tq, tk], [b, 1, 1, tk], [1, h, tq, tk], [tk]])
        m = ty(mshape, rng.choice(["i1", elt]))
        args.append("%%m: %s" % m)
        ops.append("%m")
        types.append(m)
    return ("func.func @%s(%s) -> %s {\n  %%o = attn.sdpa %s {%s} : (%s) -> %s\n"
            "  return %%o : %s\n}\n" % (name, ", ".join(args), out, ", ".join(ops),
                                         ", ".join(attrs), ", ".join(types), out, out))


def random_chain(rng, name):
    b, tq, tk, h, d = dims(rng), dims(rng), dims(rng), rng.choice([1, 2, 4]), rng.choice([4, 16])
    s = ty([b, h, tq, tk])
    lines = ["  %%s0 = attn.scores %%q, %%k : (%s, %s) -> %s" % (ty([b, h, tq, d]), ty([b, h, tk, d]), s)]
    cur = "%s0"
    steps = rng.sample(["scale", "mask", "scale2", "maskadd"], rng.randint(0, 3))
    for i, st in enumerate(steps):
        nxt = "%%s%d" % (i + 1)
        if st.startswith("scale"):
            lines.append("  %s = attn.scale %s {scale = %s : f32} : %s" % (nxt, cur, rng.choice(["0.5", "2.0"]), s))
        elif st == "mask":
            lines.append("  %s = attn.mask %s {causal = #attn.causal<top_left>} : %s" % (nxt, cur, s))
        else:
            lines.append("  %s = attn.mask %s, %%madd : %s, %s" % (nxt, cur, s, ty([tq, tk])))
        cur = nxt
    lines.append("  %%p = attn.softmax %s : %s" % (cur, s))
    if rng.random() < 0.3:
        lines.append("  %%p2 = attn.dropout %%p {rate = 0.5 : f32} : %s" % s)
        p = "%p2"
    else:
        p = "%p"
    o = ty([b, h, tq, d])
    lines.append("  %%o = attn.weighted_sum %s, %%v : (%s, %s) -> %s" % (p, s, ty([b, h, tk, d]), o))
    ret = "%o" if rng.random() < 0.8 else "%o, %p"
    rtys = o if ret == "%o" else o + ", " + s
    lines.append("  return %s : %s" % (ret, rtys))
    return ("func.func @%s(%%q: %s, %%k: %s, %%v: %s, %%madd: %s) -> (%s) {\n%s\n}\n"
            % (name, ty([b, h, tq, d]), ty([b, h, tk, d]), ty([b, h, tk, d]), ty([tq, tk]),
               rtys, "\n".join(lines)))


def random_mha(rng, name):
    b, tq, tk = dims(rng), dims(rng), dims(rng)
    hkv = rng.choice([1, 2])
    h = hkv * rng.choice([1, 3])
    dh, e, ekv = rng.choice([2, 8]), rng.choice([6, 16, 24]), rng.choice([6, 16])
    in_out = rng.random() < 0.3
    w = lambda o, i: ty([i, o] if in_out else [o, i])
    xq, xkv = ty([b, tq, e]), ty([b, tk, ekv])
    wq, wk, wv, wo = w(h * dh, e), w(hkv * dh, ekv), w(hkv * dh, ekv), w(e, h * dh)
    out = ty([b, tq, e])
    attrs = ["num_heads = %d : i64" % h, "num_kv_heads = %d : i64" % hkv]
    if in_out:
        attrs.append("layout = #attn.layout<in_out>")
    if rng.random() < 0.5:
        attrs.append("causal = #attn.causal<bottom_right>")
    return ("func.func @%s(%%xq: %s, %%xkv: %s, %%wq: %s, %%wk: %s, %%wv: %s, %%wo: %s) -> %s {\n"
            "  %%o = attn.mha %%xq, %%xkv, %%wq, %%wk, %%wv, %%wo {%s} : (%s) -> %s\n"
            "  return %%o : %s\n}\n" % (name, xq, xkv, wq, wk, wv, wo, out, ", ".join(attrs),
                                         ", ".join([xq, xkv, wq, wk, wv, wo]), out, out))


def generate(n, seed, out_dir):
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for i in range(n):
        gen = rng.choice([random_sdpa, random_sdpa, random_chain, random_mha])
        path = os.path.join(out_dir, "gen_%03d.mlir" % i)
        with open(path, "w") as f:
            f.write(gen(rng, "f%d" % i))
        paths.append(path)
    return paths


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                for n in sorted(names):
                    if n.endswith(".mlir"):
                        yield os.path.join(root, n)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("opt")
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--generate", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dir", default="generated")
    args = ap.parse_args()
    paths = list(args.paths)
    if args.generate:
        paths += generate(args.generate, args.seed, args.dir)
    failures, runs = [], 0
    for f in files(paths):
        for p in PASSES:
            cmd = [args.opt, f, "-split-input-file", "-verify-each", "-o", os.devnull]
            # "--a --b" is two passes; "--a=x y" is one pass with options.
            cmd += [p] if "=" in p else p.split(" ")
            runs += 1
            try:
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   timeout=120)
            except subprocess.TimeoutExpired:
                failures.append("%s %s: timed out" % (f, p))
                continue
            err = r.stderr.decode(errors="replace")
            if r.returncode not in (0, 1) or "PLEASE submit a bug report" in err \
                    or "Stack dump" in err:
                failures.append("%s %s: exit %d\n%s" % (f, p, r.returncode, err[-2000:]))
            elif r.returncode == 1 and "error" not in err:
                failures.append("%s %s: failed without a diagnostic" % (f, p))
    for m in failures:
        print("FAIL:", m)
    print("%d runs, %d crashes or hangs" % (runs, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
