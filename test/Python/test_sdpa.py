"""attn_mlir.scaled_dot_product_attention against PyTorch's plain ops in
float64 (attn_ref.sdpa), on torch tensors and NumPy arrays."""

import threading

import numpy as np
import pytest

import attn_mlir

torch = pytest.importorskip("torch")
import attn_ref  # noqa: E402

sdpa = attn_mlir.scaled_dot_product_attention

# Max |attn - float64 torch| per dtype, for O(1) inputs: f32 accumulates in
# f32; f16/bf16 round inputs and the output once (the f64 reference sees
# the same rounded inputs).
TOL = {torch.float32: 2e-6, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
ERRORS = {}  # the largest error seen per dtype, printed at the end


def check(got, want, dtype=torch.float32, tol=None):
    err = attn_ref.max_err(got, want)
    key = str(dtype).replace("torch.", "")
    ERRORS[key] = max(ERRORS.get(key, 0.0), err)
    assert err <= (tol or TOL[dtype]), "max error %g" % err
    return err


@pytest.fixture(scope="module", autouse=True)
def report_errors():
    yield
    print("\nmax |attn - torch(float64)| by dtype: " +
          ", ".join("%s %.3g" % kv for kv in sorted(ERRORS.items())))


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def qkv(b=2, h=4, l=33, s=47, e=32, hkv=None, ev=None, dtype=torch.float32, seed=0):
    hkv = hkv or h
    return (rand(b, h, l, e, dtype=dtype, seed=seed),
            rand(b, hkv, s, e, dtype=dtype, seed=seed + 1),
            rand(b, hkv, s, ev or e, dtype=dtype, seed=seed + 2))


# --- dtypes, kinds, shapes ---------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [None, "top_left", "bottom_right"])
def test_dtypes_and_causal_kinds(dtype, causal):
    q, k, v = qkv(dtype=dtype, l=40, s=64)
    out = sdpa(q, k, v, causal=causal)
    assert isinstance(out, torch.Tensor) and out.dtype == dtype
    assert out.shape == (2, 4, 40, 32)
    check(out, attn_ref.sdpa(q, k, v, causal=causal), dtype)


def test_is_causal_is_top_left():
    q, k, v = qkv(l=50, s=30)  # L > S: top-left rows all see key 0
    check(sdpa(q, k, v, is_causal=True), attn_ref.sdpa(q, k, v, causal="top_left"))
    with pytest.raises(ValueError, match="contradicts"):
        sdpa(q, k, v, is_causal=True, causal="bottom_right")


def test_numpy_in_numpy_out():
    q, k, v = (t.numpy() for t in qkv(l=17, s=9))
    out = sdpa(q, k, v)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    check(out, attn_ref.sdpa(*(torch.from_numpy(t) for t in (q, k, v))))
    q16, k16, v16 = (t.astype(np.float16) for t in (q, k, v))
    out16 = sdpa(q16, k16, v16, is_causal=True)
    assert out16.dtype == np.float16
    check(out16, attn_ref.sdpa(*(torch.from_numpy(t) for t in (q16, k16, v16)),
                               causal="top_left"), torch.float16)


@pytest.mark.parametrize("ev", [16, 48])
def test_value_dim_differs(ev):
    q, k, v = qkv(ev=ev)
    out = sdpa(q, k, v)
    assert out.shape[-1] == ev
    check(out, attn_ref.sdpa(q, k, v))


def test_scale():
    q, k, v = qkv()
    check(sdpa(q, k, v, scale=0.3), attn_ref.sdpa(q, k, v, scale=0.3))
    with pytest.raises(ValueError, match="scale"):
        sdpa(q, k, v, scale=0.0)


def test_gqa():
    q, k, v = qkv(h=8, hkv=2)
    check(sdpa(q, k, v, enable_gqa=True), attn_ref.sdpa(q, k, v))
    check(sdpa(q, k, v, enable_gqa=True, causal="bottom_right"),
          attn_ref.sdpa(q, k, v, causal="bottom_right"))
    with pytest.raises(ValueError, match="enable_gqa=True"):
        sdpa(q, k, v)
    q3, k3, v3 = qkv(h=6, hkv=4)
    with pytest.raises(ValueError, match="not a multiple"):
        sdpa(q3, k3, v3, enable_gqa=True)


@pytest.mark.parametrize("rank", [2, 3, 5])
def test_other_ranks(rank):
    # rank 2: [L, E]; rank 3: [H, L, E] (dim -3 is the heads, as torch's
    # enable_gqa reads it); rank 5: [N, M, H, L, E], leading dims flattened.
    shapes = {2: [(12, 16), (20, 16)], 3: [(4, 12, 16), (2, 20, 16)],
              5: [(2, 3, 4, 12, 16), (2, 3, 2, 20, 16)]}[rank]
    q = rand(*shapes[0])
    k = rand(*shapes[1], seed=1)
    v = rand(*shapes[1], seed=2)
    out = sdpa(q, k, v, enable_gqa=True, is_causal=True)
    assert out.shape == q.shape
    lead = q.shape[:-3] if rank > 3 else ()
    q4, k4, v4 = (t.reshape(-1, *(t.shape[-3:] if t.dim() >= 3 else (1,) + t.shape))
                  for t in (q, k, v))
    want = attn_ref.sdpa(q4, k4, v4, causal="top_left").reshape(*lead, *out.shape[-3:]) \
        if rank > 2 else attn_ref.sdpa(q4, k4, v4, causal="top_left").reshape(out.shape)
    check(out, want)


# --- masks -------------------------------------------------------------------

def keep_mask(shape, seed, p=0.7):
    g = torch.Generator().manual_seed(seed)
    m = torch.rand(*shape, generator=g) < p
    m[..., 0] = True  # no fully masked rows here
    return m


@pytest.mark.parametrize("shape", [(33, 47), (2, 1, 1, 47), (2, 4, 33, 47),
                                   (1, 4, 33, 1), (4, 1, 47)])
def test_bool_mask_true_takes_part(shape):
    q, k, v = qkv()
    m = keep_mask(shape, seed=len(shape))
    if shape == (1, 4, 33, 1):
        m[:] = True
    check(sdpa(q, k, v, attn_mask=m), attn_ref.sdpa(q, k, v, keep=m))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", [(33, 47), (2, 4, 33, 47), (2, 1, 33, 47)])
def test_float_mask_is_added(dtype, shape):
    q, k, v = qkv(dtype=dtype)
    add = rand(*shape, seed=9)
    add[..., 3] = float("-inf")
    out = sdpa(q, k, v, attn_mask=add.to(dtype))
    check(out, attn_ref.sdpa(q, k, v, add=add.to(dtype)), dtype)


def test_float_mask_of_another_dtype_is_converted():
    q, k, v = qkv(dtype=torch.float16)
    add = rand(33, 47, seed=3).double().numpy()  # float64 NumPy with f16 torch inputs
    check(sdpa(q, k, v, attn_mask=add),
          attn_ref.sdpa(q, k, v, add=torch.from_numpy(add).half()), torch.float16)


def test_mask_and_causal_together():
    # torch refuses attn_mask with is_causal; attn keeps both (AND of the two)
    q, k, v = qkv(l=20, s=20)
    m = keep_mask((20, 20), seed=4)
    check(sdpa(q, k, v, attn_mask=m, is_causal=True),
          attn_ref.sdpa(q, k, v, keep=m, causal="top_left"))


def test_fully_masked_rows_are_zero():
    q, k, v = qkv(l=8, s=8)
    m = torch.ones(8, 8, dtype=torch.bool)
    m[2] = False
    out = sdpa(q, k, v, attn_mask=m)
    assert torch.all(out[:, :, 2] == 0)
    want = attn_ref.sdpa(q, k, v, keep=m, zero_empty_rows=False)
    assert torch.isnan(want[:, :, 2]).all()  # torch 1.13's math gives NaN there
    check(out[:, :, [0, 1, 3, 4, 5, 6, 7]], want[:, :, [0, 1, 3, 4, 5, 6, 7]])


def test_bad_masks():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="does not broadcast"):
        sdpa(q, k, v, attn_mask=torch.ones(33, 46, dtype=torch.bool))
    with pytest.raises(ValueError, match="more dims"):
        sdpa(q, k, v, attn_mask=torch.ones(1, 2, 4, 33, 47, dtype=torch.bool))
    with pytest.raises(TypeError, match="attn_mask must be bool"):
        sdpa(q, k, v, attn_mask=torch.ones(33, 47, dtype=torch.int32))


