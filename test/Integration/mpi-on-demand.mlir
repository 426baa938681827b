// libattn_mpi (and libmpi, hwloc, libevent behind it) are loaded only when a
// ring runs (lib/Runtime/MpiLoader.cpp): attn-run does not link them, a CPU
// run never maps them (the dynamic loader's own trace of every file it
// loads), and a ring run does.
// REQUIRES: mpirun
// UNSUPPORTED: asan
// RUN: llvm-readelf -d %attn_tools_dir/attn-run | FileCheck %s --check-prefix=NEEDED
// NEEDED-NOT: libmpi
// NEEDED-NOT: libattn_mpi
// RUN: env LD_DEBUG=files attn-run --help 2>&1 | FileCheck %s --check-prefix=NOMPI
// RUN: env LD_DEBUG=files attn-run %s --entry=single --pipeline=cpu --random-inputs --quiet 2>&1 | FileCheck %s --check-prefix=NOMPI
// NOMPI-NOT: libmpi
// NOMPI-NOT: libattn_mpi
// NOMPI-NOT: libhwloc
// NOMPI-NOT: libevent

// RUN: %mpirun -np 1 env LD_DEBUG=files attn-run %s --entry=ring --pipeline=ring --random-inputs --quiet 2>&1 | FileCheck %s --check-prefix=RING
// RING: file={{.*}}libattn_mpi.so.0
// RING: file={{.*}}libmpi.so

func.func @single(%q: tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32>
  return %o : tensor<1x2x16x32xf32>
}

func.func @ring(%q: tensor<1x2x32x32xf32>, %k: tensor<1x2x32x32xf32>,
                %v: tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring}
      : (tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>)
        -> tensor<1x2x32x32xf32>
  return %o : tensor<1x2x32x32xf32>
}
