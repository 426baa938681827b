#!/usr/bin/env python3
"""What a ring costs to compile, against the same sdpa on one node, in one run.

    python3 bench/ring_compile.py [--bin build/bin] [--before OLD/bin]
        [--ranks 2,4] [--rounds 5] [--run-rounds 0] [FILE.mlir ...]

For each FILE (default: test/Aot/Inputs/ring_sdpa.mlir and
examples/ring_causal.mlir, both causal zigzag rings):

  (a) bytes of LLVM-dialect IR and attn-opt time (best of --rounds) of
      `attn-opt FILE --attn-ring-pipeline=ranks=P` against
      `attn-opt FILE --attn-cpu-pipeline` (the same sdpa on one node: the
      cpu pipeline ignores attn.ring), and the ratio;
  (b) the whole compile to an object, `attn-aot FILE --pipeline=ring
      --ranks=P` against `--pipeline=cpu` (median of --rounds, ring and
      single node alternating), and the ratio;
  (c) with --run-rounds N and --before, the ring's run time under mpirun
      (one thread per rank, `attn-run --pipeline=ring --random-inputs
      --repeat=5`, the slowest rank's median), before and after
      alternating for N rounds, and the after/before ratio of the medians.

With --before, (a) and (b) are also given for that build's binaries. The
machine is shared: only ratios measured in one run are meaningful.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = [os.path.join(ROOT, "test", "Aot", "Inputs", "ring_sdpa.mlir"),
         os.path.join(ROOT, "examples", "ring_causal.mlir")]
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "OMP_NUM_THREADS=1"]


def timed(cmd, env=None):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    return time.perf_counter() - t


def opt_bytes(bindir, path, pipeline, rounds, tmp):
    out = os.path.join(tmp, "out.mlir")
    best = min(timed([os.path.join(bindir, "attn-opt"), path, pipeline, "-o", out])
               for _ in range(rounds))
    return os.path.getsize(out), best


def aot_times(bindir, path, ranks, rounds, tmp):
    """Median attn-aot seconds for the ring and the single node, alternating."""
    ring, single = [], []
    aot = os.path.join(bindir, "attn-aot")
    for _ in range(rounds):
        for dst, args in ((ring, ["--pipeline=ring", f"--ranks={ranks}"]),
                          (single, ["--pipeline=cpu"])):
            d = os.path.join(tmp, "aot")
            shutil.rmtree(d, ignore_errors=True)
            dst.append(timed([aot, path, *args, "-o", d]))
    return statistics.median(ring), statistics.median(single)


def ring_run_ms(bindir, path, ranks):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(MPIRUN + ["-np", str(ranks), os.path.join(bindir, "attn-run"), path,
                                 "--pipeline=ring", "--random-inputs", "--repeat=5"],
                       check=True, capture_output=True, text=True, env=env)
    times = [float(m) for m in re.findall(r"median of \d+ runs: ([0-9.]+) ms", r.stdout + r.stderr)]
    if not times:
        sys.exit("no 'median ... ms' in attn-run's output:\n" + r.stdout + r.stderr)
    return max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", default=FILES)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--before", help="another build's bin/ to compare against")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--run-rounds", type=int, default=0)
    a = ap.parse_args()
    ranks = [int(p) for p in a.ranks.split(",")]
    builds = [("after", a.bin)] + ([("before", a.before)] if a.before else [])
    print("command:", " ".join(sys.argv))
    with tempfile.TemporaryDirectory() as tmp:
        for path in a.files:
            name = os.path.basename(path)
            for label, bindir in builds:
                one, one_t = opt_bytes(bindir, path, "--attn-cpu-pipeline", a.rounds, tmp)
                print(f"{name} [{label}] one node: {one:,} B, attn-opt {one_t:.2f} s")
                for p in ranks:
                    n, t = opt_bytes(bindir, path, f"--attn-ring-pipeline=ranks={p}", a.rounds, tmp)
                    ring_s, single_s = aot_times(bindir, path, p, a.rounds, tmp)
                    print(f"  P = {p}: {n:,} B ({n / one:.2f}x), attn-opt {t:.2f} s; "
                          f"attn-aot ring {ring_s:.2f} s vs one node {single_s:.2f} s "
                          f"({ring_s / single_s:.2f}x)")
            if a.run_rounds and a.before:
                for p in ranks:
                    after, before = [], []
                    for _ in range(a.run_rounds):
                        after.append(ring_run_ms(a.bin, path, p))
                        before.append(ring_run_ms(a.before, path, p))
                    ma, mb = statistics.median(after), statistics.median(before)
                    print(f"  run P = {p}: before {' / '.join(f'{x:.2f}' for x in before)} ms, "
                          f"after {' / '.join(f'{x:.2f}' for x in after)} ms; "
                          f"after/before of the medians {ma / mb:.3f}")


if __name__ == "__main__":
    main()
