#!/usr/bin/env python3
"""Runs every attn pass and pipeline, with -verify-each, over .mlir files and
checks that each run either succeeds or fails with a diagnostic (exit 1):
never a crash (a signal or LLVM's crash banner) and never a hang (timeout).

  every_pass.py ATTN_OPT [--generate N --seed S --dir D] [--shard K/N]
                [--sample M] [--batch ATTN_EVERY_PASS] FILE_OR_DIR...

--shard K/N checks only the files whose index in the sorted list is K mod
N: the suite runs the test files in shards, so that lit spreads them over
its workers instead of one worker running them all at the end.

--batch DRIVER runs each file's passes in one attn-every-pass process
(test/lib/EveryPass: a fresh MLIRContext per run, so each run sees what a
fresh attn-opt process would). It judges each `// -----` chunk: a pass
that fails one chunk without a diagnostic is a failure even when another
chunk printed an error (attn-opt's exit status and stderr, the rule
without --batch, see only the file). A file whose driver process crashes,
hangs or answers otherwise runs again one attn-opt process per pass,
which names the pass. One process per file instead of one per pair saves
most of the suite's time here (bench/NOTES.md, "Test suite time").

--sample M runs one (file, pass) pair in M: file i with pass j when
(i + j) mod M is 0, so every pass still meets every M-th file and every
file every M-th pass. The test suite uses it (lit's %every_pass_sample):
M = 2 in the normal build and 24 under ASan+UBSan, where a run costs ~8x
as much. Crashes, hangs and what the sanitizers add (memory and
undefined-behaviour errors that do not crash) need each pass on many
inputs, not on all of them; without --sample the whole matrix runs.

With --generate it first writes N random programs into D (random shapes:
static, dynamic, 1, primes; random scale/causal/mask/dropout/layout/bias
options; GQA; primitive chains in random legal and illegal orders) and
checks them too. The wave-2 features come in all three forms (sdpa, mha,
primitive chain): softcap, sliding windows (random bounds, align agreeing
with causal), ALiBi slopes [H] or [B,H], key lengths [B] i32/i64, attention
sinks [H] (sdpa and mha; a head too many, rarely), attn.rope
(both styles, R <= D, [T,R/2] or [B,T,R/2] tables; mha rope(...)). A few
programs break a verifier rule on purpose (a window align against causal,
a zero softcap, R > D, slopes of the wrong length): parse errors are runs
too, and must end in a diagnostic like any other.
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
    "--convert-attn-to-loops --attn-expand-math",
    "--test-attn-microkernels",
]


def dims(rng):
    return rng.choice([1, 2, 3, 5, 7, 13, 16, 64, -1])


def ty(shape, elt="f32"):
    return "tensor<" + "x".join("?" if d < 0 else str(d) for d in shape) + "x" + elt + ">"


# Rarely, a feature breaks a verifier rule on purpose.
P_INVALID = 0.03


def random_softcap(rng):
    if rng.random() < P_INVALID:
        return "0.0"
    return rng.choice(["50.0", "30.0", "1.0", "0.5", "1.0e30"])


def random_window(rng, causal):
    """A #attn.window: random bounds (each may be unbounded); `align` left
    out, or that of `causal` (the op's causal kind, or None)."""
    parts = []
    for side in ("left", "right"):
        if rng.random() < 0.7:
            parts.append("%s = %d" % (side, rng.choice([0, 1, 2, 3, 7, 16, 127])))
    kinds = ["top_left", "bottom_right"]
    r = rng.random()
    if causal is None and r < 0.5:
        parts.append("align = %s" % rng.choice(kinds))
    elif causal is not None and r < 0.3:
        other = kinds[1 - kinds.index(causal)]
        parts.append("align = %s" % (other if rng.random() < P_INVALID * 5 else causal))
    rng.shuffle(parts)
    return "#attn.window<%s>" % ", ".join(parts)


def random_slopes(rng, b, h):
    """ALiBi slopes [H] or [B,H] (f32)."""
    if rng.random() < P_INVALID:
        h = h + 1
    return ty(rng.choice([[h], [b, h]]))


def random_lengths(rng, b):
    return ty([b], rng.choice(["i32", "i64"]))


def random_tables(rng, t, d, b):
    """cos/sin type for heads of dim `d` (static) over `t` positions: R/2 from
    1 to D/2 (R > D, rarely), [T,R/2] or [B,T,R/2]."""
    half = rng.randint(1, max(1, d // 2))
    if rng.random() < P_INVALID:
        half = d // 2 + 1
    return ty(rng.choice([[t, half], [b, t, half]]))


def random_rope(rng, heads, b, d):
    """attn.rope on each of `heads` ((name, type, T) of Q and/or K), with one
    random style: the tables' arguments and the rope lines, each result
    named %r<name>."""
    style = rng.choice(["", " {style = #attn.rope<rotate_half>}",
                        " {style = #attn.rope<interleaved>}"])
    args, lines = [], []
    for x, xt, t in heads:
        tab = random_tables(rng, t, d, b)
        args += ["%%cos_%s: %s" % (x, tab), "%%sin_%s: %s" % (x, tab)]
        lines.append("  %%r%s = attn.rope %%%s, %%cos_%s, %%sin_%s%s : %s, %s, %s"
                     % (x, x, x, x, style, xt, tab, tab))
    return args, lines


def random_sinks(rng, h):
    """Attention sinks [H] (f32); rarely one head too many."""
    return ty([h + 1 if rng.random() < P_INVALID else h])


def random_features(rng, attrs, b, h, causal):
    """Adds softcap/window to `attrs`; returns the optional (name, type)
    operands: ALiBi slopes, key lengths and attention sinks."""
    if rng.random() < 0.3:
        attrs.append("softcap = %s : f32" % random_softcap(rng))
    if rng.random() < 0.35:
        attrs.append("window = %s" % random_window(rng, causal))
    extra = []
    if rng.random() < 0.3:
        extra.append(("alibi", random_slopes(rng, b, h)))
    if rng.random() < 0.3:
        extra.append(("key_lengths", random_lengths(rng, b)))
    if rng.random() < 0.2:
        extra.append(("sinks", random_sinks(rng, h)))
    return extra


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
    causal = None
    if rng.random() < 0.6:
        causal = rng.choice(["top_left", "bottom_right"])
        attrs.append("causal = #attn.causal<%s>" % causal)
    if rng.random() < 0.2:
        attrs.append("dropout_rate = 0.25 : f32")
        attrs.append("dropout_seed = %d : i64" % rng.randint(-5, 5))
    extra = random_features(rng, attrs, b, h, causal)
    args = ["%%q: %s" % q, "%%k: %s" % k, "%%v: %s" % v]
    ops = ["%q", "%k", "%v"]
    types = [q, k, v]
    body = []
    # RoPE on Q and K before the sdpa (LLaMA): the tables' T is Tq for Q and
    # Tk for K.
    if d >= 2 and rng.random() < 0.25:
        rope_args, rope_lines = random_rope(rng, (("q", q, tq), ("k", k, tk)), b, d)
        args += rope_args
        body += rope_lines
        for x in ("q", "k"):
            ops[ops.index("%" + x)] = "%r" + x
    if rng.random() < 0.5:
        mshape = rng.choice([[tq, tk], [b, 1, 1, tk], [1, h, tq, tk], [tk]])
        m = ty(mshape, rng.choice(["i1", elt]))
        args.append("%%m: %s" % m)
        ops.append("%m")
        types.append(m)
    operands = ", ".join(ops)
    for kw, t in extra:
        args.append("%%%s: %s" % (kw, t))
        operands += " %s(%%%s)" % (kw, kw)
        types.append(t)
    body.append("  %%o = attn.sdpa %s {%s} : (%s) -> %s"
                % (operands, ", ".join(attrs), ", ".join(types), out))
    return ("func.func @%s(%s) -> %s {\n%s\n  return %%o : %s\n}\n"
            % (name, ", ".join(args), out, "\n".join(body), out))


def random_chain(rng, name):
    b, tq, tk, h, d = dims(rng), dims(rng), dims(rng), rng.choice([1, 2, 4]), rng.choice([4, 16])
    s = ty([b, h, tq, tk])
    qt, kt = ty([b, h, tq, d]), ty([b, h, tk, d])
    lines, extra_args = [], []
    q, k = "%q", "%k"
    # RoPE on the query and key heads before the scores.
    if rng.random() < 0.3:
        rope_args, rope_lines = random_rope(rng, (("q", qt, tq), ("k", kt, tk)), b, d)
        extra_args += rope_args
        lines += rope_lines
        q, k = "%rq", "%rk"
    lines.append("  %%s0 = attn.scores %s, %s : (%s, %s) -> %s" % (q, k, qt, kt, s))
    cur = "%s0"
    steps = rng.sample(["scale", "mask", "scale2", "maskadd", "softcap", "maskfeat"],
                       rng.randint(0, 4))
    for i, st in enumerate(steps):
        nxt = "%%s%d" % (i + 1)
        if st.startswith("scale"):
            lines.append("  %s = attn.scale %s {scale = %s : f32} : %s" % (nxt, cur, rng.choice(["0.5", "2.0"]), s))
        elif st == "mask":
            lines.append("  %s = attn.mask %s {causal = #attn.causal<top_left>} : %s" % (nxt, cur, s))
        elif st == "softcap":
            lines.append("  %s = attn.softcap %s {cap = %s : f32} : %s" % (nxt, cur, random_softcap(rng), s))
        elif st == "maskfeat":
            # ALiBi, key lengths, window, causal, an optional mask operand.
            attrs, causal = [], None
            if rng.random() < 0.5:
                causal = rng.choice(["top_left", "bottom_right"])
                attrs.append("causal = #attn.causal<%s>" % causal)
            if rng.random() < 0.7:
                attrs.append("window = %s" % random_window(rng, causal))
            operands, mty = cur, ""
            if rng.random() < 0.3:
                operands += ", %madd"
                mty = ", " + ty([tq, tk])
            if rng.random() < 0.6:
                sl = random_slopes(rng, b, h)
                extra_args.append("%%slopes%d: %s" % (i, sl))
                operands += " alibi(%%slopes%d : %s)" % (i, sl)
            if rng.random() < 0.6:
                ln = random_lengths(rng, b)
                extra_args.append("%%len%d: %s" % (i, ln))
                operands += " key_lengths(%%len%d : %s)" % (i, ln)
            lines.append("  %s = attn.mask %s {%s} : %s%s" % (nxt, operands, ", ".join(attrs), s, mty))
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
    return ("func.func @%s(%%q: %s, %%k: %s, %%v: %s, %%madd: %s%s) -> (%s) {\n%s\n}\n"
            % (name, qt, kt, ty([b, h, tk, d]), ty([tq, tk]),
               "".join(", " + a for a in extra_args), rtys, "\n".join(lines)))


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
    causal = None
    if rng.random() < 0.5:
        causal = rng.choice(["bottom_right", "bottom_right", "top_left"])
        attrs.append("causal = #attn.causal<%s>" % causal)
    extra = random_features(rng, attrs, b, h, causal)
    # RoPE needs one position table for Q and K: self-attention lengths.
    if rng.random() < 0.3:
        tk = tq
        xkv = ty([b, tk, ekv])
        tab = random_tables(rng, tq, dh, b)
        extra.append(("rope", tab))
        if rng.random() < 0.6:
            attrs.append("rope_style = #attn.rope<%s>" % rng.choice(["rotate_half", "interleaved"]))
    if rng.random() < 0.2:
        extra.insert(0, ("mask", ty(rng.choice([[b, 1, 1, tk], [tq, tk]]), "i1")))
    args = [("xq", xq), ("xkv", xkv), ("wq", wq), ("wk", wk), ("wv", wv), ("wo", wo)]
    clauses = ""
    for kw, t in extra:
        if kw == "rope":
            args += [("cos", t), ("sin", t)]
            clauses += " rope(%cos, %sin)"
        else:
            args.append((kw, t))
            clauses += " %s(%%%s)" % (kw, kw)
    return ("func.func @%s(%s) -> %s {\n"
            "  %%o = attn.mha %%xq, %%xkv, %%wq, %%wk, %%wv, %%wo%s {%s} : (%s) -> %s\n"
            "  return %%o : %s\n}\n" % (name, ", ".join("%%%s: %s" % a for a in args), out,
                                         clauses, ", ".join(attrs),
                                         ", ".join(t for _, t in args), out, out))


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


def pipeline_text(p):
    """A PASSES entry as a textual pass pipeline: "--a --b" -> "a,b",
    "--a=x y" -> "a{x y}"."""
    if "=" in p:
        name, opts = p[2:].split("=", 1)
        return "%s{%s}" % (name, opts)
    return ",".join(x[2:] for x in p.split(" "))


def run_pair(opt, f, p):
    """One attn-opt process: (outcome, detail), outcome one of "ok", "diag",
    "silent", "crash", "hang"."""
    cmd = [opt, f, "-split-input-file", "-verify-each", "-o", os.devnull]
    # "--a --b" is two passes; "--a=x y" is one pass with options.
    cmd += [p] if "=" in p else p.split(" ")
    try:
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=120)
    except subprocess.TimeoutExpired:
        return "hang", "timed out"
    err = r.stderr.decode(errors="replace")
    if r.returncode not in (0, 1) or "PLEASE submit a bug report" in err \
            or "Stack dump" in err:
        return "crash", "exit %d\n%s" % (r.returncode, err[-2000:])
    if r.returncode == 1:
        return ("diag", "") if "error" in err else ("silent", "")
    return "ok", ""


def run_batch(driver, f, passes):
    """All of `passes` on `f` in one attn-every-pass process: a list of
    outcomes ("ok", "diag", "silent"), or None when the process crashed,
    hung or answered otherwise (then each pair runs on its own)."""
    cmd = [driver, f] + [pipeline_text(p) for p in passes]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120 + 30 * len(passes))
    except subprocess.TimeoutExpired:
        return None
    lines = r.stdout.decode(errors="replace").split()
    if r.returncode != 0 or len(lines) != 2 * len(passes):
        return None
    return lines[1::2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("opt")
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--generate", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dir", default="generated")
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--sample", type=int, default=1)
    ap.add_argument("--batch", default="",
                    help="attn-every-pass: run each file's passes in one process "
                         "(fresh context per run); a crash or hang falls back to "
                         "one attn-opt process per pass")
    args = ap.parse_intermixed_args()
    shard, shards = (int(x) for x in args.shard.split("/"))
    paths = list(args.paths)
    if args.generate:
        paths += generate(args.generate, args.seed, args.dir)
    failures, runs, pairs, fallbacks = [], 0, 0, 0
    for i, f in enumerate(sorted(files(paths))):
        if i % shards != shard:
            continue
        chosen = []
        for j, p in enumerate(PASSES):
            pairs += 1
            if (i + j) % args.sample == 0:
                chosen.append(p)
        runs += len(chosen)
        outcomes = run_batch(args.batch, f, chosen) if args.batch and chosen else None
        if outcomes is None:
            if args.batch and chosen:
                fallbacks += 1
            results = [run_pair(args.opt, f, p) for p in chosen]
        else:
            results = [(o, "") for o in outcomes]
        for p, (outcome, detail) in zip(chosen, results):
            if outcome in ("crash", "hang"):
                failures.append("%s %s: %s" % (f, p, detail))
            elif outcome == "silent":
                failures.append("%s %s: failed without a diagnostic" % (f, p))
    for m in failures:
        print("FAIL:", m)
    if fallbacks:
        print("%d files ran pass by pass after attn-every-pass failed" % fallbacks)
    print("%d runs of %d pairs, %d crashes or hangs" % (runs, pairs, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
