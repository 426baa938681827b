#!/usr/bin/env python3
"""The GPU check, run on the lent GPU machine from the bundle that
bench/gpu_bundle.py builds (see bench/GPU.md): nothing but this folder,
python3, numpy, and torch 2.x for the timing.

    python3 gpu_check.py [--dir DIR] [--no-timing] [--reps N]

1. Correctness: each check kernel of manifest.json (attn-aot --pipeline=gpu)
   on seeded random inputs against attention computed in float64 with numpy
   from the same (rounded) inputs; torch's SDPA on the same inputs is shown
   beside it for scale. The training step's kernels (attn.sdpa_partial: O
   and the log-sum-exp; attn.sdpa_grad) against float64 forward values and
   gradients of the same inputs.
   With torch and CUDA, the same shapes again through the kernels built
   --device-resident (<name>_dev), on torch's device tensors.
2. Timing (torch with CUDA): each timing kernel (built --device-resident)
   on torch device tensors: kernel-only time (CUDA events around each
   launch, from the AOT runtime) and end-to-end time of the call (output
   allocation, stream, launch, synchronisation; no host copies), against
   torch.nn.functional.scaled_dot_product_attention on the same tensors
   with each backend that runs (flash, cuDNN, efficient, math), in TFLOP/s
   (4·B·H·Tq·Tk·D, halved for causal) and as % of a bf16 8192³ matmul (of a
   TF32 one for the f32 kernels built --tf32)
   measured in the same run; then the backward kernels against torch
   autograd's backward of each backend.
The last line is PASS or FAIL.

    python3 gpu_check.py --self-test DIR

runs step 1 with the CPU build of the same kernels (gpu_bundle.py
--self-test-dir), so the driver itself is tested where there is no GPU.
"""
import argparse
import ctypes
import json
import os
import sys
import time

import numpy as np

MAX_RANK = 8
# tf32: the CPU emulation of the TF32 kernel is at 7.7e-5 on causal_br_tf32.
TOLERANCE = {"f32": 1e-4, "f16": 2e-3, "bf16": 1e-2, "tf32": 5e-4}


def tolerance(k):
    """f32 kernels built --tf32 round their operands to 10 mantissa bits."""
    return TOLERANCE["tf32" if k.get("tf32") else k["dtype"]]


class AttnTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("rank", ctypes.c_int64),
                ("shape", ctypes.c_int64 * MAX_RANK)]


