#!/usr/bin/env bash
# The sanitizer stage of the test suite (run by scripts/test.sh):
#  1. installs clang-22 and its sanitizer runtimes when missing (Debian 12,
#     as root, like setup.sh);
#  2. configures and builds build-san/ with clang-22 and -DATTN_SANITIZE=ON
#     (AddressSanitizer + UndefinedBehaviorSanitizer on all of our targets;
#     Debian's libMLIR.so/libLLVM.so/libomp are not instrumented);
#  3. runs the whole ctest suite there: any ASan, UBSan or LeakSanitizer
#     report aborts the process, so the test that ran it fails;
#  4. replays fuzz/regressions/ through the libFuzzer target
#     attn-fuzz-parse, then fuzzes it for ATTN_FUZZ_SECONDS (default 30,
#     which keeps scripts/test.sh inside its 30 minutes; longer runs set it)
#     from a seed corpus made of every .mlir file of test/ and examples/
#     (split at `// -----`). A crash fails the stage and leaves the input
#     in build-san/fuzz-artifacts/.
# Environment: ATTN_JOBS (default 2), ATTN_FUZZ_SECONDS (0 skips fuzzing),
# ATTN_SAN_BUILD (default build-san).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_SAN_BUILD:-$ROOT/build-san}"
LLVM_PREFIX=/usr/lib/llvm-22
JOBS="${ATTN_JOBS:-2}"
FUZZ_SECONDS="${ATTN_FUZZ_SECONDS:-30}"
stage_start=$SECONDS

PACKAGES=(clang-22 libclang-rt-22-dev)
source "$ROOT/scripts/install-packages.sh"
install_missing sanitize "${PACKAGES[@]}"

# Every sanitizer report is fatal and aborts (a signal, so that `not`,
# expect_exit.py and every_pass.py count it as a crash, never as an
# ordinary exit status 1).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:report_error_type=1"
export LSAN_OPTIONS="suppressions=$ROOT/test/sanitizer/lsan.supp:print_suppressions=0"
export ASAN_SYMBOLIZER_PATH="$LLVM_PREFIX/bin/llvm-symbolizer"
# The compiled code's freed blocks go back to the allocator here, not to
# the runtime's block cache (GuardedAlloc.h): AddressSanitizer then sees
# every free and catches a later read of a result's block. (The cache's
# own tests set its limit themselves.)
export ATTN_BLOCK_CACHE_MB=0
# The JIT's code is not instrumented, so its LLVM optimisation level does
# not change what the sanitizers check; optimising it at O3 under ASan's
# allocator was most of this stage's time (bench/NOTES.md, "Test suite
# time"). O0 here; the normal build tests O3.
export ATTN_MAX_OPT_LEVEL=0

LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
t0=$SECONDS
if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DATTN_SANITIZE=ON \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    "${LAUNCHER[@]}"
fi
ninja -C "$BUILD" -j "$JOBS"
build_s=$((SECONDS - t0))

# Left out under the sanitizers (the normal build runs them all):
#  - the 108 multi-head points of the sdpa grid (Grid/SdpaGrid.*/H4_*, ~5x
#    slower under ASan, ~10 of the stage's minutes on two cores);
#    multi-head and GQA shapes stay covered by
#    CpuPipeline.SmallTilesOverTheGrid (4 heads over 2, every causal and
#    mask kind) and the MhaGrid;
#  - two in three of its one-head points: of the 27 (head dim, causal kind,
#    mask kind) points of each pipeline the 9 whose indices sum to 0 mod 3
#    stay, a Latin square: every value of each parameter three times, every
#    pair of values of two parameters once;
#  - the 10 tf32 points of the tensor-core emulation grid (~260 s of the
#    stage): the emulator's tf32 path stays covered by the five tf32 points
#    of Variants/TensorCoreFeatures, and the grid's shapes by its f16/bf16
#    points;
#  - two in three of the feature grid's points: each (feature, causal
#    kind) point runs through one pipeline here, by its causal kind (none:
#    reference, top-left: cpu, bottom-right: gpu_schedule), so that each
#    pipeline still meets every feature (~45 s of the stage's test time);
#  - the decode grid's 8-lane points (w8, ~13 of 40, ~20 s): the 16-lane
#    points run the same passes, and the normal build runs both;
#  - PrefillPacking, Bf16Dot, AmxTiles and FusedDropout (~70 s of the
#    stage before AmxTiles joined them), and the half projections on dots
#    and AMX tiles (CpuPipeline.TiledProjectionsOn*): JIT runs of kernels
#    the sanitizers do not instrument; the
#    lowerings they drive run here in test/Conversion, test/Transforms and
#    test/Integration.
# The lit suite samples one (file, pass) pair in twenty-four of
# test/Robustness/every_pass.py there (%every_pass_sample in lit.cfg.py),
# over two of its four file shards, and leaves out the tests whose time is
# ptxas or the uninstrumented JIT code (UNSUPPORTED: asan in each).
# ATTN_SAN_CTEST_EXCLUDE= (set, empty) runs every ctest here too.
dims=(D16 D64 D80) causals=(nocausal topleft bottomright) masks=(nomask keep add)
off_square=()
for i in 0 1 2; do
  for j in 0 1 2; do
    for k in 0 1 2; do
      [ $(((i + j + k) % 3)) -eq 0 ] || off_square+=("${dims[i]}_${causals[j]}_${masks[k]}")
    done
  done
