"""attn_mlir.scaled_dot_product_attention under torch.autograd: dQ, dK, dV
against torch.autograd of PyTorch's plain ops in float64 (attn_ref.sdpa,
not attn's own forward), on the reference and cpu pipelines, over the
forward's features; what is refused; the training example."""

import os
import subprocess
import sys

import numpy as np
import pytest

import attn_mlir

torch = pytest.importorskip("torch")
import attn_ref  # noqa: E402

sdpa = attn_mlir.scaled_dot_product_attention

# Max |grad - float64 torch| / max(1, max |float64 grad|) per dtype: f32
# computes in f32; f16/bf16 round inputs, O, dO and the gradients once.
TOL = {torch.float32: 1e-5, torch.float16: 4e-3, torch.bfloat16: 3e-2, torch.float64: 1e-12}


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def grads_vs_reference(q, k, v, pipeline="cpu", ref_kw=None, seed=7, **kw):
    """(worst relative error over O, dQ, dK, dV) of attn against the
    float64 reference on the same (rounded) inputs and dO."""
    qa, ka, va = (x.clone().requires_grad_() for x in (q, k, v))
    out = sdpa(qa, ka, va, pipeline=pipeline, **kw)
    do = rand(*out.shape, dtype=q.dtype, seed=seed)
    got = torch.autograd.grad(out, (qa, ka, va), do)
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    want_out = attn_ref.sdpa(q64, k64, v64, **(ref_kw or {}))
    want = torch.autograd.grad(want_out, (q64, k64, v64), do.double())
    errs = []
    for g, w in zip((out,) + got, (want_out,) + want):
        assert g.dtype == q.dtype and g.shape == w.shape
        assert torch.isfinite(w).all()
        errs.append(attn_ref.max_err(g, w) / max(1.0, w.abs().max().item()))
    return max(errs)


B, H, HKV, L, S, E = 2, 4, 2, 37, 53, 16

CASES = {
    "plain": (dict(), dict()),
    "top_left": (dict(is_causal=True), dict(causal="top_left")),
    "bottom_right_gqa": (dict(causal="bottom_right", enable_gqa=True),
                         dict(causal="bottom_right"), HKV),
    "softcap_scale": (dict(softcap=2.0, scale=0.4), dict(softcap=2.0, scale=0.4)),
    "window_alibi": (dict(window=(9, 3), alibi_slopes=torch.tensor([0.5, 0.25, 0.125, 0.0625])),
                     dict(window=(9, 3), alibi=torch.tensor([0.5, 0.25, 0.125, 0.0625]))),
    "key_lengths_empty_rows": (dict(key_lengths=torch.tensor([40, 0], dtype=torch.int32),
                                    causal="bottom_right"),
                               dict(key_lengths=[40, 0], causal="bottom_right")),
    "dropout_gqa_causal": (dict(dropout_p=0.3, dropout_seed=-5, is_causal=True, enable_gqa=True),
                           dict(dropout=(0.3, -5), causal="top_left"), HKV),
}


