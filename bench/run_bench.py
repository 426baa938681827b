#!/usr/bin/env python3
"""The CPU attention benchmark: fused (attn-cpu-pipeline) vs unfused
(attn-reference-pipeline), causal vs not, over sequence lengths, with the
machine's FMA peak measured in the same run.

  python3 bench/run_bench.py [--ts 128,512,...] [--repeat N] [--out DIR]
  python3 bench/run_bench.py --render-only --out DIR

For B = 1, H = 12, D = 64 and each T it runs `attn-run --json` on seeded
random inputs and records the median time, two GFLOP/s figures -- the full
count 4·B·H·T²·D (what attn-run reports, for causal and non-causal alike)
and the effective one, which counts only the (i, j) pairs the mask leaves
visible (4·B·H·D·T(T+1)/2 for top_left causal with Tq = Tk = T; the full
count otherwise) -- the fraction of the FMA peak (measured beside each T),
the speed-up over the reference pipeline (T <= --ref-max-t, where the T×T
scores fit in memory comfortably) and the memory the call needs above its
inputs and output. It writes results.json, RESULTS.md (with the exact
commands) and gflops.svg (effective GFLOP/s) into a fresh folder,
bench/runs/<timestamp>/, unless --out names one (`--out bench/sdpa` rewrites
the committed bench/sdpa/RESULTS.md). See bench/README.md. Plain Python 3,
no packages.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B, H, D = 1, 12, 64


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def program(t, causal):
    ty = "tensor<%dx%dx%dx%dxf32>" % (B, H, t, D)
    attr = " {causal = #attn.causal<top_left>}" if causal else ""
    return ("func.func @sdpa(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
            "  %%o = attn.sdpa %%q, %%k, %%v%s : (%s, %s, %s) -> %s\n"
            "  return %%o : %s\n}\n" % (ty, ty, ty, ty, attr, ty, ty, ty, ty, ty))


def attn_run(build, path, pipeline, repeat, extra):
    cmd = [os.path.join(build, "bin", "attn-run"), path, "--pipeline=" + pipeline,
           "--random-inputs", "--seed=1", "--repeat=%d" % repeat, "--json"] + extra
    return cmd, json.loads(run(cmd))


def visible_pairs(t, causal):
    """(i, j) pairs of a T×T score matrix that the mask leaves visible:
    T(T+1)/2 for top_left causal (key j <= query i), T² otherwise."""
    return t * (t + 1) // 2 if causal else t * t


def add_flop_counts(result):
    """Adds to every row the full-count and the effective FLOPs and the
    effective GFLOP/s, from its T, its causal flag and its recorded median
    time, unless the row has them already. ("gflops" is attn-run's figure:
    the full count 4·B·H·T²·D over the same median.) Rows of runs made before
    these fields existed get them computed here, from their own medians."""
    b, h, d = result["B"], result["H"], result["D"]
    for r in result["rows"]:
        t = r["T"]
        r.setdefault("full_flops", 4 * b * h * t * t * d)
        r.setdefault("effective_flops", 4 * b * h * d * visible_pairs(t, r["causal"]))
        r.setdefault("effective_gflops", r["effective_flops"] / (r["median_ms"] * 1e6))
        r.setdefault("effective_peak_fraction",
                     r["effective_gflops"] / r["local_peak_gflops"])
    return result


def svg_plot(result, path):
    """Effective GFLOP/s against T (log2 axis), one line per series, and the
    FMA peak measured beside each T (dashed)."""
    import math
    rows = result["rows"]
    w, h, ml, mr, mt, mb = 720, 440, 70, 210, 50, 50
    ts = sorted({r["T"] for r in rows})
    peaks = {}
    for r in rows:
        peaks.setdefault(r["T"], r["local_peak_gflops"])
    series = [("fused, non-causal", "cpu", False, "#1f77b4"),
              ("fused, causal", "cpu", True, "#ff7f0e"),
              ("reference, non-causal", "reference", False, "#2ca02c"),
              ("reference, causal", "reference", True, "#d62728")]
    top = max(list(peaks.values()) + [r["effective_gflops"] for r in rows]) * 1.05
    step = 10 ** math.floor(math.log10(top / 5))
    for m in (1, 2, 2.5, 5, 10):
        if top / (m * step) <= 6:
            step *= m
            break
    ymax = step * math.ceil(top / step)
    lx = [math.log2(t) for t in ts]

    def x(t):
        return ml + (math.log2(t) - lx[0]) / max(lx[-1] - lx[0], 1) * (w - ml - mr)

    def y(v):
        return mt + (1 - v / ymax) * (h - mt - mb)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="14">attn.sdpa f32, B=%d H=%d D=%d: effective '
           'GFLOP/s vs T</text>' % (ml, result["B"], result["H"], result["D"]),
           '<text x="%d" y="36" font-size="11">FLOPs of the visible (i, j) pairs: '
           '4·B·H·T²·D non-causal, 4·B·H·D·T(T+1)/2 causal</text>' % ml]
    for i in range(int(round(ymax / step)) + 1):
        v = step * i
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (ml, w - mr, y(v), y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (ml - 6, y(v) + 4, v))
    for t in ts:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(t), h - mb + 18, t))
    out.append('<text x="%d" y="%d" text-anchor="middle">T (log scale)</text>'
               % ((ml + w - mr) // 2, h - 10))
    out.append('<polyline fill="none" stroke="black" stroke-dasharray="6,4" points="%s"/>'
               % " ".join("%.1f,%.1f" % (x(t), y(peaks[t])) for t in ts))
    out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black" stroke-dasharray="6,4"/>'
               % (w - mr + 16, w - mr + 36, mt + 10, mt + 10))
    out.append('<text x="%d" y="%d">FMA peak, beside each T</text>' % (w - mr + 40, mt + 14))
    for k, (name, pipe, causal, color) in enumerate(series):
        pts = [(r["T"], r["effective_gflops"]) for r in rows
               if r["pipeline"] == pipe and r["causal"] == causal]
        if not pts:
            continue
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                   % (color, " ".join("%.1f,%.1f" % (x(t), y(g)) for t, g in pts)))
        for t, g in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(t), y(g), color))
        ly = mt + 28 + 18 * k
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                   % (w - mr + 16, w - mr + 36, ly, ly, color))
        out.append('<text x="%d" y="%d">%s</text>' % (w - mr + 40, ly + 4, name))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Says each option's default: `off` for a flag, nothing added where the
    help text says it (a default that is not a plain value)."""

    def _get_help_string(self, action):
        if action.default is None or "Default:" in (action.help or ""):
            return action.help
        if action.default is False:
            return action.help + " (default: off)"
        return super()._get_help_string(action)


