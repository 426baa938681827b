#!/usr/bin/env python3
"""The CPU suite of issue 13: attn-run --pipeline=cpu side by side with
PyTorch eager and NumPy, in one run and on the same input files.

  python3 bench/cpu_suite.py [--quick] [--out DIR] [--python /usr/bin/python3]
  python3 bench/cpu_suite.py --render-only --out DIR

Groups of rows, each beside an FMA peak of the widest ISA (attn-fma-peak,
measured at the start of the group):

  sdpa     B 1, H 12, D 64, f32, Tq = Tk = T, non-causal and top_left causal:
           attn-run, torch eager (softmax(q@k^T*scale [+mask]) @ v) and NumPy.
  half     the same shape, non-causal, in f16 and bf16 at --half-ts: attn-run
           and torch eager in that dtype, against the f32 row of the same T
           (time per FLOP of f32 / time per FLOP of this row).
  decode   GQA B 1, H 32, Hkv 8, D 128, Tq 1, Tk from --decode-tks, f32,
           bottom_right causal: attn-run, torch eager and NumPy with the
           query heads of a group stacked as rows (q viewed as
           [B,Hkv,G*Tq,D] against k [B,Hkv,Tk,D], no K/V copy); GB/s of K/V
           read against the read bandwidth (attn-fma-peak --bandwidth),
           measured beside each row over 1 GiB and over the K/V's own size.
  project  attn.project as in GPT-2 (x [1, T, 768] · Wᵀ + b, W [out, 768],
           out 768: one of the four projections, 2304: Q, K and V fused),
           T from --project-ts: attn-run against torch F.linear and NumPy.
  gpt2     the GPT-2 small block (examples/gpt2_small_mha.mlir; other T: the
           same file with T replaced): attn-run against torch
           nn.MultiheadAttention (causal bool mask, need_weights=False) and
           NumPy, threads equal.

The attn-run rows and the anchors read the same .npy files, written by
bench/anchors.py (seeded), and each anchor reports its max abs error against
attn-run's output. Every command is recorded, in run order, with its row.
The anchors run in --python (default /usr/bin/python3: Debian's numpy and
torch). Results: results.json and RESULTS.md in a fresh bench/runs/<time>/
unless --out names a folder. See bench/README.md.
"""
import argparse
import json
import math
import os
import platform
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_bench import ROOT, HelpFormatter, cpu_model, fresh_out_dir, run  # noqa: E402
from features_bench import sdpa_program  # noqa: E402

GPT2_EXAMPLE = "examples/gpt2_small_mha.mlir"
SDPA = dict(b=1, h=12, hkv=12, d=64)
DECODE = dict(b=1, h=32, hkv=8, tq=1, d=128)

FULL = dict(sdpa_ts="512,1024,2048,4096", half_ts="1024,2048",
            decode_tks="4096,16384,32768,65536", gpt2_ts="128,1024",
            project_ts="128,1024,2048", repeat=5, min_seconds=0.5,
            anchor_max_t=2048, peak_seconds=0.5, bandwidth_mib=1024)
QUICK = dict(sdpa_ts="64", half_ts="64", decode_tks="256,1024", gpt2_ts="32",
             project_ts="32", repeat=2, min_seconds=0.0,
             anchor_max_t=64, peak_seconds=0.1, bandwidth_mib=64)

# Issue 13's targets, checked on the rows that exist.
TARGETS = [
    ("sdpa f32 non-causal T 2048: ≥ 70 % of the widest-ISA peak", "sdpa_peak", 0.70),
    ("sdpa f32 non-causal T 2048: ≥ 5× PyTorch eager", "sdpa_torch", 5.0),
    ("decode Tk 32768: ≥ 70 % of the measured read bandwidth (1 GiB)", "decode_bw", 0.70),
    ("decode Tk 32768: ≥ 2.5× PyTorch eager, grouped heads", "decode_torch", 2.5),
    ("f16 sdpa T 2048: ≥ 80 % of the f32 time-per-FLOP", "f16", 0.80),
    ("bf16 sdpa T 2048: ≥ 80 % of the f32 time-per-FLOP", "bf16", 0.80),
    ("GPT-2 small block T 128: ≥ 3× nn.MultiheadAttention", "gpt2", 3.0),
    ("projections, GPT-2 sizes (every project row): ≥ 70 % of the widest-ISA peak, "
     "the slowest row", "project", 0.70),
]
PROJECT_IN, PROJECT_OUTS = 768, (768, 2304)
HALF_KINDS = ("bf16-dot", "f16", "amx-bf16")


def rel(path):
    """A path as the commands show it: relative to the repository root (the
    commands run there) when it lies inside it."""
    p = os.path.abspath(path)
    r = os.path.relpath(p, ROOT)
    return p if r.startswith("..") else r


def ints(text, flag):
    try:
        xs = [int(x) for x in text.split(",") if x]
    except ValueError:
        sys.exit("cpu_suite.py: %s: expected comma-separated integers, got %r" % (flag, text))
    if any(x < 1 for x in xs):
        sys.exit("cpu_suite.py: %s: values must be positive" % flag)
    return xs


