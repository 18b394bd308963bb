//===- Utils.h - builders shared by the tessera-to-linalg lowerings -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_CONVERSION_TESSERATOLINALG_UTILS_H
#define TESSERA_LIB_CONVERSION_TESSERATOLINALG_UTILS_H

#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

#include "tessera/Support/ShapeInference.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace tessera::to_linalg {

using namespace mlir;

/// Builds the scalar computation of a linalg.generic body.
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// tensor.empty of `type`, its dynamic dims given in order.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange dynamicSizes);

/// The dynamic dims of an elementwise result, read from the operands
/// aligned numpy-style (trailing dims). A dynamic dim is taken from the
/// first operand whose aligned dim is not a static 1.
SmallVector<Value> broadcastDynamicSizes(OpBuilder &b, Location loc,
                                         RankedTensorType result,
                                         ValueRange operands);

/// The indexing map reading `operand` inside a loop nest over `result`:
/// dims aligned at the back, static unit dims broadcast (constant 0).
AffineMap broadcastMap(MLIRContext *context, ShapedType operand,
                       ShapedType result);

/// A parallel linalg.generic over `resultType` reading `inputs` (through
/// `maps`, or broadcast maps when empty) and computing `body` per element.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyFn body,
                       ArrayRef<AffineMap> maps = {});

enum class ReduceKind { Sum, Max, Min, Prod };

/// The identity of a reduction: 0, 1, or the lowest / highest value.
Value buildReductionIdentity(OpBuilder &b, Location loc, Type type,
                             ReduceKind kind);

/// Reduces `input` over the sorted `dims` with `kind`; the result drops them.
Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> dims, ReduceKind kind);

/// Reinserts unit dims at positions `dims` (sorted, in the result) into
/// `value` with expand_shape: the keepdims form of a reduction.
Value expandUnitDims(OpBuilder &b, Location loc, Value value,
                     ArrayRef<int64_t> dims);

/// The number of elements of `tensor` over `dims`, as a scalar of `type`.
Value elementCount(OpBuilder &b, Location loc, Value tensor,
                   ArrayRef<int64_t> dims, Type type);

/// A scalar constant of an int or float type.
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);

/// Converts a scalar between int and float types (ONNX Cast semantics:
/// floats truncate toward zero into ints, i1 is a test for non-zero; into
/// fp8, saturating unless `saturate` is false, see tessera.cast).
Value castScalar(OpBuilder &b, Location loc, Value value, Type to,
                 bool saturate = true);

/// Scalar arithmetic that picks the int or float arith op.
Value addScalar(OpBuilder &b, Location loc, Value x, Value y);
Value mulScalar(OpBuilder &b, Location loc, Value x, Value y);

/// The size of a convolution's or pooling's output along one spatial dim at
/// run time, as tessera::poolOutputSize computes it at compile time:
/// floor((in + pads - span) / stride) + 1 (rounded up with `ceilMode`,
/// dropping a last window that would start in the end padding), 0 when the
/// padded input is shorter than the window's span.
Value windowOutputSize(OpBuilder &b, Location loc, Value input,
                       int64_t kernel, int64_t stride, int64_t padBegin,
                       int64_t padEnd, int64_t dilation, bool ceilMode);

/// The columns a window op computes at stride 1 to take every `stride`-th
/// of `columns` outputs afterwards: (columns - 1) * stride + 1, none when
/// there are none (static when `columns` is).
OpFoldResult strideOneColumns(OpBuilder &b, Location loc, OpFoldResult columns,
                              int64_t stride);

/// Why the tiled attention lowering does not take `op` (it is lowered to
/// its two products and a softmax instead); nothing when it does.
std::optional<std::string> whyAttentionNotTiled(mlir::tessera::AttentionOp op);

// Pattern registration, one function per op family.
void populateElementwisePatterns(RewritePatternSet &patterns);
void populateContractionPatterns(RewritePatternSet &patterns, bool fp8Operands,
                                 int64_t maxWindowStride);
/// `blocks`: the preferred (queries, keys) per block for static sequences.
void populateAttentionPatterns(RewritePatternSet &patterns,
                               std::pair<int64_t, int64_t> blocks);
void populateReductionPatterns(RewritePatternSet &patterns);
void populateDataMovementPatterns(RewritePatternSet &patterns);
void populatePoolingPatterns(RewritePatternSet &patterns,
                             int64_t maxWindowStride);
void populatePadPatterns(RewritePatternSet &patterns);
void populateIndexingPatterns(RewritePatternSet &patterns);
void populateResizePatterns(RewritePatternSet &patterns);

} // namespace tessera::to_linalg

#endif // TESSERA_LIB_CONVERSION_TESSERATOLINALG_UTILS_H
