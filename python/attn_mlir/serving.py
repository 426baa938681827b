"""attn_mlir.flash_attn_with_kvcache and flash_attn_varlen_func: FlashAttention's
serving calls, compiled.

The arguments and their meaning are those of
``flash_attn.flash_attn_with_kvcache`` (FlashAttention 2.6): tensors are
[batch, seqlen, heads, headdim]; the K/V cache is either contiguous,
[batch_cache, seqlen_cache, heads_k, headdim], or paged,
[num_blocks, page_block_size, heads_k, headdim] with a ``block_table``
[batch, max_blocks] of int32 block ids. Each call is one ``attn.sdpa`` over
``attn.gather_pages`` of the caches (a contiguous cache is the paged one
with one block per sequence), compiled once per (dtype, heads, head dims,
query length, block size, variants) and cached: batch, the number of
blocks and the table's width are dynamic. The fused CPU kernel reads the
blocks in place (docs/serving.md).

Where it differs from FlashAttention: ``num_splits`` is accepted and
ignored (the kernel splits the keys itself). New ``k``/``v`` rows are
appended into the caches by this module, in place, before the kernel runs,
and ``rotary_cos``/``rotary_sin`` rotate the new k rows and q here too
(in float32, FlashAttention's positions) rather than inside the kernel.
``cache_leftpad`` is a mask function of the kernel (keys before
``cache_leftpad[b]`` are dropped); unlike FlashAttention 2 it also works
with a ``block_table``.

Beyond FlashAttention: ``kv_layout="HND"`` (FlashInfer's name) takes caches
with the heads before the tokens, [num_blocks, heads_k, page_block_size,
headdim] (contiguous: [batch_cache, heads_k, seqlen_cache, headdim]), which
the CPU kernel streams faster than the default "NHD" (docs/serving.md).
"""

import math

import numpy as np

from . import _arrays
from ._cache import CACHE

_MLIR_TYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def _fail(exc, msg):
    raise exc("attn_mlir.flash_attn_with_kvcache: " + msg)


def _int32(x, what):
    """`x` (an int tensor or array) as a contiguous int32 NumPy array."""
    arr = np.asarray(_arrays.as_buffer(x, what))
    if arr.dtype.kind not in "iu":
        _fail(TypeError, "%s must hold integers, got %s" % (what, arr.dtype))
    if arr.dtype != np.int32:
        if arr.size and (arr.min() < np.iinfo(np.int32).min or arr.max() > np.iinfo(np.int32).max):
            _fail(ValueError, "%s does not fit int32" % what)
        arr = arr.astype(np.int32)
    return np.ascontiguousarray(arr)


