"""The self-attention block shared by mha_sinks_case.py and
mha_functions_case.py, in NumPy: random input and weights (float32, as
the tests pass them), the float64 projections split into heads, and the
merge with the output projection."""
import numpy as np


def random_block(rng, B, T, E, H, HKV, D):
    """x [B,T,E], Wq [H·D,E], Wk/Wv [Hkv·D,E], Wo [E,H·D] and the four biases
    (float32), by name."""
    block = dict(x=rng.standard_normal((B, T, E), dtype=np.float32))
    for name, shape in (("wq", (H * D, E)), ("wk", (HKV * D, E)), ("wv", (HKV * D, E)),
                        ("wo", (E, H * D))):
        block[name] = rng.standard_normal(shape, dtype=np.float32) * 0.3
    for name, n in (("bq", H * D), ("bk", HKV * D), ("bv", HKV * D)):
        block[name] = rng.standard_normal(n, dtype=np.float32)
    block["bo"] = rng.standard_normal(E, dtype=np.float32)
    return block


def heads(block, H, HKV, D):
    """Q [B,H,T,D], K and V [B,Hkv,T,D] in float64."""
    f = {n: a.astype(np.float64) for n, a in block.items()}
    B, T, _ = f["x"].shape

    def project(w, b, n):
        return (f["x"] @ f[w].T + f[b]).reshape(B, T, n, D).transpose(0, 2, 1, 3)
    return project("wq", "bq", H), project("wk", "bk", HKV), project("wv", "bv", HKV)


def merge(block, o):
    """The heads o [B,H,T,D] merged and projected by Wo, plus bo."""
    B, H, T, D = o.shape
    return (o.transpose(0, 2, 1, 3).reshape(B, T, H * D) @ block["wo"].astype(np.float64).T
            + block["bo"].astype(np.float64))
