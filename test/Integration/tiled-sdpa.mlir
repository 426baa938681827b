// attn.sdpa and attn.sdpa_partial tiled by the upstream tiling drivers
// (transform.structured.tile_using_forall, tile_reduction_using_forall on
// their TilingInterface / PartialReductionOpInterface; the schedule is
// Inputs/tiled-sdpa-schedule.mlir) compute what the untiled ops compute:
// each function's tiled form, through the cpu and the reference pipelines,
// against the untiled function on the reference pipeline, on seeded random
// inputs. Tiles of rows and key blocks move the causal diagonal; uneven
// tiles (40 rows by 16, 100 keys in 3 blocks) take dynamic sizes.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/tiled-sdpa-schedule.mlir \
// RUN:   --transform-interpreter --canonicalize -o %t/tiled.mlir
// RUN: FileCheck %s --check-prefix=TILED < %t/tiled.mlir

// RUN: attn-run %s --entry=split_keys --pipeline=reference --random-inputs --seed=1 --quiet --output=%t/a0.npy --output=%t/a1.npy
// RUN: attn-run %t/tiled.mlir --entry=split_keys --pipeline=cpu --random-inputs --seed=1 --quiet --expect=%t/a0.npy --expect=%t/a1.npy | FileCheck %s --check-prefix=OK2
// RUN: attn-run %t/tiled.mlir --entry=split_keys --pipeline=reference --random-inputs --seed=1 --quiet --expect=%t/a0.npy --expect=%t/a1.npy | FileCheck %s --check-prefix=OK2

// RUN: attn-run %s --entry=uneven_keys --pipeline=reference --random-inputs --seed=2 --quiet --output=%t/b0.npy --output=%t/b1.npy
// RUN: attn-run %t/tiled.mlir --entry=uneven_keys --pipeline=cpu --random-inputs --seed=2 --quiet --expect=%t/b0.npy --expect=%t/b1.npy | FileCheck %s --check-prefix=OK2
// RUN: attn-run %t/tiled.mlir --entry=uneven_keys --pipeline=reference --random-inputs --seed=2 --quiet --expect=%t/b0.npy --expect=%t/b1.npy | FileCheck %s --check-prefix=OK2

// RUN: attn-run %s --entry=rows --pipeline=reference --random-inputs --seed=3 --quiet --output=%t/c0.npy
// RUN: attn-run %t/tiled.mlir --entry=rows --pipeline=cpu --random-inputs --seed=3 --quiet --expect=%t/c0.npy | FileCheck %s --check-prefix=OK1
// RUN: attn-run %t/tiled.mlir --entry=rows --pipeline=reference --random-inputs --seed=3 --quiet --expect=%t/c0.npy | FileCheck %s --check-prefix=OK1

// (batch_heads's key lengths reach the tiles through slices, which
// --random-inputs does not follow: its inputs are files.)
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 2,3,24,32 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 2,3,48,32 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 2,3,48,32 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/s.npy --shape 2,3 --fill values:0.5,0.25,0.125,0.0625,0.03125,0.015625
// RUN: %python %S/Inputs/npytool.py make %t/len.npy --dtype i4 --shape 2 --fill values:37,48
// RUN: %python %S/Inputs/npytool.py make %t/sink.npy --shape 3 --fill values:0.5,-1,2
// RUN: attn-run %s --entry=batch_heads --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/s.npy --input=%t/len.npy --input=%t/sink.npy --quiet --output=%t/d0.npy
// RUN: attn-run %t/tiled.mlir --entry=batch_heads --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/s.npy --input=%t/len.npy --input=%t/sink.npy --quiet --expect=%t/d0.npy | FileCheck %s --check-prefix=OK1
// RUN: attn-run %t/tiled.mlir --entry=batch_heads --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/s.npy --input=%t/len.npy --input=%t/sink.npy --quiet --expect=%t/d0.npy | FileCheck %s --check-prefix=OK1

