"""attn_mlir.scaled_dot_product_attention: PyTorch's function, compiled.

The arguments and their meaning are those of
``torch.nn.functional.scaled_dot_product_attention`` (PyTorch 2.5's
signature); the keyword-only arguments after ``*`` are attn's attention
variants, which torch has no argument for. Each call is one ``attn.sdpa``
compiled by attn-mlir (attn/Attention.h's SdpaSpec) and cached: the key is
(head counts, head dims, element type, mask kind and broadcast pattern,
causal kind, scale, variants, pipeline); batch and both sequence lengths are
dynamic, so one kernel serves every batch size and length.
"""

import math

import numpy as np

from . import _arrays
from ._cache import CACHE

# float64 is for checking (torch.autograd.gradcheck): it takes the
# reference lowering, computed in f64, on either pipeline.
_FLOAT_TYPES = ("float32", "float16", "bfloat16", "float64")


def _fail(exc, msg):
    raise exc("attn_mlir.scaled_dot_product_attention: " + msg)


def _split(shape, name):
    """[*lead, H, L, E] -> (lead, H, L, E); rank 3 is [H, L, E] (torch reads
    dim -3 as the heads for enable_gqa), rank 2 is [L, E]."""
    if len(shape) < 2:
        _fail(ValueError, "%s must have rank >= 2 ([..., L, E]), got shape %s"
              % (name, list(shape)))
    if len(shape) == 2:
        return (), 1, shape[0], shape[1]
    return tuple(shape[:-3]), shape[-3], shape[-2], shape[-1]


def _causal_kind(is_causal, causal):
    if causal not in (None, "top_left", "bottom_right"):
        _fail(ValueError, "causal must be None, 'top_left' or 'bottom_right', got %r"
              % (causal,))
    if is_causal and causal == "bottom_right":
        _fail(ValueError, "is_causal=True is top_left; it contradicts causal='bottom_right'")
    if is_causal:
        return "top_left"
    return causal or "none"


def _window(window):
    """None | left | (left, right), None on a side = unbounded -> (l, r), -1
    = unbounded."""
    if window is None:
        return -1, -1
    if isinstance(window, (tuple, list)):
        if len(window) != 2:
            _fail(ValueError, "window must be an int (left) or a pair (left, right), got %r"
                  % (window,))
        left, right = window
    else:
        left, right = window, None
    out = []
    for side, v in (("left", left), ("right", right)):
        if v is None:
            out.append(-1)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            _fail(ValueError, "window %s must be None (unbounded) or an int >= 0, got %r"
                  % (side, v))
        out.append(int(v))
    if out == [-1, -1]:
        _fail(ValueError, "window=(None, None) is no window; pass window=None")
    return tuple(out)


