"""attn_mlir.linear and attn_mlir.nn.MultiheadAttention: values and
gradients against torch's own modules run in float64 (torch.nn.functional
.linear, torch.nn.MultiheadAttention), which share no code with ours."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import attn_mlir  # noqa: E402
import attn_mlir.nn  # noqa: E402

F32_TOL = 2e-5


def _close(ours, ref, tol, what):
    err = (ours.double() - ref).abs().max().item() if ref.numel() else 0.0
    scale = max(1.0, ref.abs().max().item()) if ref.numel() else 1.0
    assert err <= tol * scale, "%s: max error %.3g (scale %.3g)" % (what, err, scale)


# -- linear ------------------------------------------------------------------

@pytest.mark.parametrize("lead,fin,fout,bias", [
    ((2, 3), 48, 64, True),    # leading dims, N = 6 (dW rows padded to 64)
    ((130,), 96, 32, False),   # N past one bucket of rows
    ((5,), 7, 20, True),       # widths the tiled GEMM refuses (reference route)
    ((1,), 64, 64, True),      # one row
])
def test_linear_values_and_gradients(lead, fin, fout, bias):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(*lead, fin, generator=g, requires_grad=True)
    w = torch.randn(fout, fin, generator=g, requires_grad=True)
    b = torch.randn(fout, generator=g, requires_grad=True) if bias else None
    y = attn_mlir.linear(x, w, b)
    dy = torch.randn(y.shape, generator=g)
    y.backward(dy)
    ref = [t.detach().double().requires_grad_() for t in (x, w)] + \
        ([b.detach().double().requires_grad_()] if bias else [])
    yr = torch.nn.functional.linear(*ref) if bias else torch.nn.functional.linear(*ref, None)
    yr.backward(dy.double())
    _close(y, yr, F32_TOL, "output")
    for name, ours, r in zip(("input", "weight", "bias"), (x, w, b), ref):
        assert ours.grad.dtype == torch.float32 and ours.grad.shape == ours.shape
        _close(ours.grad, r.grad, F32_TOL, "d" + name)


def test_linear_only_what_requires_grad():
    x = torch.randn(10, 32)
    w = torch.randn(64, 32, requires_grad=True)
    attn_mlir.linear(x, w).square().sum().backward()
    assert x.grad is None
    # d/dW sum((x Wᵀ)²) = 2 (x Wᵀ)ᵀ x.
    _close(w.grad, (2 * (x.double() @ w.detach().double().t())).t() @ x.double(), F32_TOL, "dw")


def test_linear_weight_grad_kernels_shared_per_bucket_of_rows():
    w = torch.randn(64, 32, requires_grad=True)
    attn_mlir.linear(torch.randn(65, 32), w).sum().backward()
    before = attn_mlir.cache_info()["misses"]
    w.grad = None
    x = torch.randn(100, 32)
    attn_mlir.linear(x, w).sum().backward()      # 65 and 100 rows: one bucket of 128
    assert attn_mlir.cache_info()["misses"] == before
    _close(w.grad, torch.ones(100, 64).double().t() @ x.double(), F32_TOL, "dw")


def test_linear_empty_batch():
    x = torch.randn(0, 16, requires_grad=True)
    w = torch.randn(32, 16, requires_grad=True)
    y = attn_mlir.linear(x, w)
    assert y.shape == (0, 32)
    y.sum().backward()
    assert x.grad.shape == (0, 16) and w.grad.abs().max().item() == 0.0


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_linear_half_precision(dtype, tol):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(40, 64, generator=g).to(dtype).requires_grad_()
    w = (0.1 * torch.randn(64, 64, generator=g)).to(dtype).requires_grad_()
    b = torch.randn(64, generator=g).to(dtype).requires_grad_()
    y = attn_mlir.linear(x, w, b)
    assert y.dtype == dtype
    dy = torch.randn(40, 64, generator=g).to(dtype)
    y.backward(dy)
    ref = [t.detach().double().requires_grad_() for t in (x, w, b)]
    yr = torch.nn.functional.linear(*ref)
    yr.backward(dy.double())
    _close(y, yr, tol, "output")
    for name, ours, r in zip(("x", "w", "b"), (x, w, b), ref):
        assert ours.grad.dtype == dtype
        _close(ours.grad, r.grad, tol * 4, "d" + name)


def test_linear_numpy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5, 32), dtype=np.float32)
    w = rng.standard_normal((64, 32), dtype=np.float32)
    b = rng.standard_normal(64, dtype=np.float32)
    y = attn_mlir.linear(x, w, b)
    assert isinstance(y, np.ndarray) and y.shape == (3, 5, 64)
    ref = x.astype(np.float64) @ w.astype(np.float64).T + b
    assert np.abs(y - ref).max() < 1e-4 * np.abs(ref).max()


@pytest.mark.parametrize("pipeline", ["reference", "cpu"])
def test_linear_gradcheck_float64(pipeline):
    """torch.autograd.gradcheck in float64 (the reference lowering of
    attn.project, in f64): input, weight and bias."""
    g = torch.Generator().manual_seed(3)
    x, w, b = (torch.randn(*s, generator=g, dtype=torch.float64).requires_grad_()
               for s in ((2, 3, 8), (16, 8), (16,)))
    assert torch.autograd.gradcheck(
        lambda x, w, b: attn_mlir.linear(x, w, b, pipeline=pipeline), (x, w, b),
        eps=1e-6, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("args,exc,msg", [
    ((torch.randn(4, 8), torch.randn(16, 9)), ValueError, "input has 8 features"),
    ((torch.randn(4, 8), torch.randn(16, 8).double()), TypeError, "weight has dtype float64"),
    ((torch.randn(4, 8), torch.randn(16, 8), torch.randn(15)), ValueError, r"bias must be \[16\]"),
    ((torch.randn(4, 8).int(), torch.randn(16, 8)), TypeError, "input has dtype int32"),
    ((torch.randn(4, 8), torch.randn(2, 16, 8)), ValueError, "weight must be"),
])
def test_linear_refusals(args, exc, msg):
    with pytest.raises(exc, match="attn_mlir.linear: " + msg):
        attn_mlir.linear(*args)


# -- nn.MultiheadAttention ---------------------------------------------------

def _pair(e, h, **kw):
    """Ours and torch's module (float64) with the same weights."""
    torch.manual_seed(0)
    ours = attn_mlir.nn.MultiheadAttention(e, h, **kw)
    with torch.no_grad():  # biases are zero at init: make them matter
        for p in ours.parameters():
            p.add_(0.1 * torch.randn(p.shape))
    ref = torch.nn.MultiheadAttention(e, h, **kw).double()
    ref.load_state_dict({k: v.double() for k, v in ours.state_dict().items()})
    return ours, ref


