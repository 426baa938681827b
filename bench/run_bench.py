#!/usr/bin/env python3
"""The CPU attention benchmark: fused (attn-cpu-pipeline) vs unfused
(attn-reference-pipeline), causal vs not, over sequence lengths, with the
machine's FMA peak measured in the same run.

  python3 bench/run_bench.py [--ts 128,512,...] [--repeat N] [--out bench]

For B = 1, H = 12, D = 64 and each T it runs `attn-run --json` on seeded
random inputs and records the median time, GFLOP/s (4·B·H·T²·D for causal
and non-causal alike), the fraction of the 2-thread FMA peak, the speed-up
over the reference pipeline (T <= --ref-max-t, where the T×T scores fit in
memory comfortably) and the memory the call needs above its inputs and
output. It writes results.json, RESULTS.md (with the exact commands) and
gflops.svg into --out. Plain Python 3, no packages.
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


def svg_plot(rows, peak, path):
    """GFLOP/s against T (log2 axis), one line per series."""
    w, h, ml, mr, mt, mb = 720, 420, 70, 200, 30, 50
    ts = sorted({r["T"] for r in rows})
    series = [("fused, non-causal", "cpu", False, "#1f77b4"),
              ("fused, causal", "cpu", True, "#ff7f0e"),
              ("reference, non-causal", "reference", False, "#2ca02c"),
              ("reference, causal", "reference", True, "#d62728")]
    ymax = max([peak] + [r["gflops"] for r in rows if r.get("gflops")]) * 1.1
    import math
    lx = [math.log2(t) for t in ts]

    def x(t):
        return ml + (math.log2(t) - lx[0]) / max(lx[-1] - lx[0], 1) * (w - ml - mr)

    def y(v):
        return mt + (1 - v / ymax) * (h - mt - mb)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="14">attn.sdpa f32, B=1 H=12 D=64: GFLOP/s vs T '
           '(4·B·H·T²·D)</text>' % ml]
    for i in range(6):
        v = ymax * i / 5
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (ml, w - mr, y(v), y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.0f</text>' % (ml - 6, y(v) + 4, v))
    for t in ts:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(t), h - mb + 18, t))
    out.append('<text x="%d" y="%d" text-anchor="middle">T (log scale)</text>'
               % ((ml + w - mr) // 2, h - 10))
    out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="black" stroke-dasharray="6,4"/>'
               % (ml, w - mr, y(peak), y(peak)))
    out.append('<text x="%d" y="%.1f">FMA peak %.0f</text>' % (w - mr + 6, y(peak) + 4, peak))
    for k, (name, pipe, causal, color) in enumerate(series):
        pts = [(r["T"], r["gflops"]) for r in rows
               if r["pipeline"] == pipe and r["causal"] == causal and r.get("gflops")]
        if not pts:
            continue
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                   % (color, " ".join("%.1f,%.1f" % (x(t), y(g)) for t, g in pts)))
        for t, g in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(t), y(g), color))
        ly = mt + 30 + 18 * k
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                   % (w - mr + 6, w - mr + 26, ly, ly, color))
        out.append('<text x="%d" y="%d">%s</text>' % (w - mr + 30, ly + 4, name))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench"))
    ap.add_argument("--ts", default="128,512,1024,2048,4096,8192,16384")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ref-max-t", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--render-only", action="store_true",
                    help="rewrite RESULTS.md and gflops.svg from --out/results.json")
    args = ap.parse_args()
    if args.render_only:
        with open(os.path.join(args.out, "results.json")) as f:
            saved = json.load(f)
        render(saved, args.out, saved.get("argv", []))
        return
    ts = [int(t) for t in args.ts.split(",")]
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
                rows.append(row)
                print("%-9s T=%-6d %-10s %9.2f ms %7.2f GFLOP/s %5.1f%% of peak %.0f, +%.1f MiB"
                      % (pipe, t, "causal" if causal else "non-causal", row["median_ms"],
                         row["gflops"], 100 * row["peak_fraction"], local_peak,
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

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    result = {"started": started, "cpu": cpu, "cores": cores, "fma_peak_gflops": peak,
              "fma_peak_1thread_gflops": peak1, "B": B, "H": H, "D": D, "rows": rows,
              "commands": commands}
    result["argv"] = sys.argv[1:]
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    render(result, args.out, sys.argv[1:])


def render(result, out, argv):
    rows, peak, peak1 = result["rows"], result["fma_peak_gflops"], result["fma_peak_1thread_gflops"]
    ts = sorted({r["T"] for r in rows})
    cpu, cores, started, commands = result["cpu"], result["cores"], result["started"], result["commands"]

    def find(pipe, t, causal):
        for r in rows:
            if r["pipeline"] == pipe and r["T"] == t and r["causal"] == causal:
                return r
        return None

    svg_plot(rows, peak, os.path.join(out, "gflops.svg"))
    md = ["# CPU benchmark results", "",
          "Produced by `python3 bench/run_bench.py %s` on %s (%s, %d cores), started %s."
          % (" ".join(argv), platform.node() or "this machine", cpu, cores, started),
          "", "attn.sdpa, f32, B = %d, H = %d, D = %d, seeded random inputs. GFLOP/s counts "
          "4·B·H·T²·D for causal and non-causal alike. FMA peak measured in the same run "
          "by `attn-fma-peak`: **%.1f GFLOP/s on %d threads** (%.1f on one) at the start; the "
          "machine is shared, so the peak is measured again (0.5 s) next to every T and "
          "each row's \"%% of peak\" is against that local peak (column \"peak\"); causal rows "
          "count the full 4·B·H·T²·D, so they can exceed 100%%. Memory is the "
          "peak RSS of the first call minus the RSS before it, minus the output (so: the "
          "scratch the call needs above inputs and output; read when the compiled code returns, "
          "before attn-run copies the results out)." % (B, H, D, peak, cores, peak1),
          "",
          "| T | causal | fused ms | fused GFLOP/s | peak | % of peak | reference ms | fused speed-up "
          "| causal vs non-causal | fused extra MiB | reference extra MiB |",
          "|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for causal in (False, True):
        for t in ts:
            c, ref = find("cpu", t, causal), find("reference", t, causal)
            md.append("| %d | %s | %.2f | %.1f | %.0f | %.0f%% | %s | %s | %s | %.1f | %s |" % (
                t, "yes" if causal else "no", c["median_ms"], c["gflops"],
                c["local_peak_gflops"], 100 * c["peak_fraction"], "%.1f" % ref["median_ms"] if ref else "–",
                "%.1f×" % c["speedup_vs_reference"] if c.get("speedup_vs_reference") else "–",
                "%.2f×" % c["causal_speedup"] if c.get("causal_speedup") else "–",
                c["extra_mib"], "%.1f" % ref["extra_mib"] if ref else "–"))
    md += ["", "![GFLOP/s against T](gflops.svg)", "", "Commands (one `attn-run` per row; "
           "`<sdpa ...>` is the generated program, see `program()` in run_bench.py):", "",
           "```"] + commands + ["```", ""]
    # GPU results are made by bench/gpu_check.sh on a GPU machine and kept in
    # bench/GPU.md; they are carried into RESULTS.md.
    gpu = os.path.join(os.path.dirname(os.path.abspath(__file__)), "GPU.md")
    if os.path.exists(gpu):
        md += [open(gpu).read()]
    with open(os.path.join(out, "RESULTS.md"), "w") as f:
        f.write("\n".join(md))
    print("wrote %s/results.json, RESULTS.md, gflops.svg" % out)




if __name__ == "__main__":
    main()
