#!/usr/bin/env python3
"""PyTorch eager and NumPy anchors for bench/cpu_suite.py, and the input
files that the suite's attn-run rows and these anchors share.

Run it with a Python that has numpy (and torch, for the torch anchors), e.g.
Debian's /usr/bin/python3 with python3-numpy and python3-torch:

  anchors.py env --threads N
      JSON: versions, the BLAS/LAPACK libraries that numpy and torch loaded
      (read from /proc/self/maps after one matmul in each), torch's threads.
  anchors.py inputs sdpa --dir DIR --b B --h H --hkv HKV --tq TQ --tk TK --d D
                         --dtype f32|f16|bf16 [--seed S]
      q.npy [B,H,TQ,D], k.npy and v.npy [B,HKV,TK,D], uniform in [-1, 1)
      (f16: float16 files; bf16: float32 files holding bf16 values, rounded
      to nearest even, which attn-run takes for a bf16 argument exactly).
  anchors.py inputs mha --dir DIR --t T --e E [--seed S]
      x.npy [1,T,E]; wq, wk, wv, wo [E,E] (nn.Linear layout) uniform in
      [-1, 1)/sqrt(E); bq, bk, bv, bo [E] uniform in [-0.1, 0.1).
  anchors.py sdpa --dir DIR --impl torch,numpy --causal none|top_left|bottom_right
                  --dtype f32|f16|bf16 --repeat N --threads N [--expect OUT.npy]
      softmax(q @ k^T * D^-0.5 [+ causal mask]) @ v in plain eager ops (torch
      1.13 has no scaled_dot_product_attention). With H > HKV the heads of a
      group are stacked as rows against their shared K/V without copying it:
      q [B,H,TQ,D] viewed as [B,HKV,(H/HKV)*TQ,D] (query head h uses K/V head
      h // (H/HKV), as attn.sdpa does).
  anchors.py mha --dir DIR --heads H --impl torch,numpy --repeat N --threads N
                 [--expect OUT.npy]
      torch: nn.MultiheadAttention(E, H, batch_first=True) with the files'
      weights, causal bool attn_mask, need_weights=False, eval, no_grad;
      numpy: the same four projections and attention in NumPy.

Timing: one untimed call, then N timed calls (time.perf_counter around one
call), the median reported -- attn-run --repeat's rule. If the untimed call
shows that N calls would take more than --max-seconds, fewer are timed (at
least one); if it shows that they would take less than --min-seconds
(default 0), more are timed, as many as add up to it (attn-run
--min-seconds's rule, estimated from the untimed call). "repeat" says how
many. Inputs are loaded and converted to the
dtype before timing; a precomputed causal mask is applied inside the timed
call. --expect: the max abs error of the anchor's output against that file
(attn-run's output on the same inputs), in float64. Every command prints one
JSON object; a failing anchor (e.g. torch's f16 matmul on CPU) is reported
as {"error": ...} for that impl, not as a failed command.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time


def set_threads(n):
    """Before numpy/torch are imported: their BLAS and OpenMP pools."""
    if n > 0:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS"):
            os.environ[var] = str(n)


def loaded_libraries(words=("blas", "lapack", "mkl", "blis", "dnnl", "gomp", "omp")):
    libs = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and ".so" in parts[-1]:
                    path = parts[-1]
                    name = os.path.basename(path).lower()
                    if any(w in name for w in words):
                        real = os.path.realpath(path)
                        entry = path if real == path else "%s -> %s" % (path, real)
                        if entry not in libs:
                            libs.append(entry)
    except OSError:
        pass
    return libs


def cmd_env(a):
    import numpy as np
    res = {"python": sys.executable, "python_version": sys.version.split()[0],
           "numpy": np.__version__}
    x = np.ones((64, 64), np.float32)
    (x @ x).sum()
    res["libraries_after_numpy"] = loaded_libraries()
    try:
        import torch
        res["torch"] = torch.__version__
        if a.threads > 0:
            torch.set_num_threads(a.threads)
        res["torch_threads"] = torch.get_num_threads()
        t = torch.ones(64, 64)
        (t @ t).sum()
        res["torch_parallel_info"] = torch.__config__.parallel_info().strip().splitlines()
    except Exception as e:  # noqa: BLE001 (report whatever went wrong)
        res["torch"] = None
        res["torch_error"] = "%s: %s" % (type(e).__name__, e)
    res["libraries"] = loaded_libraries()
    blas = [l for l in res["libraries"] if "blas" in l.lower() or "blis" in l.lower()
            or "mkl" in l.lower()]
    res["blas"] = blas
    # Debian's reference BLAS (libblas3, netlib) lives in .../blas/; OpenBLAS
    # in .../openblas-pthread/ (libopenblas0-pthread) or .../openblas-openmp/.
    res["blas_is_netlib_reference"] = any("/blas/libblas" in l and "openblas" not in l
                                          for l in blas)
    print(json.dumps(res))


def to_bf16_values(np, x):
    """float32 array -> float32 array of the nearest bf16 values (ties to even)."""
    bits = x.astype(np.float32).view(np.uint32)
    bits = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) \
        & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def cmd_inputs(a):
    import numpy as np
    os.makedirs(a.dir, exist_ok=True)
    rng = np.random.default_rng(a.seed)

    def uniform(shape, lo=-1.0, hi=1.0):
        return rng.uniform(lo, hi, size=shape).astype(np.float32)

    files = []
    if a.kind == "sdpa":
        shapes = {"q": (a.b, a.h, a.tq, a.d), "k": (a.b, a.hkv, a.tk, a.d),
                  "v": (a.b, a.hkv, a.tk, a.d)}
        for name, shape in shapes.items():
            x = uniform(shape)
            if a.dtype == "f16":
                x = x.astype(np.float16)
            elif a.dtype == "bf16":
                x = to_bf16_values(np, x)
            path = os.path.join(a.dir, name + ".npy")
            np.save(path, x)
            files.append(path)
    elif a.kind == "project":
        # y = x · Wᵀ + b, W [out, in] (nn.Linear's layout), GPT-2's scale.
        arrays = [("x", uniform((1, a.t, a.e))),
                  ("w", uniform((a.out, a.e)) / np.float32(math.sqrt(a.e))),
                  ("b", uniform((a.out,), -0.1, 0.1))]
        for name, x in arrays:
            path = os.path.join(a.dir, name + ".npy")
            np.save(path, x)
            files.append(path)
    else:
        e = a.e
        arrays = [("x", uniform((1, a.t, e)))]
        arrays += [(w, uniform((e, e)) / np.float32(math.sqrt(e)))
                   for w in ("wq", "wk", "wv", "wo")]
        arrays += [(b, uniform((e,), -0.1, 0.1)) for b in ("bq", "bk", "bv", "bo")]
        for name, x in arrays:
            path = os.path.join(a.dir, name + ".npy")
            np.save(path, x)
            files.append(path)
    print(json.dumps({"files": files}))


def timed(fn, repeat, max_seconds, min_seconds=0.0):
    """One untimed call, then `repeat` timed ones -- more if the untimed call
    says that fewer than `min_seconds` would be timed, fewer (at least one) if
    more than `max_seconds`; (median ms, times, out, first ms)."""
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    n = repeat
    if first * n < min_seconds:
        n = int(math.ceil(min_seconds / max(first, 1e-9)))
    if first * n > max_seconds:
        n = max(1, int(max_seconds / max(first, 1e-9)))
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), times, out, first * 1e3


def causal_mask(np, tq, tk, causal, groups):
    """Bool [groups*tq, tk], True where masked (key j after the diagonal of
    query i = row % tq), or None when nothing is masked."""
    if causal == "none":
        return None
    off = 0 if causal == "top_left" else tk - tq
    i = np.arange(groups * tq) % tq
    j = np.arange(tk)
    m = j[None, :] > (i[:, None] + off)
    return m if m.any() else None


def load(np, d, names):
    return [np.load(os.path.join(d, n + ".npy")) for n in names]


def sdpa_numpy(np, q, k, v, mask, scale):
    b, h, tq, d = q.shape
    hkv = k.shape[1]
    g = h // hkv
    qg = q.reshape(b, hkv, g * tq, d)
    s = np.matmul(qg, k.swapaxes(-1, -2))
    s *= scale
    if mask is not None:
        s[..., mask] = -np.inf
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    o = np.matmul(s, v)
    return o.reshape(b, h, tq, v.shape[-1])


def sdpa_torch(torch, q, k, v, mask, scale):
    b, h, tq, d = q.shape
    hkv = k.shape[1]
    g = h // hkv
    qg = q.reshape(b, hkv, g * tq, d)  # a view: no copy of Q, none of K/V
    s = torch.matmul(qg, k.transpose(-1, -2))
    s.mul_(scale)
    if mask is not None:
        s.masked_fill_(mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    o = torch.matmul(p, v)
    return o.reshape(b, h, tq, v.shape[-1])


def max_error(np, out, expect_path):
    if not expect_path:
        return None
    ref = np.load(expect_path).astype(np.float64)
    out = np.asarray(out, dtype=np.float64)
    if out.shape != ref.shape:
        return "shape %s vs %s" % (list(out.shape), list(ref.shape))
    return float(np.max(np.abs(out - ref))) if ref.size else 0.0


def run_impls(a, make):
    """make(impl) -> (fn, to_numpy); runs each impl, catching its errors."""
    import numpy as np
    res = {}
    for impl in a.impl.split(","):
        try:
            fn, to_np = make(impl)
            med, times, out, first = timed(fn, a.repeat, a.max_seconds, a.min_seconds)
            res[impl] = {"median_ms": med, "repeat": len(times), "times_ms": times,
                         "first_call_ms": first,
                         "max_abs_error": max_error(np, to_np(out), a.expect)}
        except Exception as e:  # noqa: BLE001 (an anchor that cannot run is reported)
            res[impl] = {"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0]
                                              if str(e) else "")}
    return res


def cmd_sdpa(a):
    import numpy as np
    q, k, v = load(np, a.dir, ("q", "k", "v"))
    b, h, tq, d = q.shape
    hkv, tk = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(d)
    mask = causal_mask(np, tq, tk, a.causal, h // hkv)

    def make(impl):
        if impl == "numpy":
            if a.dtype == "bf16":
                raise TypeError("NumPy has no bfloat16")
            qn, kn, vn = (x.astype(np.float16 if a.dtype == "f16" else np.float32)
                          for x in (q, k, v))
            return (lambda: sdpa_numpy(np, qn, kn, vn, mask, scale)), (lambda o: o)
        if impl == "torch":
            import torch
            torch.set_num_threads(a.threads)
            dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[a.dtype]
            qt, kt, vt = (torch.from_numpy(np.ascontiguousarray(x)).to(dt) for x in (q, k, v))
            mt = torch.from_numpy(mask) if mask is not None else None

            def fn():
                with torch.no_grad():
                    return sdpa_torch(torch, qt, kt, vt, mt, scale)
            return fn, (lambda o: o.float().numpy())
        raise ValueError("unknown impl %r" % impl)

    print(json.dumps({"impls": run_impls(a, make), "shape": [b, h, hkv, tq, tk, d],
                      "causal": a.causal, "dtype": a.dtype}))


def cmd_mha(a):
    import numpy as np
    x, wq, wk, wv, wo, bq, bk, bv, bo = load(
        np, a.dir, ("x", "wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo"))
    bsz, t, e = x.shape
    heads = a.heads
    d = e // heads
    mask = np.triu(np.ones((t, t), dtype=bool), 1)

    def make(impl):
        if impl == "numpy":
            def fn():
                def split(y):
                    return y.reshape(bsz, t, heads, d).transpose(0, 2, 1, 3)
                q = split(x @ wq.T + bq)
                k = split(x @ wk.T + bk)
                v = split(x @ wv.T + bv)
                o = sdpa_numpy(np, q, k, v, mask if t > 1 else None, 1.0 / math.sqrt(d))
                return o.transpose(0, 2, 1, 3).reshape(bsz, t, e) @ wo.T + bo
            return fn, (lambda o: o)
        if impl == "torch":
            import torch
            torch.set_num_threads(a.threads)
            m = torch.nn.MultiheadAttention(e, heads, bias=True, batch_first=True)
            with torch.no_grad():
                m.in_proj_weight.copy_(torch.from_numpy(np.concatenate([wq, wk, wv])))
                m.in_proj_bias.copy_(torch.from_numpy(np.concatenate([bq, bk, bv])))
                m.out_proj.weight.copy_(torch.from_numpy(wo))
                m.out_proj.bias.copy_(torch.from_numpy(bo))
            m.eval()
            xt = torch.from_numpy(x)
            mt = torch.from_numpy(mask)

            def fn():
                with torch.no_grad():
                    return m(xt, xt, xt, attn_mask=mt, need_weights=False)[0]
            return fn, (lambda o: o.numpy())
        raise ValueError("unknown impl %r" % impl)

    print(json.dumps({"impls": run_impls(a, make), "shape": [bsz, t, e, heads]}))


def cmd_project(a):
    import numpy as np
    x, w, b = load(np, a.dir, ("x", "w", "b"))

    def make(impl):
        if impl == "numpy":
            wt = np.ascontiguousarray(w.T)
            return (lambda: x @ wt + b), (lambda o: o)
        if impl == "torch":
            import torch
            torch.set_num_threads(a.threads)
            xt, wt, bt = (torch.from_numpy(v) for v in (x, w, b))

            def fn():
                with torch.no_grad():
                    return torch.nn.functional.linear(xt, wt, bt)
            return fn, (lambda o: o.numpy())
        raise ValueError("unknown impl %r" % impl)

    print(json.dumps({"impls": run_impls(a, make), "shape": list(x.shape) + [w.shape[0]]}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    env = sub.add_parser("env")
    env.add_argument("--threads", type=int, default=0)
    inp = sub.add_parser("inputs")
    inp.add_argument("kind", choices=("sdpa", "mha", "project"))
    inp.add_argument("--dir", required=True)
    inp.add_argument("--seed", type=int, default=1)
    for n in ("b", "h", "hkv", "tq", "tk", "d", "t"):
        inp.add_argument("--" + n, type=int, default=1)
    inp.add_argument("--e", type=int, default=768)
    inp.add_argument("--out", type=int, default=768, help="project: output width")
    inp.add_argument("--dtype", choices=("f32", "f16", "bf16"), default="f32")
    for name in ("sdpa", "mha", "project"):
        p = sub.add_parser(name)
        p.add_argument("--dir", required=True)
        p.add_argument("--impl", default="torch,numpy")
        p.add_argument("--repeat", type=int, default=5)
        p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
        p.add_argument("--expect", default=None)
        p.add_argument("--max-seconds", type=float, default=120.0)
        p.add_argument("--min-seconds", type=float, default=0.0)
        if name == "sdpa":
            p.add_argument("--causal", choices=("none", "top_left", "bottom_right"),
                           default="none")
            p.add_argument("--dtype", choices=("f32", "f16", "bf16"), default="f32")
        elif name == "mha":
            p.add_argument("--heads", type=int, default=12)
    a = ap.parse_args()
    set_threads(getattr(a, "threads", 0))
    {"env": cmd_env, "inputs": cmd_inputs, "sdpa": cmd_sdpa, "mha": cmd_mha,
     "project": cmd_project}[a.cmd](a)


if __name__ == "__main__":
    main()