class Suite:
    def __init__(self, args, out):
        self.a, self.out = args, out
        self.rows, self.commands = [], []
        self.threads = args.threads or os.cpu_count() or 1
        self.programs = os.path.join(out, "programs")
        self.inputs = os.path.join(out, "inputs")
        os.makedirs(self.programs, exist_ok=True)
        self.attn = rel(os.path.join(args.build, "bin", "attn-run"))
        self.fma = rel(os.path.join(args.build, "bin", "attn-fma-peak"))
        self.anchors = rel(os.path.join(HERE, "anchors.py"))
        self.local_peak = self.local_peak_command = None
        self.machine = {}

    def call(self, cmd):
        """Runs one command from the repository root and returns its JSON."""
        self.commands.append(" ".join(cmd))
        return json.loads(run(cmd))

    # -- the machine -------------------------------------------------------
    def peak(self, seconds, isa=None, threads=None, kind=None):
        cmd = [self.fma, "--threads=%d" % (threads or self.threads), "--seconds=%g" % seconds]
        if isa:
            cmd.append("--isa=" + isa)
        if kind:
            cmd.append("--kind=" + kind)
        r = self.call(cmd)
        r["command"] = " ".join(cmd)
        return r

    def bandwidth(self, mib):
        cmd = [self.fma, "--bandwidth=%d" % mib, "--threads=%d" % self.threads,
               "--seconds=%g" % self.a.peak_seconds]
        r = self.call(cmd)
        r["command"] = " ".join(cmd)
        return r

    def group_peak(self, label):
        p = self.peak(self.a.peak_seconds)
        self.local_peak = p["gflops"]
        self.local_peak_command = p["command"]
        print("-- %s: FMA peak %.1f GFLOP/s (%s, %d threads)"
              % (label, p["gflops"], p.get("isa", "?"), self.threads), flush=True)
        return p

    # -- the rows ----------------------------------------------------------
    def make_inputs(self, name, kind, **dims):
        d = os.path.join(self.inputs, name)
        cmd = [self.a.python, self.anchors, "inputs", kind, "--dir", rel(d), "--seed=1"]
        for k, v in dims.items():
            cmd.append("--%s=%s" % (k, v))
        self.call(cmd)
        return d

    def attn_row(self, group, program, in_dir, names, row):
        out_npy = os.path.join(in_dir, "attn_%s.npy" % row.get("variant", "out"))
        cmd = [self.attn, rel(program), "--pipeline=cpu", "--num-threads=%d" % self.threads,
               "--repeat=%d" % self.a.repeat, "--min-seconds=%g" % self.a.min_seconds,
               "--json", "--quiet",
               "--output=" + rel(out_npy)]
        if self.a.bf16_dot != "auto":
            cmd.append("--bf16-dot=%s" % ("true" if self.a.bf16_dot == "on" else "false"))
        if self.a.amx != "auto":
            cmd.append("--amx=%s" % ("true" if self.a.amx == "on" else "false"))
        cmd += ["--input=" + rel(os.path.join(in_dir, n + ".npy")) for n in names]
        r = self.call(cmd)
        row.update({"group": group, "impl": "attn-cpu", "command": " ".join(cmd),
                    "median_ms": r["median_ms"], "repeat": r["repeat"],
                    "flops": r.get("flops"), "effective_flops": r.get("effective_flops"),
                    "threads": r.get("threads"), "isa": r.get("isa"),
                    "vector_width": r.get("vector_width"), "bf16_dot": r.get("bf16_dot"),
                    "amx": r.get("amx"),
                    "llvm_cpu": r.get("cpu"), "unfused": r.get("unfused", []),
                    "extra_mib": max(0.0, r["run_peak_rss_mib"] - r["rss_before_run_mib"])})
        for k in ("cpu", "cpu_features", "isa", "vector_width", "threads"):
            self.machine.setdefault("attn_run_" + k, r.get(k))
        self.finish(row)
        return row, out_npy

    def anchor_rows(self, group, sub, in_dir, expect, impls, base, extra=()):
        cmd = [self.a.python, self.anchors, sub, "--dir", rel(in_dir), "--impl", ",".join(impls),
               "--repeat=%d" % self.a.repeat, "--threads=%d" % self.threads,
               "--min-seconds=%g" % self.a.min_seconds,
               "--max-seconds=%g" % self.a.anchor_max_seconds, "--expect", rel(expect)]
        cmd += list(extra)
        r = self.call(cmd)
        rows = []
        for impl in impls:
            got = r["impls"][impl]
            row = dict(base, group=group, impl=impl, command=" ".join(cmd))
            row.pop("variant", None)
            if "error" in got:
                row["error"] = got["error"]
                row["local_peak_gflops"] = self.local_peak
                row["peak_command"] = self.local_peak_command
                self.rows.append(row)
                print("   %-10s %-28s %s" % (impl, self.label(row), got["error"]), flush=True)
            else:
                row.update({k: got[k] for k in ("median_ms", "repeat", "max_abs_error",
                                                  "first_call_ms")})
                self.finish(row)
            rows.append(row)
        return rows

    def finish(self, row):
        row["local_peak_gflops"] = self.local_peak
        row["peak_command"] = self.local_peak_command
        # A bf16 row that multiplied on AMX tiles (tdpbf16ps) or on
        # vdpbf16ps: quoted against that instruction's peak, measured
        # beside it. (The prefill tile takes AMX over bf16-dot.)
        kind = None
        if row.get("dtype") == "bf16" and row.get("amx"):
            kind = "amx-bf16"
        elif row.get("dtype") == "bf16" and row.get("bf16_dot"):
            kind = "bf16-dot"
        if kind:
            p = self.peak(self.a.peak_seconds, kind=kind)
            row["local_peak_gflops"], row["peak_command"] = p["gflops"], p["command"]
            row["peak_kind"] = kind
        if row.get("median_ms") and row.get("effective_flops"):
            row["effective_gflops"] = row["effective_flops"] / (row["median_ms"] * 1e6)
            row["peak_fraction"] = row["effective_gflops"] / row["local_peak_gflops"]
        if row.get("kv_bytes") and row.get("median_ms"):
            row["kv_gbps"] = row["kv_bytes"] / (row["median_ms"] * 1e6)
            row["bandwidth_fraction"] = row["kv_gbps"] / row["bandwidth_gbps"]
            row["same_size_bandwidth_fraction"] = row["kv_gbps"] / row["same_size_bandwidth_gbps"]
        self.rows.append(row)
        extra = ""
        if row.get("kv_gbps"):
            extra = ", %.1f GB/s of K/V (%.0f%% of %.1f)" % (
                row["kv_gbps"], 100 * row["bandwidth_fraction"], row["bandwidth_gbps"])
        err = row.get("max_abs_error")
        if err is not None:
            extra += ", err %.2g" % err if isinstance(err, float) else ", err " + str(err)
        if row.get("peak_kind"):
            extra += ", of the %s peak (%.1f GFLOP/s)" % (row["peak_kind"],
                                                          row["local_peak_gflops"])
        if row.get("unfused"):
            extra += ", UNFUSED: " + "; ".join(row["unfused"])
        print("   %-10s %-28s %10.3f ms %8.1f GFLOP/s %5.1f%% of peak%s"
              % (row["impl"], self.label(row), row["median_ms"],
                 row.get("effective_gflops") or 0, 100 * (row.get("peak_fraction") or 0),
                 extra), flush=True)

    @staticmethod
    def label(row):
        if row["kind"] == "decode":
            return "decode Tk=%d" % row["Tk"]
        if row["kind"] == "gpt2":
            return "gpt2 T=%d" % row["T"]
        if row["kind"] == "project":
            return "project T=%d %dx%d" % (row["T"], row["In"], row["Out"])
        return "%s T=%d %s" % (row["dtype"], row["T"],
                               "non-causal" if row["causal"] == "none" else row["causal"])

    # -- the groups --------------------------------------------------------
    def sdpa_group(self, t, f32_causal, dtypes):
        self.group_peak("sdpa T=%d" % t)
        anchors = t <= self.a.anchor_max_t
        group = "sdpa T=%d" % t
        for dtype in ["f32"] + dtypes:
            d = self.make_inputs("sdpa_%s_T%d" % (dtype, t), "sdpa", b=SDPA["b"], h=SDPA["h"],
                                 hkv=SDPA["hkv"], tq=t, tk=t, d=SDPA["d"], dtype=dtype)
            for causal in (["none", "top_left"] if dtype == "f32" and f32_causal else ["none"]):
                prog = os.path.join(self.programs, "sdpa_%s_T%d_%s.mlir" % (dtype, t, causal))
                with open(prog, "w") as f:
                    f.write(sdpa_program(SDPA["b"], SDPA["h"], SDPA["hkv"], t, t, SDPA["d"],
                                         None if causal == "none" else causal, elt=dtype))
                base = {"kind": "sdpa" if dtype == "f32" else "half", "dtype": dtype, "T": t,
                        "causal": causal, "B": SDPA["b"], "H": SDPA["h"], "Hkv": SDPA["hkv"],
                        "D": SDPA["d"], "variant": causal}
                row, out_npy = self.attn_row(group, prog, d, ("q", "k", "v"), dict(base))
                if anchors:
                    impls = ["torch", "numpy"] if dtype == "f32" else ["torch"]
                    base.update(flops=row["flops"], effective_flops=row["effective_flops"])
                    self.anchor_rows(group, "sdpa", d, out_npy, impls, base,
                                     ["--causal", causal, "--dtype", dtype])
            self.drop(d)

    def decode_group(self, tk):
        self.group_peak("decode Tk=%d" % tk)
        kv_bytes = 2 * DECODE["b"] * DECODE["hkv"] * tk * DECODE["d"] * 4
        bw = self.bandwidth(self.a.bandwidth_mib)
        same = self.bandwidth(max(1, int(math.ceil(kv_bytes / 2**20))))
        print("   read bandwidth %.1f GB/s over %d MiB, %.1f GB/s over %d MiB (the K/V's size)"
              % (bw["gbps"], bw["mib"], same["gbps"], same["mib"]), flush=True)
        d = self.make_inputs("decode_Tk%d" % tk, "sdpa", tk=tk, dtype="f32", **DECODE)
        prog = os.path.join(self.programs, "decode_Tk%d.mlir" % tk)
        with open(prog, "w") as f:
            f.write(sdpa_program(DECODE["b"], DECODE["h"], DECODE["hkv"], DECODE["tq"], tk,
                                 DECODE["d"], "bottom_right"))
        base = {"kind": "decode", "dtype": "f32", "Tq": DECODE["tq"], "Tk": tk,
                "causal": "bottom_right", "B": DECODE["b"], "H": DECODE["h"],
                "Hkv": DECODE["hkv"], "D": DECODE["d"], "kv_bytes": kv_bytes,
                "bandwidth_gbps": bw["gbps"], "bandwidth_mib": bw["mib"],
                "bandwidth_command": bw["command"], "same_size_bandwidth_gbps": same["gbps"],
                "same_size_bandwidth_mib": same["mib"],
                "same_size_bandwidth_command": same["command"]}
        row, out_npy = self.attn_row("decode Tk=%d" % tk, prog, d, ("q", "k", "v"), dict(base))
        base.update(flops=row["flops"], effective_flops=row["effective_flops"])
        self.anchor_rows("decode Tk=%d" % tk, "sdpa", d, out_npy, ["torch", "numpy"], base,
                         ["--causal", "bottom_right", "--dtype", "f32"])
        self.drop(d)

    def gpt2_group(self, t):
        self.group_peak("gpt2 T=%d" % t)
        src = os.path.join(ROOT, GPT2_EXAMPLE)
        with open(src) as f:
            text = f.read()
        if "1x128x768" not in text:
            sys.exit("cpu_suite.py: %s no longer has the 1x128x768 input this suite "
                     "rewrites for other T" % GPT2_EXAMPLE)
        if t == 128:
            prog = src
        else:
            prog = os.path.join(self.programs, "gpt2_small_mha_T%d.mlir" % t)
            with open(prog, "w") as f:
                f.write(text.replace("1x128x768", "1x%dx768" % t)
                        .replace("T 128", "T %d (rewritten by bench/cpu_suite.py)" % t))
        d = self.make_inputs("gpt2_T%d" % t, "mha", t=t, e=768)
        names = ("x", "wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo")
        base = {"kind": "gpt2", "dtype": "f32", "T": t, "causal": "top_left", "B": 1,
                "H": 12, "E": 768}
        row, out_npy = self.attn_row("gpt2 T=%d" % t, prog, d, names, dict(base))
        base.update(flops=row["flops"], effective_flops=row["effective_flops"])
        self.anchor_rows("gpt2 T=%d" % t, "mha", d, out_npy, ["torch", "numpy"], base,
                         ["--heads", "12"])
        self.drop(d)

    def project_group(self, t):
        self.group_peak("project T=%d" % t)
        group = "project T=%d" % t
        for out in PROJECT_OUTS:
            d = self.make_inputs("project_T%d_%d" % (t, out), "project", t=t, e=PROJECT_IN,
                                 out=out)
            prog = os.path.join(self.programs, "project_T%d_%d.mlir" % (t, out))
            x, w, b = ("tensor<1x%dx%dxf32>" % (t, PROJECT_IN),
                       "tensor<%dx%dxf32>" % (out, PROJECT_IN), "tensor<%dxf32>" % out)
            y = "tensor<1x%dx%dxf32>" % (t, out)
            with open(prog, "w") as f:
                f.write("func.func @f(%%x: %s, %%w: %s, %%b: %s) -> %s {\n"
                        "  %%y = attn.project %%x, %%w, %%b : (%s, %s, %s) -> %s\n"
                        "  return %%y : %s\n}\n" % (x, w, b, y, x, w, b, y, y))
            base = {"kind": "project", "dtype": "f32", "T": t, "In": PROJECT_IN, "Out": out,
                    "variant": "out"}
            row, out_npy = self.attn_row(group, prog, d, ("x", "w", "b"), dict(base))
            base.update(flops=row["flops"], effective_flops=row["effective_flops"])
            self.anchor_rows(group, "project", d, out_npy, ["torch", "numpy"], base)
            self.drop(d)

    def drop(self, d):
        if not self.a.keep_inputs:
            shutil.rmtree(d, ignore_errors=True)