def _check_module(ours, ref, inputs, kwargs, ref_kwargs=None):
    """Output and the gradients of every parameter and input against torch
    in float64."""
    leaves = [x.detach().clone().requires_grad_() for x in inputs]
    leaves64 = [x.detach().double().requires_grad_() for x in inputs]
    if inputs[0] is inputs[1] is inputs[2]:
        leaves = [leaves[0]] * 3
        leaves64 = [leaves64[0]] * 3
    y, w = ours(*leaves, need_weights=False, **kwargs)
    assert w is None
    yr, _ = ref(*leaves64, need_weights=False, **(ref_kwargs or kwargs))
    assert y.shape == yr.shape
    _close(y, yr, F32_TOL, "output")
    dy = torch.randn(y.shape, generator=torch.Generator().manual_seed(7))
    y.backward(dy)
    yr.backward(dy.double())
    for i, (a, r) in enumerate(zip(leaves, leaves64)):
        _close(a.grad, r.grad, F32_TOL, "input %d" % i)
    for (name, p), (_, pr) in zip(ours.named_parameters(), ref.named_parameters()):
        _close(p.grad, pr.grad, F32_TOL, name)


def test_mha_self_attention_causal_mask():
    ours, ref = _pair(64, 4, batch_first=True)
    x = torch.randn(2, 37, 64)
    causal = torch.ones(37, 37, dtype=torch.bool).triu(1)
    _check_module(ours, ref, [x, x, x], {"attn_mask": causal})


def test_mha_is_causal_is_a_top_left_mask():
    ours, ref = _pair(64, 4, batch_first=True)
    x = torch.randn(2, 20, 64)
    causal = torch.ones(20, 20, dtype=torch.bool).triu(1)
    _check_module(ours, ref, [x, x, x], {"is_causal": True}, {"attn_mask": causal})


