"""attn_mlir.MultiheadAttention: torch.nn.MultiheadAttention's forward,
compiled by attn-mlir.

``MultiheadAttention.from_torch(module)`` takes a snapshot of the module's
weights; calling the result computes what ``module(query, key, value,
key_padding_mask=..., need_weights=False, attn_mask=...)`` computes, in
eval mode. Two compiled forms, chosen per call and cached like the sdpa
kernels (one per batch size; the lengths are dynamic):

- ``key is value`` (self-attention, or one memory tensor for keys and
  values) and kdim == vdim: one ``attn.mha`` op (attn/Attention.h's
  MhaSpec), projections and attention fused;
- otherwise: the same computation written as ``attn.project`` ×3,
  ``attn.split_heads``, ``attn.sdpa``, ``attn.merge_heads``,
  ``attn.project``, so that key and value come from different tensors.
"""

import sys

import numpy as np

from . import _arrays
from . import _attn_mlir
from ._cache import CACHE

_FLOAT_TYPES = ("float32", "float16", "bfloat16")


def _fail(exc, msg):
    raise exc("attn_mlir.MultiheadAttention: " + msg)


def _param(t):
    """A contiguous NumPy snapshot of a parameter (bfloat16 as int16 bits)."""
    return np.ascontiguousarray(_arrays.as_buffer(t.detach().clone(), "a weight"))


def _ir_type(name):
    return {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "bool": "i1"}[name]


def _tensor(shape, elt):
    return "tensor<%sx%s>" % ("x".join("?" if d < 0 else str(d) for d in shape), elt)


