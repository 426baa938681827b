"""attn_mlir.MultiheadAttention (filled in below)."""


class MultiheadAttention:
    pass
