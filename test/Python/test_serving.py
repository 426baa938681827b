"""attn_mlir.flash_attn_with_kvcache: FlashAttention's decoding call on
paged and contiguous KV caches. Expected values: the pages gathered into
one dense [len, Hkv, D] tensor per sequence with torch indexing, then plain
float64 attention with FlashAttention's rules (causal and windows aligned
to the bottom right of each sequence, ALiBi -slope·|i + len - Tq - j|,
softcap before ALiBi); a row that sees no key is 0."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import attn_mlir  # noqa: E402

TOL = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def ref(q, kc, vc, table, lens, bs, causal=False, window=(-1, -1), softcap=0.0, alibi=None,
        scale=None, sinks=None):
    b_n, tq, h, d = q.shape
    hkv = kc.shape[2]
    g = h // hkv
    scale = 1 / math.sqrt(d) if scale is None else scale
    out = torch.zeros(b_n, tq, h, vc.shape[3], dtype=torch.float64)
    lse = torch.full((b_n, h, tq), -math.inf, dtype=torch.float64)
    for b in range(b_n):
        n = int(lens[b])
        j = torch.arange(n)
        blocks = torch.as_tensor(table)[b, j // bs].long()
        k = kc[blocks, j % bs].to(torch.float64)  # [n, Hkv, D]
        v = vc[blocks, j % bs].to(torch.float64)
        i = torch.arange(tq)[:, None]
        diag = i + n - tq  # bottom right
        keep = torch.ones(tq, n, dtype=torch.bool)
        if causal:
            keep &= j[None, :] <= diag
        if window[0] >= 0:
            keep &= j[None, :] >= diag - window[0]
        if window[1] >= 0 and not causal:
            keep &= j[None, :] <= diag + window[1]
        for hh in range(h):
            s = (q[b, :, hh].to(torch.float64) @ k[:, hh // g].T) * scale
            if softcap:
                s = softcap * torch.tanh(s / softcap)
            if alibi is not None:
                slope = float(alibi[hh] if alibi.dim() == 1 else alibi[b, hh])
                s = s - slope * (diag - j[None, :]).abs()
            s = s.masked_fill(~keep, -math.inf)
            if n:
                lse[b, hh] = torch.logsumexp(s, -1)
            if sinks is not None:
                # The sink joins the denominator: softmax over [s, sink],
                # the sink's column dropped.
                col = torch.full((tq, 1), float(sinks[hh]), dtype=torch.float64)
                p = torch.softmax(torch.cat([s, col], -1), -1)[:, :n]
                lse[b, hh] = torch.logsumexp(torch.cat([s, col], -1), -1)
            else:
                p = torch.softmax(s, -1).nan_to_num(0.0) if n else s
            out[b, :, hh] = p @ v[:, hh // g] if n else 0
    return out, lse


def rand(*shape, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen).to(dtype)


def paged(b, tq, h, hkv, d, bs, mb, lens, dtype=torch.float32, extra_blocks=3, seed=0,
          stale=True):
    """q, caches with shuffled physical blocks (with `stale`, garbage ids past
    each length)."""
    nb = b * mb + extra_blocks
    gen = torch.Generator().manual_seed(seed)
    table = torch.randperm(nb, generator=gen)[: b * mb].reshape(b, mb).to(torch.int32)
    for i, n in enumerate(lens):
        if stale:
            table[i, (n + bs - 1) // bs:] = 10**6  # never used: may hold anything
    return (rand(b, tq, h, d, dtype=dtype, seed=seed + 1),
            rand(nb, bs, hkv, d, dtype=dtype, seed=seed + 2),
            rand(nb, bs, hkv, d, dtype=dtype, seed=seed + 3), table,
            torch.tensor(lens, dtype=torch.int32))


def check(q, kc, vc, table, lens, bs, **kw):
    out = attn_mlir.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=table,
                                            **kw)
    assert out.dtype == q.dtype and out.shape == q.shape[:3] + (vc.shape[3],)
    want, _ = ref(q, kc, vc, table, lens, bs, causal=kw.get("causal", False),
                  window=kw.get("window_size", (-1, -1)), softcap=kw.get("softcap", 0.0),
                  alibi=kw.get("alibi_slopes"), scale=kw.get("softmax_scale"),
                  sinks=kw.get("sinks"))
    err = (out.to(torch.float64) - want).abs().max().item()
    assert err <= TOL[q.dtype], err
    return out


# Block sizes 1, 16 and 256; lengths 0, 1, not a multiple of the block and
# the table's whole capacity; GQA 4:1; decode (Tq 1).
@pytest.mark.parametrize("bs,mb,lens", [(1, 40, [0, 1, 23, 40]), (16, 6, [0, 1, 37, 96]),
                                        (256, 2, [0, 1, 300, 512])])
def test_paged_decode_block_sizes(bs, mb, lens):
    check(*paged(4, 1, 8, 2, 64, bs, mb, lens), bs, causal=True)


def test_chunked_prefill_causal():
    # Tq 5 against each sequence's own length: the last query sees every key.
    check(*paged(3, 5, 4, 4, 32, 16, 5, [5, 70, 80]), 16, causal=True)


def test_window_softcap_alibi():
    q, kc, vc, t, lens = paged(2, 3, 8, 2, 64, 16, 4, [50, 64])
    check(q, kc, vc, t, lens, 16, causal=True, window_size=(7, 0), softcap=20.0)
    check(q, kc, vc, t, lens, 16, window_size=(5, 3))
    slopes = torch.tensor([2.0 ** -(i + 1) for i in range(8)])
    check(q, kc, vc, t, lens, 16, causal=True, alibi_slopes=slopes)
    check(q, kc, vc, t, lens, 16, alibi_slopes=torch.rand(2, 8), softmax_scale=0.2)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_caches(dtype):
    check(*paged(2, 1, 8, 1, 128, 16, 8, [100, 128], dtype=dtype), 16, causal=True)


def test_contiguous_cache_and_batch_index():
    q = rand(3, 1, 4, 32, seed=4)
    kc, vc = rand(5, 40, 2, 32, seed=5), rand(5, 40, 2, 32, seed=6)
    idx = torch.tensor([4, 0, 2], dtype=torch.int32)
    lens = torch.tensor([40, 7, 0], dtype=torch.int32)
    out = attn_mlir.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, cache_batch_idx=idx)
    want, _ = ref(q, kc, vc, idx[:, None], lens, 40)
    assert (out.to(torch.float64) - want).abs().max().item() <= 2e-5
    # No lengths: every row of each sequence's cache; NumPy in, NumPy out.
    out = attn_mlir.flash_attn_with_kvcache(q[:2].numpy(), kc[:2].numpy(), vc[:2].numpy())
    want, _ = ref(q[:2], kc[:2], vc[:2], torch.arange(2)[:, None], [40, 40], 40)
    assert isinstance(out, np.ndarray) and np.abs(out - want.numpy()).max() <= 2e-5


def test_append_new_rows_in_place():
    q, kc, vc, t, lens = paged(2, 2, 4, 2, 32, 8, 4, [5, 16], stale=False)
    k_new, v_new = rand(2, 2, 2, 32, seed=9), rand(2, 2, 2, 32, seed=10)
    before_k = kc.clone()
    out = attn_mlir.flash_attn_with_kvcache(q, kc, vc, k=k_new, v=v_new, cache_seqlens=lens,
                                            block_table=t, causal=True)
    # The rows went to positions len[b], len[b] + 1 of each sequence.
    for b in range(2):
        for i in range(2):
            p = int(lens[b]) + i
            assert torch.equal(kc[t[b, p // 8].long(), p % 8], k_new[b, i])
            assert torch.equal(vc[t[b, p // 8].long(), p % 8], v_new[b, i])
    changed = (kc != before_k).any(-1).any(-1).sum().item()
    assert changed == 4
    want, _ = ref(q, kc, vc, t, lens + 2, 8, causal=True)
    assert (out.to(torch.float64) - want).abs().max().item() <= 2e-5
    # Past the capacity: refused before anything is written.
    with pytest.raises(ValueError, match="capacity of 32 tokens"):
        attn_mlir.flash_attn_with_kvcache(q, kc, vc, k=k_new, v=v_new, block_table=t,
                                          cache_seqlens=torch.tensor([31, 0], dtype=torch.int32))


def test_return_softmax_lse():
    q, kc, vc, t, lens = paged(3, 2, 4, 2, 32, 16, 3, [0, 20, 48])
    out, lse = attn_mlir.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=t,
                                                 causal=True, return_softmax_lse=True)
    want, want_lse = ref(q, kc, vc, t, lens, 16, causal=True)
    assert lse.dtype == torch.float32 and lse.shape == (3, 4, 2)
    assert (out.to(torch.float64) - want).abs().max().item() <= 2e-5
    assert torch.isneginf(lse[0]).all()
    assert (lse[1:].to(torch.float64) - want_lse[1:]).abs().max().item() <= 2e-5


def test_sinks_with_return_softmax_lse():
    # The lse counts the sink once: log(exp(sink_h) + sum_j exp(s_ij));
    # sequence 0 has no key (output 0, lse = the sink); head 1's sink is
    # larger than every score; decode and a chunked prefill.
    sinks = torch.tensor([0.5, 40.0, -2.0, 1.0])
    for tq in (1, 3):
        q, kc, vc, t, lens = paged(3, tq, 4, 2, 32, 16, 3, [0, 20, 48])
        out, lse = attn_mlir.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens,
                                                     block_table=t, causal=True, sinks=sinks,
                                                     return_softmax_lse=True)
        want, want_lse = ref(q, kc, vc, t, lens, 16, causal=True, sinks=sinks)
        assert lse.shape == (3, 4, tq)
        assert (out.to(torch.float64) - want).abs().max().item() <= 2e-5
        assert (lse.to(torch.float64) - want_lse).abs().max().item() <= 2e-5
        assert out[0].abs().max().item() == 0
        assert torch.equal(lse[0], sinks[:, None].expand(4, tq))


def test_one_kernel_for_every_batch_and_pool_size():
    attn_mlir.clear_cache()
    for b, mb, lens in ((2, 3, [5, 40]), (5, 7, [1, 2, 3, 100, 112])):
        check(*paged(b, 1, 4, 4, 32, 16, mb, lens, extra_blocks=b), 16)
    assert attn_mlir.cache_info()["kernels"] == 1


def test_bad_inputs_are_refused():
    q, kc, vc, t, lens = paged(2, 1, 4, 2, 32, 16, 3, [20, 48])
    bad = t.clone()
    bad[1, 2] = kc.shape[0]  # a block sequence 1 uses
    with pytest.raises(attn_mlir.AttnError, match=r"block table\) element \[1, 2\] is 9, "
                       r"outside \[0, NB = 9\)"):
        attn_mlir.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=bad)
    with pytest.raises(ValueError, match=r"cache_seqlens\[1\] = 49 is outside \[0, 48\]"):
        attn_mlir.flash_attn_with_kvcache(q, kc, vc, block_table=t,
                                          cache_seqlens=torch.tensor([1, 49], dtype=torch.int32))
    with pytest.raises(ValueError, match="pass both rotary_cos and rotary_sin"):
        attn_mlir.flash_attn_with_kvcache(q, kc, vc, block_table=t, rotary_cos=torch.ones(1))
    with pytest.raises(TypeError, match="k_cache has dtype float16"):
        attn_mlir.flash_attn_with_kvcache(q, kc.half(), vc, block_table=t)
    with pytest.raises(ValueError, match="heads must be a multiple"):
        attn_mlir.flash_attn_with_kvcache(rand(2, 1, 3, 32), kc, vc, block_table=t)


def test_hnd_layout():
    # The same caches with the heads before the tokens give the same output;
    # a contiguous HND cache is sdpa's own [B, Hkv, T, D]; appends land in
    # [block, :, row].
    q, kc, vc, t, lens = paged(2, 2, 8, 2, 64, 16, 4, [30, 63], stale=False)
    nhd = check(q, kc, vc, t, lens, 16, causal=True)
    kh, vh = kc.transpose(1, 2).contiguous(), vc.transpose(1, 2).contiguous()
    hnd = attn_mlir.flash_attn_with_kvcache(q, kh, vh, cache_seqlens=lens, block_table=t,
                                            causal=True, kv_layout="HND")
    assert torch.equal(hnd, nhd)
    k_new, v_new = rand(2, 1, 2, 64, seed=11), rand(2, 1, 2, 64, seed=12)
    attn_mlir.flash_attn_with_kvcache(q, kh, vh, k=k_new, v=v_new, cache_seqlens=lens,
                                      block_table=t, kv_layout="HND")
    for b in range(2):
        p = int(lens[b])
        assert torch.equal(kh[t[b, p // 16].long(), :, p % 16], k_new[b, 0])
    kd, vd = rand(2, 2, 50, 64, seed=13), rand(2, 2, 50, 64, seed=14)
    out = attn_mlir.flash_attn_with_kvcache(q, kd, vd, cache_seqlens=lens[:2].clamp(max=50),
                                            kv_layout="HND")
    want = attn_mlir.scaled_dot_product_attention(
        q.transpose(1, 2), kd, vd, enable_gqa=True, causal=None,
        key_lengths=lens[:2].clamp(max=50)).transpose(1, 2)
    assert (out - want).abs().max().item() <= 1e-6
    with pytest.raises(ValueError, match="kv_layout must be 'NHD' or 'HND'"):
        attn_mlir.flash_attn_with_kvcache(q, kc, vc, block_table=t, kv_layout="nhd")


def test_sinks():
    # Attention sinks (gpt-oss): head 1's sink is larger than every score,
    # sequence 0 has no key (output 0), decode and a chunked prefill; f32
    # and bf16.
    sinks = torch.tensor([0.5, 60.0, -2.0, 1.0, 0.0, 3.0, -7.0, 0.25])
    for tq, dtype in ((1, torch.float32), (4, torch.float32), (1, torch.bfloat16)):
        q, kc, vc, t, lens = paged(3, tq, 8, 2, 64, 16, 4, [0, 17, 64], dtype=dtype)
        out = check(q, kc, vc, t, lens, 16, causal=True, sinks=sinks)
        assert out[0].abs().max().item() == 0
    with pytest.raises(ValueError, match=r"sinks must be \[8\]"):
        attn_mlir.flash_attn_with_kvcache(q, kc, vc, block_table=t, sinks=torch.zeros(4))


# --- cache_leftpad and rotary_cos/rotary_sin --------------------------------

def unpad(kc, vc, lens, pad):
    """Contiguous caches with sequence b's keys pad[b] .. lens[b] moved to the
    front, and the new lengths: FlashAttention's reference for
    cache_leftpad (keys counted from the padding's end)."""
    k2, v2 = torch.zeros_like(kc), torch.zeros_like(vc)
    for b in range(kc.shape[0]):
        n = int(lens[b]) - int(pad[b])
        k2[b, :n], v2[b, :n] = kc[b, int(pad[b]):int(lens[b])], vc[b, int(pad[b]):int(lens[b])]
    return k2, v2, torch.clamp(torch.as_tensor(lens) - torch.as_tensor(pad), min=0)


@pytest.mark.parametrize("tq,kw", [(1, {"causal": True}), (4, {"causal": True}),
                                   (3, {"window_size": (6, 2)}),
                                   (2, {"causal": True, "alibi_slopes": "slopes"}),
                                   (1, {"sinks": "sinks"})])
def test_cache_leftpad(tq, kw):
    """Keys before cache_leftpad[b] are dropped and the causal/window/ALiBi
    positions count from the padding's end: against the keys moved to the
    front (pad 0, a middle pad, pad == length: no key, output 0)."""
    b, h, hkv, t, d = 4, 4, 2, 40, 32
    kw = dict(kw)
    if kw.get("alibi_slopes") == "slopes":
        kw["alibi_slopes"] = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    if kw.get("sinks") == "sinks":
        kw["sinks"] = torch.tensor([0.5, 30.0, -1.0, 0.0])
    q = rand(b, tq, h, d, seed=31)
    kc, vc = rand(b, t, hkv, d, seed=32), rand(b, t, hkv, d, seed=33)
    lens = torch.tensor([40, 17, 30, 9], dtype=torch.int32)
    pad = torch.tensor([0, 5, 29, 9], dtype=torch.int32)
    out = attn_mlir.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, cache_leftpad=pad,
                                            **kw)
    k2, v2, n2 = unpad(kc, vc, lens, pad)
    want, _ = ref(q, k2, v2, torch.arange(b)[:, None], n2, t, causal=kw.get("causal", False),
                  window=kw.get("window_size", (-1, -1)), alibi=kw.get("alibi_slopes"),
                  sinks=kw.get("sinks"))
    assert (out.double() - want).abs().max().item() <= 2e-5
    assert out[3].abs().max().item() == 0.0


