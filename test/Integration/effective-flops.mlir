// Two FLOP counts: the full one (every (query, key) pair, 2·B·H·Tq·Tk·(D +
// Dv), as before) and the effective one (only the pairs a causal mask
// leaves visible, counted exactly from Tq, Tk and the alignment), each with
// its GFLOP/s in the text report and in --json. B = 1, H = 2, D = Dv = 4:
// 32 FLOPs per pair.
// RUN: attn-run %s --entry=none --random-inputs --json | FileCheck %s --check-prefix=NONE
// NONE: "effective_flops": 1280,
// NONE: "flops": 1280,
// Tq = 5, Tk = 8, top_left: rows see 1..5 keys = 15 pairs.
// RUN: attn-run %s --entry=tl_5x8 --random-inputs --json | FileCheck %s --check-prefix=TL58
// TL58: "effective_flops": 480,
// TL58: "flops": 1280,
// Tq = 5, Tk = 8, bottom_right: 4..8 = 30 pairs.
// RUN: attn-run %s --entry=br_5x8 --random-inputs --json | FileCheck %s --check-prefix=BR58
// BR58: "effective_flops": 960,
// Tq = 8, Tk = 5, top_left: 1, 2, 3, 4, 5, 5, 5, 5 = 30 pairs.
// RUN: attn-run %s --entry=tl_8x5 --random-inputs --json | FileCheck %s --check-prefix=TL85
// TL85: "effective_flops": 960,
// Tq = 8, Tk = 5, bottom_right: 0, 0, 0, 1, 2, 3, 4, 5 = 15 pairs.
// RUN: attn-run %s --entry=br_8x5 --random-inputs --json | FileCheck %s --check-prefix=BR85
// BR85: "effective_flops": 480,
// Dv = 6 != D = 4: 2·2·(4 + 6) = 40 per pair, 40 pairs.
// RUN: attn-run %s --entry=dv6 --random-inputs --json | FileCheck %s --check-prefix=DV
// DV: "effective_flops": 1600,
// DV: "flops": 1600,
// T = 1024 causal: T(T+1)/2 of T² pairs, about half.
// RUN: attn-run %s --entry=long --pipeline=cpu --random-inputs --json --repeat=1 | FileCheck %s --check-prefix=LONG
// LONG: "effective_flops": 134348800,
// LONG: "effective_gflops": {{[0-9.e+-]+}},
// LONG: "flops": 268435456,
// LONG: "gflops": {{[0-9.e+-]+}},
// mha: the projections count in full in both (640 + 1024 + 1024 + 640),
// the attention as sdpa (H = 2, D = Dv = 4, top_left 5x8: 480 of 1280).
// RUN: attn-run %s --entry=mha --random-inputs --json | FileCheck %s --check-prefix=MHA
// MHA: "effective_flops": 3808,
// MHA: "flops": 4608,
// Dynamic dims are counted from the inputs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 1,2,5,4 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 1,2,8,4 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/q2.npy --shape 2,2,5,4 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/k2.npy --shape 2,2,8,4 --fill rand:4
// RUN: attn-run %s --entry=dyn --input=%t/q.npy --input=%t/k.npy --input=%t/k.npy --json | FileCheck %s --check-prefix=DYN
// DYN: "effective_flops": 960,
// A window: causal top_left with left = 2 over T = 8: 1, 2, 3, 3, 3, 3, 3, 3
// = 21 pairs.
// RUN: attn-run %s --entry=win --random-inputs --json | FileCheck %s --check-prefix=WIN
// WIN: "effective_flops": 672,
// WIN: "flops": 2048,
// A band without causal, left = right = 1, top_left: 2, 3, 3, 3, 3, 3, 3, 2 = 22.
// RUN: attn-run %s --entry=band --random-inputs --json | FileCheck %s --check-prefix=BAND
// BAND: "effective_flops": 704,
// Key lengths from the input: B = 2, Tq = 5, Tk = 8, bottom_right, lengths
// [8, 3]: batch 0 sees 4..8 = 30 pairs, batch 1 (diagonal i - 2) 0, 0, 1, 2, 3
// = 6: 36 pairs.
// RUN: %python %S/Inputs/npytool.py make %t/len.npy --dtype i4 --shape 2 --fill values:8,3
// RUN: attn-run %s --entry=lens --input=%t/q2.npy --input=%t/k2.npy --input=%t/k2.npy --input=%t/len.npy --json | FileCheck %s --check-prefix=LENS
// LENS: "effective_flops": 1152,
// LENS: "flops": 2560,
// sdpa_partial counts as sdpa: top_left 5x8 is 480 of 1280; with a constant
// diagonal(-2) row i sees keys j <= i - 2: 0, 0, 1, 2, 3 = 6 pairs; with a
// diagonal that is not a constant op (computed by other ops), every pair.
// RUN: attn-run %s --entry=partial --random-inputs --json | FileCheck %s --check-prefix=PART
// PART: "effective_flops": 480,
// PART: "flops": 1280,
// RUN: attn-run %s --entry=partial_shift --random-inputs --json | FileCheck %s --check-prefix=SHIFT
// SHIFT: "effective_flops": 192,
// SHIFT: "flops": 1280,
// RUN: attn-run %s --entry=partial_dyn_shift --random-inputs --json | FileCheck %s --check-prefix=DSHIFT
// DSHIFT: "effective_flops": 1280,
// DSHIFT: "flops": 1280,
// sdpa_grad: 2.5 times the forward's (top_left 5x8: 2.5 x 480 of 2.5 x 1280).
// RUN: attn-run %s --entry=grad --random-inputs --json | FileCheck %s --check-prefix=GRAD
// GRAD: "effective_flops": 1200,
// GRAD: "flops": 3200,
// The text report gives both figures.
// RUN: attn-run %s --entry=long --pipeline=cpu --random-inputs --repeat=2 | FileCheck %s --check-prefix=TEXT
// TEXT: time: median {{[0-9.]+}} ms over 2 runs, {{[0-9.]+}} GFLOP/s, effective {{[0-9.]+}} GFLOP/s