def _append(cache, new, table, lens, block_size, hnd, what):
    """Writes new[b, t] into `cache` (in place) at position lens[b] + t of
    sequence b, through the block table."""
    b_n, t_n = new.shape[0], new.shape[1]
    if t_n == 0:
        return
    pos = lens[:, None].astype(np.int64) + np.arange(t_n)[None, :]  # [B, Tnew]
    cap = table.shape[1] * block_size
    if pos.size and pos.max() >= cap:
        b = int(np.argmax(pos.max(axis=1)))
        _fail(ValueError, "appending %d rows to sequence %d (cache_seqlens %d) passes the "
              "cache's capacity of %d tokens" % (t_n, b, int(lens[b]), cap))
    blocks = table[np.arange(b_n)[:, None], pos // block_size]
    if blocks.size and (blocks.min() < 0 or blocks.max() >= cache.shape[0]):
        _fail(ValueError, "a block the new %s rows go to is outside [0, %d)"
              % (what, cache.shape[0]))
    rows = (pos % block_size).reshape(-1)
    blocks = blocks.reshape(-1)
    if _arrays.is_torch(cache):
        torch = _arrays._torch()
        src = new if _arrays.is_torch(new) else torch.from_numpy(np.asarray(new))
        src = src.reshape((-1,) + tuple(src.shape[2:])).to(cache.dtype)
        blocks = torch.from_numpy(blocks.astype(np.int64))
        rows = torch.from_numpy(rows.astype(np.int64))
    else:
        src = np.asarray(new).reshape((-1,) + new.shape[2:])
    # (Advanced indices around a slice put the indexed dim first: both
    # layouts take [rows, Hkv, D].)
    if hnd:
        cache[blocks, :, rows] = src
    else:
        cache[blocks, rows] = src


def _window(window_size, causal):
    """FlashAttention's (left, right), -1 = unbounded -> the attribute text."""
    try:
        left, right = (int(w) for w in window_size)
    except (TypeError, ValueError):
        _fail(ValueError, "window_size must be a pair (left, right), -1 = unbounded, got %r"
              % (window_size,))
    if left < -1 or right < -1:
        _fail(ValueError, "window_size entries must be >= -1, got %r" % (window_size,))
    if causal:
        right = -1  # causal is the window's right side 0
    sides = []
    if left >= 0:
        sides.append("left = %d" % left)
    if right >= 0:
        sides.append("right = %d" % right)
    return "#attn.window<%s>" % ", ".join(sides) if sides else None



def _attributes(softmax_scale, d, causal, window_size, softcap):
    """The sdpa's attributes: scale, bottom-right causal, window, softcap."""
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else float(softmax_scale)
    if not (math.isfinite(scale) and scale != 0):
        _fail(ValueError, "softmax_scale must be finite and non-zero, got %r" % (softmax_scale,))
    attrs = ["scale = %r : f32" % float(np.float32(scale))]
    if causal:
        attrs.append("causal = #attn.causal<bottom_right>")
    window = _window(window_size, causal)
    if window:
        attrs.append("window = " + window)
    if softcap:
        if not (float(softcap) > 0 and math.isfinite(float(softcap))):
            _fail(ValueError, "softcap must be >= 0, got %r" % (softcap,))
        attrs.append("softcap = %r : f32" % float(np.float32(softcap)))
    return attrs


def _per_head(x, name, h):
    """`x` (sinks, ALiBi slopes) as a float32 [h] buffer, checked."""
    buf = _arrays.as_buffer(_arrays.cast(x, "float32", name), name)
    if buf.shape != (h,):
        _fail(ValueError, "%s must be [%d] (one per query head), got %s"
              % (name, h, list(buf.shape)))
    return buf


def _kernel_text(name, elt, h, hkv, d, dv, tq, bs, hnd, attrs, b, alibi_slopes, sinks,
                 return_lse, quant=None, tensor_scale=False, leftpad=None):
    """The attn IR of one call: K and V gathered from the caches %kc, %vc
    through %table with lengths %len, then attn.sdpa (attn.sdpa_partial
    with the lse); `tq` None is a dynamic query length; `bs` None takes
    K and V as plain [B, Hkv, Tk, D] tensors %k, %v (no table); `quant`
    ("i8" or "f8E4M3FN") takes them as quantised %kq, %vq [B, Hkv, Tk, D]
    with f32 scales %ks, %vs [B, Hkv, Tk] (or one each, `tensor_scale`)
    through attn.dequantize. Returns the text and the extra inputs (slopes,
    sinks, leftpad) that follow (q, kc, vc, table, len; q, k, v, len; q,
    kq, ks, vq, vs, len; or with `quant` and `bs`, paged quantised caches
    and their scale caches, dequantized and gathered: q, kq, ks, vq, vs,
    table, len). `leftpad` (int32
    [B]) drops sequence b's keys before leftpad[b] by a mask function."""
    t_q = "tensor<?x%dx%sx%dx%s>" % (h, "?" if tq is None else str(tq), d, elt)
    t_k = "tensor<?x%dx?x%dx%s>" % (hkv, d, elt)
    t_v = "tensor<?x%dx?x%dx%s>" % (hkv, dv, elt)
    if quant and bs is not None:
        mid = (hkv, bs) if hnd else (bs, hkv)
        t_kq = "tensor<?x%dx%dx%dx%s>" % (mid + (d, quant))
        t_vq = "tensor<?x%dx%dx%dx%s>" % (mid + (dv, quant))
        t_s = "tensor<f32>" if tensor_scale else "tensor<?x%dx%dxf32>" % mid
        t_kc = "tensor<?x%dx%dx%dx%s>" % (mid + (d, elt))
        t_vc = "tensor<?x%dx%dx%dx%s>" % (mid + (dv, elt))
        args = ["%%q: %s" % t_q, "%%kq: %s" % t_kq, "%%ks: %s" % t_s, "%%vq: %s" % t_vq,
                "%%vs: %s" % t_s, "%table: tensor<?x?xi32>", "%len: tensor<?xi32>"]
    elif quant:
        t_kq = "tensor<?x%dx?x%dx%s>" % (hkv, d, quant)
        t_vq = "tensor<?x%dx?x%dx%s>" % (hkv, dv, quant)
        t_s = "tensor<f32>" if tensor_scale else "tensor<?x%dx?xf32>" % hkv
        args = ["%%q: %s" % t_q, "%%kq: %s" % t_kq, "%%ks: %s" % t_s, "%%vq: %s" % t_vq,
                "%%vs: %s" % t_s, "%len: tensor<?xi32>"]
    elif bs is None:
        args = ["%%q: %s" % t_q, "%%k: %s" % t_k, "%%v: %s" % t_v, "%len: tensor<?xi32>"]
    else:
        mid = (hkv, bs) if hnd else (bs, hkv)
        t_kc = "tensor<?x%dx%dx%dx%s>" % (mid + (d, elt))
        t_vc = "tensor<?x%dx%dx%dx%s>" % (mid + (dv, elt))
        args = ["%%q: %s" % t_q, "%%kc: %s" % t_kc, "%%vc: %s" % t_vc,
                "%table: tensor<?x?xi32>", "%len: tensor<?xi32>"]
    operand_types = [t_q, t_k, t_v]
    extra = []
    alibi = sink_operand = ""
    if alibi_slopes is not None:
        slopes = _arrays.as_buffer(_arrays.cast(alibi_slopes, "float32", "alibi_slopes"),
                                   "alibi_slopes")
        if slopes.shape == (h,):
            t_s = "tensor<%dxf32>" % h
        elif slopes.shape == (b, h):
            t_s = "tensor<?x%dxf32>" % h
        else:
            _fail(ValueError, "alibi_slopes must be [%d] or [%d, %d], got %s"
                  % (h, b, h, list(slopes.shape)))
        args.append("%%slopes: %s" % t_s)
        operand_types.append(t_s)
        extra.append(slopes)
        alibi = " alibi(%slopes)"
    operand_types.append("tensor<?xi32>")
    if sinks is not None:
        sink_buf = _per_head(sinks, "sinks", h)
        args.append("%%sinks: tensor<%dxf32>" % h)
        operand_types.append("tensor<%dxf32>" % h)
        extra.append(sink_buf)
        sink_operand = " sinks(%sinks)"
    captures = mask_mod = ""
    if leftpad is not None:
        args.append("%pad: tensor<?xi32>")
        operand_types.append("tensor<?xi32>")
        extra.append(leftpad)
        captures = " captures(%pad)"
        mask_mod = (" mask_mod {\n  ^bb0(%b: index, %h: index, %i: index, %j: index, "
                    "%p: tensor<?xi32>):\n"
                    "    %pb = tensor.extract %p[%b] : tensor<?xi32>\n"
                    "    %first = arith.index_cast %pb : i32 to index\n"
                    "    %keep = arith.cmpi sge, %j, %first : index\n"
                    "    attn.yield %keep : i1\n  }")
    gather = ("  %%%s = attn.gather_pages %%%s, %%table lengths(%%len)" +
              (" {layout = #attn.kv_layout<hnd>}" if hnd else "") +
              "\n      : (%s, tensor<?x?xi32>, tensor<?xi32>) -> %s\n")
    dequantize = "  %%%s = attn.dequantize %%%sq, %%%ss : (%s, %s) -> %s\n"
    if quant and bs is not None:
        # The caches dequantized whole, then gathered: the decode tile
        # reads the quantised rows and scales in place through the table.
        body = (dequantize % ("kc", "k", "k", t_kq, t_s, t_kc) +
                dequantize % ("vc", "v", "v", t_vq, t_s, t_vc) +
                gather % ("k", "kc", t_kc, t_k) + gather % ("v", "vc", t_vc, t_v))
    elif quant:
        body = (dequantize % ("k", "k", "k", t_kq, t_s, t_k) +
                dequantize % ("v", "v", "v", t_vq, t_s, t_v))
    else:
        body = "" if bs is None else (gather % ("k", "kc", t_kc, t_k) +
                                      gather % ("v", "vc", t_vc, t_v))
    operands = "%%q, %%k, %%v%s key_lengths(%%len)%s%s {%s}%s" % (
        alibi, sink_operand, captures, ", ".join(attrs), mask_mod)
    rows = "?" if tq is None else str(tq)
    if return_lse:
        t_o = "tensor<?x%dx%sx%dxf32>" % (h, rows, dv)
        t_l = "tensor<?x%dx%sxf32>" % (h, rows)
        text = ("func.func @%s(%s) -> (%s, %s) {\n%s"
                "  %%o, %%lse = attn.sdpa_partial %s\n      : (%s) -> (%s, %s)\n"
                "  return %%o, %%lse : %s, %s\n}\n"
                % (name, ", ".join(args), t_o, t_l, body, operands, ", ".join(operand_types),
                   t_o, t_l, t_o, t_l))
    else:
        t_o = "tensor<?x%dx%sx%dx%s>" % (h, rows, dv, elt)
        text = ("func.func @%s(%s) -> %s {\n%s"
                "  %%o = attn.sdpa %s\n      : (%s) -> %s\n  return %%o : %s\n}\n"
                % (name, ", ".join(args), t_o, body, operands, ", ".join(operand_types), t_o,
                   t_o))
    return text, extra


def _rotate(x, cos, sin, pos, interleaved):
    """FlashAttention's ``apply_rotary_emb``: x [B, T, H, D] with its first
    2·R dims rotated at positions pos [B, T] by the tables cos, sin [S, R]
    (interleaved: pairs (2i, 2i+1), GPT-J; else halves (i, i+R), GPT-NeoX),
    computed in float32 and returned as x's kind and dtype (a new tensor)."""
    dt = _arrays.dtype_name(x)
    a = np.array(_arrays.as_buffer(_arrays.cast(x, "float32", "q"), "q"), dtype=np.float32)
    r = cos.shape[1]
    c = cos[pos][:, :, None, :]  # [B, T, 1, R]
    s = sin[pos][:, :, None, :]
    if interleaved:
        x0, x1 = a[..., 0:2 * r:2].copy(), a[..., 1:2 * r:2].copy()
        a[..., 0:2 * r:2] = x0 * c - x1 * s
        a[..., 1:2 * r:2] = x0 * s + x1 * c
    else:
        x0, x1 = a[..., :r].copy(), a[..., r:2 * r].copy()
        a[..., :r] = x0 * c - x1 * s
        a[..., r:2 * r] = x0 * s + x1 * c
    if _arrays.is_torch(x):
        return _arrays.cast(_arrays._torch().from_numpy(a), dt, "q")
    return a.astype(_arrays._NUMPY_OF[dt])


def _rotary(q, k, rotary_cos, rotary_sin, lens, d, causal, window_size, interleaved):
    """q and the new k rows rotated as flash_attn_with_kvcache does: new key
    t of sequence b at position cache_seqlens[b] + t; query row i at the same
    position when causal or windowed, else every row at cache_seqlens[b]."""
    if rotary_cos is None or rotary_sin is None:
        _fail(ValueError, "pass both rotary_cos and rotary_sin, or neither")
    if k is None:
        _fail(ValueError, "rotary_cos/rotary_sin rotate the new k rows: pass k and v too")
    tables = []
    for name, t in (("rotary_cos", rotary_cos), ("rotary_sin", rotary_sin)):
        if _arrays.dtype_name(t) not in _MLIR_TYPES:
            _fail(TypeError, "%s must be float, got %s" % (name, _arrays.dtype_name(t)))
        tables.append(np.asarray(_arrays.as_buffer(_arrays.cast(t, "float32", name), name),
                                 dtype=np.float32))
    cos, sin = tables
    if cos.ndim != 2 or cos.shape != sin.shape or not 0 < 2 * cos.shape[1] <= d:
        _fail(ValueError, "rotary_cos and rotary_sin must both be [seqlen_ro, rotary_dim / 2] "
              "with 0 < rotary_dim <= %d, got %s and %s"
              % (d, list(cos.shape), list(sin.shape)))
    b, tq = _arrays.shape_of(q)[:2]
    tk = _arrays.shape_of(k)[1]
    pos_k = lens[:, None].astype(np.int64) + np.arange(tk)[None, :]
    local = causal or tuple(int(w) for w in window_size) != (-1, -1)
    pos_q = lens[:, None].astype(np.int64) + (np.arange(tq)[None, :] if local else 0)
    pos_q = np.broadcast_to(pos_q, (b, tq))
    last = max(int(pos_k.max()) if pos_k.size else -1, int(pos_q.max()) if pos_q.size else -1)
    if last >= cos.shape[0]:
        _fail(ValueError, "rotary_cos/rotary_sin have %d positions, position %d is needed"
              % (cos.shape[0], last))
    return (_rotate(q, cos, sin, pos_q, interleaved),
            _rotate(k, cos, sin, pos_k, interleaved))


def _per_sequence(x, what, b, capacity):
    """`x` ([B] integers) as a fresh int32 array, each in [0, capacity]."""
    arr = _int32(x, what).reshape(-1).copy()
    if arr.shape != (b,):
        _fail(ValueError, "%s must have %d entries, got %d" % (what, b, arr.size))
    if arr.size and (arr.min() < 0 or arr.max() > capacity):
        i = int(np.argmax((arr < 0) | (arr > capacity)))
        _fail(ValueError, "%s[%d] = %d is outside [0, %d] (the cache's capacity)"
              % (what, i, int(arr[i]), capacity))
    return arr


def _hnd(kv_layout):
    if kv_layout not in ("NHD", "HND"):
        _fail(ValueError, "kv_layout must be 'NHD' or 'HND', got %r" % (kv_layout,))
    return kv_layout == "HND"


def _cache_dims(q, k_cache, v_cache, hnd):
    """((B, Tq, H, D), (N, T, Hkv, Dv)) of q [B, Tq, H, D] and caches [N, T,
    Hkv, D] ([N, Hkv, T, D] when `hnd`), checked against each other."""
    qs, ks, vs = (_arrays.shape_of(x) for x in (q, k_cache, v_cache))
    for name, s in (("q", qs), ("k_cache", ks), ("v_cache", vs)):
        if len(s) != 4:
            _fail(ValueError, "%s must have rank 4, got shape %s" % (name, list(s)))
    b, tq, h, d = qs
    n, t, hkv, dk = ks
    if hnd:
        t, hkv = hkv, t
    if vs[:3] != ks[:3]:
        _fail(ValueError, "v_cache shape %s does not match k_cache shape %s in its first "
              "three dims" % (list(vs), list(ks)))
    if dk != d:
        _fail(ValueError, "k_cache head dim is %d, q's %d" % (dk, d))
    if hkv == 0 or h % hkv:
        _fail(ValueError, "q has %d heads, the cache %d: heads must be a multiple of the "
              "cache's (GQA/MQA)" % (h, hkv))
    return qs, (n, t, hkv, vs[3])


def _cache_lengths(cache_seqlens, b, capacity):
    """cache_seqlens (None = full, an int, or [B]) as int32 [B] in [0,
    capacity]."""
    if cache_seqlens is None:
        return np.full(b, capacity, dtype=np.int32)
    if isinstance(cache_seqlens, (int, np.integer)):
        cache_seqlens = np.full(b, int(cache_seqlens), dtype=np.int64)
    return _per_sequence(cache_seqlens, "cache_seqlens", b, capacity)


def _new_rows(k, v, b, hkv, d, dv):
    """Whether new k/v rows are given ([B, Tnew, Hkv, D] and [.., Dv])."""
    if (k is None) != (v is None):
        _fail(ValueError, "pass both k and v (new rows), or neither")
    if k is None:
        return False
    kn, vn = _arrays.shape_of(k), _arrays.shape_of(v)
    if len(kn) != 4 or kn[0] != b or kn[2:] != (hkv, d) or vn != kn[:3] + (dv,):
        _fail(ValueError, "k and v must be [batch=%d, seqlen_new, %d, %d] and [.., %d], "
              "got %s and %s" % (b, hkv, d, dv, list(kn), list(vn)))
    return True


def _call(kernel, bufs, q, shape, return_lse):
    """Runs `kernel` on `bufs`: the output in FlashAttention's [B, Tq, H, Dv]
    (`shape`, q's kind and dtype), written through a [B, H, Tq, Dv] view,
    and with `return_lse` the float32 [B, H, Tq] log-sum-exp too."""
    b, tq, h, _ = shape
    dt = _arrays.dtype_name(q)
    out, view = _arrays.empty_like_kind(q, shape, "float32" if return_lse else dt)
    views = [view.transpose(0, 2, 1, 3)]
    if return_lse:
        lse, lse_view = _arrays.empty_like_kind(q, (b, h, tq), "float32")
        views.append(lse_view)
    kernel.call(bufs, views)
    if not return_lse:
        return out
    return _arrays.cast(out, dt, "the output"), lse


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, rotary_cos=None,
                            rotary_sin=None, cache_seqlens=None, cache_batch_idx=None,
                            cache_leftpad=None, block_table=None, softmax_scale=None,
                            causal=False, window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None, num_splits=0,
                            return_softmax_lse=False, *, sinks=None, kv_layout="NHD",
                            k_scale=None, v_scale=None, kv_cache_dtype="auto", threads=0):
    """Attention of q [B, Tq, H, D] against the first cache_seqlens[b] (+ the
    new k/v rows) keys of each sequence's K/V cache, as
    ``flash_attn.flash_attn_with_kvcache``. Returns [B, Tq, H, Dv] of q's
    kind and dtype, and with return_softmax_lse=True also the float32
    [B, H, Tq] natural-log log-sum-exp of each row (-inf for a row that sees
    no key, whose output is 0).

    sinks: attention sinks, float32 [H] (gpt-oss): one logit per query head
    in every row's softmax denominator that weighs no value.

    rotary_cos, rotary_sin [seqlen_ro, rotary_dim / 2] (with new k, v rows):
    the new k rows are rotated at positions cache_seqlens[b] + t before they
    are appended, and q at cache_seqlens[b] + i when causal or windowed (at
    cache_seqlens[b] otherwise), as FlashAttention does; the first
    rotary_dim dims of each head turn, in pairs (2i, 2i+1) when
    rotary_interleaved (GPT-J) or halves (i, i + rotary_dim/2) otherwise
    (GPT-NeoX). Computed in float32 before the kernel runs.

    cache_leftpad [B] int32: sequence b's keys start at cache_leftpad[b]
    (keys before it are dropped; causal, window and ALiBi positions are
    those of FlashAttention, which counts them from the padding's end).

    k_scale, v_scale: with int8 k_cache and v_cache (a quantised cache,
    contiguous [B, T, Hkv, D], or [B, Hkv, T, D] with kv_layout='HND'), the
    float32 scale of each token and head ([B, T, Hkv], or [B, Hkv, T]):
    key j of head g is k_cache[b, j, g] * k_scale[b, j, g]. With a
    block_table the int8 caches are paged, [num_blocks, page_block_size,
    Hkv, D] (or [num_blocks, Hkv, page_block_size, D] with 'HND'), and the
    scales [num_blocks, page_block_size, Hkv] (or [num_blocks, Hkv,
    page_block_size]). The decode kernel reads the int8 rows and scales in
    place (attn.dequantize, attn.gather_pages). cache_batch_idx picks a
    contiguous int8 cache's rows as for float caches. New rows k, v (float) are
    quantised per token and head (max |x| -> 127) and written with their
    scales, in place (through the block table), before attending.

    fp8 caches (e4m3, OCP E4M3FN: vLLM's and FlashInfer's): k_cache and
    v_cache of torch.float8_e4m3fn (or NumPy's ml_dtypes float8_e4m3fn),
    or uint8 arrays of the codes with kv_cache_dtype="fp8_e4m3" (vLLM's
    name; "fp8" means the same), in the layouts of int8 caches. k_scale,
    v_scale: one float for the tensor (vLLM's per-tensor scales: a Python
    float, a 0-d or 1-element tensor), or one per token and head as for
    int8. New rows are divided by the per-tensor scale and rounded to the
    nearest e4m3 code (saturating at ±448); with per-token scales each
    row's scale is max |x| / 448. An int8 cache takes a per-tensor scale
    too."""
    dt = _arrays.dtype_name(q)
    if dt not in _MLIR_TYPES:
        _fail(TypeError, "q must be float32, float16 or bfloat16, got %s" % dt)
    rotary = None
    if rotary_cos is not None or rotary_sin is not None:
        rotary = (rotary_cos, rotary_sin, bool(rotary_interleaved))
    kind = _cache_kind(k_cache, v_cache, kv_cache_dtype)
    if kind:
        return _quantized_kvcache(kind, q, _code_view(k_cache, kind), _code_view(v_cache, kind),
                                  k, v, cache_seqlens, cache_batch_idx, block_table,
                                  softmax_scale, causal, window_size, softcap, alibi_slopes,
                                  return_softmax_lse, sinks, kv_layout, k_scale, v_scale,
                                  threads, rotary, cache_leftpad)
    if k_scale is not None or v_scale is not None:
        _fail(ValueError, "k_scale/v_scale go with an int8 or fp8 k_cache and v_cache")
    for name, x in (("k_cache", k_cache), ("v_cache", v_cache), ("k", k), ("v", v)):
        if x is not None and _arrays.dtype_name(x) != dt:
            _fail(TypeError, "%s has dtype %s, q %s" % (name, _arrays.dtype_name(x), dt))
    hnd = _hnd(kv_layout)
    (b, tq, h, d), (nb, bs, hkv, dv) = _cache_dims(q, k_cache, v_cache, hnd)

    table = _call_table(block_table, cache_batch_idx, b, nb)
    capacity = table.shape[1] * bs

    lens = _cache_lengths(cache_seqlens, b, capacity)
    pad = None if cache_leftpad is None else _per_sequence(cache_leftpad, "cache_leftpad", b, capacity)

    new_rows = _new_rows(k, v, b, hkv, d, dv)
    if rotary:
        q, k = _rotary(q, k, rotary[0], rotary[1], lens, d, causal, window_size, rotary[2])
    if new_rows:
        _append(k_cache, k, table, lens, bs, hnd, "k")
        _append(v_cache, v, table, lens, bs, hnd, "v")
        lens = lens + _arrays.shape_of(k)[1]

    attrs = _attributes(softmax_scale, d, causal, window_size, softcap)
    elt = _MLIR_TYPES[dt]
    text, extra = _kernel_text("kvcache", elt, h, hkv, d, dv, tq, bs, hnd, attrs, b,
                               alibi_slopes, sinks, return_softmax_lse, leftpad=pad)
    inputs = [None, k_cache, v_cache, table, lens] + extra

    kernel = CACHE.get(("kvcache", text, threads), lambda: text, "kvcache", "cpu", threads)
    bufs = [_arrays.as_buffer(q, "q").transpose(0, 2, 1, 3)]
    bufs += [_arrays.as_buffer(x, "an input") for x in inputs[1:]]
    return _call(kernel, bufs, q, (b, tq, h, dv), return_softmax_lse)