// Score and mask functions see the positions of the whole op: each tile
// passes its origin [b0, h0, q0, k0] as one more capture and its functions
// add it to b, h, q, kv. A relative-position bias table per head and a
// document mask over 40 rows (documents of 12, 15 and 13 rows), in rows of
// 16; the same functions on an sdpa_partial whose keys split in 3 blocks.
// RUN: %python %S/Inputs/npytool.py make %t/fq.npy --shape 1,2,40,16 --fill rand:5
// RUN: %python %S/Inputs/npytool.py make %t/fk.npy --shape 1,2,40,16 --fill rand:6
// RUN: %python %S/Inputs/npytool.py make %t/fv.npy --shape 1,2,40,16 --fill rand:7
// RUN: %python %S/Inputs/npytool.py make %t/fbias.npy --shape 2,79 --fill rand:8
// RUN: %python %S/Inputs/npytool.py make %t/fdoc.npy --dtype i4 --shape 40 --fill values:0,0,0,0,0,0,0,0,0,0,0,0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2,2,2,2,2,2,2,2,2,2,2,2,2
// RUN: attn-run %s --entry=functions_rows --pipeline=reference --input=%t/fq.npy --input=%t/fk.npy --input=%t/fv.npy --input=%t/fbias.npy --input=%t/fdoc.npy --quiet --output=%t/e0.npy
// RUN: attn-run %t/tiled.mlir --entry=functions_rows --pipeline=cpu --input=%t/fq.npy --input=%t/fk.npy --input=%t/fv.npy --input=%t/fbias.npy --input=%t/fdoc.npy --quiet --expect=%t/e0.npy | FileCheck %s --check-prefix=OK1
// RUN: attn-run %t/tiled.mlir --entry=functions_rows --pipeline=reference --input=%t/fq.npy --input=%t/fk.npy --input=%t/fv.npy --input=%t/fbias.npy --input=%t/fdoc.npy --quiet --expect=%t/e0.npy | FileCheck %s --check-prefix=OK1
// RUN: attn-run %s --entry=functions_keys --pipeline=reference --input=%t/fq.npy --input=%t/fk.npy --input=%t/fv.npy --input=%t/fbias.npy --input=%t/fdoc.npy --quiet --output=%t/g0.npy --output=%t/g1.npy
// RUN: attn-run %t/tiled.mlir --entry=functions_keys --pipeline=cpu --input=%t/fq.npy --input=%t/fk.npy --input=%t/fv.npy --input=%t/fbias.npy --input=%t/fdoc.npy --quiet --expect=%t/g0.npy --expect=%t/g1.npy | FileCheck %s --check-prefix=OK2
// RUN: attn-run %t/tiled.mlir --entry=functions_keys --pipeline=reference --input=%t/fq.npy --input=%t/fk.npy --input=%t/fv.npy --input=%t/fbias.npy --input=%t/fdoc.npy --quiet --expect=%t/g0.npy --expect=%t/g1.npy | FileCheck %s --check-prefix=OK2

// Sliding windows move with the diagonal: a causal bottom-right window of
// 12 keys on 40 rows in tiles of 16 (attn.sdpa: the partial route), and a
// two-sided window (6 left, 3 right, aligned bottom-right, no causal) on an
// sdpa_partial with 3 key blocks and rows of 16.
// RUN: attn-run %s --entry=window_rows --pipeline=reference --random-inputs --seed=9 --quiet --output=%t/w0.npy
// RUN: attn-run %t/tiled.mlir --entry=window_rows --pipeline=cpu --random-inputs --seed=9 --quiet --expect=%t/w0.npy | FileCheck %s --check-prefix=OK1
// RUN: attn-run %t/tiled.mlir --entry=window_rows --pipeline=reference --random-inputs --seed=9 --quiet --expect=%t/w0.npy | FileCheck %s --check-prefix=OK1
// RUN: attn-run %s --entry=window_keys --pipeline=reference --random-inputs --seed=10 --quiet --output=%t/x0.npy --output=%t/x1.npy
// RUN: attn-run %t/tiled.mlir --entry=window_keys --pipeline=cpu --random-inputs --seed=10 --quiet --expect=%t/x0.npy --expect=%t/x1.npy | FileCheck %s --check-prefix=OK2
// RUN: attn-run %t/tiled.mlir --entry=window_keys --pipeline=reference --random-inputs --seed=10 --quiet --expect=%t/x0.npy --expect=%t/x1.npy | FileCheck %s --check-prefix=OK2

// Flash-decoding on attn.sdpa itself: an f16 GQA decode step (one query
// row, 200 cached keys, bottom-right causal) split into 4 key blocks of
// attn.sdpa_partial, merged, and cast back to f16 once.
// RUN: attn-run %s --entry=decode_split --pipeline=reference --random-inputs --seed=11 --quiet --output=%t/y0.npy
// RUN: attn-run %t/tiled.mlir --entry=decode_split --pipeline=cpu --random-inputs --seed=11 --quiet --expect=%t/y0.npy | FileCheck %s --check-prefix=OK1
// RUN: attn-run %t/tiled.mlir --entry=decode_split --pipeline=reference --random-inputs --seed=11 --quiet --expect=%t/y0.npy | FileCheck %s --check-prefix=OK1

