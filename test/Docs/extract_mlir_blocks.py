#!/usr/bin/env python3
"""Prints every ```mlir block of a markdown file, separated by `// -----`.

With --require-ops a,b,c it fails unless each `attn.<op>` appears in some
block, so every op keeps a runnable example in the docs; --require-every-op
does the same for every op that has a section (### `attn.<op>`) in the
page, so that a new op is held to it without an edit of the test. With
--max-per-op N it fails if an op's section holds more than N blocks (more
examples belong in the tests, test/Dialect/description-examples.mlir). With
--block N it prints only the N-th block (from 0), as it is written, so that
a test can compare a documented pass output with the real one.

The markdown is usually one that mlir-tblgen generated from the ODS
(build/docs/*.md): it copies each `description` with its indentation
removed, so the fences start at the beginning of a line.
"""
import argparse
import re
import sys

parser = argparse.ArgumentParser()
parser.add_argument("markdown")
parser.add_argument("--require-ops", default="")
parser.add_argument("--require-every-op", action="store_true")
parser.add_argument("--max-per-op", type=int, default=None)
parser.add_argument("--block", type=int, default=None)
args = parser.parse_args()

text = open(args.markdown, encoding="utf-8").read()
blocks = re.findall(r"^```mlir\n(.*?)^```", text, flags=re.S | re.M)
if not blocks:
    sys.exit(f"{args.markdown}: no ```mlir blocks")
required = [op for op in args.require_ops.split(",") if op]
if args.require_every_op:
    required += re.findall(r"^### `attn\.(\w+)`", text, flags=re.M)
missing = [op for op in dict.fromkeys(required)
           if not any(re.search(rf"\battn\.{op}\b", b) for b in blocks)]
if missing:
    sys.exit(f"{args.markdown}: no example for " +
             ", ".join("attn." + op for op in missing))
if args.max_per_op is not None:
    # An op's section runs from its `### `attn.<op>`` heading to the next
    # heading of that level or above.
    heads = list(re.finditer(r"^(#{1,3}) (.*)$", text, flags=re.M))
    crowded = []
    for i, h in enumerate(heads):
        op = re.match(r"`attn\.(\w+)`", h.group(2))
        if len(h.group(1)) != 3 or not op:
            continue
        end = next((n.start() for n in heads[i + 1:] if len(n.group(1)) <= 3), len(text))
        count = len(re.findall(r"^```mlir\n", text[h.end():end], flags=re.M))
        if count > args.max_per_op:
            crowded.append(f"attn.{op.group(1)} ({count})")
    if crowded:
        sys.exit(f"{args.markdown}: more than {args.max_per_op} examples for " +
                 ", ".join(crowded))
if args.block is not None:
    if not 0 <= args.block < len(blocks):
        sys.exit(f"{args.markdown}: no ```mlir block {args.block} "
                 f"(it has {len(blocks)})")
    sys.stdout.write(blocks[args.block])
    sys.exit(0)
print("\n// -----\n".join(blocks))
print(f"{len(blocks)} mlir blocks", file=sys.stderr)