# --- attn's variants ---------------------------------------------------------

@pytest.mark.parametrize("causal,window", [(None, (5, 3)), ("bottom_right", 7),
                                           ("top_left", (4, None)), (None, (None, 0))])
def test_window(causal, window):
    q, k, v = qkv(l=30, s=40)
    w = window if isinstance(window, tuple) else (window, None)
    check(sdpa(q, k, v, causal=causal, window=window),
          attn_ref.sdpa(q, k, v, causal=causal, window=w))


def test_softcap_and_alibi():
    q, k, v = qkv(l=20, s=28)
    q = q * 4
    check(sdpa(q, k, v, softcap=5.0), attn_ref.sdpa(q, k, v, softcap=5.0), tol=5e-6)
    slopes = torch.tensor([2 ** -(i + 1) for i in range(4)])
    check(sdpa(q, k, v, alibi_slopes=slopes, causal="bottom_right"),
          attn_ref.sdpa(q, k, v, alibi=slopes, causal="bottom_right"), tol=5e-6)
    check(sdpa(q, k, v, alibi_slopes=slopes.numpy().astype(np.float64)),
          attn_ref.sdpa(q, k, v, alibi=slopes), tol=5e-6)
    with pytest.raises(ValueError, match="alibi_slopes must have shape"):
        sdpa(q, k, v, alibi_slopes=slopes[:3])
    with pytest.raises(ValueError, match="softcap"):
        sdpa(q, k, v, softcap=-1.0)