def _mask_operand(mask, dtype, lead, h, l, s):
    """The mask as a 4-D [B', H', L', S'] buffer broadcastable to [B, H, L, S]
    (dims of size 1 kept, never expanded), its kind and the spec's mask shape
    (1 where broadcast, H for heads, -1 for the dynamic dims)."""
    mname = _arrays.dtype_name(mask)
    if mname == "bool":
        mkind = "keep"
    elif mname in ("float32", "float16", "bfloat16", "float64"):
        mkind = "additive"
        if mname != dtype:
            mask = _arrays.cast(mask, dtype, "attn_mask")
    else:
        _fail(TypeError, "attn_mask must be bool (True = take part) or a float added "
              "to the scores, got %s" % mname)
    arr = _arrays.as_buffer(mask, "attn_mask")
    target = tuple(lead) + (h, l, s)
    if arr.ndim > len(target):
        _fail(ValueError, "attn_mask of shape %s has more dims than the scores %s"
              % (list(arr.shape), list(target)))
    shape = (1,) * (len(target) - arr.ndim) + arr.shape
    for d, (m, t) in enumerate(zip(shape, target)):
        if m != 1 and m != t:
            _fail(ValueError, "attn_mask of shape %s does not broadcast to the scores %s "
                  "(dim %d is %d, expected 1 or %d)"
                  % (list(mask.shape), list(target), d, m, t))
    arr = arr.reshape(shape)
    nlead = len(lead)
    mlead = shape[:nlead]
    if all(m == 1 for m in mlead):
        arr4 = arr.reshape((1,) + shape[nlead:])
    else:
        b = math.prod(lead)
        arr4 = np.broadcast_to(arr, tuple(lead) + shape[nlead:]).reshape((b,) + shape[nlead:])
    spec = [1 if arr4.shape[0] == 1 else -1,
            1 if arr4.shape[1] == 1 else h,
            1 if arr4.shape[2] == 1 else -1,
            1 if arr4.shape[3] == 1 else -1]
    return arr4, mkind, spec


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False, *,
                                 causal=None, window=None, softcap=None,
                                 alibi_slopes=None, key_lengths=None, sinks=None,
                                 dropout_seed=None, pipeline="cpu"):
    """softmax(mask(scale * query @ key^T)) @ value, as
    ``torch.nn.functional.scaled_dot_product_attention``.

    query [..., H, L, E], key [..., Hkv, S, E], value [..., Hkv, S, Ev]
    (rank 2 is [L, E]; leading dims must be equal); NumPy arrays or CPU torch
    tensors of one dtype, float32 or float16 (bfloat16: torch only). Returns
    [..., H, L, Ev] of the query's kind and dtype.

    attn_mask: bool (True = take part) or float (added to the scaled
    scores), broadcastable to [..., H, L, S]. is_causal: top-left causal.
    scale: None = 1/sqrt(E). enable_gqa: allow Hkv < H (H % Hkv == 0).

    Beyond torch: causal='top_left' | 'bottom_right' (the last query sees
    the last key); window=left or (left, right) (a sliding window, None =
    unbounded side, measured from the causal diagonal); softcap=c
    (c * tanh(s / c) on the scaled scores); alibi_slopes [H] or [B, H]
    (float32; [B, H] as FlashAttention, B the product of the leading dims);
    key_lengths [B] (ints: keys at or past key_lengths[b] take no part);
    sinks [H] (attention sinks, gpt-oss: one logit per query head in every
    row's softmax denominator, weighing no value; float32, differentiable:
    a sinks tensor that requires grad gets its gradient);
    dropout_seed (with dropout_p > 0: the seed of attn's counter-based
    dropout, compiled into the kernel, so the same mask every call; None,
    the default, draws a fresh seed per call from torch's default generator
    (NumPy's global one without torch), passed to one compiled kernel as an
    input, as torch draws a fresh mask per call: torch.manual_seed makes
    it reproducible; the stream differs from torch's); pipeline='cpu'
    (fused) or 'reference' (unfused).

    A row whose keys are all masked gives 0 (torch 1.13's math gives NaN).
    """
    names = [_arrays.dtype_name(x) for x in (query, key, value)]
    if names[0] not in _FLOAT_TYPES:
        _fail(TypeError, "query has dtype %s; attn_mlir takes float32, float16, "
              "bfloat16 or float64" % names[0])
    if names[1] != names[0] or names[2] != names[0]:
        _fail(TypeError, "query, key and value must have one dtype, got %s, %s, %s"
              % tuple(names))
    dtype = names[0]
    qs, ks, vs = (_arrays.shape_of(x) for x in (query, key, value))
    if not (len(qs) == len(ks) == len(vs)):
        _fail(ValueError, "query, key and value must have one rank, got shapes %s, %s, %s"
              % (list(qs), list(ks), list(vs)))
    lead, h, l, e = _split(qs, "query")
    klead, hkv, s, ek = _split(ks, "key")
    vlead, hv, sv, ev = _split(vs, "value")
    if klead != lead or vlead != lead:
        _fail(ValueError, "query, key and value must have the same leading (batch) dims, "
              "got shapes %s, %s, %s" % (list(qs), list(ks), list(vs)))
    if ek != e:
        _fail(ValueError, "key head dim (dim -1) is %d, expected %d (the query's)"
              % (ek, e))
    if hv != hkv or sv != s:
        _fail(ValueError, "value shape %s does not match key shape %s in heads (dim -3) "
              "and length (dim -2)" % (list(vs), list(ks)))
    if hkv != h:
        if not enable_gqa:
            _fail(ValueError, "query has %d heads, key and value %d; pass enable_gqa=True "
                  "for grouped-query attention" % (h, hkv))
        if h % hkv != 0:
            _fail(ValueError, "query heads %d are not a multiple of key/value heads %d"
                  % (h, hkv))
    if dropout_p is None or not 0.0 <= float(dropout_p) < 1.0:
        _fail(ValueError, "dropout_p must be in [0, 1), got %r" % (dropout_p,))
    dropout_p = float(dropout_p)
    # Without a dropout_seed, a fresh seed per call: an input of the kernel.
    runtime_seed = dropout_p > 0 and dropout_seed is None
    if scale is None:
        scale_v = 0.0
    else:
        scale_v = float(scale)
        if scale_v == 0.0 or not math.isfinite(scale_v):
            _fail(ValueError, "scale must be a finite non-zero number or None "
                  "(1/sqrt(E)), got %r" % (scale,))
    causal_kind = _causal_kind(bool(is_causal), causal)
    wl, wr = _window(window)
    if softcap is not None:
        softcap = float(softcap)
        if not (softcap > 0 and math.isfinite(softcap)):
            _fail(ValueError, "softcap must be a positive number or None, got %r"
                  % (softcap,))
    else:
        softcap = 0.0
    b = math.prod(lead)

    q = _arrays.as_buffer(query, "query").reshape(b, h, l, e)
    k = _arrays.as_buffer(key, "key").reshape(b, hkv, s, e)
    v = _arrays.as_buffer(value, "value").reshape(b, hkv, s, ev)
    # A [B, T, heads, D] array seen through .transpose(1, 2) (PyTorch's
    # usual layout) is passed as it is and transposed in the IR, which the
    # CPU kernel reads in place, instead of packed into a copy per call.
    tokens_first = tuple(pipeline == "cpu" and _tokens_first(x) for x in (q, k, v))
    q, k, v = (x.transpose(0, 2, 1, 3) if t else x for x, t in zip((q, k, v), tokens_first))
    inputs = [q, k, v]
    mask_kind, mask_spec, mask4 = "none", [], None
    if attn_mask is not None:
        marr, mask_kind, mask_spec = _mask_operand(attn_mask, dtype, lead, h, l, s)
        mask4 = marr.shape
        inputs.append(marr)
    if alibi_slopes is not None:
        slopes = _arrays.as_buffer(_arrays.cast(alibi_slopes, "float32", "alibi_slopes")
                                   if _arrays.dtype_name(alibi_slopes) != "float32"
                                   else alibi_slopes, "alibi_slopes")
        # [H], or one row per batch element: [B, H] (FlashAttention's
        # (batch_size, nheads)) or the query's own leading dims + [H].
        per_batch = slopes.shape != (h,)
        if per_batch and slopes.shape not in ((b, h), tuple(lead) + (h,)):
            _fail(ValueError, "alibi_slopes must have shape [%d] (one per query head) or "
                  "[%d, %d] (one per batch element and query head), got %s"
                  % (h, b, h, list(slopes.shape)))
        inputs.append(slopes.reshape(b, h) if per_batch else slopes)
    if key_lengths is not None:
        lens = np.asarray(_arrays.as_buffer(key_lengths, "key_lengths"))
        if lens.dtype.kind not in "iu":
            _fail(TypeError, "key_lengths must be integers, got %s" % lens.dtype)
        if lens.size != b or (lens.ndim > 1 and lens.shape != tuple(lead)):
            _fail(ValueError, "key_lengths must have %d entries (one per batch %s), got "
                  "shape %s" % (b, list(lead), list(lens.shape)))
        if lens.dtype != np.int32:
            if lens.size and (lens.min() < 0 or lens.max() > s):
                bad = int(np.argmax((lens.reshape(-1) < 0) | (lens.reshape(-1) > s)))
                _fail(ValueError, "key_lengths[%d] = %d is outside [0, %d]"
                      % (bad, int(lens.reshape(-1)[bad]), s))
            lens = lens.astype(np.int32)
        inputs.append(lens.reshape(b))
    if sinks is not None:
        sink_buf = _arrays.as_buffer(_arrays.cast(sinks, "float32", "sinks")
                                     if _arrays.dtype_name(sinks) != "float32" else sinks,
                                     "sinks")
        if sink_buf.shape != (h,):
            _fail(ValueError, "sinks must have shape [%d] (one per query head), got %s"
                  % (h, list(sink_buf.shape)))
        inputs.append(sink_buf)
    if runtime_seed:
        inputs.append(_draw_seed())

    key_ = ("sdpa", dtype, h, hkv, e, ev, causal_kind, scale_v, mask_kind,
            tuple(mask_spec), dropout_p, dropout_seed, softcap, wl, wr,
            alibi_slopes is not None, alibi_slopes is not None and per_batch,
            key_lengths is not None, sinks is not None, pipeline, tokens_first)

    def make_part_text(part, mask_grad=False):
        from . import _attn_mlir
        spec = _attn_mlir.SdpaSpec()
        spec.part = part
        spec.mask_grad = mask_grad
        spec.batch, spec.heads, spec.kv_heads = -1, h, hkv
        spec.query_len, spec.key_len = -1, -1
        spec.head_dim, spec.value_dim = e, ev
        spec.type, spec.causal, spec.scale = dtype, causal_kind, scale_v
        spec.mask, spec.mask_shape = mask_kind, mask_spec
        spec.dropout_rate, spec.dropout_seed = dropout_p, int(dropout_seed or 0)
        spec.runtime_seed = runtime_seed
        spec.softcap, spec.window_left, spec.window_right = softcap, wl, wr
        spec.alibi = alibi_slopes is not None
        spec.alibi_per_batch = alibi_slopes is not None and per_batch
        spec.key_lengths = key_lengths is not None
        spec.sinks = sinks is not None
        if part == "output":
            (spec.query_tokens_first, spec.key_tokens_first,
             spec.value_tokens_first) = tokens_first
        return spec.to_mlir()

    def make_text():
        return make_part_text("output")

    out_shape = tuple(lead) + (h, l, ev) if len(qs) > 2 else (l, ev)
    if _records_grad(query, key, value, attn_mask, alibi_slopes, sinks):
        # With dropout the forward (attn.sdpa_partial) and the backward
        # (attn.sdpa_grad) carry the same rate and seed: the backward
        # regenerates the forward's mask from the seed. An additive mask
        # that requires grad gets attn.sdpa_grad's grad_mask (the
        # reference lowering's: it needs the [B,H,L,S] score gradient).
        mask_grad = _arrays.requires_grad(attn_mask)
        sinks_grad = _arrays.requires_grad(sinks)
        plan = _GradPlan(shapes=(qs, ks, vs), dims=(b, h, l, e, hkv, s, ev), dtype=dtype,
                         extras=inputs[3:], out_shape=out_shape,
                         mask=(tuple(attn_mask.shape), mask4, tuple(lead), attn_mask.dtype)
                         if mask_grad else None,
                         sinks=(tuple(_arrays.shape_of(sinks)), getattr(sinks, "dtype", None))
                         if sinks is not None else None,
                         forward=lambda: CACHE.get(key_ + ("output_with_lse",),
                                                   lambda: make_part_text("output_with_lse"), "sdpa",
                                                   pipeline),
                         backward=lambda: CACHE.get(key_ + ("gradients", mask_grad),
                                                    lambda: make_part_text("gradients", mask_grad),
                                                    "sdpa", pipeline))
        return _sdpa_function().apply(query, key, value, attn_mask if mask_grad else None,
                                      sinks if sinks_grad else None, plan)

    kernel = CACHE.get(key_, make_text, "sdpa", pipeline)
    out, view = _arrays.empty_like_kind(query, out_shape, dtype)
    kernel.call(inputs, [view.reshape(b, h, l, ev)])
    return out


