"""attn_mlir.compile: attn IR text -> a callable on arrays; its errors.
The NumPy-only tests check against a NumPy float64 softmax; the others
against PyTorch's plain ops (attn_ref)."""

import os
import threading

import numpy as np
import pytest

import attn_mlir

SRC = os.environ.get("ATTN_SRC_ROOT",
                     os.path.join(os.path.dirname(__file__), "..", ".."))

DYNAMIC = """
func.func @attend(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>,
                  %v: tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>)
        -> tensor<?x4x?x32xf32>
  return %o : tensor<?x4x?x32xf32>
}
"""


def np_sdpa(q, k, v, causal=None):
    """float64 NumPy: softmax(q k^T / sqrt(E) [causal]) v."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    l, t = s.shape[-2:]
    if causal:
        off = 0 if causal == "top_left" else t - l
        s = np.where(np.arange(t)[None, :] <= np.arange(l)[:, None] + off, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_dynamic_shapes_numpy():
    f = attn_mlir.compile(DYNAMIC)
    assert f.entry == "attend"
    assert f.inputs == [("float32", (-1, 4, -1, 32))] * 3
    assert f.signature == ("(float32[?,4,?,32], float32[?,4,?,32], float32[?,4,?,32]) "
                           "-> (float32[?,4,?,32])")
    for b, l, s in [(1, 1, 9), (2, 17, 40), (3, 64, 64)]:
        q, k, v = rand(b, 4, l, 32, seed=1), rand(b, 4, s, 32, seed=2), rand(b, 4, s, 32, seed=3)
        out = f(q, k, v)
        assert isinstance(out, np.ndarray) and out.shape == (b, 4, l, 32)
        assert np.abs(out - np_sdpa(q, k, v, "bottom_right")).max() < 2e-6


def test_no_mpi_without_a_ring():
    # libattn_mpi, and with it libmpi, hwloc and libevent, are loaded only
    # when a ring runs (lib/Runtime/MpiLoader.cpp): importing the package
    # and running a CPU kernel maps none of them.
    f = attn_mlir.compile(DYNAMIC)
    q = rand(1, 4, 8, 32, seed=1)
    assert np.abs(f(q, q, q) - np_sdpa(q, q, q, "bottom_right")).max() < 2e-6
    with open("/proc/self/maps") as maps:
        mapped = maps.read()
    for lib in ("libmpi", "libattn_mpi", "libopen-pal", "libhwloc", "libevent"):
        assert lib not in mapped, lib + " is mapped"


def test_examples_file_and_reference_pipeline():
    with open(os.path.join(SRC, "examples", "causal_sdpa.mlir")) as fh:
        text = fh.read()
    q, k, v = (rand(1, 12, 256, 64, seed=i) for i in range(3))
    want = np_sdpa(q, k, v, "top_left")
    for pipeline in ("cpu", "reference"):
        out = attn_mlir.compile(text, pipeline=pipeline)(q, k, v)
        assert np.abs(out - want).max() < 2e-6, pipeline


def test_cpu_options():
    f = attn_mlir.compile(DYNAMIC, threads=2, tile_q=16, tile_k=32)
    q, k, v = rand(2, 4, 50, 32, seed=4), rand(2, 4, 70, 32, seed=5), rand(2, 4, 70, 32, seed=6)
    assert np.abs(f(q, k, v) - np_sdpa(q, k, v, "bottom_right")).max() < 2e-6
    with pytest.raises(attn_mlir.AttnError, match="tile"):
        attn_mlir.compile(DYNAMIC, tile_q=0)


def test_entry_selection():
    two = DYNAMIC + DYNAMIC.replace("@attend", "@other").replace("bottom_right", "top_left")
    with pytest.raises(ValueError, match="2 functions"):
        attn_mlir.compile(two)
    with pytest.raises(ValueError, match="no func.func"):
        attn_mlir.compile("module {}")
    f = attn_mlir.compile(two, entry="other")
    q, k, v = (rand(1, 4, 8, 32, seed=i) for i in range(3))
    assert np.abs(f(q, k, v) - np_sdpa(q, k, v, "top_left")).max() < 2e-6
    with pytest.raises(attn_mlir.AttnError, match="nope"):
        attn_mlir.compile(two, entry="nope")


def test_verifier_errors_are_exceptions():
    bad = """
