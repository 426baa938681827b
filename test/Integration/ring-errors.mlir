// Ring attention's inputs from .npy files and its failures under mpirun:
// each rank reads the whole files and keeps its share; rank 0 gathers and
// writes the output (checked against the reference pipeline with --expect);
// a sequence the layout cannot split, ranks given different inputs, and one
// rank that cannot read its input each end the whole job with a message and
// a non-zero status, never a hang (every run is under a timeout).
// REQUIRES: mpirun
// UNSUPPORTED: asan
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 1,2,96,32 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 1,2,96,32 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 1,2,96,32 --fill rand:3
// RUN: %mpirun -np 3 attn-run %s --entry=ring --pipeline=ring --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --output=%t/o.npy --quiet | FileCheck %s --check-prefix=RUN3
// RUN3: through the ring pipeline (3 ranks x 1 threads)
// RUN3: result #0: float32[1,2,96,32]
// RUN3: rank 2: {{.*}} ms, compute {{.*}} ms, waiting {{.*}} ms
// RUN3: transfer alone: {{.*}} ms per step (16384 bytes)
// RUN: attn-run %s --entry=ring --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --expect=%t/o.npy --quiet | FileCheck %s --check-prefix=SAME
// SAME: result #0: float32[1,2,96,32]

// 96 is not a multiple of 2P = 10:
// RUN: not %mpirun -np 5 attn-run %s --entry=ring --pipeline=ring --random-inputs 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: attn-run: rank {{[0-9]}}: lowering through the ring pipeline failed: 'attn.sdpa' op attn-shard: sequence length Tq = 96 cannot be split over P = 5 ranks with the zigzag layout (it needs Tq to be a positive multiple of 2P = 10)

// Different seeds on the two ranks (MPMD):
// RUN: not %mpirun -np 1 attn-run %s --entry=ring --pipeline=ring --random-inputs --seed=1 : -np 1 attn-run %s --entry=ring --pipeline=ring --random-inputs --seed=2 2>&1 | FileCheck %s --check-prefix=DIFF
// DIFF: attn-run: rank 0: the ranks were given different inputs (each rank must read the same files, or use the same --seed)

// Rank 1 cannot read its query file:
// RUN: not %mpirun -np 1 attn-run %s --entry=ring --pipeline=ring --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy : -np 1 attn-run %s --entry=ring --pipeline=ring --input=%t/missing.npy --input=%t/k.npy --input=%t/v.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: missing.npy: cannot open file

// A whole input of the wrong length is an error on every rank, whether it
// splits into shares (100 rows: they would have the right size) or not (98):
// RUN: %python %S/Inputs/npytool.py make %t/q100.npy --shape 1,2,100,32 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/q98.npy --shape 1,2,98,32 --fill rand:1
// RUN: not %mpirun -np 2 attn-run %s --entry=ring --pipeline=ring --input=%t/q100.npy --input=%t/k.npy --input=%t/v.npy 2>&1 | FileCheck %s --check-prefix=LENGTH
// LENGTH: attn-run: rank {{[0-9]}}: ring: input #0 ({{.*}}q100.npy) is float32[1,2,100,32], expected float32[1,2,96,32]
// RUN: not %mpirun -np 2 attn-run %s --entry=ring --pipeline=ring --input=%t/q98.npy --input=%t/k.npy --input=%t/v.npy 2>&1 | FileCheck %s --check-prefix=SPLIT98
// SPLIT98: attn-run: rank {{[0-9]}}: {{.*}}q98.npy: dim 2 has 98 rows, which do not split into 4 zigzag parts
// The same whole input read whole first (an .npz, or NAME=PATH) is checked
// against the signature before it is cut:
// RUN: not %mpirun -np 2 attn-run %s --entry=ring --pipeline=ring --input=q=%t/q100.npy --input=k=%t/k.npy --input=v=%t/v.npy 2>&1 | FileCheck %s --check-prefix=WHOLE
// WHOLE: attn-run: rank {{[0-9]}}: ring: input #0 is float32[1,2,100,32], expected float32[1,2,96,32]
// With --compare-with, rank 0 also reads the whole files; the shares agree:
// RUN: %mpirun -np 2 attn-run %s --entry=ring --pipeline=ring --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --compare-with=reference --json --quiet > %t/cmp.json
// RUN: %python -c "import json,sys; r = json.load(open(sys.argv[1])); e = r['errors'][0]['max_rel_error']; print('ranks', r['ranks'], 'within 1e-5:', e <= 1e-5)" %t/cmp.json | FileCheck %s --check-prefix=CMP
// CMP: ranks 2 within 1e-5: True

// .npy has no bfloat16: a float32 file given by position to a bf16 function
// is refused with the way out, and given as NAME=PATH it is read whole and
// rounded:
// RUN: not %mpirun -np 2 attn-run %s --entry=ring_bf16 --pipeline=ring --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy 2>&1 | FileCheck %s --check-prefix=BF16
// BF16: ring_bf16: input #0 ({{.*}}q.npy) is float32[1,2,96,32], expected bfloat16[1,2,96,32] (.npy has no bfloat16: pass the float32 values as NAME=PATH to have them read whole and rounded to bfloat16)
// RUN: %mpirun -np 2 attn-run %s --entry=ring_bf16 --pipeline=ring --input=q=%t/q.npy --input=k=%t/k.npy --input=v=%t/v.npy --quiet | FileCheck %s --check-prefix=BF16OK
// BF16OK: result #0: bfloat16[1,2,96,32]

// Options the ring does not take:
// RUN: not attn-run %s --entry=ring --pipeline=ring --random-inputs --expect=%t/o.npy 2>&1 | FileCheck %s --check-prefix=OPTS
// OPTS: attn-run: --pipeline=ring takes neither --expect, --dump-object nor --compare-with=ring

func.func @ring(%q: tensor<1x2x96x32xf32>, %k: tensor<1x2x96x32xf32>,
                %v: tensor<1x2x96x32xf32>) -> tensor<1x2x96x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring}
      : (tensor<1x2x96x32xf32>, tensor<1x2x96x32xf32>, tensor<1x2x96x32xf32>)
        -> tensor<1x2x96x32xf32>
  return %o : tensor<1x2x96x32xf32>
}

func.func @ring_bf16(%q: tensor<1x2x96x32xbf16>, %k: tensor<1x2x96x32xbf16>,
                     %v: tensor<1x2x96x32xbf16>) -> tensor<1x2x96x32xbf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring}
      : (tensor<1x2x96x32xbf16>, tensor<1x2x96x32xbf16>, tensor<1x2x96x32xbf16>)
        -> tensor<1x2x96x32xbf16>
  return %o : tensor<1x2x96x32xbf16>
}
