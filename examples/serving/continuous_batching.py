#!/usr/bin/env python3
"""A tiny continuous-batching loop on attn_mlir's serving calls.

Requests arrive, prefill their prompts in chunks, decode one token a step
and finish, sharing one pool of 16-token KV blocks through per-request
block tables (blocks are taken from a free list and given back, so later
requests reuse them in a scrambled order). Every step is ONE call of
attn_mlir.flash_attn_varlen_func over the paged caches: some sequences
prefill a chunk, the others decode. There is no model: each token's q, k
and v are random, and every step's output for every request is checked
against dense float64 attention over that request's own tokens so far.

  PYTHONPATH=build/python /usr/bin/python3 examples/serving/continuous_batching.py

Exit status 0 when every output matched (max error printed), 1 otherwise,
77 without torch (ctest counts it as skipped).
"""

import math
import sys

try:
    import torch
except ImportError:
    print("continuous_batching.py needs torch (apt-get install python3-torch)")
    sys.exit(77)

import attn_mlir

H, HKV, D, BLOCK, NUM_BLOCKS, MAX_BLOCKS = 8, 2, 64, 16, 18, 8
CHUNK = 24  # prefill tokens per step and request


class Request:
    def __init__(self, rid, prompt, generate, gen):
        self.rid, self.prompt, self.generate = rid, prompt, generate
        self.done_prompt = self.generated = 0
        self.blocks = []
        total = prompt + generate
        # Every token's q, k, v, drawn now (a model would compute them).
        self.q = torch.randn(total, H, D, generator=gen)
        self.k = torch.randn(total, HKV, D, generator=gen)
        self.v = torch.randn(total, HKV, D, generator=gen)

    def length(self):
        return self.done_prompt + self.generated

    def finished(self):
        return self.generated == self.generate


def main():
    gen = torch.Generator().manual_seed(0)
    k_cache = torch.zeros(NUM_BLOCKS, BLOCK, HKV, D)
    v_cache = torch.zeros(NUM_BLOCKS, BLOCK, HKV, D)
    free = list(torch.randperm(NUM_BLOCKS, generator=gen).tolist())
    # (arrival step, prompt length, tokens to generate)
    arrivals = [(0, 40, 6), (0, 5, 9), (1, 70, 3), (3, 1, 5), (4, 33, 4), (6, 17, 2),
                (8, 60, 3), (9, 12, 2)]
    waiting = [Request(i, p, g, gen) for i, (_, p, g) in enumerate(arrivals)]
    all_requests = list(waiting)
    running, worst, step, used = [], 0.0, 0, set()
    while waiting or running:
        running += [r for r in waiting if arrivals[r.rid][0] <= step]
        waiting = [r for r in waiting if arrivals[r.rid][0] > step]
        # This step's new tokens per request: a prompt chunk, or one token.
        new = []
        for r in running:
            n = min(CHUNK, r.prompt - r.done_prompt) if r.done_prompt < r.prompt else 1
            start = r.length()
            while len(r.blocks) * BLOCK < start + n:
                r.blocks.append(free.pop())
                reused = r.blocks[-1] in used
                used.add(r.blocks[-1])
                r.reused = getattr(r, "reused", 0) + reused
            for t in range(start, start + n):  # write k, v into the pages
                blk, row = r.blocks[t // BLOCK], t % BLOCK
                k_cache[blk, row], v_cache[blk, row] = r.k[t], r.v[t]
            new.append((start, n))
        # One call: every request's new queries against its whole cache.
        lq = [n for _, n in new]
        lk = [s + n for s, n in new]
        cu_q = torch.tensor([0] + list(torch.tensor(lq).cumsum(0)), dtype=torch.int32)
        cu_k = torch.tensor([0] + list(torch.tensor(lk).cumsum(0)), dtype=torch.int32)
        table = torch.zeros(len(running), MAX_BLOCKS, dtype=torch.int32)
        for i, r in enumerate(running):
            table[i, :len(r.blocks)] = torch.tensor(r.blocks, dtype=torch.int32)
        q = torch.cat([r.q[s:s + n] for r, (s, n) in zip(running, new)])
        out = attn_mlir.flash_attn_varlen_func(q, k_cache, v_cache, cu_q, cu_k, max(lq),
                                               max(lk), causal=True, block_table=table)
        # Check against dense attention over each request's own tokens.
        for i, (r, (s, n)) in enumerate(zip(running, new)):
            kk = r.k[:s + n].double().repeat_interleave(H // HKV, 1)  # [T, H, D]
            vv = r.v[:s + n].double().repeat_interleave(H // HKV, 1)
            qq = r.q[s:s + n].double()
            scores = torch.einsum("qhd,khd->hqk", qq, kk) / math.sqrt(D)
            keep = torch.arange(s + n)[None, :] <= torch.arange(s, s + n)[:, None]
            p = torch.softmax(scores.masked_fill(~keep, -math.inf), -1)
            want = torch.einsum("hqk,khd->qhd", p, vv)
            got = out[cu_q[i]:cu_q[i + 1]].double()
            worst = max(worst, (got - want).abs().max().item())
        kinds = ["%d:%s" % (r.rid, "prefill %d" % n if r.done_prompt < r.prompt else "decode")
                 for r, (_, n) in zip(running, new)]
        print("step %d: %s" % (step, ", ".join(kinds)))
        # Advance, finish, give the blocks back.
        for r, (_, n) in zip(running, new):
            if r.done_prompt < r.prompt:
                r.done_prompt += n
            else:
                r.generated += 1
        for r in running:
            if r.finished():
                free += r.blocks
        running = [r for r in running if not r.finished()]
        step += 1
    ok = worst <= 2e-5
    print("%d steps, %d requests, %d of %d blocks used, a freed block taken again %d "
          "times, max error vs dense float64 %.2e: %s"
          % (step, len(arrivals), len(used), NUM_BLOCKS,
             sum(getattr(r, "reused", 0) for r in all_requests), worst, "ok" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
