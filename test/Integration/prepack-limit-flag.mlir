// attn-run --prepack-limit-mib=N: the most MiB of keys the fused CPU
// kernel transposes once per call. For this dynamic function the choice is
// made at run time (docs/cpu.md, *Prefill packing*): Tq 200 and Tk 1100
// (B 2, Hkv 2, D 64: 1.1 MiB of transposed keys) are prepacked under the
// default 32 and packed per tile under 1 and 0; every run matches the
// reference pipeline's result.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 2,4,200,64 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 2,2,1100,64 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 2,2,1100,64 --fill rand:3
// RUN: attn-run %s --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --quiet --output=%t/want.npy
// RUN: attn-run %s --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --quiet --expect=%t/want.npy | FileCheck %s
// RUN: attn-run %s --pipeline=cpu --prepack-limit-mib=1 --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --quiet --expect=%t/want.npy | FileCheck %s
// RUN: attn-run %s --pipeline=cpu --prepack-limit-mib=0 --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --quiet --expect=%t/want.npy | FileCheck %s
// CHECK: result #0 vs {{.*}}want.npy: {{.*}}, ok
//
// A negative limit is refused with the pass's rule (exit 2); other
// pipelines warn and ignore the flag.
// RUN: not attn-run %s --pipeline=cpu --prepack-limit-mib=-1 --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-run: convert-attn-to-loops: prepack-limit-mib must be in [0, 2^30], got -1
// RUN: attn-run %s --pipeline=reference --prepack-limit-mib=1 --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy 2>&1 | FileCheck %s --check-prefix=WARN
// WARN: attn-run: warning: --prepack-limit-mib applies only to --pipeline=cpu, not reference; ignored
func.func @sdpa(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                %v: tensor<?x2x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}
