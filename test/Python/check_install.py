"""ctest python-install: `cmake --install BUILD --prefix PREFIX --component
attn_mlir_python`, then imports attn_mlir from PREFIX/INSTALL_DIR in a fresh
python (no build tree on its path) and runs one call.

  check_install.py CMAKE BUILD PREFIX INSTALL_DIR
"""

import os
import shutil
import subprocess
import sys

cmake, build, prefix, install_dir = sys.argv[1:5]
shutil.rmtree(prefix, ignore_errors=True)
subprocess.run([cmake, "--install", build, "--prefix", prefix,
                "--component", "attn_mlir_python"], check=True, stdout=subprocess.DEVNULL)
site = os.path.join(prefix, install_dir)
code = """
import numpy as np, attn_mlir
assert attn_mlir.__file__.startswith(%r), attn_mlir.__file__
q = np.ones((1, 2, 3, 8), np.float32)
v = np.arange(48, dtype=np.float32).reshape(1, 2, 3, 8)
o = attn_mlir.scaled_dot_product_attention(q, q, v)   # equal scores: the mean of v's rows
assert np.allclose(o, v.mean(axis=2, keepdims=True)), o
print("installed attn_mlir works:", attn_mlir.__file__)
""" % site
env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
env["PYTHONPATH"] = site
sys.exit(subprocess.run([sys.executable, "-c", code], env=env).returncode)