def _tokens_first(x):
    """Whether the [B, H, T, D] array `x` is a transposed view of a
    C-contiguous [B, T, H, D] one (x.transpose(1, 2) of it), with H and T
    above 1 (else it is contiguous, or the layouts do not differ)."""
    bb, hh, tt, dd = x.shape
    it = x.itemsize
    return (hh > 1 and tt > 1 and not x.flags["C_CONTIGUOUS"]
            and x.strides == (tt * hh * dd * it, dd * it, hh * dd * it, it))


def _draw_seed():
    """A dropout seed, int64 of rank 0: from torch's default generator when
    torch is loaded (torch.manual_seed reproduces it), else NumPy's."""
    torch = _arrays._torch()
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    if torch is not None:
        return np.array(torch.randint(lo, hi, (), dtype=torch.int64).item(), dtype=np.int64)
    return np.array(np.random.randint(lo, hi, dtype=np.int64), dtype=np.int64)


def _records_grad(*xs):
    """Whether torch autograd records this call: grad mode on and a query,
    key, value, (float) mask or sinks that requires grad. Slopes that
    require grad are refused (attn gives no gradient for them). (A bool
    mask cannot require grad.)"""
    torch = _arrays._torch()
    if torch is None or not torch.is_grad_enabled():
        return False
    q, k, v, mask, slopes, sinks = xs
    if _arrays.requires_grad(slopes):
        _fail(ValueError, "alibi_slopes requires grad; attn_mlir differentiates with "
              "respect to query, key, value, a float attn_mask and sinks only (detach it)")
    return _arrays.records_grad(q, k, v, mask, sinks)