def test_mha_cross_attention_kdim_vdim_and_padding():
    ours, ref = _pair(32, 2, kdim=24, vdim=40)   # separate q/k/v weights
    q, k, v = torch.randn(9, 3, 32), torch.randn(14, 3, 24), torch.randn(14, 3, 40)
    pad = torch.zeros(3, 14, dtype=torch.bool)
    pad[1, 10:] = True
    pad[2, 3:] = True
    _check_module(ours, ref, [q, k, v], {"key_padding_mask": pad})


def test_mha_float_mask_per_head_and_bool_padding():
    ours, ref = _pair(48, 3, batch_first=True)
    q, kv = torch.randn(2, 11, 48), torch.randn(2, 13, 48)
    additive = torch.randn(2 * 3, 11, 13)
    pad = torch.zeros(2, 13, dtype=torch.bool)
    pad[0, -4:] = True
    _check_module(ours, ref, [q, kv, kv], {"attn_mask": additive, "key_padding_mask": pad})


def test_mha_unbatched_without_bias():
    ours, ref = _pair(32, 4, bias=False)
    q, kv = torch.randn(6, 32), torch.randn(8, 32)
    _check_module(ours, ref, [q, kv, kv], {})


def test_mha_trains_like_torch():
    """Ten SGD steps from the same weights on the same batches: the weights
    stay within float32 rounding of torch's float64 run."""
    ours, ref = _pair(32, 4, batch_first=True)
    opt = torch.optim.SGD(ours.parameters(), lr=0.1)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(5)
    causal = torch.ones(16, 16, dtype=torch.bool).triu(1)
    for _ in range(10):
        x, target = torch.randn(4, 16, 32, generator=g), torch.randn(4, 16, 32, generator=g)
        for module, o, xx, tt in ((ours, opt, x, target), (ref, opt_ref, x.double(),
                                                            target.double())):
            o.zero_grad()
            y, _ = module(xx, xx, xx, attn_mask=causal, need_weights=False)
            ((y - tt) ** 2).mean().backward()
            o.step()
    for (name, p), (_, pr) in zip(ours.named_parameters(), ref.named_parameters()):
        _close(p.detach(), pr.detach(), 1e-5, name)


def test_mha_dropout_in_training():
    """Training mode with dropout: attn's generator at a seed drawn per call
    from torch's generator (torch.manual_seed repeats it). Output and
    gradients against the module's maths in float64 with attn_ref's
    independent generator at that seed; calls differ; eval() turns it off."""
    import attn_ref
    ours, ref = _pair(32, 4, batch_first=True, dropout=0.2)
    x = torch.randn(2, 10, 32, generator=torch.Generator().manual_seed(3))
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    torch.manual_seed(9)
    seed = torch.randint(lo, hi, (), dtype=torch.int64).item()
    torch.manual_seed(9)
    xl = x.clone().requires_grad_()
    y, _ = ours(xl, xl, xl, need_weights=False)
    x64 = x.double().requires_grad_()
    qkv = x64 @ ref.in_proj_weight.T + ref.in_proj_bias
    q, k, v = (t.reshape(2, 10, 4, 8).transpose(1, 2) for t in qkv.split(32, -1))
    o = attn_ref.sdpa(q, k, v, dropout=(0.2, seed)).transpose(1, 2).reshape(2, 10, 32)
    yr = o @ ref.out_proj.weight.T + ref.out_proj.bias
    _close(y, yr, F32_TOL, "output")
    dy = torch.randn(y.shape, generator=torch.Generator().manual_seed(4))
    y.backward(dy)
    yr.backward(dy.double())
    _close(xl.grad, x64.grad, F32_TOL, "input")
    _close(ours.in_proj_weight.grad, ref.in_proj_weight.grad, F32_TOL, "in_proj_weight")
    y2, _ = ours(x, x, x, need_weights=False)
    assert not torch.equal(y.detach(), y2.detach())
    ours.eval()
    ref.eval()
    y3, _ = ours(x, x, x, need_weights=False)
    y3r, _ = ref(x.double(), x.double(), x.double(), need_weights=False)
    _close(y3, y3r, F32_TOL, "eval output")