def parse_args():
    ap = argparse.ArgumentParser(
        description="CPU attention benchmark: attn.sdpa (f32, B=%d, H=%d, D=%d) through the "
                    "fused cpu pipeline and the unfused reference pipeline, causal and not, "
                    "over sequence lengths T, next to the machine's FMA peak. Writes "
                    "results.json, RESULTS.md and gflops.svg into the output folder "
                    "(see bench/README.md)." % (B, H, D),
        formatter_class=HelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), metavar="DIR",
                    help="build folder whose bin/attn-run and bin/attn-fma-peak are run")
    ap.add_argument("--out", default=None, metavar="DIR",
                    help="folder for results.json, RESULTS.md and gflops.svg; files already "
                         "there are overwritten (`--out bench/sdpa` rewrites the "
                         "committed bench/sdpa/RESULTS.md). Default: a fresh folder "
                         "bench/runs/<YYYYmmdd-HHMMSS>/ (required with --render-only)")
    ap.add_argument("--ts", default="128,512,1024,2048,4096,8192,16384", metavar="T,T,...",
                    help="comma-separated sequence lengths T (Tq = Tk = T)")
    ap.add_argument("--repeat", type=int, default=5, metavar="N",
                    help="timed calls per fused row (median reported); fused rows with "
                         "T > 4096 use at most 3, reference rows 3 (1 from T = 2048)")
    ap.add_argument("--ref-max-t", type=int, default=2048, metavar="T",
                    help="run the reference pipeline only up to this T (it materialises "
                         "[B,H,T,T] scores)")
    ap.add_argument("--threads", type=int, default=0, metavar="N",
                    help="--num-threads for the fused pipeline; 0 = attn-run's default, one "
                         "per core (the FMA peak always uses every core)")
    ap.add_argument("--render-only", action="store_true",
                    help="run nothing: rewrite RESULTS.md and gflops.svg in --out from the "
                         "results.json there (derived columns, such as the effective GFLOP/s, "
                         "are computed from its recorded medians; results.json is not changed)")
    args = ap.parse_args()
    try:
        args.ts = [int(t) for t in args.ts.split(",")]
    except ValueError:
        ap.error("--ts: expected comma-separated integers, got %r" % args.ts)
    if not args.ts or min(args.ts) < 1:
        ap.error("--ts: sequence lengths must be positive")
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.threads < 0:
        ap.error("--threads must be 0 or positive")
    if args.render_only and not args.out:
        ap.error("--render-only needs --out DIR, the folder whose results.json to render")
    return args