def test_alibi_slopes_per_batch():
    # FlashAttention's alibi_slopes of shape (batch, nheads): one set of
    # slopes per batch element, as attn.sdpa's [B, H] operand.
    q, k, v = qkv(b=2, l=9, s=13)
    slopes = torch.rand(2, 4) * 0.5
    out = sdpa(q, k, v, alibi_slopes=slopes, causal="bottom_right")
    check(out, attn_ref.sdpa(q, k, v, alibi=slopes, causal="bottom_right"), tol=5e-6)
    # Each batch element uses its own row: not the same as either row alone.
    for row in range(2):
        alone = attn_ref.sdpa(q, k, v, alibi=slopes[row], causal="bottom_right")
        assert not torch.allclose(out.double(), alone, atol=1e-3)
    # Leading dims beyond one batch dim: the slopes follow them ([B1, B2, H]).
    q4, k4, v4 = (t.reshape(1, 2, *t.shape[1:]) for t in (q, k, v))
    out4 = sdpa(q4, k4, v4, alibi_slopes=slopes.reshape(1, 2, 4), causal="bottom_right")
    check(out4.reshape(out.shape), out, tol=0)
    with pytest.raises(ValueError, match=r"\[4\] \(one per query head\) or \[2, 4\]"):
        sdpa(q, k, v, alibi_slopes=torch.rand(3, 4))


def test_alibi_measures_from_the_bottom_right_diagonal():
    # With top-left causal and L > S the two diagonals give different
    # distances; ALiBi uses the query's position in the sequence, i + S - L.
    q, k, v = qkv(l=12, s=7)
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    for causal in (None, "top_left", "bottom_right"):
        check(sdpa(q, k, v, alibi_slopes=slopes, causal=causal),
              attn_ref.sdpa(q, k, v, alibi=slopes, causal=causal), tol=5e-6)