_FP8_NAMES = ("float8_e4m3fn", "fp8_e4m3", "fp8")
# The 127 finite non-negative e4m3 magnitudes, code 0x00 .. 0x7e in
# increasing order: (1 + m/8)·2^(e−7), subnormals (m/8)·2^−6.
_E4M3 = np.array([(c & 7) / 8 * 2.0 ** -6 if c < 8 else (1 + (c & 7) / 8) * 2.0 ** ((c >> 3) - 7)
                  for c in range(0x7f)])


def _cache_kind(k_cache, v_cache, kv_cache_dtype):
    """"int8", "fp8" or None (float caches), from the caches' dtypes and
    kv_cache_dtype; mixed or unknown kinds are refused."""
    if kv_cache_dtype not in ("auto",) + _FP8_NAMES:
        _fail(ValueError, "kv_cache_dtype must be 'auto', 'fp8' or 'fp8_e4m3', got %r"
              % (kv_cache_dtype,))
    names = [_arrays.dtype_name(x) for x in (k_cache, v_cache)]
    if kv_cache_dtype != "auto":
        for name, got in zip(("k_cache", "v_cache"), names):
            if got not in ("uint8", "float8_e4m3fn"):
                _fail(TypeError, "kv_cache_dtype=%r takes uint8 (or float8_e4m3fn) caches, %s "
                      "is %s" % (kv_cache_dtype, name, got))
        return "fp8"
    kinds = ["fp8" if n == "float8_e4m3fn" else "int8" if n == "int8" else None for n in names]
    if kinds[0] != kinds[1]:
        _fail(TypeError, "k_cache and v_cache must both be int8, both fp8 or both float, got "
              "%s and %s" % tuple(names))
    return kinds[0]


