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
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t i = 0; i < rank; ++i) {
      srcOffset += index[i] * srcStrides[i];
      dstOffset += index[i] * dstStrides[i];
    }
    std::memcpy(dstBase + dstOffset * elementSize,
                srcBase + srcOffset * elementSize, elementSize);
    int64_t dim = rank - 1;
    while (dim >= 0 && ++index[dim] == sizes[dim])
      index[dim--] = 0;
    if (dim < 0)
      return;
  }
}
