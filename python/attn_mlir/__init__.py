"""attn_mlir: attention compiled by attn-mlir, called from Python.

    import attn_mlir
    out = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True)

- ``scaled_dot_product_attention``: torch.nn.functional's function on NumPy
  arrays and CPU torch tensors (float32, float16; bfloat16 for torch), plus
  attn's variants (bottom-right causal, sliding windows, softcap, ALiBi,
  key lengths); kernels compiled once per configuration and cached.
- ``linear``: torch.nn.functional.linear as an attn.project GEMM,
  differentiable (its backward's GEMMs compiled too).
- ``MultiheadAttention.from_torch(module)``: an nn.MultiheadAttention's
  forward, compiled; ``attn_mlir.nn.MultiheadAttention`` (``import
  attn_mlir.nn``, needs torch): the trainable module, forward and backward
  compiled.
- ``flex_attention`` / ``create_block_mask``: FlexAttention's functions;
  score_mod and mask_mod are traced into the fused kernel.
- ``flash_attn_with_kvcache``: FlashAttention's decoding call on contiguous
  or paged KV caches (``block_table``), new rows appended in place;
  ``flash_attn_varlen_func``: its ragged-batch call (``cu_seqlens``).
- ``compile(mlir_text)``: attn IR -> a callable on arrays.
- ``hf_attention_forward``: the same, with Hugging Face transformers'
  attention-function signature (for ``AttentionInterface.register``).
- ``AttnError``: what every failure of the compiler or the runtime raises,
  with its message.

See docs/python.md.
"""

from ._attn_mlir import AttnError
from ._cache import CACHE as _CACHE
from .flex import (BlockMask, TraceError, and_masks, create_block_mask, flex_attention,
                   noop_mask, or_masks)
from .functional import hf_attention_forward, scaled_dot_product_attention
from ._compile import CompiledFunction, compile
from .linear import linear
from .serving import flash_attn_varlen_func, flash_attn_with_kvcache
from .modules import MultiheadAttention

__all__ = ["AttnError", "BlockMask", "CompiledFunction", "MultiheadAttention",
           "TraceError", "and_masks", "cache_info", "clear_cache", "compile",
           "create_block_mask", "flash_attn_varlen_func", "flash_attn_with_kvcache",
           "flex_attention",
           "hf_attention_forward", "linear", "noop_mask",
           "or_masks", "scaled_dot_product_attention"]


def cache_info():
    """{'kernels': compiled kernels held, 'hits': ..., 'misses': ...}."""
    return _CACHE.info()


def clear_cache():
    """Drops every cached kernel (the ones still referenced stay alive)."""
    _CACHE.clear()
