// attn-expand-math: f32 math.exp2 and math.tanh (scalars and vectors) become
// the kernels' polynomials (arith and vector ops only), math.absf a cleared
// sign bit; other element
// types, tensors and other math ops are left alone. The values are checked
// in attn-flashcore-tests (FlashCoreExp2, FlashCoreTanh: against std::exp2
// and std::tanh, and the special values), which run this pass.
// RUN: attn-opt %s --attn-expand-math | FileCheck %s

// exp2 on a vector: clamp to [-127, 127], n = round(x) by fptosi of
// x + 128.5 minus 128, the degree-6 polynomial as six fma, 2^n in the
// exponent bits, NaN passed through.
// CHECK-LABEL: func.func @exp2_vector
// CHECK-SAME: (%[[X:.*]]: vector<8xf32>)
// CHECK-DAG: %[[LO:.*]] = arith.constant dense<-1.270000e+02> : vector<8xf32>
// CHECK-DAG: %[[HI:.*]] = arith.constant dense<1.270000e+02> : vector<8xf32>
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[LO]] : vector<8xf32>
// CHECK: %[[C1:.*]] = arith.select %[[GT]], %[[X]], %[[LO]]
// CHECK: %[[LT:.*]] = arith.cmpf olt, %[[C1]], %[[HI]] : vector<8xf32>
// CHECK: %[[CL:.*]] = arith.select %[[LT]], %[[C1]], %[[HI]]
// CHECK: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK-COUNT-6: vector.fma
// CHECK: %[[SH:.*]] = arith.shli %{{.*}} : vector<8xi32>
// CHECK: %[[POW:.*]] = arith.bitcast %[[SH]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[R:.*]] = arith.mulf %{{.*}}, %[[POW]] : vector<8xf32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<8xf32>
// CHECK: %[[OUT:.*]] = arith.select %[[NAN]], %[[X]], %[[R]]
// CHECK-NOT: math.
// CHECK: return %[[OUT]]
func.func @exp2_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %y = math.exp2 %x : vector<8xf32>
  return %y : vector<8xf32>
}

// On a scalar: multiply-adds with `contract` (one fma where the target has
// it; math.fma would be a libdevice call on NVVM).
// CHECK-LABEL: func.func @exp2_scalar
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK-COUNT-6: arith.addf {{.*}} fastmath<contract> : f32
// CHECK: arith.shli %{{.*}} : i32
// CHECK-NOT: math.
// CHECK: return
func.func @exp2_scalar(%x: f32) -> f32 {
  %y = math.exp2 %x : f32
  return %y : f32
}

// tanh: |x| by masking the sign bit, 1 - 2/(2^(2|x|·log2 e) + 1) with one
// division that may be a reciprocal estimate, the Taylor polynomial below
// 1/4, the sign of x put back.
// CHECK-LABEL: func.func @tanh_vector
// CHECK-SAME: (%[[X:.*]]: vector<16xf32>)
// CHECK-DAG: %[[ABSMASK:.*]] = arith.constant dense<2147483647> : vector<16xi32>
// CHECK-DAG: %[[SIGNMASK:.*]] = arith.constant dense<-2147483648> : vector<16xi32>
// CHECK-DAG: %[[TWOLOG2E:.*]] = arith.constant dense<2.885390e+00> : vector<16xf32>
// CHECK-DAG: %[[QUARTER:.*]] = arith.constant dense<2.500000e-01> : vector<16xf32>
// CHECK: %[[XB:.*]] = arith.bitcast %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[AB:.*]] = arith.andi %[[XB]], %[[ABSMASK]]
// CHECK: %[[AX:.*]] = arith.bitcast %[[AB]] : vector<16xi32> to vector<16xf32>
// CHECK: arith.mulf %[[AX]], %[[TWOLOG2E]]
// CHECK: arith.fptosi
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<ninf,arcp> : vector<16xf32>
// CHECK: arith.cmpf olt, %[[AX]], %[[QUARTER]]
// CHECK: arith.andi %[[XB]], %[[SIGNMASK]]
// CHECK: arith.ori
// CHECK-NOT: math.
// CHECK: return
func.func @tanh_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.tanh %x : vector<16xf32>
  return %y : vector<16xf32>
}

// absf: the sign bit cleared, on scalars and vectors (no libdevice call
// on the GPU); f64 left alone.
// CHECK-LABEL: func.func @absf
// CHECK-SAME: (%[[S:.*]]: f32, %[[V:.*]]: vector<8xf32>, %[[D:.*]]: f64)
// CHECK-DAG: %[[VM:.*]] = arith.constant dense<2147483647> : vector<8xi32>
// CHECK-DAG: %[[SM:.*]] = arith.constant 2147483647 : i32
// CHECK: %[[SB:.*]] = arith.bitcast %[[S]] : f32 to i32
// CHECK: %[[SA:.*]] = arith.andi %[[SB]], %[[SM]] : i32
// CHECK: %[[SR:.*]] = arith.bitcast %[[SA]] : i32 to f32
// CHECK: %[[VB:.*]] = arith.bitcast %[[V]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[VA:.*]] = arith.andi %[[VB]], %[[VM]] : vector<8xi32>
// CHECK: %[[VR:.*]] = arith.bitcast %[[VA]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[DR:.*]] = math.absf %[[D]] : f64
// CHECK: return %[[SR]], %[[VR]], %[[DR]]
func.func @absf(%s: f32, %v: vector<8xf32>, %d: f64) -> (f32, vector<8xf32>, f64) {
  %0 = math.absf %s : f32
  %1 = math.absf %v : vector<8xf32>
  %2 = math.absf %d : f64
  return %0, %1, %2 : f32, vector<8xf32>, f64
}

// Left alone: f64, f16, tensors, and math ops other than exp2, tanh, absf.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT: math.exp2 %{{.*}} : f64
// CHECK-NEXT: math.exp2 %{{.*}} : vector<8xf16>
// CHECK-NEXT: math.tanh %{{.*}} : tensor<4xf32>
// CHECK-NEXT: math.exp %{{.*}} : f32
// CHECK-NEXT: return
func.func @untouched(%a: f64, %b: vector<8xf16>, %c: tensor<4xf32>, %d: f32)
    -> (f64, vector<8xf16>, tensor<4xf32>, f32) {
  %0 = math.exp2 %a : f64
  %1 = math.exp2 %b : vector<8xf16>
  %2 = math.tanh %c : tensor<4xf32>
  %3 = math.exp %d : f32
  return %0, %1, %2, %3 : f64, vector<8xf16>, tensor<4xf32>, f32
}