def parse_args():
    ap = argparse.ArgumentParser(
        description="attn-run --pipeline=cpu side by side with PyTorch eager and NumPy on "
                    "the same inputs: sdpa f32, f16/bf16, GQA decode and the GPT-2 small "
                    "block, with the widest-ISA FMA peak and the read bandwidth measured "
                    "in the same run (see bench/README.md).",
        formatter_class=HelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), metavar="DIR",
                    help="build folder whose bin/attn-run and bin/attn-fma-peak are run")
    ap.add_argument("--out", default=None, metavar="DIR",
                    help="folder for results.json and RESULTS.md (overwritten). Default: a "
                         "fresh folder bench/runs/<YYYYmmdd-HHMMSS>/")
    ap.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3")
                    else sys.executable, metavar="PY",
                    help="the Python (with numpy, and torch for the torch anchors) that runs "
                         "bench/anchors.py")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test with small sizes: " + ", ".join(
                        "--%s %s" % (k.replace("_", "-"), v) for k, v in QUICK.items())
                    + " (flags given explicitly win)")
    for k, help_ in (("sdpa_ts", "T of the f32 sdpa rows (B 1, H 12, D 64), causal and not"),
                     ("half_ts", "T of the f16 and bf16 rows (an f32 row is run at each)"),
                     ("decode_tks", "Tk of the decode rows (B 1, H 32, Hkv 8, D 128, Tq 1)"),
                     ("project_ts", "T of the projection rows (In 768, Out 768 and 2304)"),
                     ("gpt2_ts", "T of the GPT-2 small blocks (128: the example as is)")):
        ap.add_argument("--" + k.replace("_", "-"), default=None, metavar="N,N,...",
                        help="%s; '' for none. Default: %s (--quick: %s)" % (help_, FULL[k],
                                                                              QUICK[k]))
    ap.add_argument("--repeat", type=int, default=None, metavar="N",
                    help="timed calls per row, attn-run and anchors alike (median reported). "
                         "Default: %d (--quick: %d)" % (FULL["repeat"], QUICK["repeat"]))
    ap.add_argument("--min-seconds", type=float, default=None, metavar="S",
                    help="time more calls than --repeat where they add up to less than S "
                         "seconds, attn-run (--min-seconds) and anchors alike: a row of a "
                         "few milliseconds timed 5 times is at the mercy of one burst of a "
                         "shared machine's load. Default: %g (--quick: %g)"
                         % (FULL["min_seconds"], QUICK["min_seconds"]))
    ap.add_argument("--anchor-max-t", type=int, default=None, metavar="T",
                    help="run the sdpa anchors only up to this T (they materialise "
                         "[B,H,T,T] scores). Default: %d (--quick: %d)"
                         % (FULL["anchor_max_t"], QUICK["anchor_max_t"]))
    ap.add_argument("--anchor-max-seconds", type=float, default=120.0, metavar="S",
                    help="an anchor whose untimed call says its --repeat calls would take "
                         "longer than S times fewer calls (at least one; the row says how "
                         "many)")
    ap.add_argument("--peak-seconds", type=float, default=None, metavar="S",
                    help="seconds of each FMA peak and bandwidth measurement. Default: %g "
                         "(--quick: %g)" % (FULL["peak_seconds"], QUICK["peak_seconds"]))
    ap.add_argument("--bandwidth-mib", type=int, default=None, metavar="MIB",
                    help="buffer of the read-bandwidth measurement beside each decode row. "
                         "Default: %d (--quick: %d)" % (FULL["bandwidth_mib"],
                                                        QUICK["bandwidth_mib"]))
    ap.add_argument("--threads", type=int, default=0, metavar="N",
                    help="threads for attn-run (--num-threads), the anchors "
                         "(torch.set_num_threads, OMP/BLAS variables), the FMA peak and the "
                         "bandwidth; 0 = one per core")
    ap.add_argument("--bf16-dot", choices=("auto", "on", "off"), default="auto",
                    help="attn-run's bf16 path: auto (the host's choice), on (--bf16-dot: "
                         "AVX512-BF16 dot products; a bf16 row is then quoted against the "
                         "bf16-dot peak) or off (--bf16-dot=false: f32 FMAs)")
    ap.add_argument("--amx", choices=("auto", "on", "off"), default="auto",
                    help="attn-run's AMX path for bf16 prefill: auto (the host's choice), on "
                         "(--amx: rows quoted against the amx-bf16 peak) or off (--amx=false)")
    ap.add_argument("--keep-inputs", action="store_true",
                    help="keep the .npy inputs and attn-run outputs in OUT/inputs/ (they "
                         "are deleted after each group; decode Tk 65536 is 512 MiB)")
    ap.add_argument("--render-only", action="store_true",
                    help="run nothing: rewrite RESULTS.md in --out from its results.json")
    a = ap.parse_args()
    preset = QUICK if a.quick else FULL
    for k, v in preset.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    for k in ("sdpa_ts", "half_ts", "decode_tks", "project_ts", "gpt2_ts"):
        setattr(a, k, ints(getattr(a, k), "--" + k.replace("_", "-")))
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    if not a.min_seconds >= 0:
        ap.error("--min-seconds must be 0 or more")
    if a.threads < 0:
        ap.error("--threads must be 0 or positive")
    if a.render_only and not a.out:
        ap.error("--render-only needs --out DIR, the folder whose results.json to render")
    a.build = os.path.abspath(a.build)
    return a