def test_cache_leftpad_paged_int8_and_refusals():
    # Through a block table (FlashAttention 2 refuses this pairing) and on
    # an int8 cache; bad pads refused.
    q, kc, vc, tb, lens = paged(3, 2, 4, 2, 32, 8, 5, [40, 23, 12], stale=False)
    pad = torch.tensor([3, 16, 0], dtype=torch.int32)
    out = attn_mlir.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=tb,
                                            cache_leftpad=pad, causal=True)
    j = torch.arange(40)
    dense = [kc[tb[b, j // 8].long(), j % 8] for b in range(3)]
    dense_v = [vc[tb[b, j // 8].long(), j % 8] for b in range(3)]
    k2, v2, n2 = unpad(torch.stack(dense), torch.stack(dense_v), lens, pad)
    want, _ = ref(q, k2, v2, torch.arange(3)[:, None], n2, 40, causal=True)
    assert (out.double() - want).abs().max().item() <= 2e-5

    g = torch.Generator().manual_seed(34)
    kq, ks = _quantize(torch.randn(2, 20, 2, 32, generator=g))
    vq, vs = _quantize(torch.randn(2, 20, 2, 32, generator=g))
    q8 = torch.randn(2, 1, 4, 32, generator=g)
    pad8 = torch.tensor([7, 2], dtype=torch.int32)
    out = attn_mlir.flash_attn_with_kvcache(q8, kq, vq, k_scale=ks, v_scale=vs,
                                            cache_seqlens=20, cache_leftpad=pad8)
    k2, v2, n2 = unpad(kq.double() * ks[..., None], vq.double() * vs[..., None],
                       [20, 20], pad8)
    want, _ = ref(q8, k2, v2, torch.arange(2)[:, None], n2, 20)
    assert (out.double() - want).abs().max().item() <= 2e-5

    kvc = attn_mlir.flash_attn_with_kvcache
    with pytest.raises(ValueError, match=r"cache_leftpad\[1\] = 41 is outside \[0, 40\]"):
        kvc(q, kc, vc, block_table=tb, cache_leftpad=torch.tensor([0, 41, 0]))
    with pytest.raises(ValueError, match="cache_leftpad must have 3 entries"):
        kvc(q, kc, vc, block_table=tb, cache_leftpad=torch.tensor([0, 1]))
    with pytest.raises(TypeError, match="cache_leftpad must hold integers"):
        kvc(q, kc, vc, block_table=tb, cache_leftpad=torch.tensor([0.0, 1.0, 2.0]))


def rotate_ref(x, cos, sin, pos, interleaved):
    """flash_attn.layers.rotary.apply_rotary_emb in float64, per row:
    x [B, T, H, D], positions pos [B, T]."""
    x = x.double().clone()
    r = cos.shape[1]
    for b in range(x.shape[0]):
        for t in range(x.shape[1]):
            c, s = cos[pos[b][t]].double(), sin[pos[b][t]].double()
            if interleaved:
                x0, x1 = x[b, t, :, 0:2 * r:2].clone(), x[b, t, :, 1:2 * r:2].clone()
                x[b, t, :, 0:2 * r:2], x[b, t, :, 1:2 * r:2] = x0 * c - x1 * s, x0 * s + x1 * c
            else:
                x0, x1 = x[b, t, :, :r].clone(), x[b, t, :, r:2 * r].clone()
                x[b, t, :, :r], x[b, t, :, r:2 * r] = x0 * c - x1 * s, x0 * s + x1 * c
    return x


@pytest.mark.parametrize("interleaved", [True, False])
@pytest.mark.parametrize("causal,rdim", [(True, 32), (False, 16)])
def test_rotary_in_the_call(interleaved, causal, rdim):
    """rotary_cos/sin rotate the new k rows at cache_seqlens[b] + t (what is
    appended is the rotated row) and q at cache_seqlens[b] + i when causal,
    at cache_seqlens[b] otherwise; rotary_dim 16 of 32 leaves the rest."""
    b, tq, h, hkv, d, bs, mb, n = 2, 3, 4, 2, 32, 8, 4, 3
    q, kc, vc, tb, lens = paged(b, tq, h, hkv, d, bs, mb, [5, 20], stale=False)
    k_new, v_new = rand(b, n, hkv, d, seed=41), rand(b, n, hkv, d, seed=42)
    g = torch.Generator().manual_seed(43)
    angle = torch.rand(mb * bs, rdim // 2, generator=g) * 2 * math.pi
    cos, sin = torch.cos(angle), torch.sin(angle)
    k0, v0 = kc.clone(), vc.clone()
    out = attn_mlir.flash_attn_with_kvcache(q, kc, vc, k=k_new, v=v_new, rotary_cos=cos,
                                            rotary_sin=sin, cache_seqlens=lens, block_table=tb,
                                            causal=causal, rotary_interleaved=interleaved)
    pos_k = [[int(lens[i]) + t for t in range(n)] for i in range(b)]
    pos_q = [[int(lens[i]) + (t if causal else 0) for t in range(tq)] for i in range(b)]
    k_rot = rotate_ref(k_new, cos, sin, pos_k, interleaved)
    q_rot = rotate_ref(q, cos, sin, pos_q, interleaved)
    for i in range(b):
        for t in range(n):
            p = pos_k[i][t]
            k0[tb[i, p // bs].long(), p % bs] = k_rot[i, t].float()
            v0[tb[i, p // bs].long(), p % bs] = v_new[i, t]
    assert (kc.double() - k0.double()).abs().max().item() <= 1e-6
    assert torch.equal(vc, v0)
    want, _ = ref(q_rot, k0, v0, tb, lens + n, bs, causal=causal)
    assert (out.double() - want).abs().max().item() <= 2e-5


def test_rotary_half_and_refusals():
    q, kc, vc, tb, lens = paged(2, 1, 4, 2, 32, 8, 4, [5, 20], dtype=torch.bfloat16,
                                stale=False)
    k_new, v_new = rand(2, 1, 2, 32, dtype=torch.bfloat16, seed=44), \
        rand(2, 1, 2, 32, dtype=torch.bfloat16, seed=45)
    angle = torch.rand(32, 16, generator=torch.Generator().manual_seed(46))
    cos, sin = torch.cos(angle), torch.sin(angle)
    k0, v0 = kc.clone(), vc.clone()
    out = attn_mlir.flash_attn_with_kvcache(q, kc, vc, k=k_new, v=v_new, rotary_cos=cos,
                                            rotary_sin=sin, cache_seqlens=lens, block_table=tb)
    assert out.dtype == torch.bfloat16
    k_rot = rotate_ref(k_new, cos, sin, [[5], [20]], True).to(torch.bfloat16)
    for i, p in enumerate((5, 20)):
        k0[tb[i, p // 8].long(), p % 8] = k_rot[i, 0]
        v0[tb[i, p // 8].long(), p % 8] = v_new[i, 0]
    assert torch.equal(kc, k0)
    q_rot = rotate_ref(q, cos, sin, [[5], [20]], True)
    want, _ = ref(q_rot, k0, v0, tb, lens + 1, 8)
    assert (out.double() - want).abs().max().item() <= TOL[torch.bfloat16]

    kvc = attn_mlir.flash_attn_with_kvcache
    with pytest.raises(ValueError, match="pass k and v too"):
        kvc(q, kc, vc, block_table=tb, rotary_cos=cos, rotary_sin=sin)
    with pytest.raises(ValueError, match="pass both rotary_cos and rotary_sin"):
        kvc(q, kc, vc, k=k_new, v=v_new, block_table=tb, rotary_sin=sin)
    with pytest.raises(ValueError, match=r"rotary_dim / 2\] with 0 < rotary_dim <= 32"):
        kvc(q, kc, vc, k=k_new, v=v_new, block_table=tb, rotary_cos=torch.ones(32, 17),
            rotary_sin=torch.ones(32, 17))
    with pytest.raises(ValueError, match="have 8 positions, position 20 is needed"):
        kvc(q, kc, vc, k=k_new, v=v_new, block_table=tb, cache_seqlens=lens,
            rotary_cos=cos[:8], rotary_sin=sin[:8])


# --- flash_attn_varlen_func -------------------------------------------------

def ref_varlen(q, k, v, lq, lk, causal=False, window=(-1, -1), alibi=None, softcap=0.0,
               sinks=None):
    """Each sequence alone, through ref() with one block per sequence."""
    outs, q0, k0 = [], 0, 0
    for b, (nq, nk) in enumerate(zip(lq, lk)):
        kc = k[k0:k0 + nk][None]
        vc = v[k0:k0 + nk][None]
        sl = None if alibi is None else (alibi if alibi.dim() == 1 else alibi[b:b + 1])
        o, _ = ref(q[q0:q0 + nq][None], kc, vc, [[0]], [nk], max(nk, 1), causal=causal,
                   window=window, alibi=sl, softcap=softcap, sinks=sinks)
        outs.append(o[0])
        q0, k0 = q0 + nq, k0 + nk
    return torch.cat(outs)


def cu(lens):
    return torch.tensor([0] + list(np.cumsum(lens)), dtype=torch.int32)


@pytest.mark.parametrize("causal", [False, True])
def test_varlen_ragged_batch(causal):
    lq, lk = [3, 0, 1, 70, 9], [5, 4, 1, 70, 130]
    q = rand(sum(lq), 8, 64, seed=20)
    k, v = rand(sum(lk), 2, 64, seed=21), rand(sum(lk), 2, 64, seed=22)
    out = attn_mlir.flash_attn_varlen_func(q, k, v, cu(lq), cu(lk), max(lq), max(lk),
                                           causal=causal)
    assert out.shape == q.shape
    want = ref_varlen(q, k, v, lq, lk, causal=causal)
    assert (out.to(torch.float64) - want).abs().max().item() <= 2e-5


def test_varlen_features_and_half():
    lq, lk = [4, 33, 1], [40, 33, 17]
    q = rand(sum(lq), 4, 32, seed=23)
    k, v = rand(sum(lk), 4, 32, seed=24), rand(sum(lk), 4, 32, seed=25)
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    for kw in (dict(causal=True, window=(6, 0)), dict(window=(3, 2)),
               dict(causal=True, alibi=slopes, softcap=15.0)):
        out = attn_mlir.flash_attn_varlen_func(
            q, k, v, cu(lq), cu(lk), 33, 40, causal=kw.get("causal", False),
            window_size=kw.get("window", (-1, -1)), alibi_slopes=kw.get("alibi"),
            softcap=kw.get("softcap", 0.0))
        want = ref_varlen(q, k, v, lq, lk, causal=kw.get("causal", False),
                          window=kw.get("window", (-1, -1)), alibi=kw.get("alibi"),
                          softcap=kw.get("softcap", 0.0))
        assert (out.to(torch.float64) - want).abs().max().item() <= 2e-5, kw
    qh, kh, vh = q.half(), k.half(), v.half()
    out = attn_mlir.flash_attn_varlen_func(qh, kh, vh, cu(lq), cu(lk), 33, 40, causal=True)
    want = ref_varlen(qh, kh, vh, lq, lk, causal=True)
    assert out.dtype == torch.float16
    assert (out.to(torch.float64) - want).abs().max().item() <= 2e-3


def test_varlen_sinks_slopes_per_sequence_and_tail_rows():
    """attn.sdpa_varlen with sinks (one sink above every score); per-sequence
    slopes [B, H] (the padded route); q rows past cu_seqlens_q[-1] are 0;
    NumPy inputs."""
    lq, lk = [3, 10, 0], [7, 10, 4]
    q = rand(sum(lq) + 2, 4, 32, seed=26)
    k, v = rand(sum(lk), 2, 32, seed=27), rand(sum(lk), 2, 32, seed=28)
    sinks = torch.tensor([0.5, 30.0, -1.0, 0.0])
    out = attn_mlir.flash_attn_varlen_func(q, k, v, cu(lq), cu(lk), 10, 10, causal=True,
                                           sinks=sinks)
    want = ref_varlen(q, k, v, lq, lk, causal=True, sinks=sinks)
    assert (out[:13].to(torch.float64) - want).abs().max().item() <= 2e-5
    assert out[13:].abs().max().item() == 0.0
    out_np = attn_mlir.flash_attn_varlen_func(q.numpy(), k.numpy(), v.numpy(), cu(lq).numpy(),
                                              cu(lk).numpy(), 10, 10, causal=True)
    want = ref_varlen(q, k, v, lq, lk, causal=True)
    assert isinstance(out_np, np.ndarray)
    assert np.abs(out_np[:13] - want.numpy()).max() <= 2e-5
    slopes = torch.tensor([[0.5, 0.25, 0.125, 0.0625], [1.0, 0.5, 0.25, 0.125],
                           [0.1, 0.2, 0.3, 0.4]])
    out = attn_mlir.flash_attn_varlen_func(q, k, v, cu(lq), cu(lk), 10, 10, causal=True,
                                           alibi_slopes=slopes)
    want = ref_varlen(q, k, v, lq, lk, causal=True, alibi=slopes)
    assert (out[:13].to(torch.float64) - want).abs().max().item() <= 2e-5


def test_continuous_batching_step():
    # One call for a step where two sequences decode (1 new query each) and
    # one prefills a chunk of 24 against its paged cache: varlen queries,
    # paged keys (cu_seqlens_k gives each sequence's length).
    lq, lk = [1, 24, 1], [50, 40, 7]
    q, kc, vc, t, lens = paged(3, 1, 8, 2, 64, 16, 4, lk, seed=30)
    qv = rand(sum(lq), 8, 64, seed=31)
    out = attn_mlir.flash_attn_varlen_func(qv, kc, vc, cu(lq), cu(lk), 24, 64, causal=True,
                                           block_table=t)
    q0 = 0
    for b, nq in enumerate(lq):
        want, _ = ref(qv[q0:q0 + nq][None], kc, vc, t[b:b + 1], lens[b:b + 1], 16, causal=True)
        assert (out[q0:q0 + nq].to(torch.float64) - want[0]).abs().max().item() <= 2e-5
        q0 += nq


def test_varlen_paged_features_and_bad_table():
    """Ragged queries on paged keys through attn.sdpa_varlen (no padded
    queries): sinks, ALiBi [H], softcap, a window, an empty sequence, bf16,
    and NumPy inputs; a used block id outside the cache is an error that
    names it."""
    lq, lk = [1, 0, 17, 1], [33, 5, 17, 64]
    q, kc, vc, t, lens = paged(4, 1, 4, 2, 32, 8, 8, lk, seed=40)
    qv = rand(sum(lq), 4, 32, seed=41)
    sinks = torch.tensor([0.0, 2.0, -1.0, 25.0])
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    args = (kc, vc)
    kw = dict(causal=True, sinks=sinks, alibi_slopes=slopes, softcap=12.0, window_size=(20, 0))
    out = attn_mlir.flash_attn_varlen_func(qv, *args, cu(lq), cu(lk), 17, 64, block_table=t,
                                           **kw)
    q0 = 0
    for b, nq in enumerate(lq):
        if not nq:
            continue
        want, _ = ref(qv[q0:q0 + nq][None], kc, vc, t[b:b + 1], lens[b:b + 1], 8, causal=True,
                      sinks=sinks, alibi=slopes, softcap=12.0, window=(20, 0))
        assert (out[q0:q0 + nq].to(torch.float64) - want[0]).abs().max().item() <= 2e-5
        q0 += nq
    assert q0 == out.shape[0]
    out_np = attn_mlir.flash_attn_varlen_func(qv.numpy(), kc.numpy(), vc.numpy(),
                                              cu(lq).numpy(), cu(lk).numpy(), 17, 64,
                                              block_table=t.numpy(), **kw)
    assert np.abs(out_np - out.numpy()).max() <= 1e-6
    qb, kb, vb = qv.bfloat16(), kc.bfloat16(), vc.bfloat16()
    out = attn_mlir.flash_attn_varlen_func(qb, kb, vb, cu(lq), cu(lk), 17, 64, block_table=t,
                                           causal=True)
    q0 = 0
    for b, nq in enumerate(lq):
        if not nq:
            continue
        want, _ = ref(qb[q0:q0 + nq][None], kb, vb, t[b:b + 1], lens[b:b + 1], 8, causal=True)
        assert (out[q0:q0 + nq].to(torch.float64) - want[0]).abs().max().item() <= TOL[torch.bfloat16]
        q0 += nq
    assert out.dtype == torch.bfloat16
    bad = t.clone()
    bad[3, 7] = kc.shape[0]
    with pytest.raises(attn_mlir.AttnError, match=r"element \[3, 7\] is %d, outside \[0, NB = %d\)"
                       % (kc.shape[0], kc.shape[0])):
        attn_mlir.flash_attn_varlen_func(qv, kc, vc, cu(lq), cu(lk), 17, 64, block_table=bad)


def test_varlen_refusals():
    q, k = rand(5, 2, 16), rand(6, 2, 16)
    with pytest.raises(ValueError, match="cu_seqlens_q must not decrease"):
        attn_mlir.flash_attn_varlen_func(q, k, k, torch.tensor([0, 3, 2], dtype=torch.int32),
                                         cu([3, 3]), 3, 3)
    with pytest.raises(ValueError, match="cu_seqlens_k ends at 7, past the 6 rows given"):
        attn_mlir.flash_attn_varlen_func(q, k, k, cu([2, 3]), cu([3, 4]), 3, 4)
    with pytest.raises(ValueError, match="max_seqlen_q/k = 2/4"):
        attn_mlir.flash_attn_varlen_func(q, k, k, cu([2, 3]), cu([3, 3]), 2, 4)
    with pytest.raises(ValueError, match="dropout_p"):
        attn_mlir.flash_attn_varlen_func(q, k, k, cu([2, 3]), cu([3, 3]), 3, 3, dropout_p=0.1)
    with pytest.raises(NotImplementedError, match="return_attn_probs"):
        attn_mlir.flash_attn_varlen_func(q, k, k, cu([2, 3]), cu([3, 3]), 3, 3,
                                         return_attn_probs=True)


def _quantize(x):
    """Symmetric int8 per (batch, token, head): max |x| -> 127."""
    scale = (x.abs().amax(-1) / 127).clamp_min(1e-12).float()
    return torch.round(x / scale[..., None]).to(torch.int8), scale


@pytest.mark.parametrize("layout", ["NHD", "HND"])
@pytest.mark.parametrize("tq,causal", [(1, False), (1, True), (3, True)])
def test_int8_cache(layout, tq, causal):
    """An int8 cache with per-token scales (k_scale/v_scale) against float64
    attention on the dequantised values: decode (the tile that reads int8
    in place) and a 3-row chunk, GQA, lengths 0 / short / full."""
    g = torch.Generator().manual_seed(21)
    b, h, hkv, t, d = 3, 8, 2, 70, 64
    q = torch.randn(b, tq, h, d, generator=g)
    kq, ks = _quantize(torch.randn(b, t, hkv, d, generator=g))
    vq, vs = _quantize(torch.randn(b, t, hkv, d, generator=g))
    lens = torch.tensor([0, 33, t], dtype=torch.int32)
    kf, vf = kq.double() * ks[..., None], vq.double() * vs[..., None]
    want, _ = ref(q, kf, vf, torch.arange(b)[:, None], lens, t, causal=causal)
    args = (kq, vq, ks, vs)
    if layout == "HND":
        args = tuple(x.transpose(1, 2).contiguous() for x in args)
    out = attn_mlir.flash_attn_with_kvcache(q, args[0], args[1], cache_seqlens=lens,
                                            causal=causal, k_scale=args[2], v_scale=args[3],
                                            kv_layout=layout)
    assert out.dtype == torch.float32 and out.shape == (b, tq, h, d)
    assert (out.double() - want).abs().max().item() < TOL[torch.float32]
    assert out[0].abs().max().item() == 0.0  # no key: 0


@pytest.mark.parametrize("layout", ["NHD", "HND"])
def test_int8_cache_batch_idx(layout):
    """cache_batch_idx picks the rows of a contiguous int8 cache (3 cache
    rows for 2 sequences, in another order), a new row appended to each
    through it (quantised): against float64 attention on the picked,
    dequantised rows."""
    g = torch.Generator().manual_seed(24)
    h, hkv, t, d = 8, 2, 40, 32
    q = torch.randn(2, 1, h, d, generator=g)
    kq, ks = _quantize(torch.randn(3, t, hkv, d, generator=g))
    vq, vs = _quantize(torch.randn(3, t, hkv, d, generator=g))
    idx = torch.tensor([2, 0], dtype=torch.int32)
    lens = torch.tensor([17, 39], dtype=torch.int32)
    k_new, v_new = torch.randn(2, 1, hkv, d, generator=g), torch.randn(2, 1, hkv, d, generator=g)
    args = [kq, vq, ks, vs]
    if layout == "HND":
        args = [x.transpose(1, 2).contiguous() for x in args]
    out = attn_mlir.flash_attn_with_kvcache(q, args[0], args[1], k=k_new, v=v_new,
                                            cache_seqlens=lens, cache_batch_idx=idx,
                                            causal=True, k_scale=args[2], v_scale=args[3],
                                            kv_layout=layout)
    if layout == "HND":  # the caches after the append, back in NHD
        args = [x.transpose(1, 2) for x in args]
    kf, vf = args[0].double() * args[2][..., None], args[1].double() * args[3][..., None]
    for b, (row, n) in enumerate(zip(idx.tolist(), lens.tolist())):
        # The new row was written at position n of cache row `row`.
        want_k, _ = _quantize(k_new[b, 0])
        assert torch.equal(args[0][row, n], want_k)
    want, _ = ref(q, kf, vf, idx[:, None].long(), lens + 1, t, causal=True)
    assert (out.double() - want).abs().max().item() < TOL[torch.float32]


def test_int8_cache_lse_and_refusals():
    g = torch.Generator().manual_seed(22)
    q = torch.randn(2, 1, 4, 32, generator=g)
    kq, ks = _quantize(torch.randn(2, 20, 2, 32, generator=g))
    vq, vs = _quantize(torch.randn(2, 20, 2, 32, generator=g))
    kvc = attn_mlir.flash_attn_with_kvcache
    out, lse = kvc(q, kq, vq, k_scale=ks, v_scale=vs, return_softmax_lse=True)
    want, want_lse = ref(q, kq.double() * ks[..., None], vq.double() * vs[..., None],
                         torch.arange(2)[:, None], torch.tensor([20, 20]), 20)
    assert (out.double() - want).abs().max().item() < TOL[torch.float32]
    assert (lse.double() - want_lse).abs().max().item() < 1e-4
    with pytest.raises(ValueError, match="needs k_scale"):
        kvc(q, kq, vq, v_scale=vs)
    with pytest.raises(ValueError, match=r"k_scale must be one float or have shape \[2, 20, 2\]"):
        kvc(q, kq, vq, k_scale=ks[:, :10], v_scale=vs)
    with pytest.raises(TypeError, match="k_scale must be float32"):
        kvc(q, kq, vq, k_scale=ks.double(), v_scale=vs)
    with pytest.raises(TypeError, match="must both be int8"):
        kvc(q, kq, vq.float(), k_scale=ks, v_scale=vs)
    with pytest.raises(ValueError, match="pass both k and v"):
        kvc(q, kq, vq, k=torch.randn(2, 1, 2, 32), k_scale=ks, v_scale=vs)
    with pytest.raises(ValueError, match="passes the cache's capacity"):
        kvc(q, kq, vq, k=torch.randn(2, 1, 2, 32), v=torch.randn(2, 1, 2, 32),
            k_scale=ks, v_scale=vs, cache_seqlens=20)
    with pytest.raises(ValueError, match="not a block_table"):
        kvc(q, kq, vq, k_scale=ks, v_scale=vs, cache_batch_idx=torch.tensor([1, 0]),
            block_table=torch.tensor([[0], [1]], dtype=torch.int32))
    with pytest.raises(ValueError, match="go with an int8 or fp8 k_cache"):
        kvc(q, kq.float(), vq.float(), k_scale=ks, v_scale=vs)


@pytest.mark.parametrize("layout", ["NHD", "HND"])
@pytest.mark.parametrize("tq", [1, 3])
def test_paged_int8_cache(layout, tq):
    """Paged int8 caches [NB, BS, Hkv, D] with scale caches [NB, BS, Hkv]
    through a shuffled block table, new rows appended (quantised, through
    the table) first: against float64 attention on the gathered,
    dequantised cache after the same append. GQA, causal, lengths 0 / short
    / across blocks; an out-of-range block id refused."""
    g = torch.Generator().manual_seed(24)
    b, h, hkv, d, nb, bs, mb, n = 3, 8, 2, 64, 24, 8, 5, 2
    q = torch.randn(b, tq, h, d, generator=g)
    kq, ks = _quantize(torch.randn(1, nb * bs, hkv, d, generator=g))
    vq, vs = _quantize(torch.randn(1, nb * bs, hkv, d, generator=g))
    kq, vq = kq.reshape(nb, bs, hkv, d), vq.reshape(nb, bs, hkv, d)
    ks, vs = ks.reshape(nb, bs, hkv), vs.reshape(nb, bs, hkv)
    table = torch.randperm(nb, generator=g)[:b * mb].reshape(b, mb).to(torch.int32)
    lens = torch.tensor([0, 11, 30], dtype=torch.int32)
    k_new, v_new = torch.randn(b, n, hkv, d, generator=g), torch.randn(b, n, hkv, d, generator=g)
    caches = [kq.clone(), vq.clone(), ks.clone(), vs.clone()]
    if layout == "HND":
        caches = [x.transpose(1, 2).contiguous() for x in caches]
    out = attn_mlir.flash_attn_with_kvcache(q, caches[0], caches[1], k=k_new, v=v_new,
                                            cache_seqlens=lens, block_table=table,
                                            k_scale=caches[2], v_scale=caches[3],
                                            kv_layout=layout, causal=True)
    # The expected caches: the new rows quantised, at each length, through
    # the table.
    for i, ln in enumerate(lens.tolist()):
        for new, c, sc in ((k_new, kq, ks), (v_new, vq, vs)):
            nq, nsc = _quantize(new[i:i + 1])
            for t in range(n):
                blk, row = table[i, (ln + t) // bs].item(), (ln + t) % bs
                c[blk, row], sc[blk, row] = nq[0, t], nsc[0, t]
    if layout == "HND":
        caches = [x.transpose(1, 2) for x in caches]
    for got, want in zip(caches, (kq, vq, ks, vs)):
        assert (got.double() - want.double()).abs().max().item() <= 1e-6 * max(
            1.0, want.double().abs().max().item())
    j = torch.arange(mb * bs)
    kf = torch.stack([kq[table[i, j // bs].long(), j % bs].double() *
                      ks[table[i, j // bs].long(), j % bs][..., None] for i in range(b)])
    vf = torch.stack([vq[table[i, j // bs].long(), j % bs].double() *
                      vs[table[i, j // bs].long(), j % bs][..., None] for i in range(b)])
    want, _ = ref(q, kf, vf, torch.arange(b)[:, None], lens + n, mb * bs, causal=True)
    assert out.shape == (b, tq, h, d)
    assert (out.double() - want).abs().max().item() < TOL[torch.float32]
    bad = table.clone()
    bad[2, 0] = nb
    with pytest.raises(Exception, match="outside"):
        attn_mlir.flash_attn_with_kvcache(q, kq, vq, cache_seqlens=lens, block_table=bad,
                                          k_scale=ks, v_scale=vs)


@pytest.mark.parametrize("layout", ["NHD", "HND"])
def test_int8_append_quantises_new_rows(layout):
    """New float rows are quantised per token and head (max |x| -> 127),
    written with their scales at each sequence's length, in place, and
    attended: against float64 attention on the quantised cache."""
    g = torch.Generator().manual_seed(23)
    b, h, hkv, t, d, n = 2, 4, 2, 16, 32, 3
    q = torch.randn(b, 1, h, d, generator=g)
    kq, ks = _quantize(torch.randn(b, t, hkv, d, generator=g))
    vq, vs = _quantize(torch.randn(b, t, hkv, d, generator=g))
    k_new, v_new = torch.randn(b, n, hkv, d, generator=g), torch.randn(b, n, hkv, d, generator=g)
    lens = torch.tensor([5, 13], dtype=torch.int32)
    caches = [kq.clone(), vq.clone(), ks.clone(), vs.clone()]
    if layout == "HND":
        caches = [x.transpose(1, 2).contiguous() for x in caches]
    out = attn_mlir.flash_attn_with_kvcache(q, caches[0], caches[1], k=k_new, v=v_new,
                                            cache_seqlens=lens, k_scale=caches[2],
                                            v_scale=caches[3], kv_layout=layout, causal=True)
    if layout == "HND":
        caches = [x.transpose(1, 2) for x in caches]
    # The expected cache: the new rows quantised the same way, in place.
    for i, ln in enumerate(lens.tolist()):
        for new, c, sc in ((k_new, kq, ks), (v_new, vq, vs)):
            nq, nsc = _quantize(new[i:i + 1])
            c[i, ln:ln + n], sc[i, ln:ln + n] = nq[0], nsc[0]
    for got, want in zip(caches, (kq, vq, ks, vs)):
        assert (got.double() - want.double()).abs().max().item() <= 1e-6 * max(
            1.0, want.double().abs().max().item())
    want_out, _ = ref(q, kq.double() * ks[..., None], vq.double() * vs[..., None],
                      torch.arange(b)[:, None], lens + n, t, causal=True)
    assert (out.double() - want_out).abs().max().item() < TOL[torch.float32]


# fp8 e4m3 (OCP E4M3FN) from its definition: (1 + m/8)·2^(e−7), subnormals
# (m/8)·2^−6, NaN at S.1111.111.
_E4M3 = torch.tensor([float("nan") if c & 0x7F == 0x7F else
                      (-1.0 if c & 0x80 else 1.0) *
                      ((c & 7) / 8 * 2.0 ** -6 if (c >> 3) & 15 == 0 else
                       (1 + (c & 7) / 8) * 2.0 ** (((c >> 3) & 15) - 7))
                      for c in range(256)], dtype=torch.float64)


def _fp8_decode(codes):
    return _E4M3[codes.long()]


def _fp8_encode(x):
    """The nearest finite code by brute force over all 254 of them (ties to
    the even code), saturating at ±448."""
    finite = torch.tensor([c for c in range(256) if c & 0x7F != 0x7F])
    vals = _E4M3[finite]
    x = x.double().clamp(-448, 448)
    dist = (x[..., None] - vals).abs()
    best = dist.min(-1, keepdim=True).values
    # Among the nearest codes (a tie: two), the even one; +0 over -0.
    cand = (dist == best) & ((finite % 2 == 0) | (dist == best).sum(-1, keepdim=True).eq(1))
    neg = torch.signbit(x)[..., None]  # a zero keeps the sign
    cand &= ~((finite == 0x80) & ~neg) & ~((finite == 0) & neg)
    return finite[cand.int().argmax(-1)].to(torch.uint8)


def _fp8_quantize(x, per_token):
    """Codes and scales: one scale max |x| / 448 for the tensor, or one per
    (batch, token, head)."""
    if per_token:
        scale = (x.abs().amax(-1) / 448).clamp_min(1e-12).float()
        return _fp8_encode(x / scale[..., None].double()), scale
    scale = float(x.abs().max() / 448)
    return _fp8_encode(x / scale), scale


# Six of the twelve (layout, scales, rows) combinations: every pair of
# values of any two of the three parameters once (a covering array; each
# case compiles its own kernel).
@pytest.mark.parametrize("layout,per_token,tq,causal", [
    ("NHD", False, 1, True), ("NHD", True, 3, True), ("NHD", False, 1, False),
    ("HND", True, 1, True), ("HND", False, 3, True), ("HND", True, 1, False)])
def test_fp8_cache(layout, per_token, tq, causal):
    """fp8 caches (uint8 codes, kv_cache_dtype="fp8_e4m3") with a
    per-tensor scale (vLLM's) or per-token ones, against float64 attention
    on the decoded values: decode (the tile that reads fp8 in place) and a
    3-row chunk, GQA, lengths 0 / short / full."""
    g = torch.Generator().manual_seed(31)
    b, h, hkv, t, d = 3, 8, 2, 70, 64
    q = torch.randn(b, tq, h, d, generator=g)
    kq, ks = _fp8_quantize(torch.randn(b, t, hkv, d, generator=g) * 4, per_token)
    vq, vs = _fp8_quantize(torch.randn(b, t, hkv, d, generator=g), per_token)
    lens = torch.tensor([0, 33, t], dtype=torch.int32)
    sk = ks[..., None].double() if per_token else ks
    sv = vs[..., None].double() if per_token else vs
    want, _ = ref(q, _fp8_decode(kq) * sk, _fp8_decode(vq) * sv, torch.arange(b)[:, None],
                  lens, t, causal=causal)
    args = [kq, vq, ks, vs]
    if layout == "HND":
        args = [x.transpose(1, 2).contiguous() if torch.is_tensor(x) else x for x in args]
    out = attn_mlir.flash_attn_with_kvcache(q, args[0], args[1], cache_seqlens=lens,
                                            causal=causal, k_scale=args[2], v_scale=args[3],
                                            kv_layout=layout, kv_cache_dtype="fp8_e4m3")
    assert out.dtype == torch.float32 and out.shape == (b, tq, h, d)
    assert (out.double() - want).abs().max().item() < TOL[torch.float32]
    assert out[0].abs().max().item() == 0.0  # no key: 0


@pytest.mark.parametrize("per_token", [False, True])
def test_fp8_paged_append(per_token):
    """Paged fp8 caches (NHD, blocks of 16, shuffled) with new float rows
    appended through the table: each row encoded to the nearest e4m3 code
    of x / scale (per tensor), or with its own scale max |x| / 448 (per
    token), in place; then attended, against float64 attention on the
    decoded caches. Scales as a 0-d tensor (per tensor)."""
    g = torch.Generator().manual_seed(32)
    b, h, hkv, d, nb, bs, mb, n = 3, 8, 2, 64, 16, 16, 4, 2
    q = torch.randn(b, 1, h, d, generator=g)
    kq, ks = _fp8_quantize(torch.randn(nb, bs, hkv, d, generator=g), per_token)
    vq, vs = _fp8_quantize(torch.randn(nb, bs, hkv, d, generator=g), per_token)
    if not per_token:
        ks, vs = torch.tensor(ks), torch.tensor(vs)
    table = torch.randperm(nb, generator=g)[:b * mb].reshape(b, mb).to(torch.int32)
    lens = torch.tensor([0, 15, 40], dtype=torch.int32)
    k_new = torch.randn(b, n, hkv, d, generator=g)
    v_new = torch.randn(b, n, hkv, d, generator=g)
    caches = [kq.clone(), vq.clone(), ks.clone(), vs.clone()]
    out = attn_mlir.flash_attn_with_kvcache(q, caches[0], caches[1], k=k_new, v=v_new,
                                            cache_seqlens=lens, block_table=table,
                                            k_scale=caches[2], v_scale=caches[3], causal=True,
                                            kv_cache_dtype="fp8")
    for i, ln in enumerate(lens.tolist()):
        for new, c, sc in ((k_new, kq, ks), (v_new, vq, vs)):
            for t in range(n):
                blk, row = table[i, (ln + t) // bs].item(), (ln + t) % bs
                x = new[i, t].double()
                if per_token:
                    s = (x.abs().amax(-1) / 448).float()
                    c[blk, row], sc[blk, row] = _fp8_encode(x / s[..., None].double()), s
                else:
                    c[blk, row] = _fp8_encode(x / float(sc))
    assert torch.equal(caches[0], kq) and torch.equal(caches[1], vq)
    if per_token:
        assert torch.allclose(caches[2], ks) and torch.allclose(caches[3], vs)
    j = torch.arange(mb * bs)

    def dense(c, sc):
        rows = [c[table[i, j // bs].long(), j % bs] for i in range(b)]
        if per_token:
            return torch.stack([_fp8_decode(r) * sc[table[i, j // bs].long(), j % bs][..., None]
                                for i, r in enumerate(rows)])
        return torch.stack([_fp8_decode(r) * float(sc) for r in rows])

    want, _ = ref(q, dense(kq, ks), dense(vq, vs), torch.arange(b)[:, None], lens + n,
                  mb * bs, causal=True)
    assert (out.double() - want).abs().max().item() < TOL[torch.float32]


def test_fp8_encoding_and_refusals():
    """The module's encoder against the brute-force one (ties, subnormals,
    saturation, signs); bad kv_cache_dtype, kinds and scales refused."""
    from attn_mlir import serving
    x = torch.cat([torch.randn(4000) * 100, torch.randn(1000) * 0.01,
                   torch.tensor([0.0, -0.0, 1.0625, 1.1875, 2 ** -10, 3 * 2 ** -11, 1e6, -500,
                                 448.0, 464.0])])
    got = torch.from_numpy(serving._encode_e4m3(x.numpy().astype(np.float32)))
    assert torch.equal(got, _fp8_encode(x.float()))
    g = torch.Generator().manual_seed(33)
    q = torch.randn(2, 1, 4, 32, generator=g)
    kq = torch.randint(0, 0x7E, (2, 20, 2, 32), generator=g).to(torch.uint8)
    kvc = attn_mlir.flash_attn_with_kvcache
    with pytest.raises(ValueError, match="kv_cache_dtype must be"):
        kvc(q, kq, kq, k_scale=1.0, v_scale=1.0, kv_cache_dtype="fp8_e5m2")
    with pytest.raises(TypeError, match="takes uint8"):
        kvc(q, kq.float(), kq.float(), k_scale=1.0, v_scale=1.0, kv_cache_dtype="fp8")
    with pytest.raises(ValueError, match="must be finite and > 0"):
        kvc(q, kq, kq, k_scale=-1.0, v_scale=1.0, kv_cache_dtype="fp8")
    with pytest.raises(ValueError, match="both be per tensor or both per token"):
        kvc(q, kq, kq, k_scale=1.0, v_scale=torch.ones(2, 20, 2), kv_cache_dtype="fp8")
    with pytest.raises(ValueError, match="needs v_scale"):
        kvc(q, kq, kq, k_scale=1.0, kv_cache_dtype="fp8")
    with pytest.raises(TypeError, match="must both be int8, both fp8 or both float"):
        kvc(q, kq.to(torch.int8), kq.float(), k_scale=1.0, v_scale=1.0)


def test_int8_cache_per_tensor_scale():
    """An int8 cache with one scale per tensor (a Python float)."""
    g = torch.Generator().manual_seed(34)
    q = torch.randn(2, 1, 8, 32, generator=g)
    kq = torch.randint(-127, 128, (2, 30, 2, 32), generator=g).to(torch.int8)
    vq = torch.randint(-127, 128, (2, 30, 2, 32), generator=g).to(torch.int8)
    out = attn_mlir.flash_attn_with_kvcache(q, kq, vq, k_scale=0.01, v_scale=0.02, causal=True)
    want, _ = ref(q, kq.double() * np.float32(0.01), vq.double() * np.float32(0.02),
                  torch.arange(2)[:, None], torch.tensor([30, 30]), 30, causal=True)
    assert (out.double() - want).abs().max().item() < TOL[torch.float32]


@pytest.mark.skipif(not hasattr(torch, "float8_e4m3fn"), reason="this torch has no float8")
def test_fp8_torch_dtype():
    """torch.float8_e4m3fn caches need no kv_cache_dtype."""
    g = torch.Generator().manual_seed(35)
    q = torch.randn(1, 1, 4, 32, generator=g)
    k = torch.randn(1, 20, 2, 32, generator=g).to(torch.float8_e4m3fn)
    v = torch.randn(1, 20, 2, 32, generator=g).to(torch.float8_e4m3fn)
    out = attn_mlir.flash_attn_with_kvcache(q, k, v, k_scale=1.0, v_scale=1.0)
    want, _ = ref(q, k.double(), v.double(), torch.arange(1)[:, None], torch.tensor([20]), 20)
    assert (out.double() - want).abs().max().item() < TOL[torch.float32]


@pytest.mark.parametrize("kind,per_token", [("int8", True), ("int8", False), ("fp8", False),
                                            ("fp8", True)])
@pytest.mark.parametrize("paged_keys", [True, False])
def test_varlen_quantized(kind, per_token, paged_keys):
    """flash_attn_varlen_func on int8 or fp8 k and v with per-token or
    per-tensor scales (k_scale, v_scale, kv_cache_dtype as in
    flash_attn_with_kvcache): a continuous-batching step on paged caches
    (prefill chunks, decodes, an empty sequence) and a ragged batch of
    contiguous rows, against float64 attention on the dequantised values."""
    g = torch.Generator().manual_seed(45)
    h, hkv, d = 8, 2, 64
    lq, lk = [5, 1, 0, 20, 1], [37, 64, 9, 20, 1]
    qv = torch.randn(sum(lq), h, d, generator=g)
    if paged_keys:
        _, kf, vf, t, lens = paged(5, 1, h, hkv, d, 16, 4, lk, seed=46)
    else:
        kf, vf = (torch.randn(sum(lk), hkv, d, generator=g) for _ in range(2))
        t = None
    if kind == "int8":
        quant = _quantize if per_token else (
            lambda x: (torch.round(x / (x.abs().max() / 127)).to(torch.int8),
                       float(x.abs().max() / 127)))
        decode = lambda c: c.double()  # noqa: E731
        extra = {}
    else:
        quant = lambda x: _fp8_quantize(x, per_token)  # noqa: E731
        decode, extra = _fp8_decode, dict(kv_cache_dtype="fp8_e4m3")
    kq, ks = quant(kf)
    vq, vs = quant(vf)
    sk = ks[..., None].double() if per_token else ks
    sv = vs[..., None].double() if per_token else vs
    kd, vd = decode(kq) * sk, decode(vq) * sv
    out = attn_mlir.flash_attn_varlen_func(qv, kq, vq, cu(lq), cu(lk), 20, 64, causal=True,
                                           block_table=t, k_scale=ks, v_scale=vs, **extra)
    assert out.dtype == torch.float32 and out.shape == qv.shape
    if paged_keys:
        q0 = 0
        for b, nq in enumerate(lq):
            if nq:
                want, _ = ref(qv[q0:q0 + nq][None].double(), kd, vd, t[b:b + 1],
                              lens[b:b + 1], 16, causal=True)
                assert (out[q0:q0 + nq].double() - want[0]).abs().max().item() < 2e-5
            q0 += nq
    else:
        want = ref_varlen(qv.double(), kd, vd, lq, lk, causal=True)
        assert (out.double() - want).abs().max().item() < 2e-5


def test_varlen_quantized_refusals():
    q, k = rand(5, 2, 16), rand(6, 2, 16)
    k8 = torch.zeros(6, 2, 16, dtype=torch.int8)
    with pytest.raises(ValueError, match="k_scale and v_scale go with int8 or fp8 k and v"):
        attn_mlir.flash_attn_varlen_func(q, k, k, cu([2, 3]), cu([3, 3]), 3, 3, k_scale=1.0,
                                         v_scale=1.0)
    with pytest.raises(ValueError, match="needs k_scale"):
        attn_mlir.flash_attn_varlen_func(q, k8, k8, cu([2, 3]), cu([3, 3]), 3, 3)
    with pytest.raises(ValueError, match=r"shape \[6, 2\]"):
        attn_mlir.flash_attn_varlen_func(q, k8, k8, cu([2, 3]), cu([3, 3]), 3, 3,
                                         k_scale=torch.ones(6, 2, 16), v_scale=torch.ones(6, 2, 16))
    with pytest.raises(NotImplementedError, match=r"alibi_slopes \[B, H\] with int8"):
        attn_mlir.flash_attn_varlen_func(q, k8, k8, cu([2, 3]), cu([3, 3]), 3, 3, k_scale=1.0,
                                         v_scale=1.0, alibi_slopes=torch.ones(2, 2))
