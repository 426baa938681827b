#!/usr/bin/env python3
"""make_seeds.py OUT DIR...: one seed file in OUT per `// -----` split of
every .mlir file under the DIRs (the fuzzer's seed corpus)."""
import hashlib
import os
import re
import sys

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
                if "attn." not in body or len(body) > 4096:
                    continue
                data = (body + "\n").encode()
                name = hashlib.sha1(data).hexdigest()
                with open(os.path.join(out, name), "wb") as fh:
                    fh.write(data)
                n += 1
print("make_seeds: %d seeds" % n)
