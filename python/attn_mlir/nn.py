"""attn_mlir.nn: torch.nn modules whose forward and backward attn-mlir
compiles. Needs torch (imported here).

``attn_mlir.nn.MultiheadAttention`` is a ``torch.nn.MultiheadAttention``
(the same constructor, parameters and state_dict keys, so
``load_state_dict`` moves weights either way) whose forward runs the
projections as ``attn_mlir.linear`` (``attn.project`` GEMMs) and the
attention as ``attn_mlir.scaled_dot_product_attention`` (``attn.sdpa``, or
``attn.sdpa_partial`` + ``attn.sdpa_grad`` when grad is recorded), so that
training differentiates through compiled code end to end. Unlike
``attn_mlir.MultiheadAttention.from_torch`` (a frozen snapshot fused into
one ``attn.mha``), its weights are live ``nn.Parameter`` s.

Where it differs from torch (docs/training.md): ``need_weights`` must be
False (the kernels never form the weights); dropout in training mode
draws its mask from attn's counter-based generator (a fresh seed per call
from torch's generator, so ``torch.manual_seed`` reproduces it; not
torch's stream); ``add_bias_kv`` and
``add_zero_attn`` are refused; a row whose keys are all masked gives 0
where torch gives NaN.

One addition torch's module does not have: ``sinks=True`` gives each head
a learned attention sink (gpt-oss's ``sinks``): a parameter ``sinks``
[num_heads] whose logit joins each row's softmax denominator and weighs
no value, trained with the rest (its gradient from attn's backward).
Initialised to zeros; it is one more ``state_dict`` key, so a torch
module's state loads with ``strict=False``.
"""

import torch

from .functional import scaled_dot_product_attention
from .linear import linear

__all__ = ["MultiheadAttention"]


def _fail(exc, msg):
    raise exc("attn_mlir.nn.MultiheadAttention: " + msg)


