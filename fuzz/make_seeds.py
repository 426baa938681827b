#!/usr/bin/env python3
"""make_seeds.py OUT DIR...: one seed file in OUT per `// -----` split of
every .mlir file under the DIRs (the fuzzer's seed corpus). A split over
the fuzzer's -max_len (4096 bytes) becomes one seed per top-level
func.func (each with the text before the first function, e.g. attribute
aliases), so a long file without splits (test/Dialect/ops.mlir) still
seeds the corpus; a piece still too long is left out."""
import hashlib
import os
import re
import sys

MAX_LEN = 4096


def pieces(body):
    """`body`, or its top-level functions when it is too long."""
    if len(body) <= MAX_LEN:
        return [body]
    starts = [m.start() for m in re.finditer(r"^func\.func\b", body, flags=re.M)]
    if len(starts) < 2:
        return []
    prefix = body[:starts[0]]
    ends = starts[1:] + [len(body)]
    out = [(prefix + body[s:e]).strip() for s, e in zip(starts, ends)]
    return [p for p in out if len(p) <= MAX_LEN]


out = sys.argv[1]
n = 0
for d in sys.argv[2:]:
    for dirpath, _, files in os.walk(d):
        for f in sorted(files):
            if not f.endswith(".mlir"):
                continue
            with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for chunk in re.split(r"^// -----.*$", text, flags=re.M):
                # RUN/CHECK comments are noise to the parser.
                body = "\n".join(l for l in chunk.splitlines()
                                 if not l.lstrip().startswith("//")).strip()
                for piece in pieces(body):
                    if "attn." not in piece:
                        continue
                    data = (piece + "\n").encode()
                    name = hashlib.sha1(data).hexdigest()
                    with open(os.path.join(out, name), "wb") as fh:
                        fh.write(data)
                    n += 1
print("make_seeds: %d seeds" % n)