def test_random_configurations():
    # Seeded draws over dtype, shapes, GQA, causal kind, mask kind and shape,
    # window, softcap, ALiBi, key lengths and scale, each against attn_ref.
    import random
    rng = random.Random(2024)
    tol = {torch.float32: 1e-5, torch.float16: 4e-3, torch.bfloat16: 3e-2}
    for it in range(30):
        dt = rng.choice(list(tol))
        b, hkv = rng.randint(1, 3), rng.choice([1, 2])
        h = hkv * rng.choice([1, 2, 3])
        l, s = rng.randint(1, 70), rng.randint(1, 90)
        e = rng.choice([8, 16, 32, 64, 80])
        ev = rng.choice([e, 16])
        causal = rng.choice([None, "top_left", "bottom_right"])
        g = torch.Generator().manual_seed(it)
        q = torch.randn(b, h, l, e, generator=g).to(dt)
        k = torch.randn(b, hkv, s, e, generator=g).to(dt)
        v = torch.randn(b, hkv, s, ev, generator=g).to(dt)
        kw, rk = {}, {}
        mask = rng.choice([None, "bool", "float"])
        if mask:
            shape = rng.choice([(l, s), (b, 1, 1, s), (b, h, l, s), (1, h, 1, s), (h, l, s)])
            if mask == "bool":
                kw["attn_mask"] = rk["keep"] = torch.rand(*shape, generator=g) < 0.7
            else:
                kw["attn_mask"] = rk["add"] = torch.randn(*shape, generator=g).to(dt)
        if rng.random() < 0.3:
            w = (rng.choice([None, 0, 3, 10]), rng.choice([None, 0, 5]))
            if w != (None, None):
                kw["window"] = rk["window"] = w
        if rng.random() < 0.3:
            kw["softcap"] = rk["softcap"] = rng.choice([5.0, 30.0])
        if rng.random() < 0.3:
            kw["alibi_slopes"] = rk["alibi"] = torch.rand(h, generator=g) * 0.5
        if rng.random() < 0.3:
            kw["key_lengths"] = rk["key_lengths"] = [rng.randint(0, s) for _ in range(b)]
        if rng.random() < 0.3:
            kw["scale"] = rk["scale"] = rng.choice([0.1, 0.5])
        out = sdpa(q, k, v, causal=causal, enable_gqa=True, **kw)
        check(out, attn_ref.sdpa(q, k, v, causal=causal, **rk), dt, tol=tol[dt])


def test_key_lengths():
    q, k, v = qkv(b=3, l=4, s=50)
    lens = [50, 17, 0]
    out = sdpa(q, k, v, key_lengths=torch.tensor(lens), causal="bottom_right")
    check(out, attn_ref.sdpa(q, k, v, key_lengths=lens, causal="bottom_right"))
    assert torch.all(out[2] == 0)  # no key at all: zeros
    out = sdpa(q, k, v, key_lengths=np.array(lens, dtype=np.int32))
    check(out, attn_ref.sdpa(q, k, v, key_lengths=lens))
    with pytest.raises(ValueError, match=r"key_lengths\[1\] = 51 is outside \[0, 50\]"):
        sdpa(q, k, v, key_lengths=[50, 51, 3])
    # int32 lengths go to the runtime as they are; its check and message
    with pytest.raises(attn_mlir.AttnError, match="key lengths"):
        sdpa(q, k, v, key_lengths=np.array([50, 51, 3], dtype=np.int32))
    with pytest.raises(ValueError, match="3 entries"):
        sdpa(q, k, v, key_lengths=[1, 2])


# --- inputs: strides, kinds, dtypes -----------------------------------------

