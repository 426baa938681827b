"""attn_mlir.flex_attention / create_block_mask: score and mask functions
traced into the fused CPU kernel. Expected values: a float64 reference that
evaluates the same Python functions eagerly on torch index grids (not our
tracer), then softmax and P·V with torch's plain ops; fully masked rows are
0 as in FlexAttention."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import attn_mlir  # noqa: E402

TOL = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def ref(q, k, v, score_mod=None, mask_mod=None, scale=None):
    q, k, v = (t.to(torch.float64) for t in (q, k, v))
    b, h, lq, e = q.shape
    hk, lk = k.shape[1], k.shape[2]
    if hk != h:
        k = k.repeat_interleave(h // hk, 1)
        v = v.repeat_interleave(h // hk, 1)
    s = (q @ k.transpose(-1, -2)) * (1 / math.sqrt(e) if scale is None else scale)
    grid = (torch.arange(b)[:, None, None, None], torch.arange(h)[None, :, None, None],
            torch.arange(lq)[None, None, :, None], torch.arange(lk)[None, None, None, :])
    if score_mod is not None:
        s = score_mod(s, *grid).to(torch.float64)
    if mask_mod is not None:
        keep = torch.as_tensor(mask_mod(*grid)).expand(b, h, lq, lk)
        s = s.masked_fill(~keep, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return p @ v


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def qkv(b, h, hk, lq, lk, e, dtype=torch.float32, ev=None):
    return (rand(b, h, lq, e, dtype=dtype, seed=1), rand(b, hk, lk, e, dtype=dtype, seed=2),
            rand(b, hk, lk, ev or e, dtype=dtype, seed=3))


def check(q, k, v, **kw):
    gqa = q.shape[1] != k.shape[1]
    out = attn_mlir.flex_attention(q, k, v, enable_gqa=gqa, **kw)
    assert out.dtype == q.dtype and out.shape == (*q.shape[:3], v.shape[3])
    mask_mod = kw.get("mask_mod") or (kw["block_mask"].mask_mod if kw.get("block_mask") else None)
    want = ref(q, k, v, kw.get("score_mod"), mask_mod, kw.get("scale"))
    err = (out.to(torch.float64) - want).abs().max().item()
    assert err <= TOL[q.dtype], err
    return out


# --- score functions ---------------------------------------------------------

def test_relative_bias_table_f32_dtypes():
    L = 77  # not a multiple of any tile
    bias = rand(4, 2 * L - 1, seed=9)

    def rel(score, b, h, qi, ki):
        return score + bias[h, qi - ki + L - 1]
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        check(*qkv(2, 4, 4, L, L, 32, dt), score_mod=rel)


def test_softcap_alibi_and_captures_of_every_rank():
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    cap = torch.tensor(20.0)                        # rank 0
    table = rand(2, 4, 40, 40, seed=5)              # rank 4, indexed by b, h, q, kv

    def mod(score, b, h, qi, ki):
        s = torch.tanh(score / cap) * cap
        s = s - slopes[h] * (qi - ki).abs()
        return s + 0.1 * table[b, h, qi, ki]
    check(*qkv(2, 4, 4, 40, 40, 16), score_mod=mod)


def test_where_and_integer_arithmetic():
    # Python's // and % are floor division and the divisor's sign.
    def mod(score, b, h, qi, ki):
        bucket = (qi - ki) // 7 + (qi - ki) % 3
        return torch.where(bucket > 1, score * 0.5, score - bucket * 0.25)
    check(*qkv(1, 2, 2, 50, 50, 16), score_mod=mod)


def test_gqa_decode_with_captured_offset():
    # Decode: one query at position offset[b] of a 300-key cache; the
    # positions in the functions are raw (0 for the query).
    offset = torch.tensor([299, 150], dtype=torch.int64)

    def causal_at_offset(b, h, qi, ki):
        return ki <= qi + offset[b]

    def mod(score, b, h, qi, ki):
        return score - 0.01 * (qi + offset[b] - ki).float()
    check(*qkv(2, 8, 2, 1, 300, 64), score_mod=mod, mask_mod=causal_at_offset)


def test_cross_lengths_and_value_dim():
    check(*qkv(2, 4, 4, 33, 129, 32, ev=16), score_mod=lambda s, b, h, i, j: s * 1.5,
          scale=0.3)


# --- mask functions ------------------------------------------------------

def test_document_mask_from_captured_ids():
    L = 200
    doc = torch.repeat_interleave(torch.arange(5, dtype=torch.int32),
                                  torch.tensor([30, 50, 20, 60, 40]))

    def docs(b, h, qi, ki):
        return (doc[qi] == doc[ki]) & (ki <= qi)
    for dt in (torch.float32, torch.bfloat16):
        check(*qkv(1, 2, 2, L, L, 32, dt), mask_mod=docs)


def test_fully_masked_rows_and_tiles_give_zero():
    # Rows q < 70 see nothing (whole tiles masked); the rest see keys < q.
    def late(b, h, qi, ki):
        return (qi >= 70) & (ki < qi)
    q, k, v = qkv(1, 2, 2, 130, 130, 16)
    out = check(q, k, v, mask_mod=late)
    assert torch.count_nonzero(out[:, :, :70]) == 0
    assert not torch.isnan(out).any()


def test_bool_capture_and_prefix_lm():
    keep_key = torch.rand(90, generator=torch.Generator().manual_seed(4)) > 0.3
    prefix = 10

    def prefix_lm(b, h, qi, ki):
        return ((ki < prefix) | (ki <= qi)) & keep_key[ki]
    check(*qkv(2, 2, 1, 90, 90, 32), mask_mod=prefix_lm)


# --- the named features as functions give the same result -----------------

def named_and_function(named, fn_kw, shape=(2, 4, 4, 70, 70, 32)):
    q, k, v = qkv(*shape)
    a = attn_mlir.scaled_dot_product_attention(q, k, v, **named)
    b = attn_mlir.flex_attention(q, k, v, enable_gqa=shape[1] != shape[2], **fn_kw)
    return (a - b).abs().max().item()


def test_named_causal_window_key_lengths_equal_mask_functions():
    # Keep rules are selects: the same kept scores, bit for bit.
    assert named_and_function({"is_causal": True},
                              {"mask_mod": lambda b, h, i, j: j <= i}) == 0.0
    assert named_and_function({"is_causal": True, "window": 16},
                              {"mask_mod": lambda b, h, i, j: (j <= i) & (i - j <= 16)}) == 0.0
    lens = torch.tensor([50, 9], dtype=torch.int32)
    assert named_and_function({"key_lengths": lens},
                              {"mask_mod": lambda b, h, i, j: j < lens[b]}) == 0.0


def test_named_softcap_and_alibi_equal_score_functions():
    # The function computes in natural units, the named features in log2
    # units: equal to rounding.
    assert named_and_function({"softcap": 30.0},
                              {"score_mod": lambda s, b, h, i, j: torch.tanh(s / 30.0) * 30.0}) < 2e-6
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    assert named_and_function({"alibi_slopes": slopes},
                              {"score_mod": lambda s, b, h, i, j: s - slopes[h] * (i - j).abs()}) < 2e-6


# --- block masks ---------------------------------------------------------

def test_create_block_mask_lists_partial_and_full_tiles():
    bm = attn_mlir.create_block_mask(lambda b, h, i, j: j <= i, None, None, 64, 64, BLOCK_SIZE=16)
    assert bm.kv_num_blocks.shape == (1, 1, 4)
    assert bm.kv_num_blocks.tolist() == [[[1, 1, 1, 1]]]          # the diagonal tile
    assert bm.full_kv_num_blocks.tolist() == [[[0, 1, 2, 3]]]     # the tiles below it
    assert bm.kv_indices[0, 0, :, 0].tolist() == [0, 1, 2, 3]
    assert bm.full_kv_indices[0, 0, 3, :3].tolist() == [0, 1, 2]
    assert abs(bm.sparsity() - 37.5) < 1e-9


def lists_of_grid(mask_mod, B, H, lq, lk, bq, bk):
    """The reference: FlexAttention's lists from mask_mod evaluated eagerly
    on the whole index grid (create_block_mask evaluates it compiled, per
    tile, through attn.block_mask)."""
    grid = (torch.arange(B)[:, None, None, None], torch.arange(H)[None, :, None, None],
            torch.arange(lq)[None, None, :, None], torch.arange(lk)[None, None, None, :])
    keep = torch.as_tensor(mask_mod(*grid)).expand(B, H, lq, lk)
    nq, nk = -(-lq // bq), -(-lk // bk)
    counts = {"partial": torch.zeros(B, H, nq, dtype=torch.int32),
              "full": torch.zeros(B, H, nq, dtype=torch.int32)}
    lists = {k: torch.zeros(B, H, nq, nk, dtype=torch.int32) for k in counts}
    for b in range(B):
        for h in range(H):
            for m in range(nq):
                for n in range(nk):
                    tile = keep[b, h, m * bq:(m + 1) * bq, n * bk:(n + 1) * bk]
                    kind = "full" if bool(tile.all()) else "partial" if bool(tile.any()) else None
                    if kind:
                        lists[kind][b, h, m, counts[kind][b, h, m]] = n
                        counts[kind][b, h, m] += 1
    return counts["partial"], lists["partial"], counts["full"], lists["full"]


@pytest.mark.parametrize("case", ["documents", "window_per_head", "prefix_table", "none_kept"])
def test_create_block_mask_matches_the_lists_of_the_grid(case):
    # attn.block_mask against the lists of the eagerly evaluated grid:
    # captures of ranks 1 and 2, masks that depend on b and h, float
    # arithmetic, blocks that do not divide the lengths (tail tiles count
    # only their positions inside), a mask that keeps nothing.
    B, H, lq, lk, block = 2, 3, 70, 53, (16, 12)
    doc = torch.tensor([0] * 20 + [1] * 30 + [2] * 20, dtype=torch.int32)
    prefix = torch.tensor([[5, 9, 0], [30, 2, 17]], dtype=torch.int64)   # [B, H]

    masks = {
        "documents": lambda b, h, i, j: doc[i] == doc[j],
        "window_per_head": lambda b, h, i, j: ((i - j).float().abs() <= 4.5 + 6.0 * h)
        & (b + j >= 1),
        "prefix_table": lambda b, h, i, j: (j <= i) | (j < prefix[b, h]),
        "none_kept": lambda b, h, i, j: (i < 0),
    }
    mask_mod = masks[case]
    bm = attn_mlir.create_block_mask(mask_mod, B, H, lq, lk, BLOCK_SIZE=block)
    want = lists_of_grid(mask_mod, B, H, lq, lk, *block)
    got = (bm.kv_num_blocks, bm.kv_indices, bm.full_kv_num_blocks, bm.full_kv_indices)
    for g, w in zip(got, want):
        assert g.dtype == np.int32 and g.shape == tuple(w.shape)
        assert np.array_equal(g, w.numpy())
    if case == "none_kept":
        assert bm.sparsity() == 100.0


def test_create_block_mask_refuses_bad_sizes_and_untraceable_masks():
    with pytest.raises(ValueError, match="KV_LEN must be a positive integer"):
        attn_mlir.create_block_mask(lambda b, h, i, j: j <= i, 1, 1, 8, 0)
    with pytest.raises(ValueError, match="BLOCK_SIZE must be a positive integer"):
        attn_mlir.create_block_mask(lambda b, h, i, j: j <= i, 1, 1, 8, 8, BLOCK_SIZE=(0, 4))
    with pytest.raises(attn_mlir.flex.TraceError, match="create_block_mask: cannot trace mask"):
        attn_mlir.create_block_mask(lambda b, h, i, j: i + j, 1, 1, 8, 8)


def test_block_mask_gives_the_same_output():
    L = 100
    doc = torch.repeat_interleave(torch.arange(4, dtype=torch.int32), 25)

    def docs(b, h, qi, ki):
        return doc[qi] == doc[ki]
    q, k, v = qkv(1, 2, 2, L, L, 32)
    bm = attn_mlir.create_block_mask(docs, 1, 2, L, L, BLOCK_SIZE=32)
    a = attn_mlir.flex_attention(q, k, v, block_mask=bm)
    b = attn_mlir.flex_attention(q, k, v, mask_mod=docs)
    assert torch.equal(a, b)
    check(q, k, v, block_mask=bm)


def block_keep(bm, lq, lk, mask_mod):
    """FlexAttention's meaning of a BlockMask, element by element, from its
    lists (not from block_states): a key of a block listed full is kept, of
    a block listed partial where mask_mod keeps it, of any other never."""
    bq, bk = bm.BLOCK_SIZE
    bb, hh = bm.shape[:2]
    state = torch.zeros(bb, hh, lq, lk, dtype=torch.int64)
    for num, idx, val in ((bm.kv_num_blocks, bm.kv_indices, 1),
                          (bm.full_kv_num_blocks, bm.full_kv_indices, 2)):
        for b in range(bb):
            for h in range(hh):
                for qb in range(num.shape[2]):
                    for n in range(int(num[b, h, qb])):
                        kb = int(idx[b, h, qb, n])
                        state[b, h, qb * bq:(qb + 1) * bq, kb * bk:(kb + 1) * bk] = val
    grid = (torch.arange(bb)[:, None, None, None], torch.arange(hh)[None, :, None, None],
            torch.arange(lq)[None, None, :, None], torch.arange(lk)[None, None, None, :])
    inner = torch.as_tensor(mask_mod(*grid)).expand(bb, hh, lq, lk)
    return (state == 2) | ((state == 1) & inner)


def test_block_mask_lists_decide_which_blocks_take_part():
    # Lists made for one mask, read with another mask function: as in
    # FlexAttention, unlisted blocks are dropped, full blocks kept whole
    # (the function is not asked there) and partial blocks masked by it.
    L = 90
    causal = attn_mlir.create_block_mask(lambda b, h, i, j: j <= i, None, None, L, L,
                                         BLOCK_SIZE=16)
    q, k, v = qkv(1, 2, 2, L, L, 16)
    for mask_mod in (attn_mlir.noop_mask,            # block-causal
                     lambda b, h, i, j: j < i,        # strict on the diagonal only
                     lambda b, h, i, j: (i - j) % 3 == 0):
        bm = attn_mlir.BlockMask(
            mask_mod, causal.shape, causal.BLOCK_SIZE, causal.kv_num_blocks,
            causal.kv_indices, causal.full_kv_num_blocks, causal.full_kv_indices)
        keep = block_keep(bm, L, L, mask_mod)
        out = attn_mlir.flex_attention(q, k, v, block_mask=bm)
        want = ref(q, k, v, mask_mod=lambda b, h, i, j: keep[0, 0, i, j])
        assert (out.to(torch.float64) - want).abs().max().item() <= TOL[torch.float32]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_block_mask_skips_what_the_bounds_cannot_see(dtype):
    # A sliding window written with float arithmetic: the kernel's own
    # bounds cannot follow it (every score evaluated), the block mask's
    # lists can. Per-head, per-batch lists (B, H given), blocks that do
    # not divide L, GQA.
    L = 150

    def window(b, h, i, j):
        d = (i - j).float()
        return (d >= 0.0) & (d <= 20.0 + 10.0 * h)
    q, k, v = qkv(2, 4, 2, L, L, 16, dtype=dtype)
    bm = attn_mlir.create_block_mask(window, 2, 4, L, L, BLOCK_SIZE=(32, 24))
    assert bm.kv_num_blocks.shape == (2, 4, 5)
    a = attn_mlir.flex_attention(q, k, v, block_mask=bm, enable_gqa=True)
    b = attn_mlir.flex_attention(q, k, v, mask_mod=window, enable_gqa=True)
    assert (a.to(torch.float64) - b.to(torch.float64)).abs().max().item() <= TOL[dtype]
    check(q, k, v, block_mask=bm)


def test_an_empty_capture_is_refused_not_read():
    # Reads are clamped into a capture's shape; an empty one has none. The
    # static kernel's verifier and, after a first shape, the dynamic
    # kernel's call-time shape check refuse it.
    def docs_of(doc):
        return lambda b, h, i, j: doc[i] == doc[j]
    q, k, v = qkv(1, 2, 2, 12, 12, 16)
    with pytest.raises(attn_mlir.AttnError, match="has no elements"):
        attn_mlir.flex_attention(q, k, v, mask_mod=docs_of(torch.zeros(0, dtype=torch.int64)))
    check(q, k, v, mask_mod=docs_of(torch.arange(12) // 5))
    q, k, v = qkv(1, 2, 2, 9, 9, 16)
    check(q, k, v, mask_mod=docs_of(torch.arange(9) // 5))       # the dynamic kernel
    with pytest.raises(attn_mlir.AttnError, match="has no elements"):
        attn_mlir.flex_attention(q, k, v, mask_mod=docs_of(torch.zeros(0, dtype=torch.int64)))


def test_block_mask_of_other_shapes_or_blocks_is_refused():
    q, k, v = qkv(2, 2, 2, 40, 40, 16)
    bm = attn_mlir.create_block_mask(lambda b, h, i, j: j <= i, 3, None, 40, 40, BLOCK_SIZE=16)
    with pytest.raises(ValueError, match="made for B, H"):
        attn_mlir.flex_attention(q, k, v, block_mask=bm)
    bm = attn_mlir.create_block_mask(lambda b, h, i, j: j <= i, None, None, 40, 40, BLOCK_SIZE=16)
    bm.kv_indices[0, 0, 1, 0] = 7
    with pytest.raises(ValueError, match="outside"):
        attn_mlir.flex_attention(q, k, v, block_mask=bm)


# --- the tracer -------------------------------------------------------------

def test_untraceable_constructs_are_named():
    q, k, v = qkv(1, 1, 1, 8, 8, 16)

    def branchy(score, b, h, qi, ki):
        if qi > ki:
            return score
        return score * 2
    with pytest.raises(attn_mlir.TraceError, match="Python control flow on a traced value"):
        attn_mlir.flex_attention(q, k, v, score_mod=branchy)
    with pytest.raises(attn_mlir.TraceError, match="cumsum is not supported"):
        attn_mlir.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: torch.cumsum(s, 0))
    with pytest.raises(attn_mlir.TraceError, match="mask_mod must return a boolean"):
        attn_mlir.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: i - j)
    table = torch.zeros(4, 4)
    with pytest.raises(attn_mlir.TraceError, match="must be indexed in every dim"):
        attn_mlir.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + table[i])
    with pytest.raises(ValueError, match="enable_gqa=True"):
        attn_mlir.flex_attention(*qkv(1, 4, 2, 8, 8, 16))


def test_kernels_are_cached_per_traced_body():
    q, k, v = qkv(1, 2, 2, 20, 20, 16)
    attn_mlir.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s * 0.75)
    before = attn_mlir.cache_info()["misses"]
    # Another function object with the same body: the same kernel.
    attn_mlir.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s * 0.75)
    assert attn_mlir.cache_info()["misses"] == before
    attn_mlir.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s * 0.5)
    assert attn_mlir.cache_info()["misses"] == before + 1


def test_one_kernel_for_every_batch_size_and_length():
    # The first shape gets a static kernel; the second a kernel whose
    # batch, lengths and captured tensors' dims are dynamic, which every
    # later batch size or length (with a capture of another size and a
    # block mask of another grid) reuses, and is still right. (Each grid's
    # block mask is a kernel of its own, made before counting.)
    def causal(bb, h, i, j):
        return j <= i
    shapes = ((1, 40, 40), (2, 40, 40), (1, 70, 90), (3, 17, 130), (1, 40, 40))
    masks = {(lq, lk): attn_mlir.create_block_mask(causal, None, None, lq, lk, BLOCK_SIZE=16)
             for _, lq, lk in shapes}

    def run(b, lq, lk):
        bias = rand(2, lk, seed=lk)

        def per_key(s, bb, h, i, j):
            return s + bias[h, j]
        q, k, v = qkv(b, 2, 2, lq, lk, 16)
        bm = masks[(lq, lk)]
        out = attn_mlir.flex_attention(q, k, v, score_mod=per_key, block_mask=bm)
        want = ref(q, k, v, per_key, causal)
        assert (out.to(torch.float64) - want).abs().max().item() <= TOL[torch.float32]
    run(*shapes[0])
    before = attn_mlir.cache_info()["misses"]
    run(*shapes[1])
    assert attn_mlir.cache_info()["misses"] == before + 1
    for shape in shapes[2:]:
        run(*shape)
    assert attn_mlir.cache_info()["misses"] == before + 1


# --- the IR route: the reference and the CPU pipelines agree ---------------

IR = """
func.func @f(%q: tensor<1x2x45x16xf32>, %k: tensor<1x2x45x16xf32>, %v: tensor<1x2x45x16xf32>,
             %keep: tensor<45xi1>, %shift: tensor<2xi64>) -> tensor<1x2x45x16xf32> {
  %o = attn.sdpa %q, %k, %v captures(%keep, %shift) {scale = 0.25 : f32} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %kp: tensor<45xi1>, %sh: tensor<2xi64>):
    %near = arith.cmpi ult, %j, %i : index
    %r = scf.if %near -> f32 {
      %x = tensor.extract %sh[%h] : tensor<2xi64>
      %xf = arith.sitofp %x : i64 to f32
      %t = arith.addf %s, %xf : f32
      scf.yield %t : f32
    } else {
      scf.yield %s : f32
    }
    attn.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %kp: tensor<45xi1>, %sh: tensor<2xi64>):
    %c = tensor.extract %kp[%j] : tensor<45xi1>
    attn.yield %c : i1
  } : (tensor<1x2x45x16xf32>, tensor<1x2x45x16xf32>, tensor<1x2x45x16xf32>, tensor<45xi1>,
       tensor<2xi64>) -> tensor<1x2x45x16xf32>
  return %o : tensor<1x2x45x16xf32>
}
"""


def test_ir_functions_reference_and_cpu_agree():
    q, k, v = (t.numpy() for t in qkv(1, 2, 2, 45, 45, 16))
    keep = np.random.default_rng(3).random(45) > 0.4
    shift = np.array([1, -2], dtype=np.int64)
    i, j = np.arange(45)[:, None], np.arange(45)[None, :]
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k.astype(np.float64)) * 0.25
    s = np.where(j < i, s + shift[None, :, None, None], s)
    s = np.where(keep[None, None, None, :], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    for pipeline in ("reference", "cpu"):
        out = attn_mlir.compile(IR, pipeline=pipeline)(q, k, v, keep, shift)
        assert np.abs(out - want).max() < 2e-6, pipeline


# --- block sparsity from the compiler's own bounds -------------------------
# Each mask below is bounded per tile (ModBounds.h): tiles it drops are
# skipped, tiles it keeps whole are not masked per element. Each is built
# so that a wrong bound (a tile thought empty or full that is not) changes
# the output.

def test_bounds_one_dropped_score_in_an_otherwise_full_tile():
    def almost_all(b, h, qi, ki):
        return (qi != 37) | (ki != 81)
    check(*qkv(1, 2, 2, 150, 150, 16), mask_mod=almost_all)


def test_bounds_one_kept_score_in_an_otherwise_empty_region():
    def lone(b, h, qi, ki):
        return ((qi == 100) & (ki == 3)) | (ki == qi)
    check(*qkv(1, 1, 1, 140, 140, 16), mask_mod=lone)


def test_bounds_unsorted_document_ids_and_blocks():
    g = torch.Generator().manual_seed(11)
    doc = torch.randint(0, 4, (160,), generator=g, dtype=torch.int32)   # not sorted

    def docs(b, h, qi, ki):
        return (doc[qi] == doc[ki]) & (qi // 48 >= ki // 48)
    check(*qkv(2, 2, 2, 160, 160, 16), mask_mod=docs)


def test_bounds_window_prefix_and_gqa_decode():
    def window_or_prefix(b, h, qi, ki):
        return ((ki <= qi) & (qi - ki <= 20)) | (ki < 4 + h)
    check(*qkv(1, 4, 2, 200, 200, 16), mask_mod=window_or_prefix)
    start = torch.tensor([250, 10], dtype=torch.int64)

    def decode_window(b, h, qi, ki):
        return (ki <= qi + start[b]) & (qi + start[b] - ki < 32)
    check(*qkv(2, 8, 2, 1, 300, 32), mask_mod=decode_window)


def mask_function_ir(body):
    """Self-attention of q [1, 1, 130, 16] (scale 0.25) with a mask
    function of (b, h, i, j) whose body is `body` (IR lines ending in
    attn.yield)."""
    t = "tensor<1x1x130x16xf32>"
    return ("func.func @f(%%q: %s) -> %s {\n"
            "  %%o = attn.sdpa %%q, %%q, %%q {scale = 0.25 : f32} mask_mod {\n"
            "  ^bb0(%%b: index, %%h: index, %%i: index, %%j: index):\n%s\n"
            "  } : (%s, %s, %s) -> %s\n  return %%o : %s\n}\n"
            % (t, t, body, t, t, t, t, t))


def check_mask_function_ir(body, keep_ij):
    """mask_function_ir(body) on the cpu pipeline against float64 attention
    that keeps key j of row i where keep_ij[i, j]."""
    q = qkv(1, 1, 1, 130, 130, 16)[0].numpy()
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), q.astype(np.float64)) * 0.25
    s = np.where(keep_ij, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ q.astype(np.float64)
    out = attn_mlir.compile(mask_function_ir(body), pipeline="cpu")(q)
    assert np.abs(out - want).max() < 2e-6


ROW, COL = np.arange(130)[:, None], np.arange(130)[None, :]


def test_bounds_unsigned_compare_of_a_negative_difference():
    # i - j < 40 unsigned: false where j > i (the difference wraps), so
    # a causal window; a bound that took it as signed would keep j > i.
    check_mask_function_ir("""
    %d = arith.subi %i, %j : index
    %c40 = arith.constant 40 : index
    %near = arith.cmpi ult, %d, %c40 : index
    attn.yield %near : i1""", (COL <= ROW) & (ROW - COL < 40))


def test_bounds_of_bools_compared_and_sign_extended():
    # An i1's tile bounds are (surely true, possibly true), not a signed
    # interval (true is -1 as a signed i1). Equality of two bools that are
    # each true somewhere in a tile, and a bool sign-extended to 0 / -1 and
    # compared, must neither skip a tile that keeps keys nor keep a tile
    # whole that drops some.
    g = torch.Generator().manual_seed(5)
    keep = torch.rand(140, generator=g) > 0.5

    def same(b, h, qi, ki):
        return (ki <= qi) == keep[ki]
    check(*qkv(1, 2, 2, 140, 140, 16), mask_mod=same)
    # -1 < 0 exactly where j <= i.
    check_mask_function_ir("""
    %c = arith.cmpi sle, %j, %i : index
    %e = arith.extsi %c : i1 to i32
    %zero = arith.constant 0 : i32
    %keep = arith.cmpi slt, %e, %zero : i32
    attn.yield %keep : i1""", COL <= ROW)
    # Both or neither of j <= i, j >= i - 20 (neither never happens): the
    # band i - 20 <= j <= i.
    check_mask_function_ir("""
    %below = arith.cmpi sle, %j, %i : index
    %c20 = arith.constant 20 : index
    %lo = arith.subi %i, %c20 : index
    %near = arith.cmpi sge, %j, %lo : index
    %keep = arith.cmpi eq, %below, %near : i1
    attn.yield %keep : i1""", (COL <= ROW) == (COL >= ROW - 20))


def test_and_or_noop_masks_compose():
    doc = torch.repeat_interleave(torch.arange(3, dtype=torch.int32), torch.tensor([20, 30, 14]))

    def causal(b, h, qi, ki):
        return ki <= qi

    def same_doc(b, h, qi, ki):
        return doc[qi] == doc[ki]

    def sink(b, h, qi, ki):
        return ki < 2
    q, k, v = qkv(1, 2, 2, 64, 64, 16)
    check(q, k, v, mask_mod=attn_mlir.or_masks(attn_mlir.and_masks(causal, same_doc), sink))
    full = attn_mlir.flex_attention(q, k, v, mask_mod=attn_mlir.noop_mask)
    assert torch.allclose(full, attn_mlir.flex_attention(q, k, v), atol=0, rtol=0)
    bm = attn_mlir.create_block_mask(attn_mlir.and_masks(causal, same_doc), None, None, 64, 64,
                                     BLOCK_SIZE=16)
    # Documents [0, 20), [20, 50), [50, 64) in 16-key tiles: query tile 3
    # (48-63) sees key tiles 1-3 in part and tile 0 not at all; no tile is
    # kept whole (every one holds a document edge or the diagonal).
    assert bm.kv_num_blocks.tolist() == [[[1, 2, 2, 3]]]
    assert bm.kv_indices[0, 0, 3, :3].tolist() == [1, 2, 3]
    assert bm.full_kv_num_blocks.tolist() == [[[0, 0, 0, 0]]]


def test_return_lse_natural_log_and_empty_rows():
    bias = rand(4, 2 * 70 - 1, seed=8)

    def rel(score, b, h, qi, ki):
        return score + bias[h, qi - ki + 69]

    def late(b, h, qi, ki):
        return (qi >= 5) & (ki <= qi)
    for dt in (torch.float32, torch.bfloat16):
        q, k, v = qkv(2, 4, 2, 70, 70, 32, dt)
        out, lse = attn_mlir.flex_attention(q, k, v, score_mod=rel, mask_mod=late,
                                            enable_gqa=True, return_lse=True)
        assert out.dtype == dt and lse.dtype == torch.float32 and lse.shape == (2, 4, 70)
        assert (out.to(torch.float64) - ref(q, k, v, rel, late)).abs().max() <= TOL[dt]
        kk = k.to(torch.float64).repeat_interleave(2, 1)
        s = (q.to(torch.float64) @ kk.transpose(-1, -2)) / math.sqrt(32)
        i, j = torch.arange(70)[:, None], torch.arange(70)[None, :]
        s = (s + bias.to(torch.float64)[:, i - j + 69]).masked_fill(~late(0, 0, i, j),
                                                                     float("-inf"))
        want = torch.logsumexp(s, -1)
        assert torch.isinf(lse[:, :, :5]).all() and (lse[:, :, :5] < 0).all()
        assert (lse[:, :, 5:].to(torch.float64) - want[:, :, 5:]).abs().max() < 1e-4


def test_gradients_through_score_and_mask_functions():
    # dQ, dK, dV of a softcapped score function with a captured relative
    # bias table and a causal mask function, GQA, against torch.autograd
    # of the float64 reference (the same Python functions, evaluated
    # eagerly).
    table = rand(2 * 24 - 1, seed=9)

    def score_mod(s, b, h, qi, kv):
        return 20 * torch.tanh(s / 20) + table[qi - kv + 23]

    def causal(b, h, qi, kv):
        return qi >= kv

    q, k, v = qkv(2, 4, 2, 24, 24, 16)
    qa, ka, va = (t.clone().requires_grad_() for t in (q, k, v))
    out = attn_mlir.flex_attention(qa, ka, va, score_mod=score_mod, mask_mod=causal,
                                   enable_gqa=True)
    do = rand(*out.shape, seed=5)
    got = torch.autograd.grad(out, (qa, ka, va), do)
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    want_out = ref(q64, k64, v64, score_mod=score_mod, mask_mod=causal)
    want = torch.autograd.grad(want_out, (q64, k64, v64), do.double())
    for g, w in zip((out,) + got, (want_out,) + want):
        assert g.shape == w.shape
        assert (g.double() - w).abs().max().item() <= 2e-5 * max(1.0, w.abs().max().item())
    # Only some inputs require grad; the others get none.
    qb = q.clone().requires_grad_()
    (dq,) = torch.autograd.grad(attn_mlir.flex_attention(qb, k, v, score_mod=score_mod,
                                                         mask_mod=causal, enable_gqa=True),
                                (qb,), do)
    assert (dq.double() - want[0]).abs().max().item() <= 2e-5 * max(1.0, want[0].abs().max())
    # Refused: return_lse with grad.
    with pytest.raises(ValueError, match="return_lse=True with a query"):
        attn_mlir.flex_attention(qa, ka, va, enable_gqa=True, return_lse=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gradients_through_a_mask_function_take_the_fused_backward(dtype):
    # A mask function alone (documents of packed sequences with a window,
    # read from a captured id table; rows of document 0 past a prefix keep
    # nothing) differentiates to attn.sdpa_grad with the function as its
    # mask_mod region: the fused backward, which skips the tiles the
    # function's bounds say it keeps nothing of, never forms [B, H, L, S].
    # Against torch.autograd of the float64 reference; 1 and 2 threads
    # give the same bits. GQA, L not a multiple of the tiles.
    L = 150
    doc = torch.tensor([0] * 40 + [1] * 70 + [2] * 40, dtype=torch.int32)

    def documents(b, h, qi, kv):
        return (doc[qi] == doc[kv]) & (kv <= qi) & (qi - kv < 48) & ((doc[qi] > 0) | (qi < 30))
    q, k, v = qkv(2, 4, 2, L, L, 16, dtype=dtype)
    runs = []
    for threads in (1, 2):
        qa, ka, va = (t.clone().requires_grad_() for t in (q, k, v))
        out = attn_mlir.flex_attention(qa, ka, va, mask_mod=documents, enable_gqa=True,
                                       threads=threads)
        do = rand(*out.shape, seed=5).to(dtype)
        runs.append((out,) + torch.autograd.grad(out, (qa, ka, va), do))
    for a, b in zip(*runs):
        assert torch.equal(a, b)
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    want_out = ref(q64, k64, v64, mask_mod=documents)
    want = torch.autograd.grad(want_out, (q64, k64, v64), do.double())
    tol = {torch.float32: 2e-5, torch.bfloat16: 3e-2}[dtype]
    for g, w in zip(runs[0], (want_out,) + want):
        assert (g.double() - w).abs().max().item() <= tol * max(1.0, w.abs().max().item())
    # Rows 30..39 keep no key: zero output and zero dQ, not NaN.
    assert torch.equal(runs[0][1][:, :, 30:40], torch.zeros_like(runs[0][1][:, :, 30:40]))
    # The backward's IR: the fused op with the mask function, no primitive
    # chain.
    from attn_mlir import _attn_mlir
    src = """func.func @f(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>,
                 %v: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %o = attn.sdpa %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sge, %i, %j : index
    attn.yield %keep : i1
  } : (tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>)
      -> tensor<1x2x40x16xf32>
  return %o : tensor<1x2x40x16xf32>
}"""
    grad_ir = _attn_mlir.differentiate(src, "f")
    assert "attn.sdpa_grad" in grad_ir and "mask_mod" in grad_ir
    assert "attn.scores" not in grad_ir and "attn.mask_mod" not in grad_ir


def test_gradients_of_learned_captures():
    # Captured tensors that require grad get their gradients, as with
    # FlexAttention: a T5/Swin-style learned relative-position bias per
    # head [H, 2L - 1] (each element sums the adjoints of one diagonal), a
    # per-key bias read at a clamped index, an integer document-id capture
    # in the mask function (no gradient), GQA; against torch.autograd of
    # the float64 reference.
    L = 20
    table = rand(4, 2 * L - 1, seed=11)
    keyb = rand(L, seed=12)
    docs = torch.tensor([0] * 7 + [1] * 8 + [2] * 5)

    def score_mod(s, b, h, qi, kv, table=table, keyb=keyb):
        return torch.tanh(s) * 3 + table[h, qi - kv + L - 1] + keyb[kv + 3] * 0.5

    def same_doc(b, h, qi, kv):
        return (docs[qi] == docs[kv]) & (qi >= kv)

    q, k, v = qkv(2, 4, 2, L, L, 8)
    tl, kl = table.clone().requires_grad_(), keyb.clone().requires_grad_()
    qa = q.clone().requires_grad_()

    def score_learned(s, b, h, qi, kv):
        return score_mod(s, b, h, qi, kv, tl, kl)

    out = attn_mlir.flex_attention(qa, k, v, score_mod=score_learned, mask_mod=same_doc,
                                   enable_gqa=True)
    do = rand(*out.shape, seed=6)
    got = torch.autograd.grad(out, (qa, tl, kl), do)
    q64, t64, k64 = (x.double().requires_grad_() for x in (q, table, keyb))

    def score64(s, b, h, qi, kv):
        # The reference reads the per-key bias clamped, as the capture read.
        return torch.tanh(s) * 3 + t64[h, qi - kv + L - 1] + k64[(kv + 3).clamp(max=L - 1)] * 0.5

    want_out = ref(q64, k, v, score_mod=score64, mask_mod=same_doc)
    want = torch.autograd.grad(want_out, (q64, t64, k64), do.double())
    assert (out.double() - want_out).abs().max().item() <= 2e-5
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == torch.float32
        assert (g.double() - w).abs().max().item() <= 2e-5 * max(1.0, w.abs().max().item())
    # The reads past the per-key bias's end (kv + 3 >= L) all land on its
    # last element.
    assert want[2][L - 1].abs().item() > 0 and want[2][:3].abs().max().item() == 0
    # Only the table requires grad: q, k, v get none, the table its own.
    (dt,) = torch.autograd.grad(
        attn_mlir.flex_attention(q, k, v, enable_gqa=True,
                                 score_mod=lambda s, b, h, qi, kv:
                                 score_mod(s, b, h, qi, kv, tl, keyb),
                                 mask_mod=same_doc), (tl,), do)
    assert (dt.double() - want[1]).abs().max().item() <= 2e-5 * max(1.0, want[1].abs().max())
