#!/usr/bin/env python3
"""Runs every recipe of docs/pytorch.md, block by block, as a reader would.

  run_pytorch_recipes.py PYTORCH_MD --tools-dir DIR --src-root DIR --work DIR
                         [--python PY | --ir-only]

A recipe is a `## Recipe ...` section. Its fenced blocks run in the order
they are written:

  ```python   run with --python (the interpreter that has torch and numpy);
              a non-zero exit fails the recipe
  ```mlir     written to the `/tmp/....mlir` path named (in backquotes) in
              the text between the previous block and this one; it is an
              error when the text names none
  ```sh       run with `bash -e -o pipefail` from --src-root, with
              `build/bin/attn-run` and `build/bin/attn-opt` replaced by the
              tools of --tools-dir (the build under test)
  ```         (no language) the output the `sh` block just before it prints:
              compared with its standard output line by line, the CPU name
              in `(JIT for NAME)` excepted

Every `/tmp/attn-` path in the blocks and the text is moved under --work, so
that the test writes nothing outside its own directory.

With --ir-only (no torch needed) it runs only the IR side: each recipe's
`mlir` blocks (and the IR files its `sh` blocks name under examples/) are
verified with attn-opt and run once through attn-run on seeded random inputs.
"""
import argparse
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^```([A-Za-z0-9_-]*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
RECIPE = re.compile(r"^## (Recipe [^\n]*)$", re.M)


def fail(msg):
    sys.exit("run_pytorch_recipes: " + msg)


def recipes(text):
    """[(title, [(lang, body, text before the block)])] for every recipe."""
    heads = list(RECIPE.finditer(text))
    if not heads:
        fail("no '## Recipe' sections")
    out = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        nxt = re.search(r"^## ", text[h.end():end], re.M)
        if nxt:
            end = h.end() + nxt.start()
        section = text[h.end():end]
        blocks, pos = [], 0
        for m in FENCE.finditer(section):
            blocks.append((m.group(1), m.group(2), section[pos:m.start()]))
            pos = m.end()
        out.append((h.group(1), blocks))
    return out


def run(cmd, cwd, what):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        fail("%s: exit status %d" % (what, p.returncode))
    return p.stdout


def normalise(text):
    return [re.sub(r"\(JIT for [^)]*\)", "(JIT for CPU)", line.rstrip())
            for line in text.strip("\n").splitlines()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("markdown")
    ap.add_argument("--tools-dir", required=True)
    ap.add_argument("--src-root", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--python")
    ap.add_argument("--ir-only", action="store_true")
    args = ap.parse_args()
    if not args.ir_only and not args.python:
        fail("give --python (an interpreter with torch and numpy) or --ir-only")

    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    tools = {name: os.path.join(args.tools_dir, name) for name in ("attn-run", "attn-opt")}

    def relocate(s):
        return s.replace("/tmp/attn-", work + "/attn-")

    with open(args.markdown, encoding="utf-8") as f:
        text = f.read()
    counts = {"python": 0, "mlir": 0, "sh": 0, "": 0, "ir": 0}
    all_recipes = recipes(text)
    for title, blocks in all_recipes:
        print("== " + title, flush=True)
        last_sh_out = None
        ir_files = []
        for k, (lang, body, before) in enumerate(blocks):
            body, before = relocate(body), relocate(before)
            where = "%s, block %d (%s)" % (title, k, lang or "output")
            if lang == "python":
                if args.ir_only:
                    continue
                path = os.path.join(work, "recipe_block.py")
                with open(path, "w") as f:
                    f.write(body)
                print("-- " + where, flush=True)
                run([args.python, path], work, where)
            elif lang == "mlir":
                names = re.findall(r"`(%s/[^`\s]+\.mlir)`" % re.escape(work), before)
                if not names:
                    fail("%s: the text before it names no /tmp/attn-.../*.mlir file" % where)
                os.makedirs(os.path.dirname(names[-1]), exist_ok=True)
                with open(names[-1], "w") as f:
                    f.write(body)
                ir_files.append(names[-1])
                print("-- %s -> %s" % (where, names[-1]), flush=True)
            elif lang == "sh":
                # IR files of the repository that the recipe runs.
                ir_files += [os.path.join(args.src_root, p)
                             for p in re.findall(r"\b(examples/[\w./-]+\.mlir)\b", body)]
                if args.ir_only:
                    continue
                script = body
                for name, path in tools.items():
                    script = re.sub(r"(?<![\w/.-])build/bin/" + re.escape(name) + r"\b",
                                    path, script)
                print("-- " + where, flush=True)
                last_sh_out = run(["bash", "-e", "-o", "pipefail", "-c", script],
                                  args.src_root, where)
            elif lang == "":
                if args.ir_only or last_sh_out is None:
                    continue
                want, got = normalise(body), normalise(last_sh_out)
                # The documented output is the end of what the commands print
                # (a block with several commands may print more before it).
                if got[-len(want):] != want:
                    fail("%s: the output differs from the documented one\n"
                         "documented:\n  %s\nprinted:\n  %s"
                         % (where, "\n  ".join(want), "\n  ".join(got)))
                print("-- %s: matches" % where, flush=True)
                last_sh_out = None
            else:
                fail("%s: unknown block language '%s'" % (where, lang))
            counts[lang] += 1
        if args.ir_only:
            for path in ir_files:
                print("-- %s: %s" % (title, path), flush=True)
                run([tools["attn-opt"], path, "-verify-each", "-o", os.devnull],
                    args.src_root, "attn-opt " + path)
                run([tools["attn-run"], path, "--random-inputs"], args.src_root,
                    "attn-run " + path)
                counts["ir"] += 1
    if args.ir_only:
        print("checked the IR of %d recipes: %d IR files verified and run"
              % (len(all_recipes), counts["ir"]))
    else:
        print("ran %d recipes: %d python, %d mlir, %d sh blocks, %d outputs checked"
              % (len(all_recipes), counts["python"], counts["mlir"], counts["sh"],
                 counts[""]))


if __name__ == "__main__":
    main()
