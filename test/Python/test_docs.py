"""Runs every ```python block of docs/python.md in order, in one namespace,
as a reader would; a block followed by "prints" and a plain ``` block must
print exactly that."""

import contextlib
import io
import os
import re

import pytest

SRC = os.environ.get("ATTN_SRC_ROOT",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
FENCE = re.compile(r"^```([A-Za-z0-9_-]*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def blocks(page="python.md"):
    with open(os.path.join(SRC, "docs", page)) as f:
        text = f.read()
    found = list(FENCE.finditer(text))
    out = []
    for i, m in enumerate(found):
        if m.group(1) != "python":
            continue
        expected = None
        if i + 1 < len(found) and found[i + 1].group(1) == "":
            between = text[m.end():found[i + 1].start()].strip()
            if between == "prints":
                expected = found[i + 1].group(2)
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, m.group(2), expected))
    return out


def test_python_md_blocks_run():
    pytest.importorskip("torch")
    runs = blocks()
    assert len(runs) >= 8, "docs/python.md lost its examples"
    namespace = {"__name__": "docs_python_md"}
    for line, code, expected in runs:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "docs/python.md:%d" % line, "exec"), namespace)
        if expected is not None:
            assert buf.getvalue() == expected, \
                "docs/python.md:%d prints\n%s\nnot\n%s" % (line, buf.getvalue(), expected)
        print(buf.getvalue(), end="")


def run_page(page, fewest):
    """Runs every python block of docs/`page` in one namespace; each checks
    itself (asserts against an independent computation)."""
    pytest.importorskip("torch")
    runs = blocks(page)
    assert len(runs) >= fewest, "docs/%s lost its examples" % page
    namespace = {"__name__": "docs_" + page.replace(".", "_")}
    for line, code, _ in runs:
        exec(compile(code, "docs/%s:%d" % (page, line), "exec"), namespace)


def test_recipes_md_blocks_run():
    # docs/recipes.md: each score/mask function recipe checks itself
    # against a dense float64 evaluation of the same function.
    run_page("recipes.md", 8)


def test_serving_md_blocks_run():
    # docs/serving.md: paged decode, append, varlen and sinks, each checked
    # against torch's dense attention on the gathered rows.
    run_page("serving.md", 5)


def test_training_md_blocks_run():
    # docs/training.md: gradients through attn_mlir against torch's plain
    # formula in float64.
    run_page("training.md", 6)
