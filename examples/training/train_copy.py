#!/usr/bin/env python3
"""Trains a small causal transformer with attn_mlir's attention.

Two copies of one 2-layer causal transformer (same initial weights, same
batches, same optimiser) are trained on a synthetic copy task: a
sequence of N random tokens followed by the same N tokens again; the loss
is the cross-entropy of predicting each token of the second half (which
needs attention N positions back). One copy computes attention with
``attn_mlir.scaled_dot_product_attention`` (forward and backward compiled
by attn-mlir), the other with PyTorch's plain formula
``softmax(q·kᵀ/√d + causal mask)·v`` (torch's math path). Everything else
is PyTorch.

  PYTHONPATH=build/python /usr/bin/python3 examples/training/train_copy.py [--steps N]
      [--pipeline cpu|reference] [--threads N]

Prints the two loss curves every 25 steps, the largest difference between
them, and the steps per second of each. Exit status 0 when both learn the
task (final loss below a tenth of the first) and the curves agree (every
step's losses within 2e-3 + 2 % of each other), 1 otherwise, 77 without
torch (ctest counts it as skipped).
"""

import argparse
import math
import sys
import time

try:
    import torch
except ImportError:
    print("train_copy.py needs torch (apt-get install python3-torch)")
    sys.exit(77)

import attn_mlir

VOCAB, N, D_MODEL, HEADS, LAYERS, BATCH = 12, 12, 64, 4, 2, 32


def torch_attention(q, k, v):
    """PyTorch's math path: softmax(q·kᵀ/√d, causal) · v."""
    t = q.shape[-2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    return torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1) @ v


def attn_mlir_attention(pipeline):
    def attend(q, k, v):
        return attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                      pipeline=pipeline)
    return attend


class Block(torch.nn.Module):
    def __init__(self, attend):
        super().__init__()
        self.attend = attend
        self.ln1 = torch.nn.LayerNorm(D_MODEL)
        self.qkv = torch.nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = torch.nn.Linear(D_MODEL, D_MODEL)
        self.ln2 = torch.nn.LayerNorm(D_MODEL)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(D_MODEL, 4 * D_MODEL), torch.nn.GELU(),
                                       torch.nn.Linear(4 * D_MODEL, D_MODEL))

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D_MODEL, dim=-1)
        heads = [y.reshape(b, t, HEADS, D_MODEL // HEADS).transpose(1, 2) for y in (q, k, v)]
        o = self.attend(*heads).transpose(1, 2).reshape(b, t, D_MODEL)
        x = x + self.proj(o)
        return x + self.mlp(self.ln2(x))


class Model(torch.nn.Module):
    def __init__(self, attend):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, D_MODEL)
        self.pos = torch.nn.Embedding(2 * N, D_MODEL)
        self.blocks = torch.nn.ModuleList(Block(attend) for _ in range(LAYERS))
        self.ln = torch.nn.LayerNorm(D_MODEL)
        self.head = torch.nn.Linear(D_MODEL, VOCAB)

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def batch(gen):
    first = torch.randint(0, VOCAB, (BATCH, N), generator=gen)
    return torch.cat([first, first], dim=1)


def loss_of(model, tokens):
    logits = model(tokens[:, :-1])
    # Predict the second half: positions N-1 .. 2N-2 predict tokens N .. 2N-1.
    return torch.nn.functional.cross_entropy(
        logits[:, N - 1:].reshape(-1, VOCAB), tokens[:, N:].reshape(-1))


def train(model, steps, seed):
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    start = time.perf_counter()
    for _ in range(steps):
        loss = loss_of(model, batch(gen))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, steps / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--pipeline", default="cpu", choices=("cpu", "reference"))
    ap.add_argument("--threads", type=int, default=0,
                    help="torch threads (0: torch's default)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    ours = Model(attn_mlir_attention(args.pipeline))
    theirs = Model(torch_attention)
    theirs.load_state_dict(ours.state_dict())
    # Compile attn's kernels before timing (one forward and backward).
    loss_of(Model(attn_mlir_attention(args.pipeline)), batch(torch.Generator())).backward()

    a, a_rate = train(ours, args.steps, seed=1)
    b, b_rate = train(theirs, args.steps, seed=1)
    print("step  attn_mlir  torch")
    for i in list(range(0, args.steps, 25)) + [args.steps - 1]:
        print("%4d  %9.5f  %9.5f" % (i, a[i], b[i]))
    worst = max(abs(x - y) / (2e-3 + 0.02 * abs(y)) for x, y in zip(a, b))
    diff = max(abs(x - y) for x, y in zip(a, b))
    print("max |loss difference| %.3g; steps/s: attn_mlir %.1f, torch %.1f (%.2fx)"
          % (diff, a_rate, b_rate, a_rate / b_rate))
    learned = a[-1] < 0.1 * a[0] and b[-1] < 0.1 * b[0]
    if not learned:
        print("FAIL: the loss did not fall below a tenth of the first step's")
    if worst > 1:
        print("FAIL: the curves differ by more than 2e-3 + 2 %")
    return 0 if learned and worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