func.func @none(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x5x4xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x5x4xf32>
  return %o : tensor<1x2x5x4xf32>
}
func.func @tl_5x8(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x5x4xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x5x4xf32>
  return %o : tensor<1x2x5x4xf32>
}
func.func @br_5x8(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x5x4xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>} : (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x5x4xf32>
  return %o : tensor<1x2x5x4xf32>
}
func.func @tl_8x5(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x2x8x4xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : (tensor<1x2x8x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}
func.func @br_8x5(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x2x8x4xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>} : (tensor<1x2x8x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}
func.func @dv6(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x6xf32>) -> tensor<1x2x5x6xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x5x6xf32>
  return %o : tensor<1x2x5x6xf32>
}
func.func @long(%q: tensor<1x1x1024x64xf32>, %k: tensor<1x1x1024x64xf32>, %v: tensor<1x1x1024x64xf32>) -> tensor<1x1x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : (tensor<1x1x1024x64xf32>, tensor<1x1x1024x64xf32>, tensor<1x1x1024x64xf32>) -> tensor<1x1x1024x64xf32>
  return %o : tensor<1x1x1024x64xf32>
}
func.func @mha(%x: tensor<1x5x8xf32>, %kv: tensor<1x8x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x5x8xf32> {
  %o = attn.mha %x, %kv, %w, %w, %w, %w {causal = #attn.causal<top_left>, num_heads = 2 : i64}
      : (tensor<1x5x8xf32>, tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x5x8xf32>
  return %o : tensor<1x5x8xf32>
}
func.func @dyn(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>} : (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  return %o : tensor<1x2x?x4xf32>
}

func.func @win(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %o = attn.sdpa %q, %q, %q {causal = #attn.causal<top_left>, window = #attn.window<left = 2>}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}
func.func @band(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %o = attn.sdpa %q, %q, %q {window = #attn.window<left = 1, right = 1, align = top_left>}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}
func.func @lens(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x8x4xf32>, %v: tensor<2x2x8x4xf32>,
                %len: tensor<2xi32>) -> tensor<2x2x5x4xf32> {
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<2x2x5x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2xi32>) -> tensor<2x2x5x4xf32>
  return %o : tensor<2x2x5x4xf32>
}
func.func @partial(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>)
    -> (tensor<1x2x5x4xf32>, tensor<1x2x5xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x5x4xf32>, tensor<1x2x5xf32>)
  return %o, %l : tensor<1x2x5x4xf32>, tensor<1x2x5xf32>
}
func.func @partial_shift(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>)
    -> (tensor<1x2x5x4xf32>, tensor<1x2x5xf32>) {
  %d = arith.constant -2 : index
  %o, %l = attn.sdpa_partial %q, %k, %v diagonal(%d) {causal = #attn.causal<top_left>}
      : (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, index) -> (tensor<1x2x5x4xf32>, tensor<1x2x5xf32>)
  return %o, %l : tensor<1x2x5x4xf32>, tensor<1x2x5xf32>
}
func.func @partial_dyn_shift(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>)
    -> (tensor<1x2x5x4xf32>, tensor<1x2x5xf32>) {
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %d = arith.subi %c5, %c7 : index
  %o, %l = attn.sdpa_partial %q, %k, %v diagonal(%d) {causal = #attn.causal<top_left>}
      : (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, index) -> (tensor<1x2x5x4xf32>, tensor<1x2x5xf32>)
  return %o, %l : tensor<1x2x5x4xf32>, tensor<1x2x5xf32>
}
func.func @grad(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>,
                %o: tensor<1x2x5x4xf32>, %do: tensor<1x2x5x4xf32>, %lse: tensor<1x2x5xf32>)
    -> (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x5x4xf32>,
         tensor<1x2x5x4xf32>, tensor<1x2x5xf32>) -> (tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return %dq, %dk, %dv : tensor<1x2x5x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}
