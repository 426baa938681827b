// attn-run says, once per op, what the cpu pipeline left to the unfused
// reference lowering and why (stderr, and "unfused" in --json); a fused
// sdpa gets no such line.
// RUN: attn-run %S/Inputs/unfused.mlir --entry=drop --pipeline=cpu --random-inputs 2>&1 >/dev/null | FileCheck %s --check-prefix=DROP
// DROP: attn-run: {{.*}}unfused.mlir:5:19: attn.sdpa_grad not fused: the fused backward needs head dims that are multiples of the vector width {{8|16}}, got D = 12, Dv = 12; it takes the unfused reference lowering
// DROP-NOT: not fused
// f16 is fused (computed in f32, rounded once): no line.
// RUN: attn-run %S/Inputs/unfused.mlir --entry=half --pipeline=cpu --random-inputs 2>&1 >/dev/null | FileCheck %s --check-prefix=HALF --allow-empty
// HALF-NOT: not fused
// RUN: attn-run %S/Inputs/unfused.mlir --entry=weights --pipeline=cpu --random-inputs 2>&1 >/dev/null | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: attn-run: {{.*}}unfused.mlir:13:8: attn.scores not fused: a scores/softmax/weighted_sum chain that attn-fuse could not raise to attn.sdpa
// A projection the packed-panel kernel does not take is named too.
// RUN: attn-run %S/Inputs/unfused.mlir --entry=narrow --pipeline=cpu --random-inputs 2>&1 >/dev/null | FileCheck %s --check-prefix=NARROW
// NARROW: attn-run: {{.*}}unfused.mlir:{{[0-9]+}}:8: attn.project not tiled: the output width 12 is not a multiple of 2 vectors ({{16|32}}); it takes the reference lowering
// The mask's gradient needs the score gradient the fused backward never forms.
// RUN: attn-run %S/Inputs/unfused.mlir --entry=dmask --pipeline=cpu --random-inputs 2>&1 >/dev/null | FileCheck %s --check-prefix=DMASK
// DMASK: attn.sdpa_grad not fused: the mask's gradient (grad_mask) is the [B,H,Tq,Tk] score gradient, which the fused backward never forms; it takes the unfused reference lowering
// RUN: attn-run %S/Inputs/unfused.mlir --entry=drop --pipeline=cpu --random-inputs --json 2>/dev/null | FileCheck %s --check-prefix=JSON
// JSON: "unfused": [
// JSON-NEXT: "{{.*}}unfused.mlir:5:19: attn.sdpa_grad not fused: the fused backward needs head dims
// RUN: attn-run %s --pipeline=cpu --random-inputs --json 2>&1 | FileCheck %s --check-prefix=FUSED
// FUSED-NOT: not fused
// FUSED: "unfused": []

// The pass option behind it: convert-attn-to-loops{report-unfused}.
// RUN: attn-opt %S/Inputs/unfused.mlir --convert-attn-to-loops=report-unfused -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: unfused.mlir:5:19: remark: attn.sdpa_grad not fused: the fused backward needs head dims
// PASS-NOT: unfused.mlir:9:8
// PASS: unfused.mlir:13:8: remark: attn.scores not fused
// RUN: attn-opt %S/Inputs/unfused.mlir --convert-attn-to-loops -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark

func.func @fused(%q: tensor<1x2x8x8xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %o : tensor<1x2x8x8xf32>
}
