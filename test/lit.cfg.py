# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "Embed",
                   "extract_mlir_blocks.py", "check_capi_coverage.py", "extract_ptx.py",
                   "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
# %python runs the suite's stdlib-only helpers (npytool.py, expect_exit.py,
# every_pass.py ...), a few hundred times: the interpreter running lit, a
# real executable. CMake's Python3 may be a version manager's shim (pyenv:
# ~0.8 s of shell per start against ~0.05 s).
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%attn_tools_dir", config.attn_tools_dir))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
# The reference docs generated from the ODS (the attn-docs target).
config.substitutions.append(("%attn_docs_dir", os.path.join(config.attn_obj_root, "docs")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# The runtime's knobs the sanitizer stage sets (scripts/sanitize.sh): the
# block cache's limit and the compiled code's optimisation cap. lit passes
# no other variable through, so without this its tests would not see them.
llvm_config.with_system_environment(["ATTN_BLOCK_CACHE_MB", "ATTN_MAX_OPT_LEVEL"])
# Unless the environment caps it, lit's tests compile at O2, not the default
# O3: they check what the passes generate, and LLVM's O3 on the same IR was
# a quarter of the Integration tests' time, with no measured difference in
# the kernels' speed (bench/NOTES.md, "Test suite time", 2026-12-06). O3
# code stays checked by the GoogleTest grids in this build and by the
# benchmark smoke test (test/Bench), which lifts the cap with %full_opt
# (empty where the environment set the cap, as the sanitizer stage does).
if "ATTN_MAX_OPT_LEVEL" in config.environment:
    config.substitutions.append(("%full_opt", ""))
else:
    config.environment["ATTN_MAX_OPT_LEVEL"] = "2"
    config.substitutions.append(("%full_opt", "env -u ATTN_MAX_OPT_LEVEL"))
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.attn_tools_dir, append_path=True)

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = ["attn-opt", "attn-run", "attn-aot", "attn-capi-test", "llvm-objdump", "llvm-readelf", "llvm-nm"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# mlir-runner's print functions (vector.print), for test/Microkernels.
config.substitutions.append(("%mlir_c_runner_utils", os.path.join(
    os.path.dirname(config.llvm_tools_dir), "lib", "libmlir_c_runner_utils.so")))

# The ASan+UBSan build (scripts/sanitize.sh): ASan reserves terabytes of
# address space and reports failed allocations itself, so tests that limit
# the address space or make allocations fail do not apply there.
# every_pass.py (test/Robustness) runs one (file, pass) pair in three here
# and one in twenty-four there (a run costs ~8x as much under ASan): every
# pass still meets every third (24th) file, and the suite stays under its
# 30 minutes (bench/NOTES.md, "Test suite time").
sanitize = getattr(config, "attn_sanitize", "OFF").upper() in ("ON", "1", "TRUE", "YES")
if sanitize:
    config.available_features.add("asan")
config.substitutions.append(("%every_pass_sample", "--sample 24" if sanitize else "--sample 3"))

# Host CPU features, for tests that check the JIT compiles for this CPU.
try:
    with open("/proc/cpuinfo") as f:
        flags = set(f.read().split())
    if "avx2" in flags:
        config.available_features.add("avx2")
    if "fma" in flags:
        config.available_features.add("fma")
    if "avx512f" in flags:
        config.available_features.add("avx512f")
    # Half-precision instructions (attn-fma-peak --kind, the bf16 dot path).
    for flag, feature in (("avx512_bf16", "avx512bf16"), ("avx512_fp16", "avx512fp16"),
                          ("amx_bf16", "amx-bf16")):
        if flag in flags:
            config.available_features.add(feature)
except OSError:
    pass

# The CUDA toolkit's ptxas, for tests that assemble PTX.
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", "/usr/local/cuda/bin/ptxas"))
if os.path.exists("/usr/local/cuda/bin/cuobjdump"):
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", "/usr/local/cuda/bin/cuobjdump"))

# Open MPI's mpirun (apt-get install openmpi-bin libopenmpi-dev), for the
# ring attention tests: one thread per rank (CI has two cores), every run
# under a timeout so that a deadlock fails instead of hanging.
import shutil as _shutil
if _shutil.which("mpirun"):
    config.available_features.add("mpirun")
    config.substitutions.append(
        ("%mpirun", "timeout 120 mpirun --allow-run-as-root --oversubscribe "
                    "-x OMP_NUM_THREADS=1"))
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # Shared memory and TCP on loopback only (no network interfaces probed).
    config.environment["OMPI_MCA_btl"] = "self,vader,tcp"
    config.environment["OMPI_MCA_btl_tcp_if_include"] = "lo"
    config.environment["OMPI_MCA_oob_tcp_if_include"] = "lo"
    # Copy-in/copy-out shared memory: the single-copy mechanism (CMA) needs
    # ptrace rights that containers often withhold (then every large
    # message fails with "Read -1, expected N, errno = 1").
    config.environment["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"

# A CUDA driver (a machine with an NVIDIA GPU).
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# A Python with torch and numpy, for test/Docs/pytorch-recipes.test (the
# recipes of docs/pytorch.md): $ATTN_TORCH_PYTHON when set (only that one),
# else the suite's python, else Debian's /usr/bin/python3 (apt-get install
# python3-torch python3-numpy), else python3 on PATH. Without one that test is
# UNSUPPORTED; test/Docs/pytorch-recipes-ir.test still checks the recipes'
# IR.
def _python_with_torch():
    import shutil
    import subprocess
    probe = ("import importlib.util as u, sys; "
             "sys.exit(0 if u.find_spec('torch') and u.find_spec('numpy') else 1)")
    seen = []
    chosen = os.environ.get("ATTN_TORCH_PYTHON")
    if chosen:
        candidates = [shutil.which(chosen) or chosen]
    else:
        candidates = [config.python_executable, "/usr/bin/python3", shutil.which("python3")]
    for py in candidates:
        if not py or py in seen or not os.path.exists(py):
            continue
        seen.append(py)
        try:
            if subprocess.run([py, "-c", probe], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=60).returncode == 0:
                return py, seen
        except (OSError, subprocess.SubprocessError):
            pass
    return None, seen

_torch_python, _tried = _python_with_torch()
if _torch_python:
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", _torch_python))
else:
    lit_config.note("skipping the docs/pytorch.md recipes (Docs/pytorch-recipes.test): "
                    "no python with torch and numpy (tried %s; set ATTN_TORCH_PYTHON)"
                    % (", ".join(_tried) or "none"))
