"""attn_mlir.MultiheadAttention.from_torch against torch.nn.MultiheadAttention
itself (eval mode, need_weights=False)."""

import numpy as np
import pytest

import attn_mlir

torch = pytest.importorskip("torch")
nn = torch.nn

TOL = {torch.float32: 1e-5, torch.float16: 3e-3, torch.bfloat16: 3e-2}


def module(e=64, h=4, seed=0, **kw):
    torch.manual_seed(seed)
    m = nn.MultiheadAttention(e, h, **kw).eval()
    with torch.no_grad():  # biases are zeros by default: make them count
        if m.in_proj_bias is not None:
            m.in_proj_bias.normal_()
            m.out_proj.bias.normal_()
    return m


def x(*shape, seed=1, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def err(a, b):
    return (a.double() - b.double()).abs().max().item()


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_self_attention(batch_first, bias):
    m = module(bias=bias, batch_first=batch_first)
    a = attn_mlir.MultiheadAttention.from_torch(m)
    xs = x(3, 20, 64) if batch_first else x(20, 3, 64)
    out, w = a(xs, xs, xs, need_weights=False)
    want, _ = m(xs, xs, xs, need_weights=False)
    assert w is None and out.shape == want.shape
    assert err(out, want) < TOL[torch.float32]


def test_cross_attention_key_is_value_and_not():
    m = module(batch_first=True)
    a = attn_mlir.MultiheadAttention.from_torch(m)
    q, mem = x(2, 7, 64), x(2, 30, 64, seed=2)
    out, _ = a(q, mem, mem, need_weights=False)          # fused attn.mha
    assert err(out, m(q, mem, mem, need_weights=False)[0]) < TOL[torch.float32]
    k, v = mem, x(2, 30, 64, seed=3)                      # project/sdpa chain
    out, _ = a(q, k, v, need_weights=False)
    assert err(out, m(q, k, v, need_weights=False)[0]) < TOL[torch.float32]


def test_kdim_vdim():
    m = module(e=48, h=6, kdim=40, vdim=24, batch_first=True)
    a = attn_mlir.MultiheadAttention.from_torch(m)
    q, k, v = x(2, 9, 48), x(2, 13, 40, seed=2), x(2, 13, 24, seed=3)
    out, _ = a(q, k, v, need_weights=False)
    assert err(out, m(q, k, v, need_weights=False)[0]) < TOL[torch.float32]


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_masks(kind):
    m = module(batch_first=True)
    a = attn_mlir.MultiheadAttention.from_torch(m)
    xs = x(3, 12, 64)
    causal = torch.ones(12, 12, dtype=torch.bool).triu(1)   # True = not allowed
    pad = torch.zeros(3, 12, dtype=torch.bool)
    pad[1, 9:] = True                                        # True = ignore
    pad[2, 5:] = True
    if kind == "float":
        causal = torch.zeros(12, 12).masked_fill(causal, float("-inf"))
    for am, kpm in [(causal, None), (None, pad), (causal, pad)]:
        out, _ = a(xs, xs, xs, key_padding_mask=kpm, attn_mask=am, need_weights=False)
        want, _ = m(xs, xs, xs, key_padding_mask=kpm, attn_mask=am, need_weights=False)
        assert err(out, want) < TOL[torch.float32], (am is None, kpm is None)
    # a per-(batch, head) 3-D attn_mask [B*H, L, S]
    g = torch.Generator().manual_seed(4)
    am3 = torch.rand(3 * 4, 12, 12, generator=g) < 0.3
    am3[..., 0] = False
    out, _ = a(xs, xs, xs, attn_mask=am3, need_weights=False)
    assert err(out, m(xs, xs, xs, attn_mask=am3, need_weights=False)[0]) < TOL[torch.float32]


def test_is_causal_and_unbatched():
    m = module(batch_first=True)
    a = attn_mlir.MultiheadAttention.from_torch(m)
    xs = x(15, 64)  # unbatched [T, E]
    causal = torch.ones(15, 15, dtype=torch.bool).triu(1)
    out, _ = a(xs, xs, xs, is_causal=True, need_weights=False)
    want, _ = m(xs, xs, xs, attn_mask=causal, need_weights=False)
    assert out.shape == (15, 64) and err(out, want) < TOL[torch.float32]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types(dtype):
    m = module(batch_first=True)
    a = attn_mlir.MultiheadAttention.from_torch(m.to(dtype))
    xs = x(2, 10, 64, dtype=dtype)
    out, _ = a(xs, xs, xs, need_weights=False)
    assert out.dtype == dtype
    # torch 1.13 has no f16 CPU matmul: compare with its f32 forward of the
    # same (rounded) weights and inputs
    want, _ = m.float()(xs.float(), xs.float(), xs.float(), need_weights=False)
    assert err(out, want) < TOL[dtype]


def test_numpy_inputs_one_kernel_per_batch_size():
    m = module(batch_first=True)
    a = attn_mlir.MultiheadAttention.from_torch(m)
    attn_mlir.clear_cache()
    for b, t in [(2, 5), (2, 33), (2, 1), (3, 17)]:
        xs = x(b, t, 64, seed=b + t)
        out, _ = a(xs.numpy(), xs.numpy(), xs.numpy(), need_weights=False)
        assert isinstance(out, np.ndarray)
        assert err(torch.from_numpy(out), m(xs, xs, xs, need_weights=False)[0]) < TOL[torch.float32]
    assert attn_mlir.cache_info()["kernels"] == 2  # batch 2 and batch 3


def test_refusals():
    with pytest.raises(ValueError, match="add_bias_kv"):
        attn_mlir.MultiheadAttention.from_torch(module(add_bias_kv=True))
    with pytest.raises(ValueError, match="add_zero_attn"):
        attn_mlir.MultiheadAttention.from_torch(module(add_zero_attn=True))
    with pytest.raises(ValueError, match="training mode"):
        attn_mlir.MultiheadAttention.from_torch(nn.MultiheadAttention(64, 4, dropout=0.1))
    with pytest.raises(TypeError, match="nn.MultiheadAttention"):
        attn_mlir.MultiheadAttention.from_torch(nn.Linear(4, 4))
    a = attn_mlir.MultiheadAttention.from_torch(module(batch_first=True))
    xs = x(2, 5, 64)
    with pytest.raises(ValueError, match="need_weights=False"):
        a(xs, xs, xs)
    with pytest.raises(TypeError, match="float64"):
        a(xs.double(), xs.double(), xs.double(), need_weights=False)
    with pytest.raises(ValueError, match="width"):
        a(xs[..., :32], xs, xs, need_weights=False)
    with pytest.raises(ValueError, match="key_padding_mask has shape"):
        a(xs, xs, xs, key_padding_mask=torch.zeros(2, 4, dtype=torch.bool),
          need_weights=False)