def test_non_contiguous_inputs_are_read_through_strides():
    # [B, L, H, E] storage viewed as [B, H, L, E] (a transpose, no copy)
    g = torch.Generator().manual_seed(5)
    qb = torch.randn(2, 33, 4, 32, generator=g)
    kb = torch.randn(2, 47, 4, 32, generator=g)
    vb = torch.randn(2, 47, 4, 32, generator=g)
    q, k, v = qb.transpose(1, 2), kb.transpose(1, 2), vb.transpose(1, 2)
    assert not q.is_contiguous()
    check(sdpa(q, k, v, is_causal=True), attn_ref.sdpa(q, k, v, causal="top_left"))
    for dtype in (torch.float16, torch.bfloat16):
        qh, kh, vh = (t.to(dtype) for t in (qb, kb, vb))
        qh, kh, vh = qh.transpose(1, 2), kh.transpose(1, 2), vh.transpose(1, 2)
        check(sdpa(qh, kh, vh), attn_ref.sdpa(qh, kh, vh), dtype)
    # NumPy: negative strides (reversed keys) are copied first
    qn, kn, vn = (t.contiguous().numpy() for t in (q, k, v))
    kr, vr = kn[:, :, ::-1], vn[:, :, ::-1]
    check(sdpa(qn, kr, vr), attn_ref.sdpa(q, torch.from_numpy(kr.copy()),
                                          torch.from_numpy(vr.copy())))
    # stride-0 broadcast (expand) of the keys over the batch
    k1, v1 = k[:1].expand(2, -1, -1, -1), v[:1].expand(2, -1, -1, -1)
    check(sdpa(q, k1, v1), attn_ref.sdpa(q, k1, v1))


def test_tokens_first_views_are_read_in_place(monkeypatch):
    # A [B, T, H, D] array seen through .transpose(1, 2) is passed as it is
    # and the kernel's IR transposes it (read in place, no packed copy):
    # each of q, k, v on its own, with GQA, a mask, bottom-right causal and
    # sinks, NumPy and torch, f32 and bf16; values against float64 torch.
    from attn_mlir import functional
    texts = []
    get = functional.CACHE.get

    def recording_get(key, make, *args, **kwargs):
        texts.append(make())
        return get(key, make, *args, **kwargs)

    monkeypatch.setattr(functional.CACHE, "get", recording_get)
    g = torch.Generator().manual_seed(11)
    qb, kb, vb = (torch.randn(2, t, hh, 32, generator=g)
                  for t, hh in ((40, 8), (57, 2), (57, 2)))
    keep = torch.rand(2, 1, 40, 57, generator=g) > 0.2
    sink = torch.randn(8, generator=g)
    for which in ("q", "k", "v", "qkv"):
        q, k, v = (x.transpose(1, 2) if n in which else x.transpose(1, 2).contiguous()
                   for n, x in zip("qkv", (qb, kb, vb)))
        texts.clear()
        got = sdpa(q, k, v, attn_mask=keep, enable_gqa=True, causal="bottom_right",
                   sinks=sink)
        check(got, attn_ref.sdpa(q, k, v, keep=keep, causal="bottom_right", sinks=sink))
        assert texts and texts[-1].count("linalg.transpose") == len(which), which
    texts.clear()
    qn, kn, vn = (x.numpy().transpose(0, 2, 1, 3) for x in (qb, kb, vb))
    got = sdpa(qn, kn, vn, enable_gqa=True, is_causal=True)
    check(torch.from_numpy(got), attn_ref.sdpa(*(torch.from_numpy(np.ascontiguousarray(x))
                                                  for x in (qn, kn, vn)), causal="top_left"))
    assert texts[-1].count("linalg.transpose") == 3
    q16, k16, v16 = (x.bfloat16().transpose(1, 2) for x in (qb, kb, vb))
    check(sdpa(q16, k16, v16, enable_gqa=True), attn_ref.sdpa(q16, k16, v16), torch.bfloat16)
    # Contiguous inputs keep the heads-first kernel.
    texts.clear()
    sdpa(*(x.transpose(1, 2).contiguous() for x in (qb, kb, vb)), enable_gqa=True)
    assert "linalg.transpose" not in texts[-1]


@pytest.mark.parametrize("b,l,s", [(0, 3, 5), (1, 0, 5), (2, 3, 0), (0, 0, 0)])
def test_empty_sizes(b, l, s):
    # nothing to compute: an empty result (the kernel is not run); no keys:
    # every row fully masked, zeros
    q, k, v = qkv(b=b, l=l, s=s)
    out = sdpa(q, k, v)
    assert out.shape == (b, 4, l, 32)
    assert torch.all(out == 0)
    out = sdpa(q.numpy(), k.numpy(), v.numpy(), is_causal=True)
    assert out.shape == (b, 4, l, 32)


