#!/usr/bin/env python3
"""Benchmarks of the attention variants (issue 12) on the fused CPU kernel,
every ratio measured within one run of this script:

  window   B 1, H 12, D 64, T (default 16384), causal: full causal against
           sliding windows of W = 256, 1024, 4096 keys (left = W - 1, so each
           query sees itself and W - 1 keys before it, as Mistral's
           sliding_window = W). The work of a windowed kernel grows with W,
           not T.
  decode   B 8, H 32, Hkv 8, D 128, Tq 1 against a KV cache padded to
           Tk = 8192 with seeded key lengths spread over [512, 8192]
           (bottom-right causal): one padded call with key lengths against
           the sum of 8 calls, one per sequence, unpadded at its true length.
  bias     B 1, H 12, D 64, T 2048, causal: plain against softcap 30, ALiBi
           (BLOOM slopes 2^(-8(h+1)/H)) and both.

Each case is `attn-run --pipeline=cpu --random-inputs --seed=1 --repeat=N
--json` on a generated function (slopes and key lengths are constants in the
IR, so the random inputs are only Q, K, V). Results go to
bench/features/RESULTS.md and results.json (or --out DIR), with the machine's
FMA peak (attn-fma-peak, widest ISA) measured in the same run.

  python3 bench/features_bench.py [--only window,decode,bias] [--t 16384]
                                  [--repeat 3] [--out DIR]
Plain Python 3, no packages.
"""
import argparse
import json
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import ROOT, cpu_model, run  # noqa: E402  (one runner, one CPU name)


def tensor(shape, elt="f32"):
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), elt)


def sdpa_program(b, h, hkv, tq, tk, d, causal, attrs=None, slopes=None, lengths=None,
                 elt="f32"):
    """One @f(q, k, v) with an attn.sdpa; ALiBi slopes and key lengths are
    constants in the body. `elt`: the element type of q, k, v and the result
    (f32, f16, bf16)."""
    qt, kt, ot = (tensor([b, h, tq, d], elt), tensor([b, hkv, tk, d], elt),
                  tensor([b, h, tq, d], elt))
    body, operands, types = [], "", [qt, kt, kt]
    if slopes is not None:
        st = tensor([h])
        body.append("  %%s = arith.constant dense<[%s]> : %s" %
                    (", ".join("%.9e" % s for s in slopes), st))
        operands += " alibi(%s)"
        types.append(st)
    if lengths is not None:
        lt = tensor([b], "i32")
        body.append("  %%l = arith.constant dense<[%s]> : %s" %
                    (", ".join(str(x) for x in lengths), lt))
        operands += " key_lengths(%l)"
        types.append(lt)
    a = dict(attrs or {})
    if causal:
        a["causal"] = "#attn.causal<%s>" % causal
    attr = (" {" + ", ".join("%s = %s" % kv for kv in sorted(a.items())) + "}") if a else ""
    body.append("  %%o = attn.sdpa %%q, %%k, %%v%s%s : (%s) -> %s" %
                (operands, attr, ", ".join(types), ot))
    return ("func.func @f(%%q: %s, %%k: %s, %%v: %s) -> %s {\n%s\n  return %%o : %s\n}\n"
            % (qt, kt, kt, ot, "\n".join(body), ot))


class Runner:
    def __init__(self, build, repeat, threads, work):
        self.build, self.repeat, self.threads, self.work = build, repeat, threads, work
        self.n = 0

    def time(self, text, label):
        self.n += 1
        path = os.path.join(self.work, "case%d.mlir" % self.n)
        with open(path, "w") as f:
            f.write(text)
        cmd = [os.path.join(self.build, "bin", "attn-run"), path, "--pipeline=cpu",
               "--random-inputs", "--seed=1", "--repeat=%d" % self.repeat, "--json",
               "--quiet"]
        if self.threads:
            cmd.append("--num-threads=%d" % self.threads)
        r = json.loads(run(cmd))
        self.cpu = r.get("cpu", "?")
        row = {"case": label, "median_ms": r["median_ms"],
               "effective_gflops": r.get("effective_gflops"),
               "unfused": r.get("unfused", [])}
        print("  %-44s %10.3f ms  %8.1f eff. GFLOP/s%s" % (
            label, row["median_ms"], row["effective_gflops"] or 0,
            "  UNFUSED: " + "; ".join(row["unfused"]) if row["unfused"] else ""),
            flush=True)
        return row


def fma_peak(build, threads):
    cores = threads or os.cpu_count() or 1
    out = run([os.path.join(build, "bin", "attn-fma-peak"), "--threads=%d" % cores])
    return json.loads(out)


def window_suite(r, t):
    print("window: B 1, H 12, D 64, T %d, causal" % t)
    rows = [r.time(sdpa_program(1, 12, 12, t, t, 64, "top_left"), "full causal T=%d" % t)]
    for w in (256, 1024, 4096):
        rows.append(r.time(sdpa_program(1, 12, 12, t, t, 64, "top_left",
                                        {"window": "#attn.window<left = %d>" % (w - 1)}),
                           "window W=%d T=%d" % (w, t)))
    full = rows[0]["median_ms"]
    for row in rows[1:]:
        row["speedup_vs_full"] = full / row["median_ms"]
    return rows


