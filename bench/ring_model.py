#!/usr/bin/env python3
"""The scaling model of ring attention (docs/distributed.md), and its tables.

    python3 bench/ring_model.py          # prints the tables of docs/distributed.md

Per step, each of P ranks computes its query share against one K/V block
while the next block travels:

    compute  = 4·(T/P)²·D·H·f / F        f: share of block pairs computed
                                          (1 without causal, ½ causal zigzag)
    transfer = 2·(T/P)·D·Hkv·bytes / BW + latency
    step     = max(compute, transfer)     (the transfer overlaps the compute)
    total    = P·compute_or_step          (the first step's block is local:
                                           P steps, P - 1 transfers)

The transfer is hidden when compute >= transfer, i.e. (latency aside)
    T/P >= F·bytes·Hkv / (2·f·BW·H).
Memory per rank: Q and O (T/P·H·D·bytes each), the local K/V and two K/V
buffers (3 · 2·T/P·Hkv·D·bytes), and the f32 running (O, lse)
(T/P·H·(D + 1)·4 bytes).
"""


def step_model(t, p, h, hkv, d, nbytes, f, flops_per_s, bw, latency=5e-6):
    n = t / p
    compute = 4.0 * n * n * d * h * f / flops_per_s
    transfer = (2.0 * n * d * hkv * nbytes / bw + latency) if p > 1 else 0.0
    step = max(compute, transfer)
    total = compute + (p - 1) * step
    memory = (2 * n * h * d * nbytes + 3 * 2 * n * hkv * d * nbytes + n * h * (d + 1) * 4)
    return {"compute_s": compute, "transfer_s": transfer, "total_s": total,
            "hidden": compute >= transfer, "memory_bytes": memory,
            "efficiency": compute * p / total if total else 1.0,
            "min_tokens_per_rank": flops_per_s * nbytes * hkv / (2 * f * bw * h)}


def table(title, t, ranks, h, hkv, d, nbytes, f, flops, bw, latency):
    rows = [f"### {title}", "",
            "| P | T/P | compute / step | transfer / step | hidden | step efficiency | "
            "memory / rank |",
            "|---|---|---|---|---|---|---|"]
    for p in ranks:
        m = step_model(t, p, h, hkv, d, nbytes, f, flops, bw, latency)
        rows.append(f"| {p} | {t // p} | {m['compute_s'] * 1e3:.3g} ms | "
                    f"{m['transfer_s'] * 1e3:.3g} ms | {'yes' if m['hidden'] else 'no'} | "
                    f"{m['efficiency'] * 100:.0f} % | {m['memory_bytes'] / 2**20:.0f} MiB |")
    m = step_model(t, ranks[0], h, hkv, d, nbytes, f, flops, bw, latency)
    rows += ["", f"Hidden while T/P >= {m['min_tokens_per_rank']:.0f} tokens per rank.", ""]
    return "\n".join(rows)


def main():
    ranks = [8, 16, 32, 64, 128, 256, 512]
    print(table("CPU ranks: F = 1 TFLOP/s per rank (f32), 100 Gb/s links, 5 us latency; "
                "T = 256K, H = Hkv = 32, D = 128, causal zigzag",
                1 << 18, ranks, 32, 32, 128, 4, 0.5, 1e12, 12.5e9, 5e-6))
    print(table("GPU ranks: F = 400 TFLOP/s per rank (bf16), 400 Gb/s links, 5 us latency; "
                "T = 4M, H = Hkv = 32, D = 128, causal zigzag",
                1 << 22, ranks, 32, 32, 128, 2, 0.5, 400e12, 50e9, 5e-6))
    print(table("GPU ranks with GQA: H = 32, Hkv = 8 (a quarter of the bytes), T = 1M",
                1 << 20, ranks, 32, 8, 128, 2, 0.5, 400e12, 50e9, 5e-6))


if __name__ == "__main__":
    main()
