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
/// products and softmax.
void populateTesseraToLinalgConversionPatterns(
    mlir::RewritePatternSet &patterns, bool tiledAttention = true,
    std::pair<int64_t, int64_t> attentionBlocks = {64, 128});

#define GEN_PASS_REGISTRATION
#include "tessera/Conversion/Passes.h.inc"

} // namespace tessera

#endif // TESSERA_CONVERSION_PASSES_H
