//===- GuardAllocationSizes.cpp - no wrapping allocation sizes ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_GUARDALLOCATIONSIZESPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

/// Bytes per element, or 0 when the type has no fixed size here.
uint64_t elementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
  return 0;
}

struct GuardAllocationSizesPass
    : tessera::cpu::impl::GuardAllocationSizesPassBase<
          GuardAllocationSizesPass> {
  void runOnOperation() override {
    getOperation().walk([](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      if (alloc.getDynamicSizes().empty())
        return;
      uint64_t bytes = elementBytes(type.getElementType());
      if (!bytes)
        return;
      for (int64_t dim : type.getShape())
        if (!ShapedType::isDynamic(dim)) {
          if (dim != 0 && bytes > (uint64_t(1) << 62) / uint64_t(dim))
            return; // Static part alone near 2^62: the importer's limit.
          bytes *= uint64_t(std::max<int64_t>(dim, 1));
        }
      // The dynamic sizes' product may reach `most` without the byte size
      // passing 2^62 (so that adding an alignment cannot wrap either).
      uint64_t most = std::max<uint64_t>((uint64_t(1) << 62) / bytes, 1);
      Location loc = alloc.getLoc();
      OpBuilder b(alloc);
      Type i64 = b.getI64Type();
      auto constant = [&](uint64_t value) -> Value {
        return arith::ConstantIntOp::create(b, loc, i64,
                                            static_cast<int64_t>(value));
      };
      Value zero = constant(0);
      Value product = constant(1);
      Value overflow = arith::ConstantIntOp::create(b, loc, 0, 1);
      for (Value size : alloc.getDynamicSizes()) {
        Value n = arith::IndexCastUIOp::create(b, loc, i64, size);
        auto extended = arith::MulUIExtendedOp::create(b, loc, product, n);
        Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           extended.getHigh(), zero);
        overflow = arith::OrIOp::create(b, loc, overflow, high);
        product = extended.getLow();
      }
      Value tooMany = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                            product, constant(most));
      overflow = arith::OrIOp::create(b, loc, overflow, tooMany);
      // On overflow: `most` for the first dynamic size, 1 for the others.
      bool first = true;
      SmallVector<Value> guarded;
      for (Value size : alloc.getDynamicSizes()) {
        Value replacement = arith::ConstantIndexOp::create(
            b, loc, first ? static_cast<int64_t>(most) : 1);
        guarded.push_back(
            arith::SelectOp::create(b, loc, overflow, replacement, size));
        first = false;
      }
      alloc.getDynamicSizesMutable().assign(guarded);
    });
  }
};

} // namespace