// Split keys with key lengths (a decode step against a padded cache): a
// block starting at k0 holds clamp(len - k0, 0, 50) of a row's keys, and
// the bottom-right causal diagonal of one query row (j <= len - 1) is the
// lengths' own rule. Lengths 137, 0 (no key: zeros) and 200.
// RUN: %python %S/Inputs/npytool.py make %t/lq.npy --shape 3,8,1,64 --fill rand:12
// RUN: %python %S/Inputs/npytool.py make %t/lk.npy --shape 3,2,200,64 --fill rand:13
// RUN: %python %S/Inputs/npytool.py make %t/lv.npy --shape 3,2,200,64 --fill rand:14
// RUN: %python %S/Inputs/npytool.py make %t/llen.npy --dtype i4 --shape 3 --fill values:137,0,200
// RUN: attn-run %s --entry=decode_lengths --pipeline=reference --input=%t/lq.npy --input=%t/lk.npy --input=%t/lv.npy --input=%t/llen.npy --quiet --output=%t/z0.npy
// RUN: attn-run %t/tiled.mlir --entry=decode_lengths --pipeline=cpu --input=%t/lq.npy --input=%t/lk.npy --input=%t/lv.npy --input=%t/llen.npy --quiet --expect=%t/z0.npy | FileCheck %s --check-prefix=OK1
// RUN: attn-run %t/tiled.mlir --entry=decode_lengths --pipeline=reference --input=%t/lq.npy --input=%t/lk.npy --input=%t/lv.npy --input=%t/llen.npy --quiet --expect=%t/z0.npy | FileCheck %s --check-prefix=OK1

// OK1: result #0 vs {{.*}}: {{.*}}, ok
// OK2: result #0 vs {{.*}}: {{.*}}, ok
// OK2: result #1 vs {{.*}}: {{.*}}, ok

// Keys in 3 parallel blocks, each block's rows and heads in tiles: the
// bottom-right diagonal (Tk - Tq = 32) moves to 32 + q0 - k0, query head
// pairs read one K/V head (GQA 4:2), the blocks merge with merge_partial.
// TILED-DAG: #[[DIAG:.*]] = affine_map<(d0, d1) -> (d0 * -32 + d1 * 16 + 32)>
// TILED-LABEL: func.func @split_keys(
// TILED: scf.forall (%[[BLK:.*]]) in (3) shared_outs({{.*}}) -> (tensor<3x2x4x64x16xf32>, tensor<3x2x4x64xf32>)
// TILED: scf.forall (%{{.*}}, %{{.*}}, %[[ROW:.*]]) in (2, 2, 4)
// TILED: %[[D:.*]] = affine.apply #[[DIAG]](%[[BLK]], %[[ROW]])
// TILED: attn.sdpa_partial {{.*}} diagonal(%[[D]]) {causal = #attn.causal<top_left>
// TILED-SAME: (tensor<1x2x16x32xf32>, tensor<1x1x32x32xf32>, tensor<1x1x32x16xf32>, index)
// TILED: scf.for
// TILED: attn.merge_partial
func.func @split_keys(%q: tensor<2x4x64x32xf32>, %k: tensor<2x2x96x32xf32>, %v: tensor<2x2x96x16xf32>)
    -> (tensor<2x4x64x16xf32>, tensor<2x4x64xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<bottom_right>, scale = 0.2 : f32}
      : (tensor<2x4x64x32xf32>, tensor<2x2x96x32xf32>, tensor<2x2x96x16xf32>)
        -> (tensor<2x4x64x16xf32>, tensor<2x4x64xf32>)
  return %o, %l : tensor<2x4x64x16xf32>, tensor<2x4x64xf32>
}

// 100 keys in 3 blocks (34, 34, 32) with a bool mask broadcast over heads.
// TILED-LABEL: func.func @uneven_keys(
// TILED: attn.sdpa_partial {{.*}} : (tensor<1x1x16x16xf32>, tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32>, tensor<1x1x16x?xi1>)
func.func @uneven_keys(%q: tensor<2x2x32x16xf32>, %k: tensor<2x2x100x16xf32>, %v: tensor<2x2x100x16xf32>,
                       %m: tensor<2x1x32x100xi1>) -> (tensor<2x2x32x16xf32>, tensor<2x2x32xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %v, %m
      : (tensor<2x2x32x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x1x32x100xi1>)
        -> (tensor<2x2x32x16xf32>, tensor<2x2x32xf32>)
  return %o, %l : tensor<2x2x32x16xf32>, tensor<2x2x32xf32>
}