def cpu_model():
    """The CPU's model name (/proc/cpuinfo, as lscpu shows it), else
    Python's guess."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fresh_out_dir():
    base = os.path.join(ROOT, "bench", "runs", time.strftime("%Y%m%d-%H%M%S"))
    path, n = base, 1
    while True:
        try:
            os.makedirs(path)
            return path
        except FileExistsError:
            n += 1
            path = "%s-%d" % (base, n)


def main():
    args = parse_args()
    if args.render_only:
        with open(os.path.join(args.out, "results.json")) as f:
            saved = json.load(f)
        render(saved, args.out, rendered_by=["--render-only", "--out", args.out])
        return
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        out = args.out
    else:
        out = fresh_out_dir()
    ts = args.ts
    cores = os.cpu_count() or 1
    started = time.strftime("%Y-%m-%d %H:%M:%S")

    peak_cmd = [os.path.join(args.build, "bin", "attn-fma-peak"), "--threads=%d" % cores]
    peak = json.loads(run(peak_cmd))["gflops"]
    peak1_cmd = [os.path.join(args.build, "bin", "attn-fma-peak"), "--threads=1"]
    peak1 = json.loads(run(peak1_cmd))["gflops"]

    rows, commands = [], [" ".join(peak_cmd), " ".join(peak1_cmd)]
    tmp = tempfile.mkdtemp(prefix="attn-bench-")
    extra = ["--num-threads=%d" % args.threads] if args.threads else []
    # Causal and non-causal back to back at each T, so that their ratio is
    # measured in the same stretch of time on a shared machine.
    for t in ts:
        # The machine is shared: measure the peak again next to every T and
        # quote each row against the peak measured beside it.
        local_peak = json.loads(run(peak_cmd[:1] + ["--threads=%d" % cores, "--seconds=0.5"]))["gflops"]
        for causal in (False, True):
            path = os.path.join(tmp, "sdpa_T%d_%s.mlir" % (t, "causal" if causal else "full"))
            with open(path, "w") as f:
                f.write(program(t, causal))
            pipes = ["cpu"] + (["reference"] if t <= args.ref_max_t else [])
            for pipe in pipes:
                repeat = args.repeat if pipe == "cpu" and t <= 4096 else max(1, min(args.repeat, 3))
                if pipe == "reference":
                    repeat = 1 if t >= 2048 else 3
                cmd, r = attn_run(args.build, path, pipe, repeat, extra if pipe == "cpu" else [])
                commands.append(" ".join(cmd[:1] + ["<sdpa T=%d%s>" % (t, " causal" if causal else "")]
                                         + cmd[2:]))
                out_mib = B * H * t * D * 4 / 2**20
                extra_mib = r["run_peak_rss_mib"] - r["rss_before_run_mib"] - out_mib
                row = {"T": t, "causal": causal, "pipeline": pipe,
                       "median_ms": r["median_ms"], "gflops": r["gflops"],
                       "peak_fraction": r["gflops"] / local_peak, "local_peak_gflops": local_peak,
                       "rss_before_run_mib": r["rss_before_run_mib"],
                       "run_peak_rss_mib": r["run_peak_rss_mib"],
                       "extra_mib": max(extra_mib, 0.0), "repeat": repeat}
                add_flop_counts({"B": B, "H": H, "D": D, "rows": [row]})
                rows.append(row)
                print("%-9s T=%-6d %-10s %9.2f ms %7.2f GFLOP/s (effective %7.2f) "
                      "%5.1f%% of peak %.0f, +%.1f MiB"
                      % (pipe, t, "causal" if causal else "non-causal", row["median_ms"],
                         row["gflops"], row["effective_gflops"],
                         100 * row["effective_peak_fraction"], local_peak,
                         row["extra_mib"]), flush=True)

    def find(pipe, t, causal):
        for r in rows:
            if r["pipeline"] == pipe and r["T"] == t and r["causal"] == causal:
                return r
        return None

    for r in rows:
        if r["pipeline"] == "cpu":
            ref = find("reference", r["T"], r["causal"])
            r["speedup_vs_reference"] = ref["median_ms"] / r["median_ms"] if ref else None
            full = find("cpu", r["T"], False)
            r["causal_speedup"] = (full["median_ms"] / r["median_ms"]) if r["causal"] else None

    cpu = cpu_model()
    result = {"started": started, "host": platform.node() or "this machine", "cpu": cpu,
              "cores": cores, "fma_peak_gflops": peak,
              "fma_peak_1thread_gflops": peak1, "B": B, "H": H, "D": D,
              "flop_counts": {
                  "gflops": "attn-run's figure: the full count 4*B*H*T^2*D over the median, "
                            "for causal rows too",
                  "effective_gflops": "the FLOPs of the visible (i, j) pairs over the median: "
                                      "4*B*H*T^2*D non-causal, 4*B*H*D*T*(T+1)/2 causal "
                                      "(top_left, Tq = Tk = T)",
                  "peak_fraction": "gflops / local_peak_gflops",
                  "effective_peak_fraction": "effective_gflops / local_peak_gflops"},
              "rows": rows, "commands": commands}
    result["argv"] = sys.argv[1:]
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    render(result, out)


def render(result, out, rendered_by=None):
    """Writes RESULTS.md and gflops.svg into `out` from `result` (a run's
    results.json). `rendered_by`: the arguments of a --render-only call, said
    in the page's head."""
    add_flop_counts(result)
    rows, peak, peak1 = result["rows"], result["fma_peak_gflops"], result["fma_peak_1thread_gflops"]
    ts = sorted({r["T"] for r in rows})
    cpu, cores, started, commands = result["cpu"], result["cores"], result["started"], result["commands"]
    b, h, d = result["B"], result["H"], result["D"]

    def find(pipe, t, causal):
        for r in rows:
            if r["pipeline"] == pipe and r["T"] == t and r["causal"] == causal:
                return r
        return None

    svg_plot(result, os.path.join(out, "gflops.svg"))
    # (Runs recorded before "host" was saved name no host.)
    host = result.get("host")
    head = ("Measured by `python3 bench/run_bench.py %s` on %s%s, %d cores%s, started %s."
            % (" ".join(result.get("argv", [])), host + " (" if host else "", cpu, cores,
               ")" if host else "", started))
    if rendered_by:
        head += (" This page was rendered from that run's `results.json` by `python3 "
                 "bench/run_bench.py %s` on %s; every number in it is that run's "
                 "(the effective GFLOP/s are its FLOP counts over its recorded medians)."
                 % (" ".join(rendered_by), time.strftime("%Y-%m-%d")))
    md = ["# CPU benchmark results", "", head,
          "", "attn.sdpa, f32, B = %d, H = %d, D = %d, Tq = Tk = T, seeded random inputs; "
          "causal rows are `top_left`. Two GFLOP/s figures: **full count** is attn-run's, "
          "4·B·H·T²·D for causal and non-causal alike; **effective** counts only the (i, j) "
          "pairs the mask leaves visible, 4·B·H·D·T(T+1)/2 for causal (the FLOPs a causal "
          "kernel actually has to do; equal to the full count for non-causal rows). A kernel "
          "that skips masked tiles, like the fused one, therefore shows a causal full-count "
          "figure near twice what it computes; the effective figure and \"%% of peak\" "
          "(effective) do not. FMA peak measured in the same run by `attn-fma-peak`: "
          "**%.1f GFLOP/s on %d threads** (%.1f on one) at the start; the machine is shared, "
          "so the peak is measured again (0.5 s) next to every T and each row's \"%% of "
          "peak\" is against that local peak (column \"peak\"). Memory is the peak RSS of the "
          "first call minus the RSS before it, minus the output (so: the scratch the call "
          "needs above inputs and output; read when the compiled code returns, before "
          "attn-run copies the results out)." % (b, h, d, peak, cores, peak1),
          "",
          "| T | causal | fused ms | fused GFLOP/s, full count | fused GFLOP/s, effective "
          "| peak | % of peak (effective) | reference ms | fused speed-up "
          "| causal vs non-causal | fused extra MiB | reference extra MiB |",
          "|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for causal in (False, True):
        for t in ts:
            c, ref = find("cpu", t, causal), find("reference", t, causal)
            md.append("| %d | %s | %.2f | %.1f | %.1f | %.0f | %.0f%% | %s | %s | %s | %.1f | %s |" % (
                t, "yes" if causal else "no", c["median_ms"], c["gflops"], c["effective_gflops"],
                c["local_peak_gflops"], 100 * c["effective_peak_fraction"],
                "%.1f" % ref["median_ms"] if ref else "–",
                "%.1f×" % c["speedup_vs_reference"] if c.get("speedup_vs_reference") else "–",
                "%.2f×" % c["causal_speedup"] if c.get("causal_speedup") else "–",
                c["extra_mib"], "%.1f" % ref["extra_mib"] if ref else "–"))
    md += ["", "![Effective GFLOP/s against T](gflops.svg)", ""]
    # Remarks on a run (the state of the machine, earlier runs) are kept in
    # NOTES.md beside its results.json and carried into RESULTS.md.
    notes = os.path.join(out, "NOTES.md")
    if os.path.exists(notes):
        md += [open(notes).read().rstrip("\n"), ""]
    md += ["Commands (one `attn-run` per row; `<sdpa ...>` is the generated program, see "
           "`program()` in run_bench.py):", "", "```"] + commands + ["```", ""]
    with open(os.path.join(out, "RESULTS.md"), "w") as f:
        f.write("\n".join(md))
    print("wrote %s: %sRESULTS.md, gflops.svg" % (out, "" if rendered_by else "results.json, "))


if __name__ == "__main__":
    main()
