// Flag hygiene: an unknown flag names the nearest attn-run flag, negative
// counts are refused, a bad value is exactly one line, and options that the
// chosen pipeline or mode does not use are a one-line warning each (the run
// goes on).
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --pipline=cpu | FileCheck %s --check-prefix=PIPLINE
// PIPLINE: attn-run: Unknown command line argument '--pipline=cpu'; did you mean '--pipeline=cpu'?
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --repaet=3 | FileCheck %s --check-prefix=REPAET
// REPAET: attn-run: Unknown command line argument '--repaet=3'; did you mean '--repeat=3'?
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --random-input | FileCheck %s --check-prefix=RANDOM
// RANDOM: attn-run: Unknown command line argument '--random-input'; did you mean '--random-inputs'?
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --strict | FileCheck %s --check-prefix=ABBREV
// ABBREV: attn-run: Unknown command line argument '--strict'; did you mean '--strict-inputs'?
// Nothing close: no guess (and never one of the libraries' hidden options).
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --xyzzy | FileCheck %s --check-prefix=FAR
// FAR: attn-run: Unknown command line argument '--xyzzy' (attn-run --help lists the flags)
// FAR-NOT: did you mean
// An option the LLVM libraries register (hidden from --help) parses but
// means nothing to attn-run: refused, with the flag that was meant.
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --random-inputs --threads=4 | FileCheck %s --check-prefix=LIBOPT
// LIBOPT: attn-run: '--threads' is an option of the LLVM libraries, not of attn-run; did you mean '--num-threads'?

// Negative counts and tolerances.
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --random-inputs --pipeline=cpu --num-threads=-4 | FileCheck %s --check-prefix=THREADS
// THREADS: attn-run: --num-threads must be 0 (one per core) or more, got -4
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --random-inputs --repeat=-1 | FileCheck %s --check-prefix=REPEAT
// REPEAT: attn-run: for the --repeat option: must not be negative, got -1
// REPEAT-NOT: attn-run
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --random-inputs --atol=-1 | FileCheck %s --check-prefix=ATOL
// ATOL: attn-run: --atol must be a finite number >= 0, got -1
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --random-inputs --repeat=3 --min-seconds=-1 | FileCheck %s --check-prefix=MINSEC
// MINSEC: attn-run: --min-seconds must be a finite number >= 0, got -1
// A bad value is one line (not followed by an empty "attn-run:" line).
// RUN: %python %S/Inputs/expect_exit.py 2 attn-run %s --repeat=many | FileCheck %s --check-prefix=ONELINE
// ONELINE: attn-run: for the --repeat option: 'many' value invalid for uint argument!
// ONELINE-NOT: attn-run

// Options the pipeline does not use: a warning each, then the run.
// RUN: attn-run %s --random-inputs --tile-q=8 --tile-k=16 2>&1 | FileCheck %s --check-prefix=TILES
// TILES: attn-run: warning: --tile-q and --tile-k do not apply to --pipeline=reference (it has no tiled kernel); ignored
// TILES: result #0
// RUN: attn-run %s --random-inputs --num-threads=2 2>&1 | FileCheck %s --check-prefix=NT
// NT: attn-run: warning: --num-threads applies only to --pipeline=cpu, not reference; ignored
// RUN: attn-run %s --random-inputs --pipeline=gpu-schedule --num-threads=2 2>&1 | FileCheck %s --check-prefix=NTSCHED
// NTSCHED: attn-run: warning: --num-threads applies only to --pipeline=cpu, not gpu-schedule; ignored
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --random-inputs --output=%t/q.npy
// RUN: attn-run %s --input=%t/q.npy --input=%t/q.npy --input=%t/q.npy --seed=3 2>&1 | FileCheck %s --check-prefix=SEED
// SEED: attn-run: warning: --seed applies only with --random-inputs; ignored
// RUN: attn-run %s --random-inputs --pipeline=cpu --gpu-chip=sm_80 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: attn-run: warning: --gpu-chip applies only to --pipeline=gpu, not cpu; ignored
// RUN: attn-run %s --random-inputs --min-seconds=0.1 2>&1 | FileCheck %s --check-prefix=MINSECW
// MINSECW: attn-run: warning: --min-seconds applies only with --repeat; ignored
// RUN: attn-run %s --random-inputs --rtol=0.1 2>&1 | FileCheck %s --check-prefix=RTOL
// RTOL: attn-run: warning: --rtol applies only with --expect; ignored
// --json lists them too.
// RUN: attn-run %s --random-inputs --tile-q=8 --json 2>/dev/null | FileCheck %s --check-prefix=JSON
// JSON: "warnings": [
// JSON-NEXT: "--tile-q does not apply to --pipeline=reference (it has no tiled kernel); ignored"
// Options that apply: no warning.
// RUN: attn-run %s --random-inputs --seed=3 --pipeline=cpu --tile-q=8 --num-threads=1 2>&1 | FileCheck %s --check-prefix=APPLY
// APPLY-NOT: warning
// APPLY: result #0
// APPLY-NOT: warning

// --help describes the new flags.
// RUN: attn-run --help | FileCheck %s --check-prefix=HELP
// HELP-DAG: --atol=
// HELP-DAG: --expect=<PATH.npy>
// HELP-DAG: --input=<[NAME=]PATH>
// HELP-DAG: --quiet
// HELP-DAG: --min-seconds=<S>
// HELP-DAG: --rtol=
// HELP-DAG: --strict-inputs
// HELP-DAG: --verbose

func.func @f(%q: tensor<1x2x8x8xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %o : tensor<1x2x8x8xf32>
}