def decode_suite(r):
    b, h, hkv, d, tk = 8, 32, 8, 128, 8192
    rng = random.Random(12)
    lengths = [rng.randint(512, tk) for _ in range(b)]
    print("decode: B %d, H %d, Hkv %d, D %d, Tq 1, padded Tk %d, lengths %s" %
          (b, h, hkv, d, tk, lengths))
    padded = r.time(sdpa_program(b, h, hkv, 1, tk, d, "bottom_right", lengths=lengths),
                    "padded, key lengths")
    nolen = r.time(sdpa_program(b, h, hkv, 1, tk, d, "bottom_right"),
                   "padded, no key lengths (all %d keys)" % tk)
    singles = [r.time(sdpa_program(1, h, hkv, 1, n, d, "bottom_right"),
                      "one sequence, unpadded Tk=%d" % n) for n in lengths]
    total = sum(s["median_ms"] for s in singles)
    return {"lengths": lengths, "padded": padded, "padded_no_lengths": nolen,
            "singles": singles, "singles_total_ms": total,
            "padded_over_singles": padded["median_ms"] / total}


def bias_suite(r):
    t, h = 2048, 12
    slopes = [2.0 ** (-8.0 * (i + 1) / h) for i in range(h)]
    print("bias: B 1, H %d, D 64, T %d, causal" % (h, t))
    plain = r.time(sdpa_program(1, h, h, t, t, 64, "top_left"), "plain")
    cap = r.time(sdpa_program(1, h, h, t, t, 64, "top_left", {"softcap": "30.0 : f32"}),
                 "softcap 30")
    alibi = r.time(sdpa_program(1, h, h, t, t, 64, "top_left", slopes=slopes), "ALiBi")
    both = r.time(sdpa_program(1, h, h, t, t, 64, "top_left", {"softcap": "30.0 : f32"},
                               slopes=slopes), "softcap 30 + ALiBi")
    rows = [plain, cap, alibi, both]
    for row in rows[1:]:
        row["over_plain"] = row["median_ms"] / plain["median_ms"]
    return rows


def render(res, out):
    cmd = res["command"]
    lines = ["# Attention variants on the fused CPU kernel", "",
             "Generated by `%s` on %s (%s, %s threads); FMA peak of the widest ISA "
             "(%s) measured in the same run: %.1f GFLOP/s. Every ratio below is "
             "between rows of this one run." % (
                 cmd, res["date"], res["cpu"], res["threads"] or "all",
                 res["peak"].get("isa", "?"), res["peak_gflops"]), ""]
    if "window" in res:
        lines += ["## Sliding window (B 1, H 12, D 64, causal)", "",
                  "| case | median ms | effective GFLOP/s | % of peak | speed-up vs full causal |",
                  "|---|---:|---:|---:|---:|"]
        for row in res["window"]:
            g = row["effective_gflops"] or 0
            lines.append("| %s | %.2f | %.1f | %.1f %% | %s |" % (
                row["case"], row["median_ms"], g, 100 * g / res["peak_gflops"],
                "%.2f×" % row["speedup_vs_full"] if "speedup_vs_full" in row else "—"))
        lines.append("")
    if "decode" in res:
        dec = res["decode"]
        lines += ["## Decode against a padded cache with key lengths", "",
                  "B 8, H 32, Hkv 8, D 128, Tq 1, Tk padded to 8192, bottom-right causal; "
                  "key lengths %s." % dec["lengths"], "",
                  "| case | median ms |", "|---|---:|",
                  "| one padded call with key lengths | %.3f |" % dec["padded"]["median_ms"],
                  "| one padded call without key lengths (every key) | %.3f |" %
                  dec["padded_no_lengths"]["median_ms"],
                  "| 8 unpadded calls at the true lengths, summed | %.3f |" %
                  dec["singles_total_ms"],
                  "", "Padded with key lengths / unpadded sum: **%.2f×**." %
                  dec["padded_over_singles"], ""]
    if "bias" in res:
        lines += ["## Softcap and ALiBi (B 1, H 12, D 64, T 2048, causal)", "",
                  "| case | median ms | effective GFLOP/s | time / plain |",
                  "|---|---:|---:|---:|"]
        for row in res["bias"]:
            lines.append("| %s | %.2f | %.1f | %s |" % (
                row["case"], row["median_ms"], row["effective_gflops"] or 0,
                "%.3f×" % row["over_plain"] if "over_plain" in row else "1"))
        lines.append("")
    with open(os.path.join(out, "RESULTS.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", default="window,decode,bias",
                    help="comma-separated subset of window, decode, bias")
    ap.add_argument("--t", type=int, default=16384, help="T of the window suite")
    ap.add_argument("--repeat", type=int, default=3, help="timed calls per case (median)")
    ap.add_argument("--threads", type=int, default=0, help="0: one per core")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "features"))
    a = ap.parse_args()
    suites = [s for s in a.only.split(",") if s]
    for s in suites:
        if s not in ("window", "decode", "bias"):
            ap.error("unknown suite '%s' (window, decode, bias)" % s)
    os.makedirs(a.out, exist_ok=True)
    peak = fma_peak(a.build, a.threads)
    res = {"command": "python3 bench/features_bench.py " + " ".join(sys.argv[1:]),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "cpu": cpu_model(), "threads": a.threads,
           "peak": peak, "peak_gflops": peak.get("gflops", 0.0)}
    with tempfile.TemporaryDirectory() as work:
        r = Runner(a.build, a.repeat, a.threads, work)
        if "window" in suites:
            res["window"] = window_suite(r, a.t)
        if "decode" in suites:
            res["decode"] = decode_suite(r)
        if "bias" in suites:
            res["bias"] = bias_suite(r)
        res["cpu"] = "%s (LLVM host CPU), %s" % (getattr(r, "cpu", "?"), res["cpu"])
    render(res, a.out)
    print("wrote %s" % os.path.join(a.out, "RESULTS.md"))


if __name__ == "__main__":
    main()
