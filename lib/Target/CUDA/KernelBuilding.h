//===- KernelBuilding.h - pieces of tensor-core kernels -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What the tensor-core kernels (TensorCoreMatmul.cpp, FlashAttention.cpp)
// build over and over: index arithmetic on the builder's insertion point,
// zero-filling 16-byte cp.async copies, ldmatrix.x4, mma.sync on four f32
// accumulators, and mma.sync operand registers from pairs of 16-bit
// values.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CUDA_KERNELBUILDING_H
#define TESSERA_LIB_TARGET_CUDA_KERNELBUILDING_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace tessera::cuda {

/// Index arithmetic at `b`'s insertion point (unsigned division and
/// comparison: every index a kernel computes is non-negative).
class KernelArith {
public:
  KernelArith(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  mlir::Value cst(int64_t v) {
    return mlir::arith::ConstantIndexOp::create(b, loc, v);
  }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, loc, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return mlir::arith::SubIOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulIOp::create(b, loc, x, y);
  }
  mlir::Value div(mlir::Value x, int64_t y) {
    return mlir::arith::DivUIOp::create(b, loc, x, cst(y));
  }
  mlir::Value rem(mlir::Value x, int64_t y) {
    return mlir::arith::RemUIOp::create(b, loc, x, cst(y));
  }
  mlir::Value lt(mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ult,
                                       x, y);
  }
  mlir::Value both(mlir::Value x, mlir::Value y) {
    return mlir::arith::AndIOp::create(b, loc, x, y);
  }
  mlir::Value select(mlir::Value cond, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, loc, cond, x, y);
  }

  /// Builds `then` for the lane whose `lane` is 0 only.
  void ifLaneZero(mlir::Value lane, llvm::function_ref<void()> then) {
    auto first = mlir::scf::IfOp::create(
        b, loc,
        mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::eq,
                                    lane, cst(0)),
        false);
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    then();
  }

  /// Accumulator tile `tile` (registers 4*tile .. 4*tile+3 of `acc`, f32,
  /// or i32 for s8 operands, wrapping) += A x B by one mma.sync of `shape`
  /// on `type` operands (A row-major, B column-major).
  void mma(llvm::SmallVectorImpl<mlir::Value> &acc, int64_t tile,
           mlir::ValueRange a, mlir::ValueRange bv,
           llvm::ArrayRef<int64_t> shape, mlir::NVVM::MMATypes type) {
    int64_t base = tile * 4;
    mlir::Type element = acc[base].getType();
    mlir::Type accType = mlir::LLVM::LLVMStructType::getLiteral(
        b.getContext(), {element, element, element, element});
    llvm::SmallVector<mlir::Value> opC(acc.begin() + base,
                                       acc.begin() + base + 4);
    std::optional<mlir::NVVM::MMAIntOverflow> overflow;
    if (element.isInteger(32))
      overflow = mlir::NVVM::MMAIntOverflow::wrapped;
    mlir::Value d = mlir::NVVM::MmaOp::create(
        b, loc, accType, a, bv, opC, shape, std::nullopt, overflow,
        std::array<mlir::NVVM::MMATypes, 2>{type, type},
        std::array<mlir::NVVM::MMALayout, 2>{mlir::NVVM::MMALayout::row,
                                             mlir::NVVM::MMALayout::col});
    for (int64_t r = 0; r < 4; ++r)
      acc[base + r] = mlir::LLVM::ExtractValueOp::create(b, loc, d, r);
  }

  /// The mma.sync operand register holding `pair` (a vector<2x`element`>,
  /// or vector<4xi8>): the pair itself for f16, its bits as an i32 for bf16
  /// and i8.
  mlir::Value operandRegister(mlir::Value pair, mlir::Type element) {
    if (mlir::isa<mlir::Float16Type>(element))
      return pair;
    mlir::Value word = mlir::vector::BitCastOp::create(
        b, loc, mlir::VectorType::get({1}, b.getI32Type()), pair);
    return mlir::vector::ExtractOp::create(b, loc, word, 0);
  }

  /// Operand register `index` of an ldmatrix result (vector<Nx2xelement>).
  mlir::Value operandRegister(mlir::Value fragment, int64_t index,
                              mlir::Type element) {
    return operandRegister(
        mlir::vector::ExtractOp::create(b, loc, fragment, index), element);
  }

  /// A 16-byte cp.async of `elements` elements from `src` at `srcIndices`
  /// into shared `dst` at `dstIndices`, all of them zero-filled when
  /// `valid` is false (the source index must then still be inside
  /// `src`: the caller clamps it).
  void copy16(mlir::Value dst, mlir::ValueRange dstIndices, mlir::Value src,
              mlir::ValueRange srcIndices, int64_t elements,
              mlir::Value valid) {
    mlir::nvgpu::DeviceAsyncCopyOp::create(
        b, loc, mlir::nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
        dstIndices, src, srcIndices, b.getIndexAttr(elements),
        select(valid, cst(elements), cst(0)), b.getUnitAttr());
  }

  /// ldmatrix.x4 of 8x8 16-bit words (two 16-bit `element`s, or four
  /// 8-bit ones, each) from shared `tile` at `indices`.
  mlir::Value ldmatrix4(mlir::Value tile, mlir::ValueRange indices,
                        mlir::Type element, bool transpose) {
    int64_t perWord = 32 / element.getIntOrFloatBitWidth();
    return mlir::nvgpu::LdMatrixOp::create(
        b, loc, mlir::VectorType::get({4, perWord}, element), tile, indices,
        transpose, /*numTiles=*/4);
  }

  mlir::NVVM::MMATypes mmaType(mlir::Type element) {
    return mlir::isa<mlir::Float16Type>(element) ? mlir::NVVM::MMATypes::f16
                                                 : mlir::NVVM::MMATypes::bf16;
  }

protected:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

} // namespace tessera::cuda

#endif // TESSERA_LIB_TARGET_CUDA_KERNELBUILDING_H
