//===- Shard.cpp - a tensor's share on one rank of a ring -----------------===//
#include "attn/Runtime/Shard.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"

#include <cstring>

namespace attn::runtime {

int64_t globalRow(const ShardSpec &spec, int64_t row, int64_t local, int rank, int ranks) {
  if (spec.layout == "striped")
    return row * ranks + rank;
  if (spec.layout == "zigzag") {
    int64_t chunk = local / 2;
    return row < chunk ? rank * chunk + row : (2 * ranks - 1 - rank) * chunk + (row - chunk);
  }
  return rank * local + row;
}

namespace {
/// Rows of dim `dim`: outer blocks, rows, and the bytes of one row.
struct RowLayout {
  int64_t outer = 1, rows = 1, rowBytes = 1;
  RowLayout(const std::vector<int64_t> &shape, int64_t dim, size_t eltBytes) {
    rows = shape[dim];
    rowBytes = static_cast<int64_t>(eltBytes);
    for (int64_t i = 0; i < dim; ++i)
      outer *= shape[i];
    for (size_t i = dim + 1; i < shape.size(); ++i)
      rowBytes *= shape[i];
  }
};
} // namespace

/// Fails unless `shape` splits into `ranks` shares along spec.dim by its
/// layout (2 chunks per rank for zigzag).
static llvm::Error checkSplit(const std::vector<int64_t> &shape, const ShardSpec &spec,
                              int ranks) {
  int64_t parts = spec.layout == "zigzag" ? 2 * ranks : ranks;
  if (ranks >= 1 && spec.dim >= 0 && spec.dim < static_cast<int64_t>(shape.size()) &&
      shape[spec.dim] % parts == 0)
    return llvm::Error::success();
  std::string dims;
  for (auto [i, d] : llvm::enumerate(shape))
    dims += (i ? "," : "") + std::to_string(d);
  return llvm::createStringError("a tensor of shape [" + dims + "] cannot be split into " +
                                 std::to_string(parts) + " " + spec.layout +
                                 " parts along dim " + std::to_string(spec.dim));
}

llvm::Expected<HostTensor> shardOf(const HostTensor &whole, const ShardSpec &spec, int rank,
                                   int ranks) {
  if (llvm::Error e = checkSplit(whole.shape, spec, ranks))
    return std::move(e);
  std::vector<int64_t> shape = whole.shape;
  int64_t local = shape[spec.dim] / ranks;
  shape[spec.dim] = local;
  HostTensor out = HostTensor::zeros(whole.dtype, shape);
  RowLayout w(whole.shape, spec.dim, dtypeSize(whole.dtype));
  for (int64_t o = 0; o < w.outer; ++o)
    for (int64_t r = 0; r < local; ++r) {
      int64_t g = globalRow(spec, r, local, rank, ranks);
      std::memcpy(out.bytes.data() + (o * local + r) * w.rowBytes,
                  whole.bytes.data() + (o * w.rows + g) * w.rowBytes, w.rowBytes);
    }
  return out;
}

llvm::Expected<HostTensor> readNpyShare(const std::string &path, const ShardSpec &spec,
                                        int rank, int ranks,
                                        std::vector<int64_t> *wholeShape) {
  int64_t wholeRows = 0;
  auto share = readNpyRows(path, spec.dim, [&](int64_t rows) -> llvm::Expected<std::vector<int64_t>> {
    wholeRows = rows;
    int64_t parts = spec.layout == "zigzag" ? 2 * ranks : ranks;
    if (ranks < 1 || rows % parts != 0)
      return llvm::createStringError(path + ": dim " + std::to_string(spec.dim) + " has " +
                                     std::to_string(rows) + " rows, which do not split into " +
                                     std::to_string(parts) + " " + spec.layout + " parts");
    int64_t local = rows / ranks;
    std::vector<int64_t> out;
    for (int64_t j = 0; j < local; ++j)
      out.push_back(globalRow(spec, j, local, rank, ranks));
    return out;
  });
  if (share && wholeShape) {
    *wholeShape = share->shape;
    (*wholeShape)[spec.dim] = wholeRows;
  }
  return share;
}

llvm::Expected<HostTensor> unshard(const std::vector<char> &shares, ElementType dtype,
                                   const std::vector<int64_t> &shareShape,
                                   const ShardSpec &spec, int ranks) {
  std::vector<int64_t> shape = shareShape;
  if (llvm::Error e = checkSplit(shape, spec, 1))
    return std::move(e);
  int64_t local = shape[spec.dim];
  shape[spec.dim] = local * ranks;
  HostTensor out = HostTensor::zeros(dtype, shape);
  RowLayout s(shareShape, spec.dim, dtypeSize(dtype));
  int64_t shareBytes = s.outer * local * s.rowBytes;
  for (int rank = 0; rank < ranks; ++rank)
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t r = 0; r < local; ++r) {
        int64_t g = globalRow(spec, r, local, rank, ranks);
        std::memcpy(out.bytes.data() + (o * local * ranks + g) * s.rowBytes,
                    shares.data() + rank * shareBytes + (o * local + r) * s.rowBytes,
                    s.rowBytes);
      }
  return out;
}

} // namespace attn::runtime
