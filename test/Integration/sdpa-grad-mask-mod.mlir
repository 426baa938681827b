// attn.sdpa_grad with a mask function (what attn-differentiate makes of an
// sdpa whose only function is a mask: test/Transforms/differentiate.mlir)
// on the reference route (an attn.mask_mod on the [B,H,Tq,Tk] scores) and
// the fused backward (the function per tile, tiles its bounds say it keeps
// nothing of skipped; small tiles so that some are skipped and some are
// partial) and the GPU backward (gpu-schedule, emulated), against
// torch.autograd's float64 gradients of the same rule
// written as a bool mask (Inputs/sdpa_grad_case.py). Rows 5..11 keep no
// key: zero gradients.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t documents_mask_function
// RUN: for p in "reference" "cpu" "cpu --vector-width=8 --tile-q=8 --tile-k=16" \
// RUN:          "gpu-schedule --tile-q=16 --tile-k=8"; do \
// RUN:   attn-run %s --pipeline=$p --quiet \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/o.npy \
// RUN:     --input=%t/do.npy --input=%t/lse.npy --input=%t/doc.npy \
// RUN:     --expect=%t/dq.npy --expect=%t/dk.npy --expect=%t/dv.npy || exit 1; \
// RUN: done > %t/log 2>&1; cat %t/log | FileCheck %s
// CHECK-COUNT-12: ok (atol
// CHECK-NOT: MISMATCH
//
// The fused backward takes it (no "not fused" remark).
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=8 report-unfused" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FUSED --allow-empty
// FUSED-NOT: not fused
func.func @documents(%q: tensor<2x4x45x16xf32>, %k: tensor<2x2x45x16xf32>,
                     %v: tensor<2x2x45x16xf32>, %o: tensor<2x4x45x16xf32>,
                     %do: tensor<2x4x45x16xf32>, %lse: tensor<2x4x45xf32>,
                     %doc: tensor<45xi32>)
    -> (tensor<2x4x45x16xf32>, tensor<2x2x45x16xf32>, tensor<2x2x45x16xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse captures(%doc)
      {scale = 0.25 : f32} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<45xi32>):
    %di = tensor.extract %d[%i] : tensor<45xi32>
    %dj = tensor.extract %d[%j] : tensor<45xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %causal = arith.cmpi sle, %j, %i : index
    %c0 = arith.constant 0 : i32
    %c5 = arith.constant 5 : index
    %later = arith.cmpi sgt, %di, %c0 : i32
    %early = arith.cmpi slt, %i, %c5 : index
    %row = arith.ori %later, %early : i1
    %a = arith.andi %same, %causal : i1
    %keep = arith.andi %a, %row : i1
    attn.yield %keep : i1
  } : (tensor<2x4x45x16xf32>, tensor<2x2x45x16xf32>, tensor<2x2x45x16xf32>,
       tensor<2x4x45x16xf32>, tensor<2x4x45x16xf32>, tensor<2x4x45xf32>, tensor<45xi32>)
      -> (tensor<2x4x45x16xf32>, tensor<2x2x45x16xf32>, tensor<2x2x45x16xf32>)
  return %dq, %dk, %dv : tensor<2x4x45x16xf32>, tensor<2x2x45x16xf32>, tensor<2x2x45x16xf32>
}