done
# (ctest names a point "<name>  # GetParam() = ...": a space ends the name.)
one_head_out="^Grid/SdpaGrid\.[A-Za-z]+/H1_Hkv1_($(IFS='|'; echo "${off_square[*]}")) "
feature_out="^Grid/FeatureGrid\.(ReferencePipeline[A-Za-z]+/[a-z]+_(topleft|bottomright)|CpuPipeline[A-Za-z]+/[a-z]+_(nocausal|bottomright)|GpuSchedulePipeline[A-Za-z]+/[a-z]+_(nocausal|topleft))_"
decode_out="^Decode/DecodeGrid\.[A-Za-z]+/.*_w8_"
EXCLUDE="${ATTN_SAN_CTEST_EXCLUDE-^Grid/SdpaGrid\.[A-Za-z]+/H4_|$one_head_out|$feature_out|$decode_out|^Grid/TensorCore\..* tf32|^(PrefillPacking|Bf16Dot|AmxTiles|FusedDropout)\.|^CpuPipeline\.TiledProjectionsOn}"
t0=$SECONDS
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS" ${EXCLUDE:+-E "$EXCLUDE"})
test_s=$((SECONDS - t0))

t0=$SECONDS
FUZZER="$BUILD/bin/attn-fuzz-parse"
fuzz_line=""
if [ -x "$FUZZER" ]; then
  mapfile -t regressions < <(find "$ROOT/fuzz/regressions" -type f ! -name '*.md' | sort)
  if [ "${#regressions[@]}" -gt 0 ]; then
    echo "sanitize: replaying ${#regressions[@]} fuzz regressions"
    "$FUZZER" -rss_limit_mb=4096 -timeout=10 "${regressions[@]}"
  fi
  if [ "$FUZZ_SECONDS" -gt 0 ]; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/seeds" "$work/corpus" "$BUILD/fuzz-artifacts"
    python3 "$ROOT/fuzz/make_seeds.py" "$work/seeds" "$ROOT/test" "$ROOT/examples"
    echo "sanitize: fuzzing attn-fuzz-parse for ${FUZZ_SECONDS}s"
    "$FUZZER" "$work/corpus" "$work/seeds" \
      -dict="$ROOT/fuzz/attn.dict" -max_total_time="$FUZZ_SECONDS" \
      -max_len=4096 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$BUILD/fuzz-artifacts/" 2>"$work/fuzz.log" || {
        tail -n 80 "$work/fuzz.log"; echo "sanitize: the fuzzer found a crash"; exit 1; }
    fuzz_line="$(grep -E '^#[0-9]+.*(DONE|cov:)' "$work/fuzz.log" | tail -n 1)"
    echo "sanitize: fuzz: $fuzz_line"
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/fuzz.log" || true
    echo "sanitize: fuzz: corpus $(ls "$work/corpus" | wc -l) new + $(ls "$work/seeds" | wc -l) seeds"
  fi
else
  echo "sanitize: no attn-fuzz-parse (no libFuzzer); fuzzing skipped"
fi
fuzz_s=$((SECONDS - t0))
echo "sanitize: build ${build_s}s, ctest ${test_s}s, fuzz ${fuzz_s}s, stage $((SECONDS - stage_start))s"
