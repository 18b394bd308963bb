//===- MatrixVector.cpp - a matrix times a vector as a GEMV kernel --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// For a block of R rows (8 on AVX-512, 4 on AVX2) at row i:
//
//   acc[R x L] = 0
//   for k in [0, K - K % L) step L:    // L lanes: 16 (AVX-512), 8 (AVX2)
//     acc += matrix[i : i + R, k : k + L] * broadcast(x[k : k + L])
//   sum[r] = reduce_add(acc[r]) + the k values after the last whole vector
//   out[i : i + R] = init[i : i + R] + sum
//
// Blocks of R rows run in parallel; the rows no block fills run as blocks
// of one row. Each step loads the vector's L values once for R rows, and
// the matrix is read row by row in order.
//
//===----------------------------------------------------------------------===//
#include "MatrixVector.h"
#include "RowTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace tessera::cpu {
namespace {

/// Whether the body of `op` yields acc + a * b (in either order) of its
/// two inputs and its accumulator.
bool addsProduct(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  BlockArgument acc = body.getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto multiply = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!multiply || body.getOperations().size() != 3)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (multiply.getLhs() == a && multiply.getRhs() == b) ||
         (multiply.getLhs() == b && multiply.getRhs() == a);
}

} // namespace

bool isMatrixTimesVector(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return false;
  unsigned loops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (loops < 2 || op.getNumReductionLoops() != 1 ||
      iterators.back() != utils::IteratorType::reduction)
    return false;
  for (Value operand : op->getOperands())
    if (!isa<RankedTensorType>(operand.getType()) ||
        !getElementTypeOrSelf(operand).isF32())
      return false;
  MLIRContext *ctx = op.getContext();
  AffineMap matrix = AffineMap::getMultiDimIdentityMap(loops, ctx);
  AffineMap vectorMap =
      AffineMap::get(loops, 0, getAffineDimExpr(loops - 1, ctx));
  AffineMap rows = matrix.getMajorSubMap(loops - 1);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool inOrder = maps[0] == matrix && maps[1] == vectorMap;
  bool swapped = maps[0] == vectorMap && maps[1] == matrix;
  return (inOrder || swapped) && maps[2] == rows && addsProduct(op);
}

