#!/usr/bin/env python3
"""Ring attention over MPI on this machine, against one rank, in one run.

    python3 bench/ring_bench.py [--t 8192] [--repeat 3] [--ranks 1,2] [--out bench/ring]

For B 1, H 12, D 64, causal (zigzag), f32: the single-node fused kernel on
one thread (attn-run --pipeline=cpu --num-threads=1), then the ring
(attn-run --pipeline=ring under mpirun, one thread per rank) for each P in
--ranks. Each row gives the median time, the speed-up over P = 1, each
rank's compute and waiting time, the transfer of one K/V block measured
alone, and what the scaling model of docs/distributed.md predicts from the
P = 1 compute rate and the measured transfer. Writes RESULTS.md and
results.json into --out, with the command line and the CPU.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ATTN_RUN = os.path.join(ROOT, "build", "bin", "attn-run")
FMA_PEAK = os.path.join(ROOT, "build", "bin", "attn-fma-peak")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "OMP_NUM_THREADS=1"]
sys.path.insert(0, os.path.join(ROOT, "bench"))
import ring_model  # noqa: E402


def ir(t, h, d, layout):
    ty = f"tensor<1x{h}x{t}x{d}xf32>"
    return (f"func.func @ring(%q: {ty}, %k: {ty}, %v: {ty}) -> {ty} {{\n"
            f"  %o = attn.sdpa %q, %k, %v {{causal = #attn.causal<top_left>, "
            f"attn.ring = #attn.ring<{layout}>}} : ({ty}, {ty}, {ty}) -> {ty}\n"
            f"  return %o : {ty}\n}}\n")


def run_json(cmd, env):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr.decode()}")
    return json.loads(p.stdout.decode())


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t", type=int, default=8192)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--layout", default="zigzag")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "ring"))
    a = ap.parse_args()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,vader,tcp", OMPI_MCA_btl_tcp_if_include="lo",
               OMPI_MCA_oob_tcp_if_include="lo", OMP_NUM_THREADS="1")
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ring.mlir")
        with open(path, "w") as f:
            f.write(ir(a.t, a.heads, a.d, a.layout))
        single = run_json([ATTN_RUN, path, "--pipeline=cpu", "--num-threads=1",
                           "--random-inputs", f"--repeat={a.repeat}", "--json", "--quiet"], env)
        rows = []
        for p in [int(x) for x in a.ranks.split(",")]:
            r = run_json(MPIRUN + ["-np", str(p), ATTN_RUN, path, "--pipeline=ring",
                                   "--random-inputs", f"--repeat={a.repeat}", "--json",
                                   "--quiet"], env)
            rows.append((p, r))
    # The one-thread FMA peak of the widest ISA, measured in this run: each
    # rank runs one thread, so a rank's rate is quoted against it.
    peak = json.loads(subprocess.run([FMA_PEAK, "--threads=1", "--seconds=1"],
                                     stdout=subprocess.PIPE, check=True).stdout.decode()
                      .strip().splitlines()[-1])
    base = next((r for p, r in rows if p == 1), None)
    base_ms = base["time_ms"] if base else single["median_ms"]
    # The model: per-step compute from the P = 1 rate, transfer measured.
    flops = 4.0 * a.t * a.t * a.d * a.heads * 0.5  # causal: half the pairs
    rate = flops / (base_ms * 1e-3)
    lines = [
        "# Ring attention over MPI: P ranks x 1 thread vs one rank",
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} vCPUs; Open MPI on loopback "
        "(shared memory). One run of:",
        "",
        "```",
        "python3 bench/ring_bench.py " + " ".join(sys.argv[1:]),
        "```",
        "",
        f"B 1, H {a.heads}, D {a.d}, T {a.t}, f32, causal top_left, layout {a.layout}; "
        f"median of {a.repeat} runs after one warm-up call; time = the slowest rank.",
        "",
        f"One-thread FMA peak of the widest ISA ({peak['isa']}, attn-fma-peak, this run): "
        f"{peak['gflops']:.1f} GFLOP/s.",
        "",
        f"Single node, fused CPU kernel, 1 thread (`--pipeline=cpu --num-threads=1`): "
        f"{single['median_ms']:.1f} ms ({single.get('effective_gflops', 0):.1f} GFLOP/s "
        f"effective, {100 * single.get('effective_gflops', 0) / peak['gflops']:.0f} % of the "
        "peak).",
        "",
        "| P | time ms | speed-up vs P=1 | effective GFLOP/s per rank (% of the 1-thread peak) | "
        "model ms | per rank: compute / waiting ms | transfer alone ms/step | bytes sent/rank |",
        "|---|---|---|---|---|---|---|---|",
    ]
    out = {"t": a.t, "heads": a.heads, "d": a.d, "layout": a.layout, "repeat": a.repeat,
           "cpu": cpu_model(), "fma_peak_1thread": peak, "single_ms": single["median_ms"],
           "ring": []}
    for p, r in rows:
        # Ranks beyond the cores share them: each computes at cores/P of the
        # one-rank rate.
        cores = os.cpu_count() or 1
        model = ring_model.step_model(a.t, p, a.heads, a.heads, a.d, 4, 0.5,
                                      rate * min(1.0, cores / p),
                                      bw=(r["bytes_sent_per_rank"] / max(p - 1, 1)) /
                                      max(r["transfer_ms_per_step"] * 1e-3, 1e-9)
                                      if p > 1 else 1e12, latency=0.0)
        per = "; ".join(f"{x['compute_ms']:.0f} / {x['wait_ms']:.1f}" for x in r["per_rank"])
        per_rank_rate = flops / (r["time_ms"] * 1e-3) / p / 1e9
        lines.append(f"| {p} | {r['time_ms']:.1f} | {base_ms / r['time_ms']:.2f}x | "
                     f"{per_rank_rate:.1f} ({100 * per_rank_rate / peak['gflops']:.0f} %) | "
                     f"{model['total_s'] * 1e3:.1f} | {per} | "
                     f"{r['transfer_ms_per_step']:.2f} | {r['bytes_sent_per_rank']} |")
        out["ring"].append({"ranks": p, "report": r, "model_ms": model["total_s"] * 1e3})
    lines += [
        "",
        "The model (docs/distributed.md): P steps of max(compute, transfer), compute per step "
        "4·(T/P)²·D·H·f / F with f = ½ (causal zigzag: every step computes half of its "
        f"block pairs) and F = {rate / 1e9:.1f} GFLOP/s (this run's P = 1 rate); transfer per "
        "step = the measured one. With more ranks than cores the ranks share them: the model "
        "gives each cores/P of F.",
    ]
    with open(os.path.join(a.out, "RESULTS.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(out, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