class _GradPlan:
    """What the autograd function needs besides q, k, v: the shapes, the
    other kernel inputs (mask, slopes, key lengths as buffers) and the
    kernels of the forward (attn.sdpa_partial) and backward
    (attn.sdpa_grad), compiled on first use."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


_SDPA_FUNCTION = []


def _sdpa_function():
    """torch.autograd.Function for scaled_dot_product_attention, defined
    on first use (torch is imported only by callers that pass tensors).
    The forward saves O (f32) and each row's log-sum-exp, not the
    probabilities: the backward recomputes them (docs/training.md)."""
    if _SDPA_FUNCTION:
        return _SDPA_FUNCTION[0]
    torch = _arrays._torch()

    class ScaledDotProductAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, query, key, value, attn_mask, sinks, plan):
            b, h, l, e, hkv, s, ev = plan.dims
            q = _arrays.as_buffer(query, "query").reshape(b, h, l, e)
            k = _arrays.as_buffer(key, "key").reshape(b, hkv, s, e)
            v = _arrays.as_buffer(value, "value").reshape(b, hkv, s, ev)
            # sdpa_partial's types: f32, f64 for f64.
            acc = torch.float64 if plan.dtype == "float64" else torch.float32
            out32 = torch.empty((b, h, l, ev), dtype=acc)
            lse = torch.empty((b, h, l), dtype=acc)
            plan.forward().call([q, k, v] + list(plan.extras), [out32.numpy(), lse.numpy()])
            ctx.plan = plan
            ctx.save_for_backward(query, key, value, out32, lse)
            return out32.to(getattr(torch, plan.dtype)).reshape(plan.out_shape)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, grad_out):
            plan = ctx.plan
            query, key, value, out32, lse = ctx.saved_tensors
            b, h, l, e, hkv, s, ev = plan.dims
            dtype = getattr(torch, plan.dtype)
            do = grad_out.detach().to(dtype).reshape(b, h, l, ev)
            ins = [_arrays.as_buffer(query, "query").reshape(b, h, l, e),
                   _arrays.as_buffer(key, "key").reshape(b, hkv, s, e),
                   _arrays.as_buffer(value, "value").reshape(b, hkv, s, ev),
                   out32.numpy(), _arrays.as_buffer(do, "grad_output"), lse.numpy()]
            grads, views = [], []
            for shape, dims in zip(plan.shapes, ((b, h, l, e), (b, hkv, s, e), (b, hkv, s, ev))):
                g, view = _arrays.empty_like_kind(query, shape, plan.dtype)
                grads.append(g)
                views.append(view.reshape(dims))
            dmask = None
            if plan.mask is not None:
                mask_shape, mask4, lead, mask_dtype = plan.mask
                g4, view = _arrays.empty_like_kind(query, mask4, plan.dtype)
                views.append(view)
            if plan.sinks is not None:
                # The gradients kernel of a spec with sinks returns dsinks
                # [H] f32 last.
                dsinks = torch.empty((h,), dtype=torch.float32)
                views.append(dsinks.numpy())
            plan.backward().call(ins + list(plan.extras), views)
            if plan.mask is not None and ctx.needs_input_grad[3]:
                # [B', H', L', S'] back to the mask's own shape: the batch
                # dims it broadcast over summed (see _mask_operand).
                n = len(mask_shape)
                full = (1,) * (len(lead) + 3 - n) + tuple(mask_shape)
                g = g4.float()
                if g.shape[0] != 1:
                    g = g.reshape(tuple(lead) + tuple(g.shape[1:]))
                    summed = [i for i, m in enumerate(full[:len(lead)]) if m == 1]
                    if summed:
                        g = g.sum(dim=summed, keepdim=True)
                dmask = g.reshape(mask_shape).to(mask_dtype)
            dsink = None
            if plan.sinks is not None and ctx.needs_input_grad[4]:
                dsink = dsinks.reshape(plan.sinks[0]).to(plan.sinks[1])
            return tuple(g if need else None
                         for g, need in zip(grads, ctx.needs_input_grad[:3])) + (dmask, dsink,
                                                                                 None)

    _SDPA_FUNCTION.append(ScaledDotProductAttention)
    return ScaledDotProductAttention


def hf_attention_forward(module, query, key, value, attention_mask, dropout=0.0,
                         scaling=None, is_causal=None, softcap=None, **kwargs):
    """Hugging Face transformers' attention-function signature (what
    ``transformers.AttentionInterface`` holds, like its ``sdpa``), computed
    by scaled_dot_product_attention:

        from transformers import AttentionInterface
        AttentionInterface.register("attn_mlir", attn_mlir.hf_attention_forward)
        model = AutoModelForCausalLM.from_pretrained(..., attn_implementation="attn_mlir")

    query [B, H, L, D], key/value [B, Hkv, S, D] (GQA without repeat_kv);
    attention_mask: None, or a 4-D bool (True = attend) / float (added) mask,
    cut to S keys as transformers' sdpa does; is_causal=None: causal when
    L > 1, there is no mask and ``module.is_causal`` is not False;
    ``softcap`` (Gemma 2's attn_logit_softcapping) is applied; other keyword
    arguments (sliding_window, already in the mask) are ignored. Returns
    (output [B, L, H, Dv], None), as transformers' functions do. dropout
    (what a model in training mode passes) is attn's dropout with a seed
    drawn per call from torch's generator, as scaled_dot_product_attention
    without dropout_seed; differentiable like it."""
    if attention_mask is not None and len(_arrays.shape_of(attention_mask)) == 4:
        attention_mask = attention_mask[:, :, :, : _arrays.shape_of(key)[-2]]
    if is_causal is None:
        is_causal = (_arrays.shape_of(query)[-2] > 1 and attention_mask is None
                     and getattr(module, "is_causal", True))
    out = scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=float(dropout or 0.0),
        is_causal=bool(is_causal), scale=scaling, enable_gqa=True, softcap=softcap)
    if _arrays.is_torch(out):
        return out.transpose(1, 2).contiguous(), None
    return np.ascontiguousarray(np.swapaxes(out, 1, 2)), None