void lowerMatrixTimesVector(RewriterBase &rewriter, linalg::GenericOp op,
                            int64_t rows, int64_t lanes) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  unsigned loops = op.getNumLoops();
  bool matrixFirst = op.getIndexingMapsArray()[0].getNumResults() == loops;
  Value matrix = op.getDpsInputs()[matrixFirst ? 0 : 1];
  Value vectorOperand = op.getDpsInputs()[matrixFirst ? 1 : 0];
  Value init = op.getDpsInits()[0];
  // The rows' dims as one: [M, K] times [K] into [M].
  SmallVector<ReassociationIndices> rowGroup = {
      llvm::to_vector(llvm::seq<int64_t>(0, loops - 1))};
  if (loops > 2) {
    SmallVector<ReassociationIndices> matrixGroups = rowGroup;
    matrixGroups.push_back({static_cast<int64_t>(loops - 1)});
    matrix =
        tensor::CollapseShapeOp::create(rewriter, loc, matrix, matrixGroups);
    init = tensor::CollapseShapeOp::create(rewriter, loc, init, rowGroup);
  }

  Type f32 = rewriter.getF32Type();
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0.0f));
  auto index = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto matrixType = cast<RankedTensorType>(matrix.getType());
  int64_t staticRows = matrixType.getDimSize(0),
          staticK = matrixType.getDimSize(1);
  Value m = linalg::createOrFoldDimOp(rewriter, loc, matrix, 0);
  Value k = linalg::createOrFoldDimOp(rewriter, loc, matrix, 1);
  // The ends of the whole blocks of rows and of the whole vectors of k.
  auto wholeOf = [&](Value size, int64_t step) -> Value {
    Value rest =
        rewriter.createOrFold<arith::RemUIOp>(loc, size, index(rewriter, step));
    return rewriter.createOrFold<arith::SubIOp>(loc, size, rest);
  };
  Value rowsEnd = wholeOf(m, rows), kEnd = wholeOf(k, lanes);
  bool kTail = ShapedType::isDynamic(staticK) || staticK % lanes != 0;

  // The `count` sums of the rows from `row` into the slice of `out` there.
  auto rowBlock = [&](OpBuilder &b, Value row, int64_t count,
                      Value out) -> Value {
    auto accType = VectorType::get({count, lanes}, f32);
    auto laneType = VectorType::get({lanes}, f32);
    Value accInit =
        arith::ConstantOp::create(b, loc, accType, b.getZeroAttr(accType));
    auto kLoop = scf::ForOp::create(
        b, loc, index(b, 0), kEnd, index(b, lanes), ValueRange{accInit},
        [&](OpBuilder &lb, Location l, Value kk, ValueRange acc) {
          Value block = vector::TransferReadOp::create(
              lb, l, accType, matrix, ValueRange{row, kk}, zero,
              ArrayRef<bool>{true, true});
          Value x = vector::TransferReadOp::create(
              lb, l, laneType, vectorOperand, ValueRange{kk}, zero,
              ArrayRef<bool>{true});
          Value xs = vector::BroadcastOp::create(lb, l, accType, x);
          scf::YieldOp::create(
              lb, l,
              ValueRange{
                  vector::FMAOp::create(lb, l, block, xs, acc[0]).getResult()});
        });
    SmallVector<Value> sums;
    for (int64_t r = 0; r < count; ++r) {
      Value lanesOfRow = vector::ExtractOp::create(b, loc, kLoop.getResult(0),
                                                   ArrayRef<int64_t>{r});
      sums.push_back(vector::ReductionOp::create(
          b, loc, vector::CombiningKind::ADD, lanesOfRow,
          arith::FastMathFlags::reassoc));
    }
    if (kTail) {
      auto tail = scf::ForOp::create(
          b, loc, kEnd, k, index(b, 1), sums,
          [&](OpBuilder &lb, Location l, Value kk, ValueRange acc) {
            Value x =
                tensor::ExtractOp::create(lb, l, vectorOperand, ValueRange{kk});
            SmallVector<Value> next;
            for (int64_t r = 0; r < count; ++r) {
              Value at = arith::AddIOp::create(lb, l, row, index(lb, r));
              Value a =
                  tensor::ExtractOp::create(lb, l, matrix, ValueRange{at, kk});
              next.push_back(arith::AddFOp::create(
                  lb, l, acc[r], arith::MulFOp::create(lb, l, a, x)));
            }
            scf::YieldOp::create(lb, l, next);
          });
      sums.assign(tail.getResults().begin(), tail.getResults().end());
    }
    auto sliceType = RankedTensorType::get({count}, f32);
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, sliceType, out, ArrayRef<OpFoldResult>{row},
        ArrayRef<OpFoldResult>{b.getIndexAttr(count)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    auto rowType = VectorType::get({count}, f32);
    Value initial = vector::TransferReadOp::create(b, loc, rowType, slice,
                                                   ValueRange{index(b, 0)},
                                                   zero, ArrayRef<bool>{true});
    Value total = arith::AddFOp::create(
        b, loc, initial, vector::FromElementsOp::create(b, loc, rowType, sums));
    return vector::TransferWriteOp::create(b, loc, total, slice,
                                           ValueRange{index(b, 0)},
                                           ArrayRef<bool>{true})
        .getResult();
  };
  // The rows from `begin` to `end` in parallel blocks of `count`.
  auto inParallel = [&](Value out, Value begin, Value end,
                        int64_t count) -> Value {
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{getAsOpFoldResult(begin)},
        ArrayRef<OpFoldResult>{getAsOpFoldResult(end)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(count)}, ValueRange{out},
        std::nullopt);
    OpBuilder::InsertionGuard bodyGuard(rewriter);
    rewriter.setInsertionPoint(forall.getTerminator());
    Value row = forall.getInductionVars()[0];
    Value shared = forall.getRegionIterArgs()[0];
    Value block = rowBlock(rewriter, row, count, shared);
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, block, shared, ArrayRef<OpFoldResult>{row},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(count)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    return forall.getResult(0);
  };

  Value result = init;
  if (ShapedType::isDynamic(staticRows) || staticRows >= rows)
    result = inParallel(result, index(rewriter, 0), rowsEnd, rows);
  if (ShapedType::isDynamic(staticRows) || staticRows % rows != 0)
    result = inParallel(result, rowsEnd, m, 1);
  Value flat = result;
  if (loops > 2)
    result = tensor::ExpandShapeOp::create(
        rewriter, loc, op.getResult(0).getType(), result, rowGroup,
        tensor::getMixedSizes(rewriter, loc, op.getDpsInits()[0]));
  rewriter.replaceOp(op, result);
  if (loops > 2)
    reshapeInsteadOfExpand(rewriter, flat);
}

} // namespace tessera::cpu