class MultiheadAttention:
    """A compiled nn.MultiheadAttention (see the module docstring)."""

    def __init__(self, *, embed_dim, num_heads, kdim, vdim, wq, wk, wv, wo, bq, bk, bv,
                 bo, dtype, batch_first, pipeline="cpu"):
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim, self.vdim = kdim, vdim
        self.batch_first = batch_first
        self.dtype = dtype
        self.pipeline = pipeline
        self._w = (wq, wk, wv, wo)
        self._b = (bq, bk, bv, bo)

    @classmethod
    def from_torch(cls, module, pipeline="cpu"):
        """A compiled copy of `module` (an nn.MultiheadAttention in eval mode,
        or with dropout 0). The weights are copied now: later changes to the
        module do not reach the copy."""
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(module, torch.nn.MultiheadAttention):
            _fail(TypeError, "from_torch takes a torch.nn.MultiheadAttention, got %s"
                  % type(module).__name__)
        if module.bias_k is not None or module.bias_v is not None:
            _fail(ValueError, "add_bias_kv=True (a learned key/value row appended to "
                  "the sequence) has no attn equivalent")
        if module.add_zero_attn:
            _fail(ValueError, "add_zero_attn=True (a zero key/value row appended to "
                  "the sequence) has no attn equivalent")
        if module.training and module.dropout > 0:
            _fail(ValueError, "the module is in training mode with dropout=%g; the "
                  "compiled forward is inference only: call module.eval() first"
                  % module.dropout)
        e, h = module.embed_dim, module.num_heads
        if module._qkv_same_embed_dim:
            w = module.in_proj_weight
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = module.q_proj_weight, module.k_proj_weight, module.v_proj_weight
        wo = module.out_proj.weight
        dtype = str(wq.dtype).replace("torch.", "")
        if dtype not in _FLOAT_TYPES:
            _fail(TypeError, "the module's weights are %s; attn_mlir takes float32, "
                  "float16 or bfloat16" % dtype)
        zeros = torch.zeros(e, dtype=wq.dtype)
        ib = module.in_proj_bias
        bq, bk, bv = (zeros, zeros, zeros) if ib is None else (ib[:e], ib[e:2 * e], ib[2 * e:])
        bo = module.out_proj.bias if module.out_proj.bias is not None else zeros
        has_bias = ib is not None or module.out_proj.bias is not None
        return cls(embed_dim=e, num_heads=h, kdim=module.kdim, vdim=module.vdim,
                   wq=_param(wq), wk=_param(wk), wv=_param(wv), wo=_param(wo),
                   bq=_param(bq) if has_bias else None, bk=_param(bk) if has_bias else None,
                   bv=_param(bv) if has_bias else None, bo=_param(bo) if has_bias else None,
                   dtype=dtype, batch_first=module.batch_first, pipeline=pipeline)

    # -- the call -------------------------------------------------------------

    def _batched(self, x, what, width):
        """[B, T, width] (batch_first) or [T, B, width] -> a [B, T, width]
        NumPy view; unbatched [T, width] -> [1, T, width]."""
        name = _arrays.dtype_name(x)
        if name != self.dtype:
            _fail(TypeError, "%s has dtype %s, the module's weights %s"
                  % (what, name, self.dtype))
        arr = _arrays.as_buffer(x, what)
        if arr.ndim == 2:
            arr = arr[None]
        elif arr.ndim == 3:
            if not self.batch_first:
                arr = arr.transpose(1, 0, 2)
        else:
            _fail(ValueError, "%s must be [%s, width] or [T, width], got shape %s"
                  % (what, "B, T" if self.batch_first else "T, B", list(arr.shape)))
        if arr.shape[2] != width:
            _fail(ValueError, "%s has width %d (last dim), expected %d"
                  % (what, arr.shape[2], width))
        return arr

    def _mask(self, key_padding_mask, attn_mask, b, l, s, unbatched):
        """torch's two masks (True = ignore, or float added) as one attn mask
        broadcastable to [B, H, L, S]: a keep mask when both are bool, else an
        additive one of the module's dtype. Returns (array or None, kind,
        spec shape)."""
        h = self.num_heads
        parts = []  # (the mask as given, its 4-D shape)
        if attn_mask is not None:
            shape = _arrays.shape_of(attn_mask)
            if shape == (l, s):
                parts.append((attn_mask, (1, 1, l, s)))
            elif shape == ((h, l, s) if unbatched else (b * h, l, s)):
                parts.append((attn_mask, (b, h, l, s)))
            else:
                _fail(ValueError, "attn_mask has shape %s, expected [%d, %d] or [%d, %d, %d]"
                      % (list(shape), l, s, b * h, l, s))
        if key_padding_mask is not None:
            shape = _arrays.shape_of(key_padding_mask)
            if shape != ((s,) if unbatched else (b, s)):
                _fail(ValueError, "key_padding_mask has shape %s, expected %s"
                      % (list(shape), [s] if unbatched else [b, s]))
            parts.append((key_padding_mask, (b, 1, 1, s)))
        if not parts:
            return None, "none", []
        names = [_arrays.dtype_name(m) for m, _ in parts]
        for n in names:
            if n != "bool" and n not in _FLOAT_TYPES + ("float64",):
                _fail(TypeError, "masks must be bool (True = ignore) or float (added), "
                      "got %s" % n)
        if all(n == "bool" for n in names):
            keep = None
            for m, shape in parts:
                k = ~_arrays.as_buffer(m, "mask").reshape(shape)
                keep = k if keep is None else keep & k
            mask, kind = np.ascontiguousarray(keep), "keep"
        else:
            add = np.zeros((1, 1, 1, 1), dtype=np.float32)
            for (m, shape), n in zip(parts, names):
                if n == "bool":
                    add = add + np.where(_arrays.as_buffer(m, "mask").reshape(shape),
                                         np.float32(-np.inf), np.float32(0))
                else:
                    add = add + _arrays.as_buffer(_arrays.cast(m, "float32", "mask"),
                                                  "mask").reshape(shape)
            kind = "additive"
            mask = np.ascontiguousarray(add, dtype=np.float32)
            if self.dtype == "float16":
                mask = mask.astype(np.float16)
            elif self.dtype == "bfloat16":
                torch = sys.modules["torch"]
                mask = _arrays.as_buffer(torch.from_numpy(mask).to(torch.bfloat16), "mask")
        spec = [1 if mask.shape[0] == 1 else b, 1 if mask.shape[1] == 1 else h,
                1 if mask.shape[2] == 1 else -1, 1 if mask.shape[3] == 1 else -1]
        return mask, kind, spec

    def __call__(self, query, key, value, key_padding_mask=None, need_weights=True,
                 attn_mask=None, average_attn_weights=True, is_causal=False):
        """nn.MultiheadAttention.forward; returns (attn_output, None). Pass
        need_weights=False: the compiled kernels never form the attention
        weights. is_causal=True is a top-left causal mask (AND attn_mask)."""
        if need_weights:
            _fail(ValueError, "pass need_weights=False: the compiled kernels never form "
                  "the attention weights (torch's default need_weights=True returns them)")
        ndim = len(_arrays.shape_of(query))
        unbatched = ndim == 2
        xq = self._batched(query, "query", self.embed_dim)
        xk = self._batched(key, "key", self.kdim)
        xv = self._batched(value, "value", self.vdim)
        b, l = xq.shape[0], xq.shape[1]
        s = xk.shape[1]
        if xk.shape[:2] != xv.shape[:2] or xk.shape[0] != b:
            _fail(ValueError, "query, key and value shapes %s, %s, %s do not fit "
                  "(batch and key length)" % (list(_arrays.shape_of(query)),
                                             list(_arrays.shape_of(key)),
                                             list(_arrays.shape_of(value))))
        mask, mkind, mspec = self._mask(key_padding_mask, attn_mask, b, l, s, unbatched)
        causal = "top_left" if is_causal else "none"
        bias = self._b[0] is not None
        fused = key is value and self.kdim == self.vdim
        # The batch is static: one kernel per batch size, any lengths. (With
        # the batch dynamic too, the projections delinearise their rows; the
        # GPT-2 small block, B 1, T 128, ran 4.3-5.0 ms against 3.2-4.3 ms
        # static through attn-run, 2026-12-01; before that change it took the
        # reference route, 8-15x slower.)
        key_ = ("mha", fused, self.dtype, b, self.embed_dim, self.num_heads, self.kdim,
                self.vdim, bias, causal, mkind, tuple(mspec), self.pipeline)
        if fused:
            spec = _attn_mlir.MhaSpec()
            spec.batch, spec.query_len, spec.key_len = b, -1, -1
            spec.embed_dim, spec.kv_embed_dim = self.embed_dim, self.kdim
            spec.num_heads, spec.bias = self.num_heads, bias
            spec.type, spec.causal = self.dtype, causal
            spec.mask, spec.mask_shape = mkind, mspec
            make_text = spec.to_mlir
            entry = "mha"
            inputs = [xq, xk]
        else:
            make_text = lambda: self._chain_ir(b, bias, causal, mkind, mspec)  # noqa: E731
            entry = "mha_chain"
            inputs = [xq, xk, xv]
        inputs += list(self._w)
        if bias:
            inputs += list(self._b)
        if mask is not None:
            inputs.append(mask)
        kernel = CACHE.get(key_, make_text, entry, self.pipeline)
        shape = (l, self.embed_dim) if unbatched else \
            (b, l, self.embed_dim) if self.batch_first else (l, b, self.embed_dim)
        out, view = _arrays.empty_like_kind(query, shape, self.dtype)
        if unbatched:
            view = view[None]
        elif not self.batch_first:
            view = view.transpose(1, 0, 2)
        kernel.call(inputs, [view])
        return out, None

    def _chain_ir(self, b, bias, causal, mkind, mspec):
        """The forward as attn ops, for key and value from different tensors
        (batch `b`, lengths dynamic)."""
        e, h, d = self.embed_dim, self.num_heads, self.head_dim
        t = _ir_type(self.dtype)
        x_q, x_k, x_v = (_tensor((b, -1, w), t) for w in (e, self.kdim, self.vdim))
        t_q, t_k, t_v = (_tensor((e, w), t) for w in (e, self.kdim, self.vdim))
        t_o, t_b = _tensor((e, e), t), _tensor((e,), t)
        t_p, t_h = _tensor((b, -1, e), t), _tensor((b, h, -1, d), t)
        args = ["%%xq: %s" % x_q, "%%xk: %s" % x_k, "%%xv: %s" % x_v,
                "%%wq: %s" % t_q, "%%wk: %s" % t_k, "%%wv: %s" % t_v, "%%wo: %s" % t_o]
        if bias:
            args += ["%%%s: %s" % (n, t_b) for n in ("bq", "bk", "bv", "bo")]
        t_m = None
        if mkind != "none":
            t_m = _tensor(mspec, "i1" if mkind == "keep" else t)
            args.append("%%m: %s" % t_m)
        lines = ["func.func @mha_chain(%s) -> %s {" % (", ".join(args), t_p)]
        for n, x, tx, tw in (("q", "xq", x_q, t_q), ("k", "xk", x_k, t_k),
                             ("v", "xv", x_v, t_v)):
            if bias:
                lines.append("  %%%s = attn.project %%%s, %%w%s, %%b%s : (%s, %s, %s) -> %s"
                             % (n, x, n, n, tx, tw, t_b, t_p))
            else:
                lines.append("  %%%s = attn.project %%%s, %%w%s : (%s, %s) -> %s"
                             % (n, x, n, tx, tw, t_p))
            lines.append("  %%%sh = attn.split_heads %%%s {num_heads = %d : i64} : (%s) -> %s"
                         % (n, n, h, t_p, t_h))
        attrs = " {causal = #attn.causal<top_left>}" if causal == "top_left" else ""
        if t_m:
            lines.append("  %%o = attn.sdpa %%qh, %%kh, %%vh, %%m%s : (%s, %s, %s, %s) -> %s"
                         % (attrs, t_h, t_h, t_h, t_m, t_h))
        else:
            lines.append("  %%o = attn.sdpa %%qh, %%kh, %%vh%s : (%s, %s, %s) -> %s"
                         % (attrs, t_h, t_h, t_h, t_h))
        lines.append("  %%mo = attn.merge_heads %%o : (%s) -> %s" % (t_h, t_p))
        if bias:
            lines.append("  %%y = attn.project %%mo, %%wo, %%bo : (%s, %s, %s) -> %s"
                         % (t_p, t_o, t_b, t_p))
        else:
            lines.append("  %%y = attn.project %%mo, %%wo : (%s, %s) -> %s" % (t_p, t_o, t_p))
        lines.append("  return %%y : %s" % t_p)
        lines.append("}")
        return "\n".join(lines) + "\n"