def _code_view(cache, kind):
    """An fp8 cache as its uint8 codes (a view: appends write through);
    other caches as they are."""
    if kind != "fp8" or _arrays.dtype_name(cache) == "uint8":
        return cache
    if _arrays.is_torch(cache):
        return cache.view(_arrays._torch().uint8)
    return cache.view(np.uint8)


def _encode_e4m3(a):
    """float32 `a` as e4m3 codes (uint8): the nearest code, ties to the
    even one, saturating at ±448; NaN to 0x7f."""
    mag = np.minimum(np.abs(a), 448.0)
    i = np.clip(np.searchsorted(_E4M3, mag), 1, len(_E4M3) - 1)
    lo, hi = _E4M3[i - 1], _E4M3[i]
    below = (mag - lo < hi - mag) | ((mag - lo == hi - mag) & ((i - 1) % 2 == 0))
    code = np.where(below, i - 1, i)
    code = np.where(np.isnan(a), 0x7f, code)
    return (code | np.where(np.signbit(a), 0x80, 0)).astype(np.uint8)


def _quantize(kind, x, what, scale=None):
    """x [B, T, Hkv, D] (float) as int8 or fp8 codes. With `scale` (one
    float32, the cache's per-tensor scale) x / scale; else with one float32
    scale per (b, t, head), max |x| / 127 (int8) or / 448 (fp8), 1 for an
    all-zero row. Returns NumPy (codes [B, T, Hkv, D], scales [B, T, Hkv]
    or None)."""
    if _arrays.dtype_name(x) not in _MLIR_TYPES:
        _fail(TypeError, "new %s rows must be float, got %s" % (what, _arrays.dtype_name(x)))
    a = np.asarray(_arrays.as_buffer(_arrays.cast(x, "float32", what), what), dtype=np.float32)
    row_scales = None
    if scale is None:
        top = np.float32(127 if kind == "int8" else 448)
        row_scales = np.abs(a).max(axis=-1) / top
        row_scales = np.where(row_scales > 0, row_scales, np.float32(1)).astype(np.float32)
        a = a / row_scales[..., None]
    else:
        a = a / scale
    if kind == "int8":
        return np.clip(np.rint(a), -127, 127).astype(np.int8), row_scales
    return _encode_e4m3(a), row_scales


