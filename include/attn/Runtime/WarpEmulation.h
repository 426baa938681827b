//===- WarpEmulation.h - the warp instructions on the CPU -------*- C++ -*-===//
//
// What attn-emulate-gpu-schedule calls in place of the tensor-core kernel's
// warp-wide instructions when it runs a block's threads in lockstep on the
// CPU. Each takes the per-thread values of all the block's threads as
// arrays [value][thread] (the layout of a lane-innermost vector stored to
// memory) and follows the fragment table (attn/GPU/FragmentLayout.h).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_WARPEMULATION_H
#define ATTN_RUNTIME_WARPEMULATION_H

#include <cstdint>
#include <utility>
#include <vector>

extern "C" {
/// mma.sync m16n8k16: for each warp of `threads` (a multiple of 32),
/// d = a·b + c over its fragments. a: [8][threads], b: [4][threads] 16-bit
/// values (f16, or bf16 when `bf16`), c, d: [4][threads] f32. Products and
/// sums in double, rounded once to f32.
void attn_emu_mma_m16n8k16(int64_t a, int64_t b, int64_t c, int64_t d, int32_t bf16,
                           int32_t threads);
/// mma.sync m16n8k8 .tf32: for each warp, d = a·b + c. a: [4][threads],
/// b: [2][threads], c, d: [4][threads] f32. The tensor core reads only the
/// TF32 bits of a and b (sign, exponent, 10 mantissa bits: the low 13 bits
/// are dropped); products and sums in double, rounded once to f32.
void attn_emu_mma_m16n8k8_tf32(int64_t a, int64_t b, int64_t c, int64_t d, int32_t threads);
/// ldmatrix.x{numTiles}[.trans] m8n8 .b16 from a row-major [rows][cols]
/// buffer of `elementBytes`-byte elements (2, or 4 for 32-bit data, which
/// .trans cannot take): thread t supplied the address (row[t], col[t]); out
/// is [numTiles][2][threads] 16-bit values, or [numTiles][threads] 32-bit
/// ones. An address outside the buffer, a row that runs past its end or a
/// row not 16-byte aligned aborts with a message: on the GPU it would read
/// another buffer or fault.
void attn_emu_ldmatrix(int64_t base, int64_t rows, int64_t cols, int64_t row,
                       int64_t col, int64_t out, int32_t numTiles, int32_t transpose,
                       int32_t elementBytes, int32_t threads);
}

namespace attn::runtime {
/// (name, address) of the functions above, for a JIT's symbol table.
std::vector<std::pair<const char *, void *>> warpEmulationSymbols();
} // namespace attn::runtime

#endif // ATTN_RUNTIME_WARPEMULATION_H
