#!/usr/bin/env python3
"""Keys prepacked at run time for dynamic shapes (docs/cpu.md, *Prefill
packing*): the sdpa program of run_bench.py (B 1, H 12, D 64, f32) written
with B, Tq and Tk dynamic, run by attn-run at each T with
--prepack-limit-mib=0 (each Q tile packs its own keys: what dynamic shapes
got before) and with the default limit (prepacked at run time), and the
static program at the same T (prepacked at compile time), alternating in
each round. Prints the median of the rounds' medians and the ratios.

    python3 bench/prepack_dynamic_bench.py [--build build] [--ts 256,512,1024,2048,4096]
        [--rounds 7] [--repeat 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import B, D, H, program  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def dynamic_program(causal):
    ty = "tensor<?x%dx?x%dxf32>" % (H, D)
    attr = " {causal = #attn.causal<top_left>}" if causal else ""
    return ("func.func @sdpa(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
            "  %%o = attn.sdpa %%q, %%k, %%v%s : (%s, %s, %s) -> %s\n"
            "  return %%o : %s\n}\n" % (ty, ty, ty, ty, attr, ty, ty, ty, ty, ty))


def median_ms(attn_run, path, npz, repeat, extra):
    cmd = [attn_run, path, "--pipeline=cpu", "--input=" + npz, "--repeat=%d" % repeat,
           "--json", "--quiet"] + extra
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)[
        "median_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ts", default="256,512,1024,2048,4096")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    attn_run = os.path.join(a.build, "bin", "attn-run")
    tmp = tempfile.mkdtemp()
    rng = np.random.default_rng(1)
    print("B %d, H %d, D %d, f32; %d rounds of attn-run --repeat=%d, medians (ms)"
          % (B, H, D, a.rounds, a.repeat))
    print()
    print("| T | causal | static | dynamic, per tile (limit 0) | dynamic, prepacked at run time "
          "| run time / per tile | run time / static |")
    print("|---|---|---|---|---|---|---|")
    for t in [int(x) for x in a.ts.split(",")]:
        npz = os.path.join(tmp, "in%d.npz" % t)
        np.savez(npz, **{n: rng.standard_normal((B, H, t, D), dtype=np.float32)
                         for n in ("q", "k", "v")})
        for causal in (False, True):
            paths = {}
            for kind, text in (("static", program(t, causal)), ("dynamic", dynamic_program(causal))):
                paths[kind] = os.path.join(tmp, "%s_%d_%d.mlir" % (kind, t, causal))
                with open(paths[kind], "w") as f:
                    f.write(text)
            runs = {"static": (paths["static"], []),
                    "tile": (paths["dynamic"], ["--prepack-limit-mib=0"]),
                    "runtime": (paths["dynamic"], [])}
            res = {k: [] for k in runs}
            for _ in range(a.rounds):
                for k, (path, extra) in runs.items():
                    res[k].append(median_ms(attn_run, path, npz, a.repeat, extra))
            m = {k: statistics.median(v) for k, v in res.items()}
            print("| %d | %s | %.2f | %.2f | %.2f | %.3f | %.3f |"
                  % (t, "yes" if causal else "no", m["static"], m["tile"], m["runtime"],
                     m["runtime"] / m["tile"], m["runtime"] / m["static"]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