def _block_table(block_table, b):
    """block_table as int32 [b, max_blocks], checked."""
    table = _int32(block_table, "block_table")
    if table.ndim != 2 or table.shape[0] != b:
        _fail(ValueError, "block_table must be [batch=%d, max_blocks], got shape %s"
              % (b, list(table.shape)))
    return table


def _call_table(block_table, cache_batch_idx, b, cache_rows):
    """The block table of a flash_attn_with_kvcache call: block_table
    (checked), or for a contiguous cache of cache_rows sequences one block
    per sequence, the rows cache_batch_idx picks, else the first b."""
    if block_table is not None:
        if cache_batch_idx is not None:
            _fail(ValueError, "cache_batch_idx goes with a contiguous cache, not a block_table")
        return _block_table(block_table, b)
    if cache_batch_idx is not None:
        return _int32(cache_batch_idx, "cache_batch_idx").reshape(b, 1)
    if cache_rows < b:
        _fail(ValueError, "k_cache holds %d sequences, q has batch %d" % (cache_rows, b))
    return np.arange(b, dtype=np.int32)[:, None]


def _append_quantized(kind, k, v, k_cache, v_cache, scales, table, lens, block_size, hnd):
    """New rows k, v quantised (_quantize: by the cache's per-tensor scale,
    or per token and head, written with their scales) at each sequence's
    length, through `table`, in place. Returns the lengths after."""
    for name, new, cache, sc in (("k", k, k_cache, scales[0]), ("v", v, v_cache, scales[1])):
        per_tensor = np.ndim(sc) == 0
        rows, row_scales = _quantize(kind, new, name, np.float32(sc) if per_tensor else None)
        _append(cache, rows, table, lens, block_size, hnd, name)
        if not per_tensor:
            _append(sc, row_scales, table, lens, block_size, hnd, name + "_scale")
    return lens + _arrays.shape_of(k)[1]


def _quantized_kvcache(kind, q, k_cache, v_cache, k, v, cache_seqlens, cache_batch_idx,
                       block_table, softmax_scale, causal, window_size, softcap, alibi_slopes,
                       return_softmax_lse, sinks, kv_layout, k_scale, v_scale, threads,
                       rotary=None, cache_leftpad=None):
    """flash_attn_with_kvcache on an int8 or fp8 cache (fp8 as its uint8
    codes) with per-token or per-tensor scales: one attn.sdpa over
    attn.dequantize of a contiguous HND cache, else (NHD, cache_batch_idx,
    block_table) over attn.gather_pages of it."""
    dt = _arrays.dtype_name(q)
    if block_table is not None or cache_batch_idx is not None or not _hnd(kv_layout):
        # The paged kernel; a contiguous cache is one block of T tokens per
        # sequence there, so an NHD cache is read in place, where the
        # contiguous kernel would take a transposed copy of it each call
        # (bench/NOTES.md, 2026-12-07: int8 NHD caches).
        block_table = _call_table(block_table, cache_batch_idx, _arrays.shape_of(q)[0],
                                  _arrays.shape_of(k_cache)[0])
        return _paged_quantized_kvcache(kind, q, k_cache, v_cache, k, v, cache_seqlens,
                                        block_table, softmax_scale, causal, window_size,
                                        softcap, alibi_slopes, return_softmax_lse, sinks,
                                        kv_layout, k_scale, v_scale, threads, rotary,
                                        cache_leftpad)
    # A contiguous HND cache [B, Hkv, T, D]: the K/V operands as they are.
    (b, tq, h, d), (cb, t, hkv, dv) = _cache_dims(q, k_cache, v_cache, True)
    ks = _arrays.shape_of(k_cache)
    if cb < b:
        _fail(ValueError, "k_cache holds %d sequences, q has batch %d" % (cb, b))
    scales = _scale_caches(k_scale, v_scale, ks)
    lens = _cache_lengths(cache_seqlens, b, t)
    pad = None if cache_leftpad is None else _per_sequence(cache_leftpad, "cache_leftpad", b, t)
    new_rows = _new_rows(k, v, b, hkv, d, dv)
    if rotary:
        q, k = _rotary(q, k, rotary[0], rotary[1], lens, d, causal, window_size, rotary[2])
    if new_rows:
        # A contiguous cache is one block of t tokens per sequence.
        lens = _append_quantized(kind, k, v, k_cache, v_cache, scales,
                                 np.arange(b, dtype=np.int32)[:, None], lens, t, True)
    tensor_scale = np.ndim(scales[0]) == 0
    attrs = _attributes(softmax_scale, d, causal, window_size, softcap)
    text, extra = _kernel_text("kvcache_" + kind, _MLIR_TYPES[dt], h, hkv, d, dv, tq, None,
                               False, attrs, b, alibi_slopes, sinks, return_softmax_lse,
                               quant=_QUANT_TYPES[kind], tensor_scale=tensor_scale,
                               leftpad=pad)
    kernel = CACHE.get(("kvcache_" + kind, text, threads), lambda: text, "kvcache_" + kind,
                       "cpu", threads)
    caches = [_arrays.as_buffer(x, name)[:b]
              for name, x in (("k_cache", k_cache), ("v_cache", v_cache))]
    scale_bufs = [_scale_buffer(sc, name, b) for name, sc in (("k_scale", scales[0]),
                                                             ("v_scale", scales[1]))]
    bufs = [_arrays.as_buffer(q, "q").transpose(0, 2, 1, 3), caches[0], scale_bufs[0],
            caches[1], scale_bufs[1], lens] + [_arrays.as_buffer(x, "an input") for x in extra]
    return _call(kernel, bufs, q, (b, tq, h, dv), return_softmax_lse)


