// convert-attn-to-linalg for the wave-2 features: attn.softcap, attn.rope and
// attn.mask with a window, ALiBi slopes and key lengths. Each becomes one
// elementwise linalg.generic whose only new tensor is its result (slopes,
// lengths and tables are read in place through indexing maps, never
// broadcast into a tensor of their own).
// RUN: attn-opt %s -convert-attn-to-linalg -split-input-file | FileCheck %s

// softcap on f16: c·tanh(x / c) computed in f32, rounded once.
// CHECK-LABEL: func.func @softcap_f16
// CHECK-SAME: (%[[S:.*]]: tensor<2x3x?x5xf16>)
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<2x3x?x5xf16>
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<2x3x?x5xf16>) outs(%[[E]] : tensor<2x3x?x5xf16>)
// CHECK: %[[X:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[CAP:.*]] = arith.constant 5.000000e+01 : f32
// CHECK: %[[Q:.*]] = arith.divf %[[X]], %[[CAP]] : f32
// CHECK: %[[T:.*]] = math.tanh %[[Q]] : f32
// CHECK: %[[Y:.*]] = arith.mulf %[[CAP]], %[[T]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[Y]] : f32 to f16
// CHECK: linalg.yield %[[R]] : f16
// CHECK-NOT: tensor.empty
func.func @softcap_f16(%s: tensor<2x3x?x5xf16>) -> tensor<2x3x?x5xf16> {
  %t = attn.softcap %s {cap = 50.0 : f32} : tensor<2x3x?x5xf16>
  return %t : tensor<2x3x?x5xf16>
}

// -----

// Everything at once: [H] slopes read at (h), [B] lengths at (b), the keep
// mask broadcast over H and Tq. L = clamp(len[b], 0, Tk); the bottom-right
// diagonal i + L - Tq is ALiBi's origin and the causal and window
// diagonal; biases first, keep rules second.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[KEEP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
// CHECK-DAG: #[[SLOPE:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[LEN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @mask_everything
// CHECK-SAME: (%[[S:.*]]: tensor<2x8x16x64xf32>, %[[SL:.*]]: tensor<8xf32>, %[[L:.*]]: tensor<2xi32>, %[[K:.*]]: tensor<2x1x1x64xi1>)
// CHECK-DAG: %[[TQ:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[TK:.*]] = arith.constant 64 : index
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x8x16x64xf32>
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[KEEP]], #[[SLOPE]], #[[LEN]], #[[ID]]]
// CHECK-SAME: ins(%[[S]], %[[K]], %[[SL]], %[[L]] : tensor<2x8x16x64xf32>, tensor<2x1x1x64xi1>, tensor<8xf32>, tensor<2xi32>) outs(%[[E]] : tensor<2x8x16x64xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: i1, %[[SLOPEV:.*]]: f32, %[[N:.*]]: i32, %{{.*}}: f32):
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[I:.*]] = linalg.index 2
// CHECK: %[[J:.*]] = linalg.index 3
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[NI]], %[[ZERO]] : index
// CHECK: %[[LEN:.*]] = arith.minsi %[[LO]], %[[TK]] : index
// CHECK: %[[IL:.*]] = arith.addi %[[I]], %[[LEN]] : index
// CHECK: %[[DIAG:.*]] = arith.subi %[[IL]], %[[TQ]] : index
// CHECK: %[[DIST:.*]] = arith.subi %[[DIAG]], %[[J]] : index
// CHECK: %[[NEG:.*]] = arith.subi %[[ZERO]], %[[DIST]] : index
// CHECK: %[[ISNEG:.*]] = arith.cmpi slt, %[[DIST]], %[[ZERO]] : index
// CHECK: %[[ABS:.*]] = arith.select %[[ISNEG]], %[[NEG]], %[[DIST]] : index
// CHECK: %[[ABS64:.*]] = arith.index_cast %[[ABS]] : index to i64
// CHECK: %[[ABSF:.*]] = arith.sitofp %[[ABS64]] : i64 to f32
// CHECK: %[[BIAS:.*]] = arith.mulf %[[SLOPEV]], %[[ABSF]] : f32
// CHECK: %[[Z:.*]] = arith.subf %[[X]], %[[BIAS]] : f32
// CHECK: %[[PAST:.*]] = arith.cmpi sge, %[[J]], %[[LEN]] : index
// CHECK: %[[AFTER:.*]] = arith.cmpi sgt, %[[J]], %[[DIAG]] : index
// CHECK: %[[M1:.*]] = arith.ori %[[PAST]], %[[AFTER]] : i1
// CHECK: %[[C31:.*]] = arith.constant 31 : index
// CHECK: %[[FIRST:.*]] = arith.subi %[[DIAG]], %[[C31]] : index
// CHECK: %[[BEFORE:.*]] = arith.cmpi slt, %[[J]], %[[FIRST]] : index
// CHECK: %[[M2:.*]] = arith.ori %[[M1]], %[[BEFORE]] : i1
// CHECK: %[[KEPT:.*]] = arith.select %[[M]], %[[Z]], %[[NINF]] : f32
// CHECK: %[[OUT:.*]] = arith.select %[[M2]], %[[NINF]], %[[KEPT]] : f32
// CHECK: linalg.yield %[[OUT]] : f32
// CHECK-NOT: tensor.empty
func.func @mask_everything(%s: tensor<2x8x16x64xf32>, %slopes: tensor<8xf32>, %len: tensor<2xi32>,
                           %keep: tensor<2x1x1x64xi1>) -> tensor<2x8x16x64xf32> {
  %y = attn.mask %s, %keep alibi(%slopes : tensor<8xf32>) key_lengths(%len : tensor<2xi32>)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 31>}
      : tensor<2x8x16x64xf32>, tensor<2x1x1x64xi1>
  return %y : tensor<2x8x16x64xf32>
}