def main():
    a = parse_args()
    if a.render_only:
        with open(os.path.join(a.out, "results.json")) as f:
            render(json.load(f), a.out, rendered_only=True)
        return
    out = os.path.abspath(a.out) if a.out else fresh_out_dir()
    os.makedirs(out, exist_ok=True)
    os.chdir(ROOT)  # every command runs from the repository root, as recorded
    s = Suite(a, out)
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    t0 = time.time()
    env_cmd = [a.python, s.anchors, "env", "--threads=%d" % s.threads]
    env = s.call(env_cmd)
    if env.get("blas_is_netlib_reference"):
        print("warning: numpy/torch use the netlib reference BLAS (%s): their f32 matmuls run "
              "at a few GFLOP/s; Debian's libopenblas0-pthread makes them ~10x faster"
              % ", ".join(env["blas"]), flush=True)
    sec = 2 * a.peak_seconds
    peaks = {"widest": s.peak(sec), "one_thread": s.peak(sec, threads=1)}
    if peaks["widest"].get("isa") == "avx512":
        peaks["avx2"] = s.peak(sec, isa="avx2")
    # The half-precision instructions' peaks, where the CPU has them (a
    # multiply-add is two flops in each, as for the f32 FMA).
    for kind in HALF_KINDS:
        p = s.peak(sec, kind=kind)
        if p.get("supported"):
            peaks[kind] = p
    bw = s.bandwidth(a.bandwidth_mib)
    print("FMA peak %.1f GFLOP/s (%s, %d threads)%s, %.1f on one thread; read bandwidth "
          "%.1f GB/s over %d MiB%s" % (
              peaks["widest"]["gflops"], peaks["widest"].get("isa", "?"), s.threads,
              ", %.1f with avx2" % peaks["avx2"]["gflops"] if "avx2" in peaks else "",
              peaks["one_thread"]["gflops"], bw["gbps"], bw["mib"], half_peaks_text(peaks)),
          flush=True)

    for t in sorted(set(a.sdpa_ts) | set(a.half_ts)):
        s.sdpa_group(t, t in a.sdpa_ts, ["f16", "bf16"] if t in a.half_ts else [])
    for tk in a.decode_tks:
        s.decode_group(tk)
    for t in a.project_ts:
        s.project_group(t)
    for t in a.gpt2_ts:
        s.gpt2_group(t)
    if not a.keep_inputs:
        shutil.rmtree(s.inputs, ignore_errors=True)

    result = {"suite": "bench/cpu_suite.py", "argv": sys.argv[1:], "started": started,
              "seconds": time.time() - t0, "host": platform.node(), "cpu_model": cpu_model(),
              "cores": os.cpu_count(), "threads": s.threads, "machine": s.machine,
              "fma_peaks": peaks, "bandwidth": bw, "anchor_env": env,
              "settings": {k: getattr(a, k) for k in ("sdpa_ts", "half_ts", "decode_tks",
                                                      "gpt2_ts", "project_ts", "repeat",
                                                      "min_seconds",
                                                      "anchor_max_t",
                                                      "anchor_max_seconds", "peak_seconds",
                                                      "bandwidth_mib")},
              "rows": s.rows, "commands": s.commands}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    render(result, out)
    print("took %.0f s" % result["seconds"])


