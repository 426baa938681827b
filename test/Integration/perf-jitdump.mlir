// ATTN_PERF_JIT: the JIT writes a perf jitdump of the code it compiles
// (docs/attn-run.md, "Profiling the compiled code"), named after the
// entry function; without it, nothing is written.
// RUN: rm -rf %t && mkdir -p %t/on %t/off
// RUN: env ATTN_PERF_JIT=1 JITDUMPDIR=%t/on attn-run %s --pipeline=cpu --random-inputs --quiet
// RUN: %python -c "import glob,sys; f=glob.glob(sys.argv[1]+'/.debug/jit/*/jit-*.dump'); print(len(f), b'sdpa_entry' in open(f[0],'rb').read())" %t/on | FileCheck %s --check-prefix=ON
// ON: 1 True
// RUN: env -u ATTN_PERF_JIT JITDUMPDIR=%t/off attn-run %s --pipeline=cpu --random-inputs --quiet
// RUN: %python -c "import glob,sys; print(len(glob.glob(sys.argv[1]+'/.debug/jit/*/jit-*.dump')))" %t/off | FileCheck %s --check-prefix=OFF
// OFF: 0

func.func @sdpa_entry(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>)
    -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
      -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