_QUANT_TYPES = {"int8": "i8", "fp8": "f8E4M3FN"}


def _scale_buffer(sc, name, b=None):
    """A scale for the kernel: a 0-d float32 array (per tensor), or the
    scale cache's buffer (its first b sequences when b is given)."""
    if np.ndim(sc) == 0:
        return np.asarray(sc, dtype=np.float32).reshape(())
    buf = _arrays.as_buffer(sc, name)
    return buf if b is None else buf[:b]


def _scale_caches(k_scale, v_scale, cache_shape):
    """The scales of a quantised cache: each one float (a Python number, a
    0-d or 1-element tensor or array: per tensor), returned as a
    np.float32, or a float32 array of the cache's shape without the head
    dim (per token and head), returned as given."""
    out = []
    for name, sc in (("k_scale", k_scale), ("v_scale", v_scale)):
        if sc is None:
            _fail(ValueError, "a quantised cache needs %s (one float32 for the tensor, or one "
                  "per token and head)" % name)
        if isinstance(sc, (int, float)) or _arrays.shape_of(sc) in ((), (1,)):
            value = float(np.asarray(_arrays.as_buffer(sc, name), dtype=np.float64).reshape(()))
            if not (math.isfinite(value) and value > 0):
                _fail(ValueError, "%s must be finite and > 0, got %r" % (name, value))
            out.append(np.float32(value))
            continue
        if _arrays.dtype_name(sc) != "float32":
            _fail(TypeError, "%s must be float32, got %s" % (name, _arrays.dtype_name(sc)))
        if _arrays.shape_of(sc) != tuple(cache_shape[:-1]):
            _fail(ValueError, "%s must be one float or have shape %s (the cache's without the "
                  "head dim), got %s" % (name, list(cache_shape[:-1]),
                                         list(_arrays.shape_of(sc))))
        out.append(sc)
    if (np.ndim(out[0]) == 0) != (np.ndim(out[1]) == 0):
        _fail(ValueError, "k_scale and v_scale must both be per tensor or both per token")
    return out


def _paged_quantized_kvcache(kind, q, k_cache, v_cache, k, v, cache_seqlens, block_table,
                             softmax_scale, causal, window_size, softcap, alibi_slopes,
                             return_softmax_lse, sinks, kv_layout, k_scale, v_scale, threads,
                             rotary, cache_leftpad):
    """flash_attn_with_kvcache on paged int8 or fp8 caches [NB, BS, Hkv, D]
    (or [NB, Hkv, BS, D]) with scale caches [NB, BS, Hkv] (or [NB, Hkv,
    BS]) or per-tensor scales: attn.gather_pages of attn.dequantize of the
    caches, read in place by the decode tile."""
    dt = _arrays.dtype_name(q)
    hnd = _hnd(kv_layout)
    (b, tq, h, d), (nb, bs, hkv, dv) = _cache_dims(q, k_cache, v_cache, hnd)
    scales = _scale_caches(k_scale, v_scale, _arrays.shape_of(k_cache))
    table = _block_table(block_table, b)
    capacity = table.shape[1] * bs
    lens = _cache_lengths(cache_seqlens, b, capacity)
    pad = None if cache_leftpad is None else _per_sequence(cache_leftpad, "cache_leftpad", b,
                                                           capacity)
    new_rows = _new_rows(k, v, b, hkv, d, dv)
    if rotary:
        q, k = _rotary(q, k, rotary[0], rotary[1], lens, d, causal, window_size, rotary[2])
    if new_rows:
        lens = _append_quantized(kind, k, v, k_cache, v_cache, scales, table, lens, bs, hnd)
    attrs = _attributes(softmax_scale, d, causal, window_size, softcap)
    name = "kvcache_paged_" + kind
    text, extra = _kernel_text(name, _MLIR_TYPES[dt], h, hkv, d, dv, tq, bs, hnd, attrs, b,
                               alibi_slopes, sinks, return_softmax_lse,
                               quant=_QUANT_TYPES[kind],
                               tensor_scale=np.ndim(scales[0]) == 0, leftpad=pad)
    kernel = CACHE.get((name, text, threads), lambda: text, name, "cpu", threads)
    bufs = [_arrays.as_buffer(q, "q").transpose(0, 2, 1, 3),
            _arrays.as_buffer(k_cache, "k_cache"), _scale_buffer(scales[0], "k_scale"),
            _arrays.as_buffer(v_cache, "v_cache"), _scale_buffer(scales[1], "v_scale"), table,
            lens]
    bufs += [_arrays.as_buffer(x, "an input") for x in extra]
    return _call(kernel, bufs, q, (b, tq, h, dv), return_softmax_lse)


