// Progress on stderr when it is a terminal: each phase (parsing, reading
// inputs, compiling, running, comparing, running i/N), rewritten in place
// and cleared at the end. Nothing when stderr is not a terminal, nothing
// with --quiet.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --random-inputs --output=%t/ref.npy
// RUN: %python %S/Inputs/stderr_tty.py attn-run %s --pipeline=cpu --random-inputs --compare-with=reference --expect=%t/ref.npy --repeat=3 > %t/tty.txt
// RUN: FileCheck %s --check-prefix=TTY < %t/tty.txt
// TTY: stderr: attn-run: parsing {{.*}}progress.mlir
// TTY: stderr: attn-run: compiling through the cpu pipeline
// TTY: stderr: attn-run: running @sdpa
// TTY: stderr: attn-run: compiling through the reference pipeline
// TTY: stderr: attn-run: running @sdpa through the reference pipeline
// TTY: stderr: attn-run: comparing with reference
// TTY: stderr: attn-run: comparing result #0 with {{.*}}ref.npy
// TTY: stderr: attn-run: running 1/3
// TTY: stderr: attn-run: running 3/3
// The report itself is on stdout, untouched.
// RUN: FileCheck %s --check-prefix=REPORT < %t/tty.txt
// REPORT: result #0 vs reference:
// REPORT: time: median

// Diagnostics start on a line of their own (the progress line is cleared
// first); the IR does not verify: exit status 1.
// RUN: %python %S/Inputs/expect_exit.py 1 %python %S/Inputs/stderr_tty.py attn-run %S/Inputs/invalid-ir.mlir > %t/ttyerr.txt
// RUN: FileCheck %s --check-prefix=TTYERR < %t/ttyerr.txt
// TTYERR: stderr: attn-run: parsing {{.*}}invalid-ir.mlir
// TTYERR-NEXT: {{^}}stderr: {{[^ ]*}}invalid-ir.mlir:2:8: {{.*}}error: {{.*}}'attn.sdpa' op

// Not a terminal: no progress at all.
// RUN: attn-run %s --pipeline=cpu --random-inputs --compare-with=reference --repeat=3 2> %t/pipe.txt > /dev/null
// RUN: count 0 < %t/pipe.txt
// --quiet on a terminal: none either.
// RUN: %python %S/Inputs/stderr_tty.py attn-run %s --pipeline=cpu --random-inputs --repeat=3 --quiet | FileCheck %s --check-prefix=QUIET
// QUIET: time: median
// QUIET-NOT: stderr:

func.func @sdpa(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
