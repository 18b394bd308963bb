//===- Passes.h - Tessera's conversion passes -----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_CONVERSION_PASSES_H
#define TESSERA_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "tessera/Dialect/Systolic/IR/SystolicDialect.h"

#include <cstdint>
#include <utility>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace tessera {

#define GEN_PASS_DECL
#include "tessera/Conversion/Passes.h.inc"

/// Adds the patterns that lower tessera ops to linalg, tensor, arith and
/// math (one populate function per op family, collected here).
/// With `tiledAttention`, attention lowers to one tiled loop nest with an
/// online softmax where its shapes allow (a CPU kernel), in blocks of
/// `attentionBlocks` (queries, keys) for static sequences; otherwise to its
/// products and softmax. With `fp8Operands`, a matmul's fp8 operands stay
/// fp8 in its contraction (widened by arith.extf in the body) instead of
/// being decoded to bf16 first. Depthwise convolutions and max pools whose
/// stride along the rows is at most `maxWindowStride` read their windows'
/// rows at the stride; wider ones compute every column and subsample.
void populateTesseraToLinalgConversionPatterns(
    mlir::RewritePatternSet &patterns, bool tiledAttention = true,
    std::pair<int64_t, int64_t> attentionBlocks = {64, 128},
    bool fp8Operands = false, int64_t maxWindowStride = 1);

/// `value` (a scalar) converted to `to` as the lowering's casts convert it:
/// float widening and narrowing by arith, and fp8 (E4M3FN, E5M2) from and to
/// f32 by integer arithmetic, exactly and rounding to nearest even with
/// saturation, since LLVM has no fp8 types.
mlir::Value castElement(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value value, mlir::Type to);

#define GEN_PASS_REGISTRATION
#include "tessera/Conversion/Passes.h.inc"

} // namespace tessera

#endif // TESSERA_CONVERSION_PASSES_H