def test_requires_grad_and_output_kind():
    q, k, v = (t.requires_grad_() for t in qkv())
    out = sdpa(q, k, v)
    # Recorded by autograd (test_training.py checks the gradients).
    assert out.requires_grad and out.grad_fn is not None
    check(out.detach(), attn_ref.sdpa(q, k, v))


def test_bad_dtypes_and_shapes():
    q, k, v = qkv()
    with pytest.raises(TypeError, match="one dtype"):
        sdpa(q, k.half(), v)
    # (float64 is taken: test_training.py's gradcheck.)
    with pytest.raises(TypeError, match="float32, float16, bfloat16 or float64"):
        sdpa(q.to(torch.int32), k.to(torch.int32), v.to(torch.int32))
    with pytest.raises(ValueError, match="key head dim"):
        sdpa(q, k[..., :16], v)
    with pytest.raises(ValueError, match="does not match key shape"):
        sdpa(q, k, v[:, :, :10])
    with pytest.raises(ValueError, match="leading"):
        sdpa(q, k[:1], v[:1])
    with pytest.raises(ValueError, match="one rank"):
        sdpa(q, k[0], v[0])
    with pytest.raises(ValueError, match="rank >= 2"):
        sdpa(q[0, 0, 0], k[0, 0, 0], v[0, 0, 0])
    with pytest.raises(ValueError, match="causal must be"):
        sdpa(q, k, v, causal="top-left")
    with pytest.raises(ValueError, match="window"):
        sdpa(q, k, v, window=(1, 2, 3))


def test_dropout():
    q, k, v = qkv(l=16, s=64)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\)"):
        sdpa(q, k, v, dropout_p=1.0, dropout_seed=1)
    a = sdpa(q, k, v, dropout_p=0.25, dropout_seed=7)
    b = sdpa(q, k, v, dropout_p=0.25, dropout_seed=7)
    c = sdpa(q, k, v, dropout_p=0.25, dropout_seed=8)
    assert torch.equal(a, b) and not torch.equal(a, c)
    # with value = 1 each output element is (sum of the kept weights) / 0.75:
    # mean 1 over many rows, and about a quarter of the weights dropped
    ones = torch.ones(2, 4, 64, 32)
    o = sdpa(q, k, ones, dropout_p=0.25, dropout_seed=3)[..., 0]
    assert abs(o.mean().item() - 1.0) < 0.05
    assert (o != 1).float().mean() > 0.9


def test_dropout_without_a_seed_draws_one_per_call():
    """dropout_seed=None: a seed per call from torch's generator, an input of
    one kernel: calls differ, torch.manual_seed repeats them, and each equals
    the compiled-seed kernel with the seed drawn (the same elements
    dropped); on both pipelines."""
    q, k, v = qkv(l=16, s=64)
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    for pipeline in ("cpu", "reference"):
        attn_mlir.clear_cache()
        a = sdpa(q, k, v, dropout_p=0.25, is_causal=True, pipeline=pipeline)
        b = sdpa(q, k, v, dropout_p=0.25, is_causal=True, pipeline=pipeline)
        assert not torch.equal(a, b)
        assert attn_mlir.cache_info()["kernels"] == 1
        torch.manual_seed(11)
        c = sdpa(q, k, v, dropout_p=0.25, is_causal=True, pipeline=pipeline)
        torch.manual_seed(11)
        seed = torch.randint(lo, hi, (), dtype=torch.int64).item()
        d = sdpa(q, k, v, dropout_p=0.25, is_causal=True, dropout_seed=seed,
                 pipeline=pipeline)
        assert torch.equal(c, d)
        check(c, attn_ref.sdpa(q, k, v, causal="top_left", dropout=(0.25, seed)))


# --- one kernel, many shapes and threads ------------------------------------

def test_one_kernel_serves_every_batch_and_length():
    attn_mlir.clear_cache()
    for b, l, s in [(1, 1, 1), (3, 17, 130), (2, 64, 64), (1, 200, 33)]:
        q, k, v = qkv(b=b, l=l, s=s, seed=b + l)
        check(sdpa(q, k, v, causal="bottom_right"),
              attn_ref.sdpa(q, k, v, causal="bottom_right"))
    info = attn_mlir.cache_info()
    assert info["kernels"] == 1 and info["misses"] == 1 and info["hits"] == 3