// -----

// A top-left window with [B,H] slopes and no key lengths: the window's
// diagonal is i, ALiBi's origin stays i + (Tk - Tq), computed once outside.
// CHECK-DAG: #[[SLOPE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @mask_window_top_left_alibi
// CHECK-SAME: (%[[S:.*]]: tensor<2x3x?x?xf32>, %[[SL:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[TQ:.*]] = tensor.dim %[[S]], %c2
// CHECK-DAG: %[[TK:.*]] = tensor.dim %[[S]], %c3
// CHECK: %[[OFF:.*]] = arith.subi %[[TK]], %[[TQ]] : index
// CHECK: tensor.empty(%[[TQ]], %[[TK]]) : tensor<2x3x?x?xf32>
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[SLOPE]], {{.*}}]
// CHECK: %[[I:.*]] = linalg.index 2
// CHECK: %[[J:.*]] = linalg.index 3
// CHECK: %[[REL:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK: arith.subi %[[REL]], %[[J]] : index
// CHECK: arith.sitofp
// CHECK: arith.subf
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[LO:.*]] = arith.subi %[[I]], %[[C4]] : index
// CHECK: %[[BEFORE:.*]] = arith.cmpi slt, %[[J]], %[[LO]] : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[HI:.*]] = arith.addi %[[I]], %[[C2]] : index
// CHECK: %[[AFTER:.*]] = arith.cmpi sgt, %[[J]], %[[HI]] : index
// CHECK: %[[MASKED:.*]] = arith.ori %[[BEFORE]], %[[AFTER]] : i1
// CHECK: arith.select %[[MASKED]]
func.func @mask_window_top_left_alibi(%s: tensor<2x3x?x?xf32>, %sl: tensor<2x3xf32>) -> tensor<2x3x?x?xf32> {
  %0 = attn.mask %s alibi(%sl : tensor<2x3xf32>)
      {window = #attn.window<left = 4, right = 2, align = top_left>} : tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// A window without causal and without align: the bottom-right diagonal
// i + Tk - Tq (right = 0 here: keys after it are masked).
// CHECK-LABEL: func.func @mask_window_default_align
// CHECK: %[[OFF:.*]] = arith.subi %c9, %c5 : index
// CHECK: %[[I:.*]] = linalg.index 2
// CHECK: %[[J:.*]] = linalg.index 3
// CHECK: %[[DIAG:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[HI:.*]] = arith.addi %[[DIAG]], %[[C0]] : index
// CHECK: arith.cmpi sgt, %[[J]], %[[HI]] : index
func.func @mask_window_default_align(%s: tensor<1x2x5x9xf32>) -> tensor<1x2x5x9xf32> {
  %0 = attn.mask %s {window = #attn.window<right = 0>} : tensor<1x2x5x9xf32>
  return %0 : tensor<1x2x5x9xf32>
}

// -----

// i64 key lengths alone on f16 scores: only j < clamp(len[b], 0, Tk), no
// diagonal at all.
// CHECK-LABEL: func.func @mask_key_lengths_i64
// CHECK-SAME: (%[[S:.*]]: tensor<?x2x?x?xf16>, %[[L:.*]]: tensor<?xi64>)
// CHECK: %[[TK:.*]] = tensor.dim %[[S]], %c3
// CHECK-NOT: arith.subi
// CHECK: ins(%[[S]], %[[L]] : tensor<?x2x?x?xf16>, tensor<?xi64>)
// CHECK: %[[X:.*]] = arith.extf
// CHECK: %[[J:.*]] = linalg.index 3
// CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK: %[[LEN:.*]] = arith.minsi %[[LO]], %[[TK]] : index
// CHECK-NOT: arith.subi
// CHECK: %[[PAST:.*]] = arith.cmpi sge, %[[J]], %[[LEN]] : index
// CHECK: %[[Y:.*]] = arith.select %[[PAST]], %{{.*}}, %[[X]] : f32
// CHECK: arith.truncf %[[Y]] : f32 to f16
func.func @mask_key_lengths_i64(%s: tensor<?x2x?x?xf16>, %len: tensor<?xi64>) -> tensor<?x2x?x?xf16> {
  %0 = attn.mask %s key_lengths(%len : tensor<?xi64>) : tensor<?x2x?x?xf16>
  return %0 : tensor<?x2x?x?xf16>
}

// -----

// rope, rotate_half over the whole head (R = D = 16): the partner of e is
// (e + 8) mod 16, the table column e mod 8; the first half subtracts.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[PARTNER:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 8) mod 16)>
// CHECK-DAG: #[[TABLE:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3 mod 8)>
// CHECK-LABEL: func.func @rope_rotate_half
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x8x16xf32>, %[[C:.*]]: tensor<8x8xf32>, %[[S:.*]]: tensor<8x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x8x16xf32>
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[PARTNER]], #[[TABLE]], #[[TABLE]], #[[ID]]]
// CHECK-SAME: ins(%[[X]], %[[X]], %[[C]], %[[S]] : {{.*}}) outs(%[[E]] :
// CHECK: ^bb0(%[[XE:.*]]: f32, %[[XP:.*]]: f32, %[[CV:.*]]: f32, %[[SV:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[D:.*]] = linalg.index 3
// CHECK: %[[HALF:.*]] = arith.constant 8 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi slt, %[[D]], %[[HALF]] : index
// CHECK: %[[XC:.*]] = arith.mulf %[[XE]], %[[CV]] : f32
// CHECK: %[[PS:.*]] = arith.mulf %[[XP]], %[[SV]] : f32
// CHECK-DAG: %[[SUB:.*]] = arith.subf %[[XC]], %[[PS]] : f32
// CHECK-DAG: %[[ADD:.*]] = arith.addf %[[XC]], %[[PS]] : f32
// CHECK: %[[Y:.*]] = arith.select %[[FIRST]], %[[SUB]], %[[ADD]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK-NOT: tensor.empty
func.func @rope_rotate_half(%q: tensor<1x2x8x16xf32>, %cos: tensor<8x8xf32>, %sin: tensor<8x8xf32>)
    -> tensor<1x2x8x16xf32> {
  %y = attn.rope %q, %cos, %sin : tensor<1x2x8x16xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  return %y : tensor<1x2x8x16xf32>
}

// -----

// rope, interleaved over R = 32 of D = 64 with per-sequence tables, f16 in
// and out: the partner of e < R is e xor 1 (written on e mod 32, which keeps
// the reads of the pass-through dims in bounds), the table column
// e floordiv 2; dims e >= 32 are x itself.
// CHECK-DAG: #[[PARTNER:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 mod 32 - (d3 mod 2) * 2 + 1)>
// CHECK-DAG: #[[TABLE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, (d3 mod 32) floordiv 2)>
// CHECK-LABEL: func.func @rope_interleaved_partial
// CHECK: tensor.empty(%{{.*}}) : tensor<2x4x?x64xf16>
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[PARTNER]], #[[TABLE]], #[[TABLE]], #{{.*}}]
// CHECK: ^bb0(%[[XE:.*]]: f16, %[[XP:.*]]: f16, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f16):
// CHECK: %[[X32:.*]] = arith.extf %[[XE]] : f16 to f32
// CHECK: arith.extf %[[XP]] : f16 to f32
// CHECK: %[[D:.*]] = linalg.index 3
// CHECK: %[[ODD:.*]] = arith.andi %[[D]], %{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[ODD]], %{{.*}} : index
// CHECK: %[[ROT:.*]] = arith.select %[[FIRST]]
// CHECK: %[[R:.*]] = arith.constant 32 : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[D]], %[[R]] : index
// CHECK: %[[Y:.*]] = arith.select %[[IN]], %[[ROT]], %[[X32]] : f32
// CHECK: arith.truncf %[[Y]] : f32 to f16
func.func @rope_interleaved_partial(%k: tensor<2x4x?x64xf16>, %cos: tensor<2x?x16xf32>,
                                    %sin: tensor<2x?x16xf32>) -> tensor<2x4x?x64xf16> {
  %y = attn.rope %k, %cos, %sin {style = #attn.rope<interleaved>}
      : tensor<2x4x?x64xf16>, tensor<2x?x16xf32>, tensor<2x?x16xf32>
  return %y : tensor<2x4x?x64xf16>
}