def half_peaks_text(peaks):
    """'; half precision: bf16-dot X, f16 Y GFLOP/s' for the kinds measured."""
    got = ["%s %.1f" % (k, peaks[k]["gflops"]) for k in HALF_KINDS if k in peaks]
    return "; half precision: %s GFLOP/s" % ", ".join(got) if got else ""


# -- RESULTS.md ----------------------------------------------------------------
def timed_calls(settings):
    """How many calls a row times, in words (results.json from before
    --min-seconds have none)."""
    n, sec = settings["repeat"], settings.get("min_seconds") or 0
    if not sec:
        return "%d timed calls" % n
    return ("at least %d timed calls, more where %d would add up to less than %g s: as many "
            "as make %g s (each row's count is its \"repeat\" in results.json)"
            % (n, n, sec, sec))


def find(rows, **kv):
    for r in rows:
        if all(r.get(k) == v for k, v in kv.items()) and "error" not in r:
            return r
    return None


def fmt(x, spec="%.2f", none="–"):
    if isinstance(x, str):  # e.g. an anchor's "shape ... vs ..." instead of an error
        return x
    return none if x is None else spec % x


def ratio(a, b):
    """a's time over b's (how many times faster b is), or None."""
    if not a or not b or "median_ms" not in a or "median_ms" not in b:
        return None
    return a["median_ms"] / b["median_ms"]


