//===- Shard.h - a tensor's share on one rank of a ring ---------*- C++ -*-===//
//
// attn-shard records on each sharded argument and result
// `attn.shard = {dim, layout}`; these functions cut a rank's share out of
// the whole tensor and put the shares back together, by the same rule as
// #attn.ring (contiguous, striped, zigzag).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_SHARD_H
#define ATTN_RUNTIME_SHARD_H

#include "attn/Runtime/HostTensor.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::runtime {

/// How one tensor is split over the ranks of a ring.
struct ShardSpec {
  int64_t dim = 2;
  std::string layout = "contiguous"; ///< contiguous | striped | zigzag
};

/// The global position of local row `row` on `rank` of `ranks`, with
/// `local` rows per rank.
int64_t globalRow(const ShardSpec &spec, int64_t row, int64_t local, int rank, int ranks);

/// `rank`'s share of `whole` (dim spec.dim has ranks · local rows); an
/// error when that dim does not split by the layout.
llvm::Expected<HostTensor> shardOf(const HostTensor &whole, const ShardSpec &spec, int rank,
                                   int ranks);

/// `rank`'s share of the tensor in .npy file `path`, reading only its rows
/// (readNpyRows); `wholeShape` gets the file's shape. An error when the file
/// needs a conversion (readNpy's rules) or does not split by the layout.
llvm::Expected<HostTensor> readNpyShare(const std::string &path, const ShardSpec &spec,
                                        int rank, int ranks,
                                        std::vector<int64_t> *wholeShape = nullptr);

/// The whole tensor from every rank's share in rank order (`shares`, each of
/// `shareShape`, concatenated as gathered).
llvm::Expected<HostTensor> unshard(const std::vector<char> &shares, ElementType dtype,
                                   const std::vector<int64_t> &shareShape,
                                   const ShardSpec &spec, int ranks);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_SHARD_H