@pytest.mark.parametrize("pipeline", ["reference", "cpu"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_features(case, pipeline):
    kw, ref_kw = CASES[case][:2]
    hkv = CASES[case][2] if len(CASES[case]) > 2 else H
    q, k, v = rand(B, H, L, E, seed=1), rand(B, hkv, S, E, seed=2), rand(B, hkv, S, 24, seed=3)
    assert grads_vs_reference(q, k, v, pipeline, ref_kw, **kw) <= TOL[torch.float32]


def test_bool_mask_with_empty_rows_mqa():
    keep = torch.rand(B, 1, L, S, generator=torch.Generator().manual_seed(4)) < 0.5
    keep[1, 0, 5] = False
    keep[0, 0, :3] = False
    q, k, v = rand(B, H, L, E, seed=1), rand(B, 1, S, E, seed=2), rand(B, 1, S, E, seed=3)
    assert grads_vs_reference(q, k, v, "cpu", dict(keep=keep), attn_mask=keep,
                              enable_gqa=True) <= TOL[torch.float32]


def test_additive_mask_broadcast():
    add = rand(L, S, seed=5)
    q, k, v = rand(B, H, L, E, seed=1), rand(B, H, S, E, seed=2), rand(B, H, S, E, seed=3)
    assert grads_vs_reference(q, k, v, "cpu", dict(add=add), attn_mask=add) <= TOL[torch.float32]


@pytest.mark.parametrize("shape", [(L, E), (H, L, E), (2, 3, H, L, E)], ids=["2d", "3d", "5d"])
def test_leading_dims(shape):
    q = rand(*shape, seed=1)
    kshape = shape[:-2] + (S, E)
    k, v = rand(*kshape, seed=2), rand(*kshape, seed=3)
    qa, ka, va = (x.clone().requires_grad_() for x in (q, k, v))
    out = sdpa(qa, ka, va, is_causal=True)
    do = rand(*out.shape, seed=9)
    got = torch.autograd.grad(out, (qa, ka, va), do)
    four = lambda x: x.reshape((-1,) + tuple(x.shape[-3:])) if x.dim() > 2 else x[None, None]  # noqa: E731
    q64, k64, v64 = (four(x).double().requires_grad_() for x in (q, k, v))
    ref = attn_ref.sdpa(q64, k64, v64, causal="top_left")
    want = torch.autograd.grad(ref, (q64, k64, v64), four(do).double())
    for g, w, x in zip(got, want, (q, k, v)):
        assert g.shape == x.shape
        assert attn_ref.max_err(four(g), w) <= TOL[torch.float32]


def test_decode_one_query():
    q, k, v = rand(B, H, 1, E, seed=1), rand(B, HKV, S, E, seed=2), rand(B, HKV, S, E, seed=3)
    assert grads_vs_reference(q, k, v, "cpu", dict(causal="bottom_right"),
                              causal="bottom_right", enable_gqa=True) <= TOL[torch.float32]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(dtype):
    q, k, v = (rand(B, H, L, E, dtype=dtype, seed=s) for s in (1, 2, 3))
    assert grads_vs_reference(q, k, v, "cpu", dict(causal="top_left"),
                              is_causal=True) <= TOL[dtype]


@pytest.mark.parametrize("pipeline", ["reference", "cpu"])
def test_sinks_gradient(pipeline):
    # Learned attention sinks (gpt-oss): dQ, dK, dV and dsinks against
    # torch.autograd in float64; GQA, bottom-right causal, key lengths with
    # an empty batch row (output 0, no gradient from it), head 1's sink
    # above every score.
    q, k, v = rand(B, H, L, E, seed=1), rand(B, HKV, S, E, seed=2), rand(B, HKV, S, 24, seed=3)
    sinks = torch.tensor([0.5, 30.0, -2.0, 1.0])
    lens = torch.tensor([40, 0], dtype=torch.int32)
    qa, ka, va, sa = (x.clone().requires_grad_() for x in (q, k, v, sinks))
    out = sdpa(qa, ka, va, causal="bottom_right", enable_gqa=True, key_lengths=lens, sinks=sa,
               pipeline=pipeline)
    do = rand(*out.shape, seed=9)
    got = torch.autograd.grad(out, (qa, ka, va, sa), do)
    q64, k64, v64, s64 = (x.double().requires_grad_() for x in (q, k, v, sinks))
    want_out = attn_ref.sdpa(q64, k64, v64, causal="bottom_right", key_lengths=[40, 0],
                             sinks=s64)
    want = torch.autograd.grad(want_out, (q64, k64, v64, s64), do.double())
    assert out[1].abs().max().item() == 0
    for g, w in zip((out,) + got, (want_out,) + want):
        assert g.dtype == torch.float32 and g.shape == w.shape
        assert attn_ref.max_err(g, w) / max(1.0, w.abs().max().item()) <= TOL[torch.float32]
    assert want[3].abs().min().item() > 0  # every head's sink has a gradient
    # Sinks that do not require grad: the same dQ, and no dsinks.
    qb = q.clone().requires_grad_()
    out = sdpa(qb, k, v, causal="bottom_right", enable_gqa=True, key_lengths=lens,
               sinks=sinks.numpy(), pipeline=pipeline)
    (dq,) = torch.autograd.grad(out, (qb,), do)
    assert attn_ref.max_err(dq, want[0]) <= TOL[torch.float32] * max(1.0, want[0].abs().max())
    with pytest.raises(ValueError, match=r"sinks must have shape \[4\]"):
        sdpa(q, k, v, enable_gqa=True, sinks=torch.zeros(2))


def test_only_some_inputs_require_grad():
    q, k, v = rand(1, 2, 8, E, seed=1), rand(1, 2, 8, E, seed=2), rand(1, 2, 8, E, seed=3)
    qa = q.clone().requires_grad_()
    out = sdpa(qa, k, v)
    out.sum().backward()
    q64 = q.double().requires_grad_()
    attn_ref.sdpa(q64, k, v).sum().backward()
    assert attn_ref.max_err(qa.grad, q64.grad) <= TOL[torch.float32]
    assert k.grad is None and v.grad is None


def test_no_grad_takes_the_plain_kernel():
    q = rand(1, 2, 8, E, seed=1).requires_grad_()
    with torch.no_grad():
        out = sdpa(q, q, q)
    assert out.grad_fn is None and not out.requires_grad
    out = sdpa(q.detach(), q.detach(), q.detach())
    assert out.grad_fn is None


def test_gradients_are_deterministic():
    q, k, v = rand(B, H, L, E, seed=1), rand(B, H, S, E, seed=2), rand(B, H, S, E, seed=3)
    runs = []
    for _ in range(2):
        qa, ka, va = (x.clone().requires_grad_() for x in (q, k, v))
        out = sdpa(qa, ka, va, is_causal=True)
        runs.append(torch.autograd.grad(out, (qa, ka, va), rand(*out.shape, seed=9)))
    for a, b in zip(*runs):
        assert torch.equal(a, b)


@pytest.mark.parametrize("pipeline", ["reference", "cpu"])
def test_dropout_fresh_seed_per_call(pipeline):
    """Without dropout_seed the forward and the backward take one seed drawn
    per call from torch's generator (a kernel input): O, dQ, dK, dV against
    float64 autograd of the plain formula with attn's generator at that
    seed; the next call drops other elements."""
    q, k, v = rand(B, H, L, E, seed=1), rand(B, HKV, S, E, seed=2), rand(B, HKV, S, 24, seed=3)
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    torch.manual_seed(123)
    seed = torch.randint(lo, hi, (), dtype=torch.int64).item()
    torch.manual_seed(123)
    err = grads_vs_reference(q, k, v, pipeline, dict(dropout=(0.3, seed), causal="top_left"),
                             dropout_p=0.3, is_causal=True, enable_gqa=True)
    assert err <= TOL[torch.float32]
    qa = q.clone().requires_grad_()
    g1, = torch.autograd.grad(sdpa(qa, k, v, dropout_p=0.3, enable_gqa=True,
                                   pipeline=pipeline).sum(), qa)
    g2, = torch.autograd.grad(sdpa(qa, k, v, dropout_p=0.3, enable_gqa=True,
                                   pipeline=pipeline).sum(), qa)
    assert not torch.equal(g1, g2)


# torch.autograd.gradcheck in float64: attn's analytic gradients (the
# reference lowering of attn.sdpa_grad, computed in f64) against central
# finite differences of attn's own f64 forward. Small shapes: gradcheck
# perturbs every input element.
GRADCHECK = {
    "plain": (dict(), H),
    "causal_gqa": (dict(causal="bottom_right", enable_gqa=True), HKV),
    "softcap_window_alibi": (dict(softcap=1.5, window=(3, 1),
                                  alibi_slopes=torch.tensor([0.5, 0.25, 0.125, 0.0625])), H),
}


@pytest.mark.parametrize("pipeline", ["reference", "cpu"])
@pytest.mark.parametrize("case", sorted(GRADCHECK))
def test_gradcheck_float64(case, pipeline):
    kw, hkv = GRADCHECK[case]
    q = rand(1, H, 5, 4, dtype=torch.float64, seed=1).requires_grad_()
    k = rand(1, hkv, 6, 4, dtype=torch.float64, seed=2).requires_grad_()
    v = rand(1, hkv, 6, 3, dtype=torch.float64, seed=3).requires_grad_()
    assert torch.autograd.gradcheck(lambda q, k, v: sdpa(q, k, v, pipeline=pipeline, **kw),
                                    (q, k, v), eps=1e-6, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("pipeline", ["reference", "cpu"])
def test_gradcheck_float64_additive_mask(pipeline):
    """The mask's gradient too (attn.sdpa_grad's grad_mask), broadcast over
    the batch."""
    q = rand(2, 2, 4, 3, dtype=torch.float64, seed=4).requires_grad_()
    k = rand(2, 2, 5, 3, dtype=torch.float64, seed=5).requires_grad_()
    v = rand(2, 2, 5, 3, dtype=torch.float64, seed=6).requires_grad_()
    m = rand(1, 2, 4, 5, dtype=torch.float64, seed=7).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda q, k, v, m: sdpa(q, k, v, attn_mask=m, pipeline=pipeline), (q, k, v, m),
        eps=1e-6, atol=1e-8, rtol=1e-6)


def test_float64_matches_torch_to_f64_precision():
    """The f64 forward and gradients against torch's plain ops in float64:
    equal to rounding (1e-12), where f32 would differ by ~1e-7."""
    q, k, v = (rand(2, H, L, E, dtype=torch.float64, seed=s) for s in (1, 2, 3))
    assert grads_vs_reference(q, k, v, "cpu", dict(causal="top_left"), is_causal=True) <= 1e-12


def test_refusals():
    q = rand(1, 2, 8, E, seed=1).requires_grad_()
    slopes = torch.tensor([0.5, 0.25]).requires_grad_()
    with pytest.raises(ValueError, match="alibi_slopes requires grad"):
        sdpa(q, q, q, alibi_slopes=slopes)
    out = sdpa(q, q, q)
    grad, = torch.autograd.grad(out.sum(), q, create_graph=True)
    with pytest.raises(RuntimeError):
        torch.autograd.grad(grad.sum(), q)
    # int32 key lengths are checked by the runtime, on the recorded path
    # (attn.sdpa_partial) as on the plain one: past Tk is an error, not a
    # read past the keys.
    lens = np.array([3], np.int32)
    lens[0] = 9
    with pytest.raises(attn_mlir.AttnError, match="element 0 is 9, outside \\[0, Tk = 8\\] "
                       "of 'attn.sdpa_partial'"):
        sdpa(q, q, q, key_lengths=lens)


@pytest.mark.parametrize("pipeline", ["reference", "cpu"])
@pytest.mark.parametrize("mask_shape,kw,ref_kw", [
    ((B, H, L, S), dict(), dict()),                                    # one entry per score
    ((L, S), dict(is_causal=True), dict(causal="top_left")),           # shared by all
    ((B, 1, 1, S), dict(causal="bottom_right", enable_gqa=True),       # per key, GQA
     dict(causal="bottom_right")),
    ((1, H, 1, 1), dict(dropout_p=0.2, dropout_seed=9), dict(dropout=(0.2, 9))),  # per head
])
def test_additive_mask_gradient(mask_shape, kw, ref_kw, pipeline):
    """dMask of an additive mask that requires grad: the score gradient
    summed over the dims the mask broadcasts (torch's math path gives it),
    against torch autograd of the float64 formula."""
    hkv = HKV if kw.get("enable_gqa") else H
    q = rand(B, H, L, E, seed=1).requires_grad_()
    k = rand(B, hkv, S, E, seed=2).requires_grad_()
    v = rand(B, hkv, S, E, seed=3).requires_grad_()
    mask = rand(*mask_shape, seed=4).requires_grad_()
    out = sdpa(q, k, v, attn_mask=mask, pipeline=pipeline, **kw)
    do = rand(*out.shape, seed=5)
    got = torch.autograd.grad(out, (q, k, v, mask), do)
    leaves = [x.detach().double().requires_grad_() for x in (q, k, v, mask)]
    want_out = attn_ref.sdpa(*leaves[:3], add=leaves[3], **ref_kw)
    want = torch.autograd.grad(want_out, leaves, do.double())
    for name, g, w in zip(("dq", "dk", "dv", "dmask"), got, want):
        assert g.shape == w.shape and g.dtype == torch.float32, name
        err = attn_ref.max_err(g, w) / max(1.0, w.abs().max().item())
        assert err < TOL[torch.float32], (name, err)


def test_additive_mask_gradient_half_and_leading_dims():
    """A float16 mask over leading dims [2, 3] that broadcasts over the
    first: its gradient is summed over it and has the mask's dtype."""
    q = rand(2, 3, 4, 9, 16, dtype=torch.float16, seed=1).requires_grad_()
    mask = rand(3, 4, 9, 9, dtype=torch.float16, seed=2).requires_grad_()
    out = sdpa(q, q, q, attn_mask=mask)
    do = rand(*out.shape, dtype=torch.float16, seed=3)
    dq, dmask = torch.autograd.grad(out, (q, mask), do)
    q64, m64 = (x.detach().double().requires_grad_() for x in (q, mask))
    s = q64 @ q64.transpose(-1, -2) / 4 + m64
    want = torch.autograd.grad(torch.softmax(s, -1) @ q64, (q64, m64), do.double())
    assert dmask.dtype == torch.float16 and dmask.shape == mask.shape
    for g, w in zip((dq, dmask), want):
        assert attn_ref.max_err(g, w) / max(1.0, w.abs().max().item()) < TOL[torch.float16]


def test_training_example():
    """examples/training/train_copy.py: 80 steps of the copy task, attn's
    attention against torch's, the curves within 2e-3 + 2 % (exit 0)."""
    root = os.environ.get("ATTN_SRC_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
    r = subprocess.run([sys.executable, os.path.join(root, "examples", "training", "train_copy.py"),
                        "--steps", "80"], capture_output=True, text=True, timeout=500)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "max |loss difference|" in r.stdout