func.func @f(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
             %v: tensor<1x2x9x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>,
                               tensor<1x2x9x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
"""
    with pytest.raises(attn_mlir.AttnError) as e:
        attn_mlir.compile(bad)
    msg = str(e.value)
    assert "does not parse or verify" in msg
    assert "operand 'value' length (dim 2) is 9, expected 8" in msg
    with pytest.raises(attn_mlir.AttnError, match="parse"):
        attn_mlir.compile("func.func @f( {")
    with pytest.raises(TypeError, match="str"):
        attn_mlir.compile(b"func.func")


def test_call_errors_are_exceptions():
    f = attn_mlir.compile(DYNAMIC)
    q, k = rand(1, 4, 8, 32), rand(1, 4, 9, 32)
    with pytest.raises(attn_mlir.AttnError, match="length"):
        f(q, k, rand(1, 4, 10, 32))          # k and v lengths differ
    with pytest.raises(attn_mlir.AttnError, match="does not match"):
        f(q, rand(1, 3, 9, 32), rand(1, 3, 9, 32))  # 3 heads, the IR says 4
    with pytest.raises(attn_mlir.AttnError, match="rank"):
        f(q, k[0], k)
    with pytest.raises(TypeError, match="float64, expected float32"):
        f(q.astype(np.float64), k, k)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        f(q, k)


def test_threads_share_one_function():
    f = attn_mlir.compile(DYNAMIC)
    cases = [(rand(1 + i % 2, 4, 5 + 7 * i, 32, seed=i), rand(1 + i % 2, 4, 11 * i + 5, 32, seed=i + 50),
              rand(1 + i % 2, 4, 11 * i + 5, 32, seed=i + 99)) for i in range(6)]
    wants = [np_sdpa(*c, "bottom_right") for c in cases]
    errors = []

    def worker(i):
        try:
            for _ in range(4):
                assert np.abs(f(*cases[i]) - wants[i]).max() < 2e-6
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_torch_tensors_and_masks():
    torch = pytest.importorskip("torch")
    import attn_ref
    text = """
func.func @masked(%q: tensor<2x4x?x32xf16>, %k: tensor<2x4x?x32xf16>,
                  %v: tensor<2x4x?x32xf16>, %m: tensor<2x1x1x?xi1>) -> tensor<2x4x?x32xf16> {
  %o = attn.sdpa %q, %k, %v, %m
      : (tensor<2x4x?x32xf16>, tensor<2x4x?x32xf16>, tensor<2x4x?x32xf16>, tensor<2x1x1x?xi1>)
        -> tensor<2x4x?x32xf16>
  return %o : tensor<2x4x?x32xf16>
}
"""
    f = attn_mlir.compile(text)
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, 10, 32, generator=g).half()
    k = torch.randn(2, 4, 30, 32, generator=g).half()
    v = torch.randn(2, 4, 30, 32, generator=g).half()
    m = torch.rand(2, 1, 1, 30, generator=g) < 0.6
    m[..., 0] = True
    out = f(q, k, v, m)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float16
    assert attn_ref.max_err(out, attn_ref.sdpa(q, k, v, keep=m)) < 2e-3


def test_attn_raise_generic_attention():
    """attn_raise=True raises attention written as generic linalg (the docs'
    torch-mlir-style example) to attn.sdpa: the result is the NumPy softmax
    attention, as is the same text compiled without raising; a bad
    attn-raise option is an AttnError."""
    with open(os.path.join(SRC, "examples", "raise", "attention_2d.mlir")) as f:
        text = f.read()
    q, k, v = (rand(16, 8, seed=s) for s in (1, 2, 3))
    qd, kd, vd = (x.astype(np.float64) for x in (q, k, v))
    s = qd @ kd.T  # the example has no scale
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ vd
    raised = attn_mlir.compile(text, attn_raise=True)
    plain = attn_mlir.compile(text, attn_raise=False)
    np.testing.assert_allclose(raised(q, k, v), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(plain(q, k, v), want, rtol=1e-5, atol=1e-6)
    options = attn_mlir.compile(text, attn_raise="report=0 projections=1")
    np.testing.assert_allclose(options(q, k, v), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(attn_mlir.AttnError, match="no such option"):
        attn_mlir.compile(text, attn_raise="no-such-option=1")
    with pytest.raises(TypeError, match="attn_raise"):
        attn_mlir.compile(text, attn_raise=3)


def test_spec_classes_build_ir_that_runs():
    """_attn_mlir.SdpaSpec / MhaSpec (attn/Attention.h's specs as classes):
    the fields round-trip, bad enum names raise, and an SdpaSpec's IR
    compiles and matches the NumPy reference."""
    from attn_mlir import _attn_mlir
    spec = _attn_mlir.SdpaSpec()
    spec.batch, spec.heads, spec.kv_heads = 2, 4, 2
    spec.query_len, spec.key_len, spec.head_dim = 8, 12, 16
    spec.causal, spec.type = "bottom_right", "float32"
    assert (spec.causal, spec.type, spec.mask, spec.part) == (
        "bottom_right", "float32", "none", "output")
    text = spec.to_mlir()
    assert "attn.sdpa" in text and "tensor<2x4x8x16xf32>" in text
    with pytest.raises(ValueError, match="causal must be"):
        spec.causal = "diagonal"
    with pytest.raises(ValueError, match="part must be"):
        spec.part = "lse"
    with pytest.raises(TypeError, match="unknown element type"):
        spec.type = "float8"
    q, k, v = rand(2, 4, 8, 16, seed=1), rand(2, 2, 12, 16, seed=2), rand(2, 2, 12, 16, seed=3)
    out = attn_mlir.compile(text, entry="sdpa")(q, k, v)
    kk, vv = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)
    np.testing.assert_allclose(out, np_sdpa(q, kk, vv, "bottom_right"), rtol=1e-4, atol=1e-5)

    mha = _attn_mlir.MhaSpec()
    mha.batch, mha.query_len, mha.key_len = 1, 5, 5
    mha.embed_dim, mha.num_heads, mha.bias = 32, 4, True
    assert (mha.num_kv_heads, mha.head_dim, mha.window_left) == (0, 0, -1)
    assert "attn.mha" in mha.to_mlir()


def test_fp8_arguments_take_uint8_codes():
    """An f8E4M3FN argument takes a uint8 array of the codes (NumPy has no
    fp8); the values are the format's: (1 + m/8)·2^(e−7), subnormals
    (m/8)·2^−6."""
    f = attn_mlir.compile(
        "func.func @f(%x: tensor<1x1x1x8xf8E4M3FN>, %s: tensor<f32>) -> tensor<1x1x1x8xf32> {\n"
        "  %y = attn.dequantize %x, %s : (tensor<1x1x1x8xf8E4M3FN>, tensor<f32>)"
        " -> tensor<1x1x1x8xf32>\n"
        "  return %y : tensor<1x1x1x8xf32>\n}\n", pipeline="reference")
    codes = np.array([0x00, 0x01, 0x08, 0x38, 0x39, 0x7E, 0xB8, 0x80], dtype=np.uint8)
    got = f(codes.reshape(1, 1, 1, 8), np.array(2.0, dtype=np.float32))
    want = 2.0 * np.array([0, 2.0 ** -9, 2.0 ** -6, 1.0, 1.125, 448.0, -1.0, -0.0])
    np.testing.assert_array_equal(got.reshape(-1), want.astype(np.float32))
    with pytest.raises(TypeError, match="expected float8_e4m3fn"):
        f(codes.reshape(1, 1, 1, 8).astype(np.float32), np.array(2.0, dtype=np.float32))