class MultiheadAttention(torch.nn.MultiheadAttention):
    """torch.nn.MultiheadAttention, compiled (see the module docstring).

    The arguments are torch's: embed_dim, num_heads, dropout=0.0, bias=True,
    add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None,
    batch_first=False, device=None, dtype=None; and ``sinks=False``
    (keyword only): a learned attention sink per head."""

    def __init__(self, embed_dim, num_heads, *args, pipeline="cpu", sinks=False, **kwargs):
        super().__init__(embed_dim, num_heads, *args, **kwargs)
        if self.bias_k is not None:
            _fail(ValueError, "add_bias_kv=True (a learned key/value row appended to the "
                  "sequence) has no attn equivalent")
        if self.add_zero_attn:
            _fail(ValueError, "add_zero_attn=True (a zero key/value row appended to the "
                  "sequence) has no attn equivalent")
        self.pipeline = pipeline
        # A learned logit per head in each row's softmax denominator.
        w = self.out_proj.weight
        self.sinks = torch.nn.Parameter(torch.zeros(num_heads, device=w.device, dtype=w.dtype)) \
            if sinks else None

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """torch's forward; returns (attn_output, None). Pass
        need_weights=False. is_causal=True is a top-left causal mask (ANDed
        with attn_mask when both are given)."""
        if need_weights:
            _fail(ValueError, "pass need_weights=False: the compiled kernels never form "
                  "the attention weights (torch's default need_weights=True returns them)")
        dtype = self.out_proj.weight.dtype
        for name, x in (("query", query), ("key", key), ("value", value)):
            if not isinstance(x, torch.Tensor):
                _fail(TypeError, "%s must be a torch.Tensor, got %s" % (name, type(x).__name__))
            if x.dtype != dtype:
                _fail(TypeError, "%s has dtype %s, the module's weights %s"
                      % (name, x.dtype, dtype))
        unbatched = query.dim() == 2
        if query.dim() not in (2, 3) or key.dim() != query.dim() or value.dim() != query.dim():
            _fail(ValueError, "query, key and value must all be [%s, E] (or unbatched [T, "
                  "E]), got shapes %s, %s, %s"
                  % ("B, T" if self.batch_first else "T, B", list(query.shape),
                     list(key.shape), list(value.shape)))
        self_attention = query is key and key is value
        if unbatched:
            query, key, value = (x.unsqueeze(0) for x in (query, key, value))
        elif not self.batch_first:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        b, l, e = query.shape
        s = key.shape[1]
        for name, x, w in (("query", query, self.embed_dim), ("key", key, self.kdim),
                           ("value", value, self.vdim)):
            if x.shape[-1] != w:
                _fail(ValueError, "%s has width %d (last dim), expected %d"
                      % (name, x.shape[-1], w))
        if key.shape[:2] != value.shape[:2] or key.shape[0] != b:
            _fail(ValueError, "query, key and value do not fit (batch and key length): "
                  "%s, %s, %s" % (list(query.shape), list(key.shape), list(value.shape)))

        q, k, v = self._project(query, key, value, self_attention)
        h, d = self.num_heads, self.head_dim
        q, k, v = (x.reshape(b, x.shape[1], h, d).transpose(1, 2) for x in (q, k, v))
        mask = self._mask(key_padding_mask, attn_mask, b, l, s, unbatched, dtype)
        # Dropout on the attention weights in training mode, as torch's: a
        # fresh mask per call (a seed drawn from torch's generator, an input
        # of one compiled kernel; attn's stream, not torch's).
        p = self.dropout if self.training else 0.0
        o = scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=bool(is_causal),
                                         dropout_p=p, sinks=self.sinks, pipeline=self.pipeline)
        o = o.transpose(1, 2).reshape(b, l, e)
        y = linear(o, self.out_proj.weight, self.out_proj.bias, pipeline=self.pipeline)
        if unbatched:
            y = y.squeeze(0)
        elif not self.batch_first:
            y = y.transpose(0, 1)
        return y, None

    def _project(self, query, key, value, self_attention):
        """Q, K, V [B, T, E]: one GEMM against in_proj_weight for
        self-attention, one per input otherwise."""
        p = self.pipeline
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            bias = self.in_proj_bias
            if self_attention:
                return linear(query, w, bias, pipeline=p).split(e, dim=-1)
            ws = w.split(e)
            bs = bias.split(e) if bias is not None else (None, None, None)
        else:
            ws = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
            bs = self.in_proj_bias.split(e) if self.in_proj_bias is not None \
                else (None, None, None)
        return tuple(linear(x, wi, bi, pipeline=p)
                     for x, wi, bi in zip((query, key, value), ws, bs))

    def _mask(self, key_padding_mask, attn_mask, b, l, s, unbatched, dtype):
        """torch's masks (bool True = ignore, float added) as one
        scaled_dot_product_attention mask (bool True = keep, or float added)
        broadcastable to [B, H, L, S]; None when neither is given."""
        h = self.num_heads
        parts = []
        if attn_mask is not None:
            shape = tuple(attn_mask.shape)
            if shape == (l, s):
                parts.append(attn_mask.reshape(1, 1, l, s))
            elif shape == ((h, l, s) if unbatched else (b * h, l, s)):
                parts.append(attn_mask.reshape(b, h, l, s))
            else:
                _fail(ValueError, "attn_mask has shape %s, expected [%d, %d] or [%d, %d, %d]"
                      % (list(shape), l, s, h if unbatched else b * h, l, s))
        if key_padding_mask is not None:
            shape = tuple(key_padding_mask.shape)
            if shape != ((s,) if unbatched else (b, s)):
                _fail(ValueError, "key_padding_mask has shape %s, expected %s"
                      % (list(shape), [s] if unbatched else [b, s]))
            parts.append(key_padding_mask.reshape(b, 1, 1, s))
        if not parts:
            return None
        for m in parts:
            if m.dtype != torch.bool and not m.dtype.is_floating_point:
                _fail(TypeError, "masks must be bool (True = ignore) or float (added), got %s"
                      % m.dtype)
            if m.requires_grad:
                _fail(ValueError, "a mask requires grad; attn_mlir gives no gradient for "
                      "masks (detach it)")
        if all(m.dtype == torch.bool for m in parts):
            ignore = parts[0]
            for m in parts[1:]:
                ignore = ignore | m
            return ~ignore
        add = torch.zeros((), dtype=torch.float32)
        for m in parts:
            if m.dtype == torch.bool:
                add = add + torch.zeros(m.shape).masked_fill(m, float("-inf"))
            else:
                add = add + m.float()
        return add.to(dtype)