// Causal f16 rows in tiles of 16 (the last one 8): an attn.sdpa tile off
// the diagonal is an sdpa_partial with diagonal(q0), its output cast back.
// TILED-LABEL: func.func @rows(
// TILED: attn.sdpa_partial {{.*}} diagonal(%{{.*}}) {causal = #attn.causal<top_left>
// TILED-SAME: -> (tensor<1x1x?x64xf32>, tensor<1x1x?xf32>)
// TILED: arith.truncf {{.*}} : f32 to f16
func.func @rows(%q: tensor<1x2x40x64xf16>, %k: tensor<1x2x40x64xf16>, %v: tensor<1x2x40x64xf16>,
                %m: tensor<40x40xf16>) -> tensor<1x2x40x64xf16> {
  %o = attn.sdpa %q, %k, %v, %m {causal = #attn.causal<top_left>}
      : (tensor<1x2x40x64xf16>, tensor<1x2x40x64xf16>, tensor<1x2x40x64xf16>, tensor<40x40xf16>)
        -> tensor<1x2x40x64xf16>
  return %o : tensor<1x2x40x64xf16>
}

// Batch rows and heads only, with what positions do not cut: ALiBi
// slopes [B,H], key lengths, sinks, softcap, a window, bottom-right causal.
// TILED-LABEL: func.func @batch_heads(
// TILED: attn.sdpa {{.*}} alibi(%{{[a-z_0-9]+}}) key_lengths(%{{[a-z_0-9]+}}) sinks(%{{[a-z_0-9]+}})
// TILED-SAME: (tensor<1x1x24x32xf32>, tensor<1x1x48x32xf32>, tensor<1x1x48x32xf32>, tensor<1x1xf32>, tensor<1xi32>, tensor<1xf32>) -> tensor<1x1x24x32xf32>
func.func @batch_heads(%q: tensor<2x3x24x32xf32>, %k: tensor<2x3x48x32xf32>, %v: tensor<2x3x48x32xf32>,
                       %s: tensor<2x3xf32>, %len: tensor<2xi32>, %sink: tensor<3xf32>) -> tensor<2x3x24x32xf32> {
  %o = attn.sdpa %q, %k, %v alibi(%s) key_lengths(%len) sinks(%sink)
      {causal = #attn.causal<bottom_right>, softcap = 30.0 : f32, window = #attn.window<left = 20, right = 0>}
      : (tensor<2x3x24x32xf32>, tensor<2x3x48x32xf32>, tensor<2x3x48x32xf32>, tensor<2x3xf32>, tensor<2xi32>, tensor<3xf32>)
        -> tensor<2x3x24x32xf32>
  return %o : tensor<2x3x24x32xf32>
}

// TILED-LABEL: func.func @functions_rows(
// TILED: %[[ORIGIN:.*]] = tensor.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xindex>
// TILED: attn.sdpa_partial {{.*}} captures(%{{.*}}, %{{.*}}, %[[ORIGIN]]) {{.*}} score_mod {
// TILED: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index, %{{.*}}: tensor<2x79xf32>, %{{.*}}: tensor<40xi32>, %[[O:.*]]: tensor<4xindex>):
// TILED-DAG: tensor.extract %[[O]][%c1]
// TILED-DAG: tensor.extract %[[O]][%c2]
// TILED-DAG: tensor.extract %[[O]][%c3]
// TILED: } mask_mod {
func.func @functions_rows(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>,
                          %bias: tensor<2x79xf32>, %doc: tensor<40xi32>) -> tensor<1x2x40x16xf32> {
  %o = attn.sdpa %q, %k, %v captures(%bias, %doc) {causal = #attn.causal<top_left>} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<2x79xf32>, %d: tensor<40xi32>):
    %c39 = arith.constant 39 : index
    %r = arith.subi %i, %j : index
    %x = arith.addi %r, %c39 : index
    %e = tensor.extract %t[%h, %x] : tensor<2x79xf32>
    %n = arith.addf %s, %e : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<2x79xf32>, %d: tensor<40xi32>):
    %di = tensor.extract %d[%i] : tensor<40xi32>
    %dj = tensor.extract %d[%j] : tensor<40xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } : (tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<2x79xf32>, tensor<40xi32>)
      -> tensor<1x2x40x16xf32>
  return %o : tensor<1x2x40x16xf32>
}

// TILED-LABEL: func.func @functions_keys(
// TILED: scf.forall (%{{.*}}) in (3)
// TILED: attn.sdpa_partial {{.*}} captures(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} score_mod {
// TILED: attn.merge_partial
func.func @functions_keys(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>,
                          %bias: tensor<2x79xf32>, %doc: tensor<40xi32>)
    -> (tensor<1x2x40x16xf32>, tensor<1x2x40xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %v captures(%bias, %doc) {causal = #attn.causal<top_left>} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<2x79xf32>, %d: tensor<40xi32>):
    %c39 = arith.constant 39 : index
    %r = arith.subi %i, %j : index
    %x = arith.addi %r, %c39 : index
    %e = tensor.extract %t[%h, %x] : tensor<2x79xf32>
    %n = arith.addf %s, %e : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<2x79xf32>, %d: tensor<40xi32>):
    %di = tensor.extract %d[%i] : tensor<40xi32>
    %dj = tensor.extract %d[%j] : tensor<40xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } : (tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<2x79xf32>, tensor<40xi32>)
      -> (tensor<1x2x40x16xf32>, tensor<1x2x40xf32>)
  return %o, %l : tensor<1x2x40x16xf32>, tensor<1x2x40xf32>
}