def test_mha_gradcheck_float64():
    """The whole module in float64 (.double()): gradcheck of its output
    with respect to the query and key/value inputs, through the
    projections' and the attention's backward kernels (reference lowering,
    in f64), with a causal mask."""
    torch.manual_seed(0)
    m = attn_mlir.nn.MultiheadAttention(8, 2, batch_first=True).double()
    q = torch.randn(1, 4, 8, dtype=torch.float64, requires_grad=True)
    kv = torch.randn(1, 5, 8, dtype=torch.float64, requires_grad=True)
    causal = torch.ones(4, 5, dtype=torch.bool).triu(2)
    assert torch.autograd.gradcheck(
        lambda q, kv: m(q, kv, kv, need_weights=False, attn_mask=causal)[0], (q, kv),
        eps=1e-6, atol=1e-8, rtol=1e-6)


def test_mha_refusals():
    with pytest.raises(ValueError, match="add_bias_kv=True"):
        attn_mlir.nn.MultiheadAttention(16, 2, add_bias_kv=True)
    with pytest.raises(ValueError, match="add_zero_attn=True"):
        attn_mlir.nn.MultiheadAttention(16, 2, add_zero_attn=True)
    m = attn_mlir.nn.MultiheadAttention(16, 2, dropout=0.1, batch_first=True)
    x = torch.randn(1, 4, 16)
    with pytest.raises(ValueError, match="need_weights=False"):
        m(x, x, x)
    m.eval()
    y, _ = m(x, x, x, need_weights=False)          # eval: dropout is off
    assert y.shape == (1, 4, 16)
    with pytest.raises(TypeError, match="query has dtype torch.float64"):
        m(x.double(), x, x, need_weights=False)
    with pytest.raises(ValueError, match=r"attn_mask has shape \[3, 3\]"):
        m(x, x, x, need_weights=False, attn_mask=torch.zeros(3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"key_padding_mask has shape \[1, 5\]"):
        m(x, x, x, need_weights=False, key_padding_mask=torch.zeros(1, 5, dtype=torch.bool))


def test_mha_sinks_train():
    # sinks=True: a learned logit per head in each row's softmax
    # denominator (gpt-oss). Output and the gradients of x, the sinks and
    # the projections against the same block written out in float64 torch
    # (the sink as one more score column that weighs no value).
    torch.manual_seed(3)
    e, h, L = 32, 4, 9
    ours = attn_mlir.nn.MultiheadAttention(e, h, batch_first=True, sinks=True)
    assert "sinks" in dict(ours.named_parameters())
    with torch.no_grad():
        ours.sinks.copy_(torch.tensor([0.5, -1.0, 2.0, 0.0]))
        for p in (ours.in_proj_bias, ours.out_proj.bias):
            p.add_(0.1 * torch.randn(p.shape))
    x = torch.randn(2, L, e, requires_grad=True)
    causal = torch.ones(L, L, dtype=torch.bool).triu(1)
    y, _ = ours(x, x, x, need_weights=False, attn_mask=causal)

    params = {n: p.detach().double().requires_grad_() for n, p in ours.named_parameters()}
    x64 = x.detach().double().requires_grad_()
    qkv = x64 @ params["in_proj_weight"].T + params["in_proj_bias"]
    q, k, v = (t.reshape(2, L, h, e // h).transpose(1, 2) for t in qkv.split(e, -1))
    s = (q @ k.transpose(-1, -2)) / (e // h) ** 0.5
    s = s.masked_fill(causal, float("-inf"))
    col = params["sinks"][None, :, None, None].expand(2, h, L, 1)
    pr = torch.softmax(torch.cat([s, col], -1), -1)[..., :-1]
    o = (pr @ v).transpose(1, 2).reshape(2, L, e)
    y64 = o @ params["out_proj.weight"].T + params["out_proj.bias"]
    _close(y, y64, F32_TOL, "output")
    dy = torch.randn(y.shape, generator=torch.Generator().manual_seed(8))
    y.backward(dy)
    y64.backward(dy.double())
    _close(x.grad, x64.grad, F32_TOL, "x")
    for name, p in ours.named_parameters():
        _close(p.grad, params[name].grad, F32_TOL, name)
    assert ours.sinks.grad.abs().min().item() > 0
    # The state holds the sinks; a torch module's state loads without them.
    assert "sinks" in ours.state_dict()
    fresh = attn_mlir.nn.MultiheadAttention(e, h, batch_first=True, sinks=True)
    missing = fresh.load_state_dict(torch.nn.MultiheadAttention(e, h).state_dict(), strict=False)
    assert list(missing.missing_keys) == ["sinks"]