def anchor_cell(rows, impl, **kv):
    r = find(rows, impl=impl, **kv)
    if r:
        return "%.2f" % r["median_ms"]
    for x in rows:
        if x.get("impl") == impl and all(x.get(k) == v for k, v in kv.items()) and "error" in x:
            return "fails¹"
    return "–"


def target_values(rows):
    v = {}
    s = find(rows, kind="sdpa", impl="attn-cpu", T=2048, causal="none")
    if s:
        v["sdpa_peak"] = s.get("peak_fraction")
        v["sdpa_torch"] = ratio(find(rows, kind="sdpa", impl="torch", T=2048, causal="none"), s)
    dcd = find(rows, kind="decode", impl="attn-cpu", Tk=32768)
    if dcd:
        v["decode_bw"] = dcd.get("bandwidth_fraction")
        v["decode_torch"] = ratio(find(rows, kind="decode", impl="torch", Tk=32768), dcd)
    for dt in ("f16", "bf16"):
        h = find(rows, kind="half", impl="attn-cpu", T=2048, dtype=dt)
        f = find(rows, kind="sdpa", impl="attn-cpu", T=2048, causal="none")
        if h and f:
            v[dt] = ratio(f, h)
    g = find(rows, kind="gpt2", impl="attn-cpu", T=128)
    if g:
        v["gpt2"] = ratio(find(rows, kind="gpt2", impl="torch", T=128), g)
    pr = [r for r in rows if r["kind"] == "project" and r["impl"] == "attn-cpu"
          and r.get("peak_fraction")]
    if pr:
        v["project"] = min(r["peak_fraction"] for r in pr)
    return v


def svg_speedups(res, path):
    """speedup.svg: each attn-run row's speed-up over its torch anchor (log
    axis), with issue 13's target for that kind of row as a tick."""
    rows = res["rows"]
    bars = []
    goals = {"sdpa": 5.0, "decode": 2.5, "gpt2": 3.0}
    for r in rows:
        if r["impl"] != "attn-cpu":
            continue
        key = {k: r.get(k) for k in ("kind", "T", "Tk", "causal", "dtype")}
        t = find(rows, impl="torch", **key)
        if t:
            bars.append((Suite.label(r), ratio(t, r), goals.get(r["kind"])))
    if not bars:
        return False
    w, bh, ml, mr, mt = 760, 20, 190, 60, 50
    h = mt + bh * len(bars) + 40
    vals = [b[1] for b in bars] + [g for _, _, g in bars if g]
    lo = min(0.5, min(vals) / 1.2)
    hi = max(vals) * 1.2

    def x(v):
        return ml + (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) * (w - ml - mr)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="14">attn-run --pipeline=cpu: speed-up over PyTorch '
           'eager, same inputs, same run (log scale)</text>',
           '<text x="10" y="36" font-size="11">%s, %d threads; black tick: issue 13 target; '
           'grey line: 1× (as fast as torch)</text>' % (res["cpu_model"], res["threads"])]
    for i, (label, v, goal) in enumerate(bars):
        y = mt + i * bh
        color = "#2ca02c" if goal and v >= goal else "#1f77b4"
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (ml - 6, y + 14, label))
        out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>'
                   % (x(lo), y + 3, max(x(v) - x(lo), 1), bh - 6, color))
        out.append('<text x="%.1f" y="%d">%.2f×</text>' % (x(v) + 4, y + 14, v))
        if goal:
            out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="black" '
                       'stroke-width="2"/>' % (x(goal), x(goal), y + 1, y + bh - 1))
    out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#888"/>'
               % (x(1), x(1), mt, mt + bh * len(bars)))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True


