#!/usr/bin/env python3
"""Same-run A/B comparison of two attn-run binaries on the fused CPU kernel.

    python3 bench/compare_builds.py --before OLD/bin --after build/bin \
        [--ts 2048] [--rounds 5] [--repeat 3] [--threads N] [PROGRAM.mlir ...]

For each T and causal/non-causal (the sdpa program of run_bench.py), or for
each PROGRAM.mlir given instead (random inputs, so static shapes; or
PROGRAM.mlir:INPUTS.npz, its arguments by name, as bench/serving_programs.py
writes them), alternates
before/after (ABAB...) for `rounds` rounds, each an attn-run --repeat run,
and prints the minimum and the median of the per-round medians and the
after/before ratio of the medians, with the 2-thread FMA peak measured
before and after by the `after` build's attn-fma-peak. The machine is
shared: only ratios within one run are meaningful.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import program  # noqa: E402  (the same sdpa program: B 1, H 12, D 64, f32)


def median_ms(bindir, path, repeat, threads=0):
    """PROGRAM.mlir (random inputs) or PROGRAM.mlir:INPUTS.npz."""
    path, _, npz = path.partition(":")
    inputs = ["--input=" + npz] if npz else ["--random-inputs", "--seed=1"]
    cmd = [os.path.join(bindir, "attn-run"), path, "--pipeline=cpu"] + inputs + [
           "--repeat=%d" % repeat, "--json", "--num-threads=%d" % threads]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return out["median_ms"]


def fma_peak(bindir):
    exe = os.path.join(bindir, "attn-fma-peak")
    if not os.path.exists(exe):
        return None
    out = subprocess.run([exe, "--threads=2"], check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--ts", default="2048")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="attn-run --num-threads (0: all cores)")
    ap.add_argument("programs", nargs="*", metavar="PROGRAM.mlir",
                    help="programs to time instead of the sdpa T grid")
    a = ap.parse_args()
    print("fma peak (start):", fma_peak(a.after))

    def compare(path):
        before, after = [], []
        for _ in range(a.rounds):
            before.append(median_ms(a.before, path, a.repeat, a.threads))
            after.append(median_ms(a.after, path, a.repeat, a.threads))
        mb, ma = statistics.median(before), statistics.median(after)
        return "%.2f | %.2f | %.2f | %.2f | %.3f |" % (min(before), mb, min(after), ma, ma / mb)

    head = "before min ms | before ms | after min ms | after ms | after / before |"
    if a.programs:
        print("| program | " + head)
        print("|---|---:|---:|---:|---:|---:|")
        for path in a.programs:
            print("| %s | %s" % (os.path.basename(path.partition(":")[0]), compare(path)))
            sys.stdout.flush()
    else:
        print("| T | causal | " + head)
        print("|---:|:---:|---:|---:|---:|---:|---:|")
        with tempfile.TemporaryDirectory() as tmp:
            for t in [int(x) for x in a.ts.split(",")]:
                for causal in (False, True):
                    path = os.path.join(tmp, "sdpa_%d_%d.mlir" % (t, causal))
                    open(path, "w").write(program(t, causal))
                    print("| %d | %s | %s" % (t, "yes" if causal else "no", compare(path)))
                    sys.stdout.flush()
    print("fma peak (end):", fma_peak(a.after))


if __name__ == "__main__":
    main()
