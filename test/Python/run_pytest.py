"""Runs pytest on test files of test/Python for ctest (test/CMakeLists.txt):
run_pytest.py FILE... with PYTHONPATH naming build/python. Exits 77 (ctest:
skipped) when this python lacks pytest or NumPy, which scripts/setup.sh
installs (python3-pytest, python3-numpy), and when every test of the files
skipped itself (torch is optional: the files that need it skip without
it)."""

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
rc = pytest.main(args + [os.path.join(here, f) for f in sys.argv[1:]])
# 5: nothing collected, as when a file that needs torch skips itself whole
# (pytest.importorskip at module level): ctest's "skipped", not a failure.
sys.exit(77 if rc == pytest.ExitCode.NO_TESTS_COLLECTED else int(rc))