def render(res, out, rendered_only=False):
    rows = res["rows"]
    m, env, pk = res.get("machine", {}), res.get("anchor_env", {}), res["fma_peaks"]
    isa = m.get("attn_run_isa") or pk["widest"].get("isa", "?")
    lines = [
        "# CPU suite: attn-run side by side with PyTorch and NumPy", "",
        "Measured by `python3 bench/cpu_suite.py %s` (%.0f s), started %s, on **%s** "
        "(LLVM: `%s`, widest vector ISA **%s**, %s f32 lanes in the fused kernel), %s cores, "
        "%d threads for everything. Host %s." % (
            " ".join(res["argv"]), res["seconds"], res["started"], res["cpu_model"],
            m.get("attn_run_cpu", "?"), isa, m.get("attn_run_vector_width", "?"),
            res["cores"], res["threads"], res["host"]),
        "",
        "Machine, measured at the start: FMA peak **%.1f GFLOP/s** (%s, %d threads)%s, "
        "%.1f GFLOP/s on one thread; read bandwidth **%.1f GB/s** over %d MiB "
        "(`attn-fma-peak --bandwidth`)%s. Each group of rows is measured beside its own FMA "
        "peak of the widest ISA (column \"peak\"), and each decode row beside its own "
        "bandwidth figures: the machine is shared, ratios within a group are what count." % (
            pk["widest"]["gflops"], pk["widest"].get("isa", "?"), res["threads"],
            " (%.1f with avx2/ymm)" % pk["avx2"]["gflops"] if "avx2" in pk else "",
            pk["one_thread"]["gflops"], res["bandwidth"]["gbps"], res["bandwidth"]["mib"],
            half_peaks_text(pk) and " and the half-precision instructions' peaks (`attn-fma-peak "
            "--kind`: %s)" % half_peaks_text(pk)[len("; half precision: "):]),
        "",
        "Anchors: Python %s, NumPy %s, PyTorch %s (threads %s); BLAS loaded: %s.%s" % (
            env.get("python_version", "?"), env.get("numpy", "?"), env.get("torch") or "none",
            env.get("torch_threads", "?"), ", ".join("`%s`" % b for b in env.get("blas", []))
            or "?",
            " **The netlib reference BLAS**: NumPy's and PyTorch's f32 matmuls run at a few "
            "GFLOP/s here, so the f32 anchors are far slower than with OpenBLAS "
            "(`libopenblas0-pthread`); PyTorch's bf16 matmuls go through oneDNN and are "
            "not affected." if env.get("blas_is_netlib_reference") else ""),
        "",
        "Every row's time is the median of %s after one untimed call, "
        "attn-run and anchors alike (attn-run's includes binding the inputs and copying the "
        "result out). GFLOP/s are the effective FLOPs of attn-run (the visible (i, j) pairs "
        "under a causal mask; for the GPT-2 block the four projections too) over the median, "
        "the same count for the anchors of a row. \"err\" is an anchor's max abs error "
        "against attn-run's output on the same inputs." % timed_calls(res["settings"]), ""]

    if svg_speedups(res, os.path.join(out, "speedup.svg")):
        lines += ["![speed-up over PyTorch eager](speedup.svg)", ""]
    tv = target_values(rows)
    if tv:
        lines += ["## Issue 13 targets", "", "| target | this run | met |", "|---|---:|:---:|"]
        for text, key, goal in TARGETS:
            if key in tv and tv[key] is not None:
                val = tv[key]
                shown = "%.0f %%" % (100 * val) if goal < 1 else "%.2f×" % val
                lines.append("| %s | %s | %s |" % (text, shown, "yes" if val >= goal else "no"))
        lines.append("")

    sd = [r for r in rows if r["kind"] == "sdpa"]
    if sd:
        lines += ["## sdpa f32 (B 1, H 12, D 64, Tq = Tk = T)", "",
                  "| T | causal | attn ms | GFLOP/s | peak | % of peak | torch ms | numpy ms "
                  "| vs torch | vs numpy | err torch | extra MiB |",
                  "|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in [x for x in sd if x["impl"] == "attn-cpu"]:
            key = dict(kind="sdpa", T=r["T"], causal=r["causal"])
            tr, nr = find(rows, impl="torch", **key), find(rows, impl="numpy", **key)
            lines.append("| %d | %s | %.2f | %.1f | %.0f | %.0f %% | %s | %s | %s | %s | %s | "
                         "%.1f |" % (
                             r["T"], "no" if r["causal"] == "none" else r["causal"],
                             r["median_ms"], r["effective_gflops"], r["local_peak_gflops"],
                             100 * r["peak_fraction"], anchor_cell(rows, "torch", **key),
                             anchor_cell(rows, "numpy", **key),
                             fmt(ratio(tr, r), "%.1f×"), fmt(ratio(nr, r), "%.1f×"),
                             fmt(tr and tr.get("max_abs_error"), "%.1e"), r["extra_mib"]))
        lines.append("")

    hf = [r for r in rows if r["kind"] == "half" and r["impl"] == "attn-cpu"]
    if hf:
        lines += ["## f16 and bf16 sdpa (B 1, H 12, D 64, non-causal)", "",
                  "\"f32 / this\": the f32 row's time per FLOP over this row's (same T, same "
                  "group; ≥ 80 % is issue 13's target). \"% of peak\": of the f32 FMA peak, or, "
                  "for a row marked *dot* (bf16 on `vdpbf16ps`, `--bf16-dot`) or *amx* "
                  "(bf16 on AMX tiles, `--amx`), of that instruction's peak measured "
                  "beside the row.", "",
                  "| T | dtype | attn ms | GFLOP/s | % of peak | f32 ms | f32 / this "
                  "| torch ms (same dtype) | vs torch | err torch |",
                  "|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in hf:
            f = find(rows, kind="sdpa", impl="attn-cpu", T=r["T"], causal="none")
            tr = find(rows, kind="half", impl="torch", T=r["T"], dtype=r["dtype"])
            lines.append("| %d | %s | %.2f | %.1f | %.0f %% | %s | %s | %s | %s | %s |" % (
                r["T"], r["dtype"] + {"bf16-dot": " *dot*", "amx-bf16": " *amx*"}.get(
                    r.get("peak_kind"), ""),
                r["median_ms"], r["effective_gflops"],
                100 * r["peak_fraction"], fmt(f and f["median_ms"]),
                fmt(ratio(f, r) and 100 * ratio(f, r), "%.0f %%"),
                anchor_cell(rows, "torch", kind="half", T=r["T"], dtype=r["dtype"]),
                fmt(ratio(tr, r), "%.1f×"), fmt(tr and tr.get("max_abs_error"), "%.1e")))
        lines.append("")

    dc = [r for r in rows if r["kind"] == "decode" and r["impl"] == "attn-cpu"]
    if dc:
        lines += ["## GQA decode (B 1, H 32, Hkv 8, D 128, Tq 1, f32, bottom_right causal)", "",
                  "K/V read once per call: 2·Hkv·Tk·D·4 bytes. \"bw\": the read bandwidth "
                  "measured beside the row over %d MiB (by default 1 GiB, more than the "
                  "caches of the machines this project runs on: issue 13's roofline) and "
                  "over the K/V's own size (which repeated calls may find in cache). Anchors: the "
                  "query heads of a group stacked as rows, q viewed as [B,Hkv,G·Tq,D] "
                  "against k [B,Hkv,Tk,D], no K/V copy." % res["settings"]["bandwidth_mib"], "",
                  "| Tk | K/V MB | attn ms | GB/s | bw | % of bw | bw, K/V size | % of it "
                  "| torch ms | numpy ms | vs torch | vs numpy | torch GB/s | err torch |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in dc:
            key = dict(kind="decode", Tk=r["Tk"])
            tr, nr = find(rows, impl="torch", **key), find(rows, impl="numpy", **key)
            lines.append("| %d | %.0f | %.3f | %.1f | %.1f | %.0f %% | %.1f | %.0f %% | %s | %s "
                         "| %s | %s | %s | %s |" % (
                             r["Tk"], r["kv_bytes"] / 1e6, r["median_ms"], r["kv_gbps"],
                             r["bandwidth_gbps"], 100 * r["bandwidth_fraction"],
                             r["same_size_bandwidth_gbps"],
                             100 * r["same_size_bandwidth_fraction"],
                             anchor_cell(rows, "torch", **key), anchor_cell(rows, "numpy", **key),
                             fmt(ratio(tr, r), "%.1f×"), fmt(ratio(nr, r), "%.1f×"),
                             fmt(tr and tr.get("kv_gbps"), "%.1f"),
                             fmt(tr and tr.get("max_abs_error"), "%.1e")))
        lines.append("")

    pj = [r for r in rows if r["kind"] == "project" and r["impl"] == "attn-cpu"]
    if pj:
        lines += ["## Projections (attn.project, GPT-2 sizes, f32, with bias)", "",
                  "y = x · Wᵀ + b, x [1, T, In], W [Out, In] (out_in, nn.Linear's layout): "
                  "Out 768 is one of GPT-2's four projections, 2304 its fused Q/K/V. torch: "
                  "`F.linear`; NumPy: `x @ W.T + b` (W.T made contiguous once). attn-run's "
                  "time includes packing W into panels, which every call does.", "",
                  "| T | In × Out | attn ms | GFLOP/s | peak | % of peak | torch ms | numpy ms "
                  "| vs torch | vs numpy | err torch |",
                  "|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in pj:
            key = dict(kind="project", T=r["T"], Out=r["Out"])
            tr, nr = find(rows, impl="torch", **key), find(rows, impl="numpy", **key)
            lines.append("| %d | %d × %d | %.3f | %.1f | %.0f | %.0f %% | %s | %s | %s | %s "
                         "| %s |" % (
                             r["T"], r["In"], r["Out"], r["median_ms"], r["effective_gflops"],
                             r["local_peak_gflops"], 100 * r["peak_fraction"],
                             anchor_cell(rows, "torch", **key), anchor_cell(rows, "numpy", **key),
                             fmt(ratio(tr, r), "%.1f×"), fmt(ratio(nr, r), "%.1f×"),
                             fmt(tr and tr.get("max_abs_error"), "%.1e")))
        lines.append("")

    gp = [r for r in rows if r["kind"] == "gpt2" and r["impl"] == "attn-cpu"]
    if gp:
        lines += ["## GPT-2 small block (d_model 768, 12 heads, causal, biases; `%s`)"
                  % GPT2_EXAMPLE, "",
                  "GFLOP/s: the four 768×768 projections and the causal attention (effective "
                  "count). torch: `nn.MultiheadAttention(768, 12, batch_first=True)`, bool "
                  "causal `attn_mask`, `need_weights=False`, eval, no_grad, "
                  "`torch.set_num_threads(%d)`." % res["threads"], "",
                  "| T | attn ms | GFLOP/s | % of peak | torch MHA ms | numpy ms | vs torch "
                  "| vs numpy | err torch |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in gp:
            key = dict(kind="gpt2", T=r["T"])
            tr, nr = find(rows, impl="torch", **key), find(rows, impl="numpy", **key)
            lines.append("| %d | %.3f | %.1f | %.0f %% | %s | %s | %s | %s | %s |" % (
                r["T"], r["median_ms"], r["effective_gflops"], 100 * r["peak_fraction"],
                anchor_cell(rows, "torch", **key), anchor_cell(rows, "numpy", **key),
                fmt(ratio(tr, r), "%.1f×"), fmt(ratio(nr, r), "%.1f×"),
                fmt(tr and tr.get("max_abs_error"), "%.1e")))
        lines.append("")

    unfused = [r for r in rows if r.get("unfused")]
    if unfused:
        lines += ["**Not fused** (attn-run's `unfused`: these rows took the reference route "
                  "for some ops): %s." % "; ".join("%s: %s" % (Suite.label(r), ", ".join(
                      r["unfused"])) for r in unfused), ""]
    errs = [r for r in rows if "error" in r]
    if errs:
        lines += ["¹ Anchors that could not run:", ""]
        lines += ["- %s %s: %s" % (r["impl"], Suite.label(r), r["error"]) for r in errs]
        lines.append("")
    short = [r for r in rows if r.get("repeat") is not None
             and r["repeat"] < res["settings"]["repeat"]]
    if short:
        lines += ["Rows timed fewer times than --repeat (--anchor-max-seconds %g): %s." % (
            res["settings"]["anchor_max_seconds"],
            "; ".join("%s %s: %d" % (r["impl"], Suite.label(r), r["repeat"]) for r in short)),
            ""]
    lines += ["## Commands", "",
              "Run from the repository root, in this order (the FMA peaks, bandwidths and input "
              "files of each group before its rows; `bench/anchors.py inputs` wrote the .npy "
              "files the rows read, deleted after each group unless `--keep-inputs`; the "
              "generated programs are in `programs/` beside this page):", "", "```"]
    lines += res["commands"] + ["```", ""]
    with open(os.path.join(out, "RESULTS.md"), "w") as f:
        f.write("\n".join(lines))
    print("wrote %s: %sRESULTS.md, speedup.svg" % (out, "" if rendered_only else "results.json, "))


if __name__ == "__main__":
    main()