def _varlen_op(q, k, v, cu_q, cu_k, total_q, h, hkv, d, dv, dt, softmax_scale, causal,
               window_size, softcap, alibi_slopes, sinks, threads, table=None, bs=None,
               kind=None, scales=None):
    """flash_attn_varlen_func as one attn.sdpa_varlen on q, k, v as they
    are, [total, heads, headdim] (as [1, total, heads, headdim]: views, no
    copies on this side), transposed in the IR to the op's [1, heads, total,
    headdim] operands; with a block table, k and v are the paged caches.
    attn-decompose makes it one attn.sdpa a sequence on transposes of its
    rows (and gather_pages of its row of the table), which the CPU kernel
    reads in place, without a transposed copy. With `kind` ("int8",
    "fp8"), k and v hold codes and `scales` their (k, v) scales: the op
    takes attn.dequantize of them."""
    elt = _MLIR_TYPES[dt]
    kv_elt = _QUANT_TYPES[kind] if kind else elt
    t_q = "tensor<1x%dx?x%dx%s>" % (h, d, elt)
    if table is None:
        shape_k, shape_v = "1x%dx?x%d" % (hkv, d), "1x%dx?x%d" % (hkv, dv)
        shape_s = "1x%dx?" % hkv
    else:
        shape_k, shape_v = "?x%dx%dx%d" % (bs, hkv, d), "?x%dx%dx%d" % (bs, hkv, dv)
        shape_s = "?x%dx%d" % (bs, hkv)
    t_k, t_v = ("tensor<%sx%s>" % (x, kv_elt) for x in (shape_k, shape_v))
    t_o = "tensor<1x%dx?x%dx%s>" % (h, dv, elt)
    # The tokens-first arguments and their transposes (the op's operands).
    tokens_first = [("q", h, d, elt)]
    if table is None:
        tokens_first += [("k", hkv, d, kv_elt), ("v", hkv, dv, kv_elt)]
    body = "  %c1 = arith.constant 1 : index\n"
    arg_types = {"q": t_q, "k": t_k, "v": t_v}
    for name, heads, width, e in tokens_first:
        t_in = "tensor<1x?x%dx%dx%s>" % (heads, width, e)
        t_out = arg_types[name]
        arg_types[name] = t_in
        body += ("  %%%s_n = tensor.dim %%%s_t, %%c1 : %s\n"
                 "  %%%s_e = tensor.empty(%%%s_n) : %s\n"
                 "  %%%s = linalg.transpose ins(%%%s_t : %s) outs(%%%s_e : %s)"
                 " permutation = [0, 2, 1, 3]\n"
                 % (name, name, t_in, name, name, t_out, name, name, t_in, name, t_out))
    transposed = {name for name, *_ in tokens_first}
    args = ["%%%s%s: %s" % (x, "_t" if x in transposed else "", arg_types[x])
            for x in ("q", "k", "v")]
    args += ["%cuq: tensor<?xi32>", "%cuk: tensor<?xi32>"]
    types = [t_q, t_k, t_v, "tensor<?xi32>", "tensor<?xi32>"]
    k_name, v_name, scale_bufs = "%k", "%v", []
    if kind:
        t_s = "tensor<f32>" if np.ndim(scales[0]) == 0 else "tensor<%sxf32>" % shape_s
        args[3:3] = ["%%ks: %s" % t_s, "%%vs: %s" % t_s]
        for x, name, shape in (("k", "k_scale", shape_k), ("v", "v_scale", shape_v)):
            body += ("  %%%sd = attn.dequantize %%%s, %%%ss : (%s, %s) -> tensor<%sx%s>\n"
                     % (x, x, x, "tensor<%sx%s>" % (shape, kv_elt), t_s, shape, elt))
        k_name, v_name = "%kd", "%vd"
        types[1:3] = ["tensor<%sx%s>" % (x, elt) for x in (shape_k, shape_v)]
        for sc, name in zip(scales, ("k_scale", "v_scale")):
            buf = _scale_buffer(sc, name)
            if np.ndim(sc) and table is None:  # [total_k, Hkv] -> [1, Hkv, total_k]
                buf = buf.transpose(1, 0)[None]
            scale_bufs.append(buf)
    extra, operands = [], ""
    if table is not None:
        args.append("%table: tensor<?x?xi32>")
        types.append("tensor<?x?xi32>")
        operands += " block_table(%table)"
        extra.append(table)
    for name, x, key in (("alibi_slopes", alibi_slopes, "alibi"), ("sinks", sinks, "sinks")):
        if x is None:
            continue
        buf = _per_head(x, name, h)
        args.append("%%%s: tensor<%dxf32>" % (key, h))
        types.append("tensor<%dxf32>" % h)
        operands += " %s(%%%s)" % (key, key)
        extra.append(buf)
    attrs = _attributes(softmax_scale, d, causal, window_size, softcap)
    text = ("func.func @varlen(%s) -> %s {\n%s"
            "  %%o = attn.sdpa_varlen %%q, %s, %s, %%cuq, %%cuk%s {%s}\n"
            "      : (%s) -> %s\n  return %%o : %s\n}\n"
            % (", ".join(args), t_o, body, k_name, v_name, operands, ", ".join(attrs),
               ", ".join(types), t_o, t_o))
    kernel = CACHE.get(("varlen_op", text, threads), lambda: text, "varlen", "cpu", threads)
    out, view = _arrays.empty_like_kind(q, (total_q, h, dv), dt)
    if total_q == 0:
        return out
    if table is None:
        rows = [_arrays.as_buffer(x, n)[None] for x, n in ((q, "q"), (k, "k"), (v, "v"))]
    else:
        rows = [_arrays.as_buffer(q, "q")[None], _arrays.as_buffer(k, "k"),
                _arrays.as_buffer(v, "v")]
    kernel.call(rows + scale_bufs + [_int32(cu_q, "cu_seqlens_q"),
                                     _int32(cu_k, "cu_seqlens_k")] + extra,
                [view.transpose(1, 0, 2)[None]])
    return out


