#!/usr/bin/env python3
"""Tokens-first varlen arrays read in place against packed by the runtime
(docs/serving.md, *Tokens-first arrays*), one process, alternating.

The ragged batch of serving_bench.py --only ragged (16 causal sequences of
64 .. 4096 tokens, H 8, D 64, f32), as:

- views: the op on heads-first operands, q, k, v passed as [1, H, total, D]
  views of the [total, H, D] arrays (the runtime packs each into a
  heads-first copy per call; what flash_attn_varlen_func did before);
- tokens_first: flash_attn_varlen_func as it is (the arrays passed as they
  are, the operands their transposes in the IR, read in place);
- heads_first: the first function on heads-first copies made beforehand
  (no packing at all: the kernel alone);
- separate: 16 scaled_dot_product_attention calls on heads-first copies.

    PYTHONPATH=build/python python3 bench/varlen_tokens_first_ab.py [ROUNDS]
"""
import sys
import time

import numpy as np
import torch

import attn_mlir
from attn_mlir._cache import CACHE

H, D = 8, 64
LENS = [int(round(64 * 64 ** (i / 15))) for i in range(16)]
T = sum(LENS)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    q, k, v = (torch.randn(T, H, D) for _ in range(3))
    cu = np.array([0] + list(np.cumsum(LENS)), dtype=np.int32)
    t4 = "tensor<1x%dx?x%dxf32>" % (H, D)
    text = ("func.func @varlen(%%q: %s, %%k: %s, %%v: %s, %%cuq: tensor<?xi32>, "
            "%%cuk: tensor<?xi32>) -> %s {\n"
            "  %%o = attn.sdpa_varlen %%q, %%k, %%v, %%cuq, %%cuk "
            "{causal = #attn.causal<bottom_right>}\n"
            "      : (%s, %s, %s, tensor<?xi32>, tensor<?xi32>) -> %s\n"
            "  return %%o : %s\n}\n") % ((t4,) * 9)
    heads_first_op = CACHE.get(("varlen_ab", text, 0), lambda: text, "varlen", "cpu", 0)
    arrays = [x.numpy() for x in (q, k, v)]
    copies = [np.ascontiguousarray(x.transpose(1, 0, 2)[None]) for x in arrays]

    def views():
        out = torch.empty(T, H, D)
        heads_first_op.call([x.transpose(1, 0, 2)[None] for x in arrays] + [cu, cu],
                            [out.numpy().transpose(1, 0, 2)[None]])
        return out

    def tokens_first():
        return attn_mlir.flash_attn_varlen_func(q, k, v, torch.tensor(cu), torch.tensor(cu),
                                                max(LENS), max(LENS), causal=True)

    def heads_first():
        out = np.empty((1, H, T, D), np.float32)
        heads_first_op.call(copies + [cu, cu], [out])
        return out

    sdpa = attn_mlir.scaled_dot_product_attention
    per_sequence = [tuple(t[a:b].transpose(0, 1).contiguous() for t in (q, k, v))
                    for a, b in zip(cu[:-1], cu[1:])]

    def separate():
        return [sdpa(a, b, c, is_causal=True) for a, b, c in per_sequence]

    want = views()
    assert (tokens_first() - want).abs().max().item() == 0.0
    assert np.abs(heads_first()[0].transpose(1, 0, 2) - want.numpy()).max() == 0.0
    progs = dict(views=views, tokens_first=tokens_first, heads_first=heads_first,
                 separate=separate)
    res = {n: [] for n in progs}
    for _ in range(rounds):
        for n, f in progs.items():
            t0 = time.perf_counter()
            f()
            res[n].append(time.perf_counter() - t0)
    print("Ragged batch %s, H %d, D %d, f32, causal; %d rounds alternating, medians"
          % (LENS, H, D, rounds))
    print()
    print("| program | ms | / separate |")
    print("|---|---|---|")
    sep = np.median(res["separate"])
    for n, vals in res.items():
        print("| %s | %.2f | %.3f |" % (n, 1e3 * np.median(vals), np.median(vals) / sep))


if __name__ == "__main__":
    main()
