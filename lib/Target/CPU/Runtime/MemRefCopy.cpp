//===- MemRefCopy.cpp - the strided copy compiled code calls --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Lowered memref.copy between non-contiguous buffers calls `memrefCopy`.
// Tessera provides it itself so that compiled models need no MLIR runtime
// library.
//
//===----------------------------------------------------------------------===//
#include "MemRefCopy.h"

#include <cstring>
#include <vector>

namespace {
/// The ranked descriptor layout: two pointers, offset, sizes, strides.
struct Descriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[];
};
} // namespace

extern "C" void tesseraMemrefCopy(int64_t elementSize,
                                  tessera::runtime::UnrankedMemRef *src,
                                  tessera::runtime::UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  auto *s = static_cast<Descriptor *>(src->descriptor);
  auto *d = static_cast<Descriptor *>(dst->descriptor);
  const int64_t *sizes = s->sizesAndStrides;
  const int64_t *srcStrides = s->sizesAndStrides + rank;
  const int64_t *dstStrides = d->sizesAndStrides + rank;
  char *srcBase = s->aligned + s->offset * elementSize;
  char *dstBase = d->aligned + d->offset * elementSize;
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return;
  // Rows along the last dim move with memcpy when both sides are
  // contiguous there; the outer dims are walked with an index vector.
  int64_t inner = rank ? sizes[rank - 1] : 1;
  bool rows = rank && srcStrides[rank - 1] == 1 && dstStrides[rank - 1] == 1;
  int64_t outerRank = rows ? rank - 1 : rank;
  std::vector<int64_t> index(outerRank, 0);
  while (true) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t i = 0; i < outerRank; ++i) {
      srcOffset += index[i] * srcStrides[i];
      dstOffset += index[i] * dstStrides[i];
    }
    std::memcpy(dstBase + dstOffset * elementSize,
                srcBase + srcOffset * elementSize,
                (rows ? inner : 1) * elementSize);
    int64_t dim = outerRank - 1;
    while (dim >= 0 && ++index[dim] == sizes[dim])
      index[dim--] = 0;
    if (dim < 0)
      return;
  }
}