def test_many_threads_one_kernel():
    attn_mlir.clear_cache()
    cases = [qkv(b=1 + i % 3, l=1 + 13 * i, s=5 + 29 * i, seed=i) for i in range(8)]
    wants = [attn_ref.sdpa(q, k, v, causal="bottom_right") for q, k, v in cases]
    errors, results = [], {}
    start = threading.Barrier(8)

    def worker(i):
        try:
            start.wait()
            for _ in range(5):
                q, k, v = cases[i]
                results[i] = sdpa(q, k, v, causal="bottom_right")
                assert attn_ref.max_err(results[i], wants[i]) <= TOL[torch.float32]
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(8):
        check(results[i], wants[i])
    assert attn_mlir.cache_info()["kernels"] == 1


def test_gil_is_released_while_a_kernel_runs():
    # While one thread runs a ~0.1 s kernel, Python code in another keeps
    # running (with the GIL held it would make no progress meanwhile).
    import time
    q, k, v = qkv(b=1, h=8, l=1024, s=1024, e=64)
    sdpa(q, k, v)  # compile first
    done = threading.Event()
    ticks = []

    def spin():
        while not done.is_set():
            ticks.append(time.perf_counter())

    t = threading.Thread(target=spin)
    t.start()
    t0 = time.perf_counter()
    sdpa(q, k, v)
    t1 = time.perf_counter()
    done.set()
    t.join()
    during = [x for x in ticks if t0 < x < t1]
    assert len(during) > 100, (len(during), t1 - t0)


def test_hf_attention_forward():
    # transformers' attention-function convention: [B, L, H, D] out, GQA
    # without repeat_kv, a 4-D mask cut to S keys, is_causal=None decided
    # from the module, Gemma 2's softcap.
    from types import SimpleNamespace
    q, k, v = qkv(h=8, hkv=2, l=20, s=20)
    module = SimpleNamespace(is_causal=True, num_key_value_groups=4)
    out, w = attn_mlir.hf_attention_forward(module, q, k, v, None, scaling=0.2)
    assert w is None and out.shape == (2, 20, 8, 32)
    check(out.transpose(1, 2), attn_ref.sdpa(q, k, v, causal="top_left", scale=0.2))
    keep = torch.ones(2, 1, 20, 30, dtype=torch.bool).tril()   # longer than S: cut
    keep[1, :, :, 15:] = False
    keep[..., 0] = True
    out, _ = attn_mlir.hf_attention_forward(module, q, k, v, keep, softcap=3.0)
    check(out.transpose(1, 2), attn_ref.sdpa(q, k, v, keep=keep[..., :20], softcap=3.0),
          tol=5e-6)
    add = torch.zeros(2, 1, 20, 20).masked_fill(~keep[..., :20], float("-inf"))
    out2, _ = attn_mlir.hf_attention_forward(SimpleNamespace(is_causal=False), q, k, v, add)
    check(out2.transpose(1, 2), attn_ref.sdpa(q, k, v, add=add))
    out3, _ = attn_mlir.hf_attention_forward(SimpleNamespace(is_causal=False), q, k, v, None)
    check(out3.transpose(1, 2), attn_ref.sdpa(q, k, v))
    # Training mode's dropout: attn's generator at a seed drawn from torch's.
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    torch.manual_seed(21)
    seed = torch.randint(lo, hi, (), dtype=torch.int64).item()
    torch.manual_seed(21)
    out4, _ = attn_mlir.hf_attention_forward(module, q, k, v, None, dropout=0.1)
    check(out4.transpose(1, 2), attn_ref.sdpa(q, k, v, causal="top_left", dropout=(0.1, seed)))


def test_reference_pipeline():
    q, k, v = qkv()
    check(sdpa(q, k, v, is_causal=True, pipeline="reference"),
          attn_ref.sdpa(q, k, v, causal="top_left"))
    with pytest.raises(ValueError, match="pipeline"):
        sdpa(q, k, v, pipeline="gpu")
