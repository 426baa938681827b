"""Expected values for the attn_mlir tests, from PyTorch's plain ops in
float64: softmax(mask(scale * q @ k^T)) @ v with GQA by repeat_interleave.
Nothing here calls attn_mlir. PyTorch 1.13 has no
F.scaled_dot_product_attention; this is its math path, written out.

A row whose keys are all masked is NaN in torch's softmax; attn gives 0
there, and so does this reference (`zero_empty_rows`), so that tests can
compare whole outputs; tests that care check those rows on their own.
"""

import torch


def dropout_keep(shape, rate, seed):
    """attn.dropout's keep mask for a tensor of `shape` (bool): the
    splitmix64 finaliser of seed + (n + 1)·0x9E3779B97F4A7C15 over the
    row-major flat index n, kept when z >> 40 >= ceil(rate·2^24) (the op's
    definition in AttnPrimitiveOps.td), in 64-bit wrapping arithmetic."""
    import numpy as np
    n = np.arange(int(np.prod(shape)), dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(seed % 2 ** 64) + (n + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    threshold = np.uint64(np.ceil(float(np.float32(rate)) * 2.0 ** 24))
    return torch.from_numpy(((z >> np.uint64(40)) >= threshold).reshape(shape))


def sdpa(q, k, v, keep=None, add=None, causal=None, scale=None, softcap=None,
         window=None, alibi=None, key_lengths=None, zero_empty_rows=True, dropout=None,
         sinks=None):
    """q [B,H,L,E], k/v [B,Hkv,S,*]; keep: bool broadcastable to [B,H,L,S]
    (True = take part); add: float added to the scaled scores; causal:
    'top_left' | 'bottom_right'; window (left, right) with None = unbounded,
    on the causal diagonal (bottom-right without causal); alibi [H] or [B,H];
    key_lengths [B]; dropout (rate, seed): attn's counter-based dropout on
    the probabilities (dropout_keep), kept ones scaled by 1/(1 - rate);
    sinks [H]: one more logit per head in every row's softmax, weighing no
    value (a float64 leaf that requires grad stays attached).
    Returns float64 [B,H,L,Ev]."""
    # float64 leaves that require grad stay attached (gradient references).
    q, k, v = (t if t.dtype == torch.float64 and t.requires_grad
               else t.detach().to(torch.float64) for t in (q, k, v))
    b, h, l, e = q.shape
    hkv, s = k.shape[1], k.shape[2]
    if hkv != h:
        k = k.repeat_interleave(h // hkv, dim=1)
        v = v.repeat_interleave(h // hkv, dim=1)
    sc = (q @ k.transpose(-2, -1)) * (e ** -0.5 if scale is None else scale)
    if softcap is not None:
        sc = torch.tanh(sc / softcap) * softcap
    i = torch.arange(l)[:, None]
    j = torch.arange(s)[None, :]
    # The diagonal per batch: bottom-right measures from the key length.
    tk = torch.full((b,), s) if key_lengths is None else torch.as_tensor(key_lengths)
    diag_br = i[None] + (tk[:, None, None] - l)           # [B, L, 1]
    diag = i[None].expand(b, l, 1) if causal == "top_left" else diag_br
    if alibi is not None:
        # ALiBi measures from the query's position in the sequence, the
        # bottom-right diagonal, whatever the causal kind (docs/pytorch.md).
        dist = (diag_br[:, None] - j[None, None]).abs().to(torch.float64)  # [B,1,L,S]
        slopes = torch.as_tensor(alibi, dtype=torch.float64)
        slopes = slopes[None, :] if slopes.dim() == 1 else slopes   # [B or 1, H]
        sc = sc - slopes[:, :, None, None] * dist
    if add is not None:
        # A float64 mask that requires grad stays attached (dMask references).
        sc = sc + (add if add.dtype == torch.float64 and add.requires_grad
                   else add.detach().to(torch.float64))
    kept = torch.ones(b, 1, l, s, dtype=torch.bool)
    if causal is not None:
        kept = kept & (j[None, None] <= diag[:, None])
    if window is not None:
        left, right = window
        if left is not None:
            kept = kept & (j[None, None] >= diag[:, None] - left)
        if right is not None:
            kept = kept & (j[None, None] <= diag[:, None] + right)
    if key_lengths is not None:
        kept = kept & (j[None, None] < tk[:, None, None, None])
    if keep is not None:
        kept = kept & keep
    sc = sc.masked_fill(~kept, float("-inf"))
    if sinks is not None:
        # The sink as one more column of the softmax, dropped after it.
        sk = (sinks if sinks.dtype == torch.float64 and sinks.requires_grad
              else torch.as_tensor(sinks).detach().to(torch.float64))
        col = sk[None, :, None, None].expand(b, h, l, 1)
        p = torch.softmax(torch.cat([sc, col], -1), -1)[..., :-1]
    elif zero_empty_rows:
        # softmax as exp(s - lse) with lse = 0 on a row that keeps no key:
        # zeros there, and a gradient of 0 (not NaN) through it.
        lse = torch.logsumexp(sc, dim=-1, keepdim=True)
        p = torch.exp(sc - lse.masked_fill(lse == float("-inf"), 0.0))
    else:
        p = torch.softmax(sc, dim=-1)
    if dropout is not None:
        import numpy as np
        rate, seed = dropout
        factor = float(np.float32(1.0 / (1.0 - float(np.float32(rate)))))
        p = torch.where(dropout_keep(tuple(p.shape), rate, seed), p * factor,
                        torch.zeros_like(p))
    return p @ v


def max_err(got, want):
    got = torch.as_tensor(got).to(torch.float64) if not isinstance(got, torch.Tensor) \
        else got.detach().to(torch.float64)
    return (got - want).abs().max().item()
