#!/usr/bin/env python3
"""Prints every ```mlir block of a markdown file, separated by `// -----`.

With --require-ops a,b,c it fails unless each `attn.<op>` appears in some
block, so every op keeps a runnable example in the docs; --require-every-op
does the same for every op that has a section (### `attn.<op>`) in the
page, so that a new op is held to it without an edit of the test. With
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
if args.block is not None:
    if not 0 <= args.block < len(blocks):
        sys.exit(f"{args.markdown}: no ```mlir block {args.block} "
                 f"(it has {len(blocks)})")
    sys.stdout.write(blocks[args.block])
    sys.exit(0)
print("\n// -----\n".join(blocks))
print(f"{len(blocks)} mlir blocks", file=sys.stderr)