def _cu_seqlens(cu, total, what):
    """cu_seqlens [B+1] -> (starts, lengths) as int32 arrays, checked."""
    cu = _int32(cu, what).reshape(-1)
    if cu.size < 1 or cu[0] != 0:
        _fail(ValueError, "%s must start at 0 and have batch + 1 entries, got %s"
              % (what, cu.tolist()[:8]))
    lens = np.diff(cu)
    if lens.size and lens.min() < 0:
        i = int(np.argmin(lens))
        _fail(ValueError, "%s must not decrease: entry %d is %d, entry %d is %d"
              % (what, i, int(cu[i]), i + 1, int(cu[i + 1])))
    if total is not None and cu[-1] > total:
        _fail(ValueError, "%s ends at %d, past the %d rows given" % (what, int(cu[-1]), total))
    return cu[:-1], lens.astype(np.int32)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           dropout_p=0.0, softmax_scale=None, causal=False,
                           window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None, *,
                           sinks=None, k_scale=None, v_scale=None, kv_cache_dtype="auto",
                           threads=0):
    """Attention over a ragged batch, as ``flash_attn.flash_attn_varlen_func``:
    q [total_q, H, D] and k, v [total_k, Hkv, D] (Dv) hold the sequences one
    after another, sequence b's rows being cu_seqlens_q[b] .. [b+1] (and
    cu_seqlens_k's); with block_table, k and v are paged caches
    [num_blocks, page_block_size, Hkv, D] and cu_seqlens_k gives the
    lengths. Causal masks, windows and ALiBi are aligned to the bottom right
    of each sequence: query i of sequence b sees key j iff
    j <= i + len_k(b) - len_q(b). Returns [total_q, H, Dv].

    k and v may hold int8 codes, or fp8 e4m3 codes (float8_e4m3fn, or
    uint8 with kv_cache_dtype="fp8_e4m3"), with k_scale and v_scale as in
    flash_attn_with_kvcache: one float each (per tensor) or one per token
    and head (k's shape without its head dim: [total_k, Hkv], or [NB,
    page_block_size, Hkv] with a block table); the kernel reads the codes
    in place (docs/serving.md).

    How: one attn.sdpa_varlen on q, k, v viewed as [1, heads, total,
    headdim] (with a block table, on the caches as they are): one
    attn.sdpa a sequence on its rows (and its pages), read in place
    (docs/serving.md). Per-sequence ALiBi slopes [B, H], which that op does
    not take, go through one attn.sdpa on the queries padded to
    max_seqlen_q rows per sequence (a copy), each sequence's queries at the
    end of its rows, so that the bottom-right diagonal of the padded rows is
    each sequence's own; the keys are read in place from the pages or
    padded per sequence too (a copy). The padding rows are computed and
    dropped: with causal, their tiles see no key and are skipped; without,
    they cost as much as real rows."""
    if dropout_p:
        _fail(ValueError, "dropout_p=%r: attn_mlir's varlen call is for inference (dropout "
              "needs a seed; use scaled_dot_product_attention(dropout_seed=...))" % dropout_p)
    if return_attn_probs:
        _fail(NotImplementedError, "return_attn_probs is not supported: the fused kernel never "
              "forms the probabilities")
    dt = _arrays.dtype_name(q)
    if dt not in _MLIR_TYPES:
        _fail(TypeError, "q must be float32, float16 or bfloat16, got %s" % dt)
    kind = _cache_kind(k, v, kv_cache_dtype)
    if kind:
        k, v = _code_view(k, kind), _code_view(v, kind)
    elif k_scale is not None or v_scale is not None:
        _fail(ValueError, "k_scale and v_scale go with int8 or fp8 k and v, got %s"
              % _arrays.dtype_name(k))
    else:
        for name, x in (("k", k), ("v", v)):
            if _arrays.dtype_name(x) != dt:
                _fail(TypeError, "%s has dtype %s, q %s" % (name, _arrays.dtype_name(x), dt))
    qs, ks, vs = (_arrays.shape_of(x) for x in (q, k, v))
    if len(qs) != 3:
        _fail(ValueError, "q must be [total_q, heads, headdim], got shape %s" % list(qs))
    total_q, h, d = qs
    if block_table is None:
        if len(ks) != 3 or len(vs) != 3 or vs[:2] != ks[:2]:
            _fail(ValueError, "k and v must be [total_k, heads_k, headdim] with one total_k and "
                  "heads_k, got %s and %s" % (list(ks), list(vs)))
        total_k, hkv, dk = ks
        bs = 1
    else:
        if len(ks) != 4 or len(vs) != 4 or vs[:3] != ks[:3]:
            _fail(ValueError, "with block_table, k and v must be paged caches [num_blocks, "
                  "page_block_size, heads_k, headdim], got %s and %s" % (list(ks), list(vs)))
        _, bs, hkv, dk = ks
        total_k = None
    dv = vs[-1]
    if dk != d:
        _fail(ValueError, "k head dim is %d, q's %d" % (dk, d))
    if hkv == 0 or h % hkv:
        _fail(ValueError, "q has %d heads, k %d: heads must be a multiple of k's" % (h, hkv))
    q_start, len_q = _cu_seqlens(cu_seqlens_q, total_q, "cu_seqlens_q")
    k_start, len_k = _cu_seqlens(cu_seqlens_k, total_k, "cu_seqlens_k")
    b = len_q.size
    if len_k.size != b:
        _fail(ValueError, "cu_seqlens_q and cu_seqlens_k describe %d and %d sequences"
              % (b, len_k.size))
    max_q, max_k = int(max_seqlen_q), int(max_seqlen_k)
    if b and (len_q.max() > max_q or len_k.max() > max_k):
        _fail(ValueError, "max_seqlen_q/k = %d/%d, but a sequence has %d/%d rows"
              % (max_q, max_k, int(len_q.max()), int(len_k.max())))

    table = None
    if block_table is not None:
        table = _int32(block_table, "block_table")
        if table.ndim != 2 or table.shape[0] != b:
            _fail(ValueError, "block_table must be [batch=%d, max_blocks], got shape %s"
                  % (b, list(table.shape)))
        if b and len_k.max() > table.shape[1] * bs:
            _fail(ValueError, "a sequence has %d keys, past the block table's %d"
                  % (int(len_k.max()), table.shape[1] * bs))
    scales = _scale_caches(k_scale, v_scale, ks) if kind else None
    if alibi_slopes is None or np.ndim(_arrays.as_buffer(alibi_slopes, "alibi_slopes")) == 1:
        return _varlen_op(q, k, v, cu_seqlens_q, cu_seqlens_k, total_q, h, hkv, d, dv, dt,
                          softmax_scale, causal, window_size, softcap, alibi_slopes, sinks,
                          threads, table, bs, kind, scales)
    if kind:
        _fail(NotImplementedError, "per-sequence alibi_slopes [B, H] with %s k and v: pass "
              "slopes [H] or float k and v" % kind)
    if block_table is None:
        # Per-sequence ALiBi slopes [B, H], which attn.sdpa_varlen does not
        # take: K and V padded to [B, Hkv, max_k, D] (copies): the kernel then reads
        # each head's keys contiguously, as in a dense call; read in place as
        # one-token blocks they cost 1.3-1.6x (docs/serving.md).
        kvs = []
        for x, n, w in ((k, "k", d), (v, "v", dv)):
            xb = _arrays.as_buffer(x, n)
            padded = np.zeros((b, hkv, max(max_k, 1), w), dtype=xb.dtype)
            for i, (s0, nk) in enumerate(zip(k_start, len_k)):
                padded[i, :, :nk] = xb[s0:s0 + nk].transpose(1, 0, 2)
            kvs.append(padded)
        k_cache, v_cache = kvs
        bs = None
    else:
        k_cache, v_cache = _arrays.as_buffer(k, "k"), _arrays.as_buffer(v, "v")
    out, view = _arrays.empty_like_kind(q, (total_q, h, dv), dt)
    if b == 0 or total_q == 0 or max_q == 0:
        if total_q:
            view[...] = 0
        return out

    attrs = _attributes(softmax_scale, d, causal, window_size, softcap)
    text, extra = _kernel_text("varlen", _MLIR_TYPES[dt], h, hkv, d, dv, None, bs, False,
                               attrs, b, alibi_slopes, sinks, False)
    kernel = CACHE.get(("varlen", text, threads), lambda: text, "varlen", "cpu", threads)
    # Sequence b's query r is padded row pad[b] + r of [B, H, max_q, D]:
    # its queries end where its rows end, so the bottom-right diagonal of
    # each real row is its own sequence's. The padding rows stay 0.
    # (Copies a sequence at a time: numpy's fancy indexing over rows took
    # as long as the kernel.)
    pad = max_q - len_q
    qb = _arrays.as_buffer(q, "q")
    padded_q = np.zeros((b, h, max_q, d), dtype=qb.dtype)
    for i, (s0, n) in enumerate(zip(q_start, len_q)):
        padded_q[i, :, pad[i]:] = qb[s0:s0 + n].transpose(1, 0, 2)
    padded_out = np.empty((b, h, max_q, dv), dtype=qb.dtype)
    kernel.call([padded_q, k_cache, v_cache] + ([] if table is None else [table]) + [len_k] +
                [_arrays.as_buffer(x, "an input") for x in extra], [padded_out])
    if int(len_q.sum()) < total_q:
        view[...] = 0  # rows past cu_seqlens_q[-1] belong to no sequence
    for i, (s0, n) in enumerate(zip(q_start, len_q)):
        view[s0:s0 + n] = padded_out[i, :, pad[i]:].transpose(1, 0, 2)
    return out
