"""Runs pytest on test files of test/Python for ctest (test/CMakeLists.txt):
run_pytest.py FILE... with PYTHONPATH naming build/python. Exits 77 (ctest:
skipped) when this python lacks pytest or NumPy, which scripts/setup.sh
installs (python3-pytest, python3-numpy); torch is optional: the tests that
need it skip themselves."""

import importlib.util
import os
import sys

missing = [m for m in ("pytest", "numpy") if importlib.util.find_spec(m) is None]
if missing:
    print("run_pytest: %s has no %s (apt-get install %s); skipped"
          % (sys.executable, " or ".join(missing),
             " ".join("python3-" + m for m in missing)))
    sys.exit(77)

import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
args = ["-q", "-rs", "-p", "no:cacheprovider", "--rootdir", here]
sys.exit(pytest.main(args + [os.path.join(here, f) for f in sys.argv[1:]]))