// TILED-LABEL: func.func @window_rows(
// TILED: attn.sdpa_partial {{.*}} diagonal(%{{.*}}) {causal = #attn.causal<top_left>, window = #attn.window<left = 12>}
func.func @window_rows(%q: tensor<1x2x40x32xf32>, %k: tensor<1x2x56x32xf32>, %v: tensor<1x2x56x32xf32>)
    -> tensor<1x2x40x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>, window = #attn.window<left = 12>}
      : (tensor<1x2x40x32xf32>, tensor<1x2x56x32xf32>, tensor<1x2x56x32xf32>) -> tensor<1x2x40x32xf32>
  return %o : tensor<1x2x40x32xf32>
}

// TILED-LABEL: func.func @window_keys(
// TILED: attn.sdpa_partial {{.*}} diagonal(%{{.*}}) {window = #attn.window<left = 6, right = 3, align = top_left>}
func.func @window_keys(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x48x16xf32>, %v: tensor<1x2x48x16xf32>)
    -> (tensor<1x2x32x16xf32>, tensor<1x2x32xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %v {window = #attn.window<left = 6, right = 3>}
      : (tensor<1x2x32x16xf32>, tensor<1x2x48x16xf32>, tensor<1x2x48x16xf32>)
        -> (tensor<1x2x32x16xf32>, tensor<1x2x32xf32>)
  return %o, %l : tensor<1x2x32x16xf32>, tensor<1x2x32xf32>
}

// TILED-LABEL: func.func @decode_split(
// TILED: scf.forall (%{{.*}}) in (4) shared_outs({{.*}}) -> (tensor<4x2x8x1x64xf32>, tensor<4x2x8x1xf32>)
// TILED: attn.sdpa_partial {{.*}} diagonal(%{{.*}}) {causal = #attn.causal<top_left>} : (tensor<2x8x1x64xf16>, tensor<2x2x50x64xf16>, tensor<2x2x50x64xf16>, index)
// TILED: attn.merge_partial
// TILED: arith.truncf {{.*}} : f32 to f16
func.func @decode_split(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x200x64xf16>, %v: tensor<2x2x200x64xf16>)
    -> tensor<2x8x1x64xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<2x8x1x64xf16>, tensor<2x2x200x64xf16>, tensor<2x2x200x64xf16>) -> tensor<2x8x1x64xf16>
  return %o : tensor<2x8x1x64xf16>
}

// TILED-LABEL: func.func @decode_lengths(
// TILED: scf.forall (%[[B:.*]]) in (4)
// TILED: %[[K0:.*]] = arith.index_cast %{{.*}} : index to i32
// TILED: linalg.generic
// TILED: arith.subi %{{.*}}, %[[K0]] : i32
// TILED: attn.sdpa_partial {{.*}} key_lengths(%{{.*}}) : (tensor<3x8x1x64xf32>, tensor<3x2x50x64xf32>, tensor<3x2x50x64xf32>, tensor<3xi32>)
func.func @decode_lengths(%q: tensor<3x8x1x64xf32>, %k: tensor<3x2x200x64xf32>, %v: tensor<3x2x200x64xf32>,
                          %len: tensor<3xi32>) -> tensor<3x8x1x64xf32> {
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<3x8x1x64xf32>, tensor<3x2x200x64xf32>, tensor<3x2x200x64xf32>, tensor<3xi32>) -> tensor<3x8x1x64xf32>
  return %o : tensor<3x8x1x64xf32>
}
