#!/usr/bin/env python3
"""Checks that a hand-written page lists what a page generated from the ODS
documents, so that the two cannot drift apart.

  check_doc_lists.py ops GENERATED_DIALECT_MD PAGE
      every op of the generated dialect page (`### `attn.X``) has a table
      row in PAGE naming `attn.X`, and every attribute (`#attn.X`, from the
      "written #attn.X<...>" of its summary) is named in PAGE;
  check_doc_lists.py passes PAGE GENERATED_PASSES_MD...
      every pass of the generated pass pages (`### `-name``) has a table row
      in PAGE that starts with `name` and names each of its options
      (`-option : ...` in its "Options" block) as `option`.

Prints one summary line; exits 1 and names what is missing otherwise.
"""
import re
import sys


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def table_rows(text):
    return [line for line in text.splitlines() if line.startswith("|")]


def check_ops(generated, page):
    gen, text = read(generated), read(page)
    ops = re.findall(r"^### `attn\.(\w+)`", gen, flags=re.M)
    attrs = sorted(set(re.findall(r"^_[^\n]*?written #attn\.(\w+)<", gen, flags=re.M)))
    rows = table_rows(text)
    missing = ["attn." + op for op in ops
               if not any(re.search(r"`attn\.%s`" % op, r) for r in rows)]
    missing += ["#attn." + a for a in attrs if "#attn.%s<" % a not in text]
    return "%d ops, %d attributes" % (len(ops), len(attrs)), missing


def check_passes(page, generated):
    text = read(page)
    rows = table_rows(text)
    npasses = noptions = 0
    missing = []
    for path in generated:
        gen = read(path)
        sections = re.split(r"^### `-", gen, flags=re.M)[1:]
        for section in sections:
            name = section.split("`", 1)[0]
            npasses += 1
            options = []
            block = re.search(r"^#### Options\n\n```\n(.*?)^```", section, flags=re.S | re.M)
            if block:
                options = re.findall(r"^-([\w-]+)\s*:", block.group(1), flags=re.M)
            noptions += len(options)
            row = next((r for r in rows if r.startswith("| `%s` |" % name)), None)
            if row is None:
                missing.append("pass %s (no table row)" % name)
                continue
            missing += ["option %s of %s" % (o, name) for o in options
                        if "`%s`" % o not in row]
    return "%d passes, %d options" % (npasses, noptions), missing


def main(argv):
    if len(argv) >= 3 and argv[0] == "ops" and len(argv) == 3:
        summary, missing = check_ops(argv[1], argv[2])
        page = argv[2]
    elif len(argv) >= 3 and argv[0] == "passes":
        summary, missing = check_passes(argv[1], argv[2:])
        page = argv[1]
    else:
        sys.exit(__doc__)
    if missing:
        print("%s; missing from %s: %s" % (summary, page, ", ".join(missing)))
        return 1
    print("%s: every one listed" % summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