def load(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    lib = ctypes.CDLL(os.path.join(folder, manifest["library"]))
    load_symbols(lib)
    return manifest, lib


def load_symbols(lib):
    """Declares the attn-c/Aot.h entry points of a loaded library."""
    lib.attn_aot_call.argtypes = [ctypes.c_void_p, ctypes.POINTER(AttnTensor), ctypes.c_int64,
                                  ctypes.POINTER(AttnTensor), ctypes.c_int64]
    lib.attn_aot_call.restype = ctypes.c_int
    lib.attn_aot_last_error.restype = ctypes.c_char_p
    lib.attn_aot_last_kernel_ms.restype = ctypes.c_double
    lib.attn_aot_selected_target.argtypes = [ctypes.c_void_p]
    lib.attn_aot_selected_target.restype = ctypes.c_char_p
    lib.attn_aot_device_free.argtypes = [ctypes.c_void_p]


def kernel_address(lib, name):
    return ctypes.addressof(ctypes.c_char.in_dll(lib, name + "_kernel"))


def tensor(a):
    """An attn_tensor for a NumPy array, a contiguous torch tensor (its
    data_ptr: a device pointer for CUDA tensors) or None (an output the
    runtime allocates)."""
    t = AttnTensor()
    if a is None:
        return t
    if isinstance(a, np.ndarray):
        t.data = a.ctypes.data
    else:
        assert a.is_contiguous()
        t.data = a.data_ptr()
    t.rank = a.ndim
    for i, n in enumerate(a.shape):
        t.shape[i] = n
    return t


def call(lib, address, arrays, out):
    """Runs a kernel; returns the kernel-only milliseconds (GPU; summed over
    its launches) and the output attn_tensor (its data the runtime's when
    `out` is None). `out` may be a list: one entry per result, and then the
    attn_tensors come back as a list."""
    outs = out if isinstance(out, list) else [out]
    inputs = (AttnTensor * len(arrays))(*[tensor(a) for a in arrays])
    outputs = (AttnTensor * len(outs))(*[tensor(o) for o in outs])
    status = lib.attn_aot_call(address, inputs, len(arrays), outputs, len(outs))
    if status:
        raise RuntimeError(lib.attn_aot_last_error().decode())
    return lib.attn_aot_last_kernel_ms(), (list(outputs) if isinstance(out, list) else outputs[0])


# Storage: f32 as float32, f16 as float16, bf16 as the uint16 bits.
def to_storage(x, dtype):
    x = np.ascontiguousarray(x, dtype=np.float32)
    if dtype == "f32":
        return x
    if dtype == "f16":
        return x.astype(np.float16)
    bits = x.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
    return bits.astype(np.uint16)


def from_storage(s, dtype):
    if dtype == "bf16":
        return (s.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return s.astype(np.float64)


def inputs_for(k, rng):
    q = rng.uniform(-1, 1, (k["b"], k["h"], k["tq"], k["d"]))
    kk = rng.uniform(-1, 1, (k["b"], k["hkv"], k["tk"], k["d"]))
    v = rng.uniform(-1, 1, (k["b"], k["hkv"], k["tk"], k["d"]))
    arrays = [to_storage(x, k["dtype"]) for x in (q, kk, v)]
    if k.get("mask") == "bool":
        arrays.append((rng.uniform(0, 1, (k["b"], 1, k["tq"], k["tk"])) < 0.8).astype(np.uint8))
    elif k.get("mask") == "additive":
        arrays.append(to_storage(rng.uniform(-4, 1, (k["b"], k["h"], k["tq"], k["tk"])), k["dtype"]))
    if k.get("sinks"):  # one f32 logit per query head, some above every score
        arrays.append(np.linspace(-2, 6, k["h"]).astype(np.float32))
    return arrays


def scores(k, q, kk, mask):
    """float64 scores of the rounded q and (repeated) k, -inf where a key is
    hidden, and the keep pattern."""
    s = np.einsum("bhid,bhjd->bhij", q, kk) / np.sqrt(k["d"])
    tq, tk = k["tq"], k["tk"]
    keep = np.ones((tq, tk), dtype=bool)
    i, j = np.arange(tq)[:, None], np.arange(tk)[None, :]
    if k.get("causal") == "top_left" or k.get("fn") == "causal":
        keep = j <= i
    elif k.get("causal") == "bottom_right":
        keep = j <= i + tk - tq
    if k.get("fn") == "window_bias":
        # gpu_bundle.py's FUNCTIONS: s - |i - j|/16, keys j <= i within 48.
        s = s - 0.0625 * np.abs(i - j)
        keep = (j <= i) & (i - j < 48)
    keep = np.broadcast_to(keep, s.shape).copy()
    if k.get("mask") == "bool":
        keep &= mask.astype(bool)
    elif k.get("mask") == "additive":
        s = s + from_storage(mask, k["dtype"])
    return np.where(keep, s, -np.inf), keep


def reference(k, arrays):
    """float64 attention of the rounded inputs; a row with no visible key is 0."""
    return reference_with_lse(k, arrays)[0]


def reference_with_lse(k, arrays):
    """(O, lse) in float64 of the rounded inputs (q, k, v[, mask][, sinks]).
    A sink (one logit per query head) joins each row's max and denominator
    and weighs no value."""
    q, kk, v = (from_storage(a, k["dtype"]) for a in arrays[:3])
    group = k["h"] // k["hkv"]
    kk, v = np.repeat(kk, group, axis=1), np.repeat(v, group, axis=1)
    s, keep = scores(k, q, kk, arrays[3] if k.get("mask") else None)
    m = s.max(axis=-1, keepdims=True)
    sink = arrays[-1].astype(np.float64)[None, :, None, None] if k.get("sinks") else None
    if sink is not None:
        m = np.maximum(m, sink)
    p = np.where(keep, np.exp(s - np.where(np.isfinite(m), m, 0)), 0)
    l = p.sum(axis=-1, keepdims=True)
    if sink is not None:
        l = l + np.exp(sink - m)
    with np.errstate(divide="ignore"):
        lse = (np.where(np.isfinite(m), m, 0) + np.log(l))[..., 0]
    return np.einsum("bhij,bhjd->bhid", p / np.where(l > 0, l, 1), v), lse


def grad_inputs_for(k, rng):
    """(q, k, v, o, do, lse[, mask]) of a backward kernel: O and lse from the
    float64 forward of the rounded inputs (O rounded like the inputs, lse
    f32), dO random."""
    fwd = inputs_for(k, rng)
    o, lse = reference_with_lse(k, fwd)
    do = to_storage(rng.uniform(-1, 1, o.shape), k["dtype"])
    return fwd[:3] + [to_storage(o, k["dtype"]), do, lse.astype(np.float32)] + fwd[3:]


def reference_grad(k, arrays):
    """float64 (dQ, dK, dV) of the backward's inputs: P = exp(S - lse),
    dV = Pᵀ·dO, dS = P∘(dO·Vᵀ - rowsum(dO∘O)), dQ = dS·K/√D, dK = dSᵀ·Q/√D,
    dK and dV summed over each K/V head's query heads."""
    q, kk, v, o, do = (from_storage(a, k["dtype"]) for a in arrays[:5])
    lse = arrays[5].astype(np.float64)[..., None]
    group = k["h"] // k["hkv"]
    kr, vr = np.repeat(kk, group, axis=1), np.repeat(v, group, axis=1)
    s, keep = scores(k, q, kr, arrays[6] if len(arrays) > 6 else None)
    p = np.where(keep & np.isfinite(lse), np.exp(s - np.where(np.isfinite(lse), lse, 0)), 0)
    dv = np.einsum("bhij,bhid->bhjd", p, do)
    ds = p * (np.einsum("bhid,bhjd->bhij", do, vr) - (do * o).sum(-1, keepdims=True))
    scale = 1 / np.sqrt(k["d"])
    dq = np.einsum("bhij,bhjd->bhid", ds, kr) * scale
    dk = np.einsum("bhij,bhid->bhjd", ds, q) * scale
    fold = lambda x: x.reshape(k["b"], k["hkv"], group, k["tk"], k["d"]).sum(2)  # noqa: E731
    return dq, fold(dk), fold(dv)


def check_paged(lib, k, rng):
    """One paged kernel on host buffers: q, the K and V caches, a shuffled
    block table (garbage past each length) and lengths, against float64
    attention of the gathered keys; (passed, line)."""
    bs, nb, mb = k["block_size"], k["num_blocks"], k["tk"] // k["block_size"]
    q = to_storage(rng.uniform(-1, 1, (k["b"], k["h"], k["tq"], k["d"])), k["dtype"])
    kc, vc = (to_storage(rng.uniform(-1, 1, (nb, bs, k["hkv"], k["d"])), k["dtype"])
              for _ in range(2))
    table = rng.permutation(nb)[:k["b"] * mb].reshape(k["b"], mb).astype(np.int32)
    lens = rng.integers(1, k["tk"] + 1, k["b"]).astype(np.int32)
    lens[0] = k["tk"]
    for b in range(k["b"]):
        table[b, -(-int(lens[b]) // bs):] = rng.integers(-5, 1000, mb - (-(-int(lens[b]) // bs)))
    want = np.zeros((k["b"], k["h"], k["tq"], k["d"]))
    for b in range(k["b"]):
        n = int(lens[b])
        rows = [table[b, j // bs] * bs + j % bs for j in range(n)]
        kk = from_storage(kc, k["dtype"]).reshape(nb * bs, k["hkv"], k["d"])[rows].transpose(1, 0, 2)
        vv = from_storage(vc, k["dtype"]).reshape(nb * bs, k["hkv"], k["d"])[rows].transpose(1, 0, 2)
        sub = dict(k, b=1, tk=n)
        want[b] = reference(sub, [q[b:b + 1], to_storage(kk[None], k["dtype"]),
                                  to_storage(vv[None], k["dtype"])])[0]
    out = np.zeros(q.shape, dtype=q.dtype)
    desc = (f"{k['name']:<21} B{k['b']} H{k['h']}/{k['hkv']} Tq{k['tq']} Tk{k['tk']} "
            f"D{k['d']} {k['dtype']:<4} {k.get('causal') or 'no causal':<12} paged, BS {bs}")
    try:
        call(lib, kernel_address(lib, k["name"]), [q, kc, vc, table, lens], out)
    except Exception as e:  # noqa: BLE001 (a FAIL line, never a crash)
        return False, f"FAIL {desc} {type(e).__name__}: {e}"
    err = float(np.abs(from_storage(out, k["dtype"]) - want).max())
    passed = err <= tolerance(k)
    return passed, f"{'ok  ' if passed else 'FAIL'} {desc} err {err:.2e} (tol {tolerance(k):.0e})"


def check_varlen(lib, k, rng):
    """One paged ragged kernel (attn.sdpa_varlen with a block table) on host
    buffers: q [1, H, sum(lens_q), D], the caches, offsets, a shuffled
    table (garbage past each length), against float64 attention of each
    sequence's rows and gathered keys; (passed, line)."""
    bs, nb = k["block_size"], k["num_blocks"]
    lq, lk, mb = k["lens_q"], k["lens_k"], k["tk"] // k["block_size"]
    q = to_storage(rng.uniform(-1, 1, (1, k["h"], k["tq"], k["d"])), k["dtype"])
    kc, vc = (to_storage(rng.uniform(-1, 1, (nb, bs, k["hkv"], k["d"])), k["dtype"])
              for _ in range(2))
    table = rng.permutation(nb)[:len(lq) * mb].reshape(len(lq), mb).astype(np.int32)
    for b, n in enumerate(lk):
        used = -(-n // bs)
        table[b, used:] = rng.integers(-5, 1000, mb - used)
    cuq = np.concatenate([[0], np.cumsum(lq)]).astype(np.int32)
    cuk = np.concatenate([[0], np.cumsum(lk)]).astype(np.int32)
    want = np.zeros((1, k["h"], k["tq"], k["d"]))
    for b, (nq, nk) in enumerate(zip(lq, lk)):
        if nq == 0 or nk == 0:
            continue
        rows = [table[b, j // bs] * bs + j % bs for j in range(nk)]
        kk = from_storage(kc, k["dtype"]).reshape(nb * bs, k["hkv"], k["d"])[rows].transpose(1, 0, 2)
        vv = from_storage(vc, k["dtype"]).reshape(nb * bs, k["hkv"], k["d"])[rows].transpose(1, 0, 2)
        sub = dict(k, b=1, tq=nq, tk=nk)
        qs = q[:, :, cuq[b]:cuq[b + 1]]
        want[:, :, cuq[b]:cuq[b + 1]] = reference(
            sub, [qs, to_storage(kk[None], k["dtype"]), to_storage(vv[None], k["dtype"])])
    out = np.zeros(q.shape, dtype=q.dtype)
    desc = (f"{k['name']:<21} H{k['h']}/{k['hkv']} lens q {lq} k {lk} D{k['d']} "
            f"{k['dtype']:<4} {k.get('causal') or 'no causal':<12} paged, BS {bs}")
    try:
        call(lib, kernel_address(lib, k["name"]), [q, kc, vc, cuq, cuk, table], out)
    except Exception as e:  # noqa: BLE001 (a FAIL line, never a crash)
        return False, f"FAIL {desc} {type(e).__name__}: {e}"
    err = float(np.abs(from_storage(out, k["dtype"]) - want).max())
    passed = err <= tolerance(k)
    return passed, f"{'ok  ' if passed else 'FAIL'} {desc} err {err:.2e} (tol {tolerance(k):.0e})"


def check_partial(lib, k, rng):
    """One sdpa_partial kernel on host buffers: O and lse against the
    float64 forward; (passed, line)."""
    arrays = inputs_for(k, rng)
    want_o, want_lse = reference_with_lse(k, arrays)
    out_o = np.zeros(arrays[0].shape, dtype=np.float32)  # f32 whatever the operands
    out_lse = np.zeros(want_lse.shape, dtype=np.float32)
    desc = (f"{k['name']:<21} B{k['b']} H{k['h']}/{k['hkv']} Tq{k['tq']} Tk{k['tk']} "
            f"D{k['d']} {k['dtype']:<4} {k.get('causal') or 'no causal':<12} "
            f"{(k.get('mask') or 'no') + ' mask':<13} O and lse")
    try:
        call(lib, kernel_address(lib, k["name"]), arrays, [out_o, out_lse])
    except Exception as e:  # noqa: BLE001 (a FAIL line, never a crash)
        return False, f"FAIL {desc} {type(e).__name__}: {e}"
    err = max(float(np.abs(out_o.astype(np.float64) - want_o).max()),
              float(np.abs(out_lse.astype(np.float64) - want_lse).max()))
    passed = err <= tolerance(k)
    return passed, f"{'ok  ' if passed else 'FAIL'} {desc} err {err:.2e} (tol {tolerance(k):.0e})"


def check_grad(lib, k, rng):
    """One backward kernel on host buffers; (passed, line). The error is
    max |ours - float64| over each gradient relative to its largest value."""
    arrays = grad_inputs_for(k, rng)
    want = reference_grad(k, arrays)
    outs = [np.zeros(w.shape, dtype=arrays[0].dtype) for w in want]
    desc = (f"{k['name']:<21} B{k['b']} H{k['h']}/{k['hkv']} Tq{k['tq']} Tk{k['tk']} "
            f"D{k['d']} {k['dtype']:<4} {k.get('causal') or 'no causal':<12} "
            f"{(k.get('mask') or 'no') + ' mask':<13} backward")
    try:
        call(lib, kernel_address(lib, k["name"]), arrays, outs)
    except Exception as e:  # noqa: BLE001 (a FAIL line, never a crash)
        return False, f"FAIL {desc} {type(e).__name__}: {e}"
    err = max(float(np.abs(from_storage(o, k["dtype"]) - w).max() / max(np.abs(w).max(), 1e-30))
              for o, w in zip(outs, want))
    passed = err <= tolerance(k)
    return passed, (f"{'ok  ' if passed else 'FAIL'} {desc} err {err:.2e} "
                    f"(tol {tolerance(k):.0e}, relative to the largest gradient)")


def torch_module():
    try:
        import torch
        return torch if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 (no torch, or its CUDA libraries fail to load)
        return None


TORCH_DTYPE = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


def torch_inputs(torch, k, arrays):
    dt = getattr(torch, TORCH_DTYPE[k["dtype"]])
    out = []
    for n, a in enumerate(arrays):
        if n == 3 and k.get("mask") == "bool":
            out.append(torch.from_numpy(a.astype(bool)).cuda())
        elif n == len(arrays) - 1 and k.get("sinks"):
            out.append(torch.from_numpy(a).cuda())  # f32, whatever the dtype
        elif k["dtype"] == "bf16":
            out.append(torch.from_numpy(a.view(np.int16)).cuda().view(torch.bfloat16))
        else:
            out.append(torch.from_numpy(a).cuda().to(dt))
    return out


def torch_sdpa(torch, k, t):
    F = torch.nn.functional
    q, kk, v = t[:3]
    if k["hkv"] != k["h"]:
        kk = kk.repeat_interleave(k["h"] // k["hkv"], dim=1)
        v = v.repeat_interleave(k["h"] // k["hkv"], dim=1)
    mask, causal = (t[3] if len(t) > 3 else None), False
    if k.get("causal") == "top_left" or k.get("fn") == "causal":
        causal = True
    elif k.get("causal") == "bottom_right":
        i = torch.arange(k["tq"], device="cuda")[:, None]
        j = torch.arange(k["tk"], device="cuda")[None, :]
        mask = j <= i + k["tk"] - k["tq"]
    if k.get("fn") == "window_bias":
        # gpu_bundle.py's FUNCTIONS as an additive mask.
        i = torch.arange(k["tq"], device="cuda")[:, None]
        j = torch.arange(k["tk"], device="cuda")[None, :]
        keep = (j <= i) & (i - j < 48)
        mask = torch.where(keep, -0.0625 * (i - j).abs().to(q.dtype),
                           torch.tensor(float("-inf"), dtype=q.dtype, device="cuda"))
    # TF32 kernels beside torch with allow_tf32, others with full f32. (The
    # flag changes the math backend's matmuls; the backend torch picks for
    # f32 may compute in full f32 regardless.)
    torch.backends.cuda.matmul.allow_tf32 = bool(k.get("tf32"))
    return F.scaled_dot_product_attention(q, kk, v, attn_mask=mask, is_causal=causal)


def device_output(torch, k):
    dt = torch.int16 if k["dtype"] == "bf16" else getattr(torch, TORCH_DTYPE[k["dtype"]])
    return torch.empty((k["b"], k["h"], k["tq"], k["d"]), dtype=dt, device="cuda")


def check(manifest, lib, torch):
    rng = np.random.default_rng(20261201)
    ok = True
    print("== correctness: max |ours - float64 reference| (torch SDPA on the same inputs beside it)")
    for k in manifest["kernels"]:
        if not k["check"] or (k.get("device") and torch is None):
            continue
        if k.get("grad") or k.get("partial") or k.get("paged") or k.get("varlen"):
            fn = (check_grad if k.get("grad") else check_partial if k.get("partial")
                  else check_varlen if k.get("varlen") else check_paged)
            passed, line = fn(lib, k, rng)
            ok &= passed
            print(line, flush=True)
            continue
        arrays = inputs_for(k, rng)
        want = reference(k, arrays)
        out = np.zeros(arrays[0].shape, dtype=arrays[0].dtype)
        desc = (f"{k['name']:<21} B{k['b']} H{k['h']}/{k['hkv']} Tq{k['tq']} Tk{k['tk']} "
                f"D{k['d']} {k['dtype']:<4} {k.get('causal') or 'no causal':<12} "
                f"{(k.get('mask') or 'no') + ' mask':<13}"
                + (f" {k['fn']} functions" if k.get("fn") else "")
                + (" sinks" if k.get("sinks") else ""))
        try:
            if k.get("device"):
                dev_in = [t.view(torch.int16) if t.dtype == torch.bfloat16 else t
                          for t in torch_inputs(torch, k, arrays)]
                dev_out = device_output(torch, k)
                torch.cuda.synchronize()  # our kernels run on their own stream
                call(lib, kernel_address(lib, k["name"]), dev_in, dev_out)
                torch.cuda.synchronize()
                out = dev_out.cpu().numpy().view(out.dtype)
            else:
                call(lib, kernel_address(lib, k["name"]), arrays, out)
        except Exception as e:  # noqa: BLE001 (a FAIL line, never a crash)
            print(f"FAIL {desc} {type(e).__name__}: {e}", flush=True)
            ok = False
            continue
        err = float(np.abs(from_storage(out, k["dtype"]) - want).max())
        passed = err <= tolerance(k)
        ok &= passed
        line = f"{'ok  ' if passed else 'FAIL'} {desc} err {err:.2e} (tol {tolerance(k):.0e})"
        if torch is not None and k.get("sinks"):
            line += ", torch: no sinks in its SDPA"
        elif torch is not None:
            try:
                t = torch_sdpa(torch, k, torch_inputs(torch, k, arrays))
                terr = float((t.double().cpu() - torch.from_numpy(want)).abs().max())
                line += f", torch {terr:.2e}"
            except Exception as e:  # noqa: BLE001
                line += f", torch failed: {type(e).__name__}"
        print(line, flush=True)
    return ok


def cuda_time(torch, fn, reps):
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / reps


def time_ours(torch, lib, address, dev_in, results, reps, deadline=None):
    """Our kernel on device tensors, `results` outputs allocated by the
    runtime and freed after each call: a warm-up call, then `reps` timed
    ones (1 when they would run past `deadline`). Returns the fastest
    kernel-only and end-to-end milliseconds."""
    def once():
        ms, outs = call(lib, address, dev_in, [None] * results)
        for out in outs:
            lib.attn_aot_device_free(out.data)
        return ms

    torch.cuda.synchronize()  # our kernels run on their own stream
    t0 = time.perf_counter()
    once()  # warm-up (and the module's first use)
    first_s = time.perf_counter() - t0
    n = reps if deadline is None or time.time() + (reps + 1) * first_s < deadline else 1
    kernel_ms, wall_ms = [], []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        kernel_ms.append(once())
        wall_ms.append((time.perf_counter() - t0) * 1e3)
    return max(min(kernel_ms), 1e-9), min(wall_ms)


def timing(manifest, lib, torch, reps, deadline):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    mm_ms = cuda_time(torch, lambda: a @ b, 10)
    rates = {"bf16": 2 * n ** 3 / mm_ms / 1e9}
    # The TF32 rows are set against a TF32 matmul (f32 operands, allow_tf32).
    torch.backends.cuda.matmul.allow_tf32 = True
    a, b = a.float(), b.float()
    rates["tf32"] = 2 * n ** 3 / cuda_time(torch, lambda: a @ b, 5) / 1e9
    a = b = None
    print(f"== timing (TFLOP/s; 4·B·H·Tq·Tk·D, halved for causal); {n}^3 matmul: "
          f"bf16 {rates['bf16']:.0f} TFLOP/s, tf32 {rates['tf32']:.0f} TFLOP/s "
          f"(% mm: of the tf32 rate for tf32 rows, of bf16 otherwise)")
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION), ("math", SDPBackend.MATH)]
    print(f"{'kernel':<28} {'ours kernel':>11} {'% mm':>6} {'ours e2e ms':>11} " +
          " ".join(f"{b:>9}" for b, _ in backends))
    rng = np.random.default_rng(1)
    failed = False
    for k in manifest["kernels"]:
        if k["check"] or k.get("grad"):
            continue
        if time.time() > deadline:
            print(f"{k['name']:<28} skipped: the check's time budget is spent", flush=True)
            continue
        arrays = inputs_for(k, rng)
        halved = k.get("causal") or k.get("fn") == "causal"
        flops = 4 * k["b"] * k["h"] * k["tq"] * k["tk"] * k["d"] / (2 if halved else 1)
        address = kernel_address(lib, k["name"])
        t = torch_inputs(torch, k, arrays)
        dev_in = [x.view(torch.int16) if x.dtype == torch.bfloat16 else x for x in t]
        del arrays

        try:
            kernel_ms, wall_ms = time_ours(torch, lib, address, dev_in, 1, reps, deadline)
            ours = flops / kernel_ms / 1e9
            mm = rates["tf32" if k.get("tf32") else "bf16"]
            row = f"{k['name']:<28} {ours:>11.2f} {100 * ours / mm:>5.1f}% {wall_ms:>11.1f} "
        except Exception as e:  # noqa: BLE001
            failed = True
            row = f"{k['name']:<28} ours failed: {type(e).__name__}: {e} "
        cells = []
        for _, backend in backends:
            try:
                with sdpa_kernel(backend):
                    ms = cuda_time(torch, lambda: torch_sdpa(torch, k, t), 5)
                cells.append(f"{flops / ms / 1e9:>9.1f}")
            except Exception:  # noqa: BLE001 (a backend that does not run here)
                cells.append(f"{'-':>9}")
        print(row + " ".join(cells), flush=True)
        t = dev_in = None  # free the device memory before the next shape
        torch.cuda.empty_cache()
    return not failed


def grad_timing(manifest, lib, torch, reps, deadline):
    """The backward kernels (built --device-resident) on torch device tensors
    against torch autograd's backward of each SDPA backend, in TFLOP/s
    (2.5 x 4·B·H·Tq·Tk·D, halved for causal)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION), ("math", SDPBackend.MATH)]
    print("== backward timing (TFLOP/s; 2.5·4·B·H·Tq·Tk·D, halved for causal; torch: "
          "autograd.grad of its SDPA after one forward)")
    print(f"{'kernel':<28} {'ours kernel':>11} {'ours e2e ms':>11} " +
          " ".join(f"{b:>9}" for b, _ in backends))
    failed = False
    for k in manifest["kernels"]:
        if k["check"] or not k.get("grad"):
            continue
        if time.time() > deadline:
            print(f"{k['name']:<28} skipped: the check's time budget is spent", flush=True)
            continue
        dt = getattr(torch, TORCH_DTYPE[k["dtype"]])
        causal = bool(k.get("causal"))
        flops = 2.5 * 4 * k["b"] * k["h"] * k["tq"] * k["tk"] * k["d"] / (2 if causal else 1)
        gen = torch.Generator(device="cuda").manual_seed(1)
        q, kk, v, do = (torch.rand((k["b"], k["h"], k["tq"], k["d"]), generator=gen,
                                   device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dt)
                        for _ in range(4))
        with torch.no_grad():
            s = (q.float() @ kk.float().transpose(-1, -2)) / k["d"] ** 0.5
            if causal:
                s.masked_fill_(torch.ones(k["tq"], k["tk"], dtype=torch.bool,
                                          device="cuda").triu(1), float("-inf"))
            lse = torch.logsumexp(s, dim=-1).contiguous()
            o = (torch.softmax(s, dim=-1) @ v.float()).to(dt).contiguous()
            s = None
        as_int = lambda x: x.view(torch.int16) if x.dtype == torch.bfloat16 else x  # noqa: E731
        dev_in = [as_int(x) for x in (q, kk, v, o, do)] + [lse]
        address = kernel_address(lib, k["name"])

        try:
            kernel_ms, wall_ms = time_ours(torch, lib, address, dev_in, 3, reps)
            row = f"{k['name']:<28} {flops / kernel_ms / 1e9:>11.2f} {wall_ms:>11.1f} "
        except Exception as e:  # noqa: BLE001
            failed = True
            row = f"{k['name']:<28} ours failed: {type(e).__name__}: {e} "
        cells = []
        for _, backend in backends:
            try:
                qg, kg, vg = (x.detach().requires_grad_() for x in (q, kk, v))
                with sdpa_kernel(backend):
                    out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
                    ms = cuda_time(torch, lambda: torch.autograd.grad(
                        out, (qg, kg, vg), do, retain_graph=True), 3)
                cells.append(f"{flops / ms / 1e9:>9.1f}")
            except Exception:  # noqa: BLE001 (a backend that does not run here)
                cells.append(f"{'-':>9}")
            out = qg = kg = vg = None
        print(row + " ".join(cells), flush=True)
        q = kk = v = do = o = lse = dev_in = None
        torch.cuda.empty_cache()
    return not failed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--self-test", metavar="DIR", help="run the correctness step with a CPU build")
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--budget", type=float, default=150,
                    help="seconds after which the remaining timing rows are skipped")
    a = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # every line out before a timeout
    started = time.time()
    folder = a.self_test or a.dir
    manifest, lib = load(folder)
    torch = None if a.self_test else torch_module()
    print(f"gpu_check: {folder}: {len(manifest['kernels'])} kernels for {', '.join(manifest['chips'])}")
    if torch is not None:
        p = torch.cuda.get_device_properties(0)
        print(f"gpu_check: {p.name}, sm_{p.major}{p.minor}, torch {torch.__version__}")
    first = manifest["kernels"][0]["name"]
    target = lib.attn_aot_selected_target(kernel_address(lib, first))
    if target is None:
        print(f"gpu_check: cannot run here: {lib.attn_aot_last_error().decode()}")
        print("FAIL")
        return 1
    print(f"gpu_check: running the {target.decode()} variant")
    ok = check(manifest, lib, torch)
    if torch is not None and not a.no_timing:
        try:
            ok &= timing(manifest, lib, torch, a.reps, started + a.budget)
            ok &= grad_timing(manifest, lib, torch, a.reps, started + a.budget + 60)
        except Exception as e:  # noqa: BLE001
            print(f"gpu_check: timing aborted: {type(e).__name__}: {e}", flush=True)
            ok = False
    print(f"gpu_check: {time.time() - started:.0f} s")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
