//===- PackConstants.cpp - constant operands packed at compile time -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "PackConstants.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>

using namespace mlir;

namespace tessera::cpu {
namespace {

/// The bytes of a constant's elements in row-major order, or nothing for
/// splats and sub-byte element types.
std::optional<ArrayRef<char>> constantBytes(Attribute value) {
  auto type = cast<ShapedType>(cast<TypedAttr>(value).getType());
  if (type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    return blob->getData();
  }
  if (auto dense = dyn_cast<DenseElementsAttr>(value);
      dense && !dense.isSplat())
    return dense.getRawData();
  return std::nullopt;
}

/// `constant` viewed as the 2-d `type` (a K x N matrix, or N x K when
/// `transposed`; its own type, or the collapse of a convolution's filters),
/// its columns [first, first + n) as n / `width` contiguous K x `width`
/// panels: a new constant next to it, its blob named `name`; nothing when
/// its bytes cannot be read. (An lhs's 8-row tiles are the panels of its
/// transpose.) With `group` > 1 (dividing K), each panel holds its rows in
/// groups, [K/group, width, group]: a column's `group` k values side by
/// side, as vdpbf16ps (pairs) and vpdpbusd (fours) read them.
Value packConstantPanels(RewriterBase &rewriter, arith::ConstantOp constant,
                         RankedTensorType type, bool transposed, int64_t first,
                         int64_t n, int64_t width, StringRef name, int64_t group) {
  std::optional<ArrayRef<char>> bytes = constantBytes(constant.getValue());
  if (!bytes)
    return {};
  if (type.getRank() != 2 || !type.hasStaticShape())
    return {};
  int64_t k = type.getDimSize(transposed ? 1 : 0);
  int64_t total = type.getDimSize(transposed ? 0 : 1);
  int64_t size = type.getElementTypeBitWidth() / 8;
  if (static_cast<int64_t>(bytes->size()) != k * total * size ||
      first + n > total || k % group != 0)
    return {};
  // Written straight into the blob the new constant owns.
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(k * n * size, 64);
  MutableArrayRef<char> panels = blob.getMutableData();
  int64_t row = width * size;
  for (int64_t panel = 0; panel < n / width; ++panel)
    for (int64_t i = 0; i < k; ++i) {
      int64_t column = first + panel * width;
      if (group > 1) {
        // Element (i, c) at [i / group][c][i % group] of the panel.
        char *rows = &panels[((panel * k + i / group * group) * width) * size];
        for (int64_t c = 0; c < width; ++c) {
          int64_t from =
              transposed ? (column + c) * k + i : i * total + column + c;
          std::memcpy(rows + (group * c + i % group) * size,
                      bytes->data() + from * size, size);
        }
        continue;
      }
      char *to = &panels[(panel * k + i) * row];
      if (!transposed) {
        std::memcpy(to, bytes->data() + (i * total + column) * size, row);
        continue;
      }
      for (int64_t c = 0; c < width; ++c)
        std::memcpy(to + c * size,
                    bytes->data() + ((column + c) * k + i) * size, size);
    }
  // One flat array, viewed as panels: LLVM makes a constant of every row
  // of a nested array (16,000 for one layer of a ViT-B/16), and building,
  // uniquing and freeing them cost seconds per model.
  auto flatType = RankedTensorType::get({n * k}, type.getElementType());
  auto attr = DenseResourceElementsAttr::get(flatType, name, std::move(blob));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(constant);
  Value flat = arith::ConstantOp::create(rewriter, constant.getLoc(), attr);
  auto packedType = RankedTensorType::get(
      {n / width, k / group, group * width}, type.getElementType());
  return tensor::ExpandShapeOp::create(rewriter, constant.getLoc(), packedType,
                                       flat,
                                       ArrayRef<ReassociationIndices>{{0, 1, 2}});
}

/// The calls of `func` (a private function), when every use of it is a
/// call with one operand per argument; nothing otherwise.
std::optional<SmallVector<func::CallOp>> callsOf(func::FuncOp func) {
  if (!func.isPrivate())
    return std::nullopt;
  auto module = func->getParentOfType<ModuleOp>();
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(func, module);
  if (!uses)
    return std::nullopt;
  SmallVector<func::CallOp> calls;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call || call.getNumOperands() != func.getNumArguments())
      return std::nullopt;
    calls.push_back(call);
  }
  if (calls.empty())
    return std::nullopt;
  return calls;
}

/// The calls of `func`, when each passes a constant as argument `index`.
std::optional<SmallVector<func::CallOp>>
callsPassingConstants(func::FuncOp func, unsigned index) {
  std::optional<SmallVector<func::CallOp>> calls = callsOf(func);
  if (!calls || llvm::any_of(*calls, [&](func::CallOp call) {
        return !call.getOperand(index).getDefiningOp<arith::ConstantOp>();
      }))
    return std::nullopt;
  return calls;
}

/// The columns [first, first + n) of `matrix` (K x N, or N x K read
/// column-wise when `transposed`) as n / `width` contiguous K x `width`
/// panels (blobs named `name`), when `matrix` is a constant, or an
/// argument of a private function to which every call passes a constant
/// (then each call passes its constant packed, as a new argument). Cached
/// in `packed` under `whole` (what the contraction reads, before slices)
/// and `layout` (0: panels of its columns; 1: of its rows, an lhs's row
/// tiles), and under each constant and whether it is read column-wise
/// (plus twice the rows of the view a collapse makes of it).
Value packMatrix(RewriterBase &rewriter, Value whole, int64_t layout,
                 Value matrix, bool transposed, int64_t first, int64_t n,
                 int64_t width, StringRef name, int64_t group,
                 llvm::DenseMap<PackedKey, Value> &packed,
                 llvm::SetVector<BlockArgument> &packedArguments) {
  // Panels in groups of rows are keyed by their width and group, negated.
  int64_t widthKey = group > 1 ? -(width * 8 + group) : width;
  PackedKey key{whole, layout, first, widthKey};
  if (Value known = packed.lookup(key))
    return known;
  // A collapse (a convolution's filters as [F, C * KH * KW]) keeps the
  // bytes in order: the panels are read from what it collapses.
  auto type = dyn_cast<RankedTensorType>(matrix.getType());
  if (!type)
    return {};
  // One constant collapsed two ways packs twice: keyed by the view's rows.
  int64_t view = 0;
  while (auto collapse = matrix.getDefiningOp<tensor::CollapseShapeOp>()) {
    matrix = collapse.getSrc();
    view = 2 * type.getDimSize(0);
  }
  if (auto constant = matrix.getDefiningOp<arith::ConstantOp>()) {
    Value result = packConstantPanels(rewriter, constant, type, transposed,
                                      first, n, width, name, group);
    if (result)
      packed[key] = result;
    return result;
  }
  auto argument = dyn_cast<BlockArgument>(matrix);
  auto func = argument ? dyn_cast<func::FuncOp>(
                             argument.getOwner()->getParentOp())
                       : nullptr;
  if (!func || argument.getOwner() != &func.getBody().front())
    return {};
  std::optional<SmallVector<func::CallOp>> calls =
      callsPassingConstants(func, argument.getArgNumber());
  if (!calls)
    return {};
  SmallVector<Value> panels;
  SmallVector<PackedKey> fresh;
  for (func::CallOp call : *calls) {
    auto constant =
        call.getOperand(argument.getArgNumber()).getDefiningOp<arith::ConstantOp>();
    if (constant.getType() != argument.getType())
      return {};
    PackedKey constantKey{constant.getResult(), (transposed ? 1 : 0) + view,
                          first, widthKey};
    Value panel = packed.lookup(constantKey);
    if (!panel) {
      panel = packConstantPanels(rewriter, constant, type, transposed, first, n,
                                 width, name, group);
      if (panel) {
        packed[constantKey] = panel;
        fresh.push_back(constantKey);
      }
    }
    if (!panel) {
      // Only the panels packed here go; cached ones serve other calls.
      for (const PackedKey &made : fresh) {
        Operation *view = packed.lookup(made).getDefiningOp();
        packed.erase(made);
        Operation *flat = view->getOperand(0).getDefiningOp();
        rewriter.eraseOp(view);
        rewriter.eraseOp(flat);
      }
      return {};
    }
    panels.push_back(panel);
  }
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(index, panels.front().getType(),
                                 DictionaryAttr(), argument.getLoc())))
    return {};
  for (auto [call, panel] : llvm::zip_equal(*calls, panels)) {
    Operation *caller = call;
    Value operand = panel;
    rewriter.modifyOpInPlace(caller, [&] {
      caller->insertOperands(caller->getNumOperands(), operand);
    });
  }
  Value result = func.getArgument(index);
  packedArguments.insert(argument);
  packedArguments.insert(cast<BlockArgument>(result));
  packed[key] = result;
  return result;
}

/// Follows a chain of unit-stride slices of `value` that keep all of dim
/// `1 - dim` and slice dim `dim` at static offsets (the parts of a split
/// contraction, and parts of those): the sliced 2-d tensor, and the sum
/// of the offsets in `first`; nothing for any other slice.
std::optional<Value> unslice(Value value, unsigned dim, int64_t &first) {
  first = 0;
  while (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    unsigned kept = 1 - dim;
    if (!slice.hasUnitStride() || slice.getSourceType().getRank() != 2 ||
        offsets[kept] != 0 || ShapedType::isDynamic(offsets[dim]) ||
        slice.getSourceType().getDimSize(kept) !=
            slice.getType().getDimSize(kept))
      return std::nullopt;
    first += offsets[dim];
    value = slice.getSource();
  }
  return value;
}

/// Whether input `index` of `op` is read as (loop `rows`, loop `rows` + 1),
/// a 2-d matrix indexed by two adjacent loops.
bool readsAsMatrix(linalg::GenericOp op, unsigned index, unsigned rows) {
  MLIRContext *ctx = op.getContext();
  AffineMap expected = AffineMap::get(
      op.getNumLoops(), 0,
      {getAffineDimExpr(rows, ctx), getAffineDimExpr(rows + 1, ctx)}, ctx);
  return op.getIndexingMapsArray()[index] == expected;
}

/// The constant (or argument) `value` transposes with a 2-d
/// linalg.transpose, or null.
Value transposed2d(Value value) {
  auto transpose = value.getDefiningOp<linalg::TransposeOp>();
  if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
    return {};
  return transpose.getInput();
}

} // namespace

Value packConstantRhs(RewriterBase &rewriter, linalg::GenericOp op,
                      int64_t width, int64_t group,
                      llvm::DenseMap<PackedKey, Value> &packed,
                      llvm::SetVector<BlockArgument> &packedArguments) {
  if (!readsAsMatrix(op, 1, op.getNumLoops() - 2))
    return {};
  // A slice of whole columns (the part of a split contraction), or a slice
  // of one (a part of a part: 1000 columns are 960, then 32 and 8): the
  // offsets add up.
  int64_t first = 0;
  std::optional<Value> whole = unslice(op.getDpsInputs()[1], 1, first);
  if (!whole)
    return {};
  // The constant itself, or a constant N x K matrix transposed (a matmul
  // with transpose_b): the panels are read from it column-wise.
  Value rhs = transposed2d(*whole);
  bool transposed = static_cast<bool>(rhs);
  if (!rhs)
    rhs = *whole;
  int64_t n =
      cast<RankedTensorType>(op.getDpsInputs()[1].getType()).getDimSize(1);
  return packMatrix(rewriter, *whole, 0, rhs, transposed, first, n, width,
                    "tessera_packed_rhs", group, packed, packedArguments);
}

Value packConstantLhs(RewriterBase &rewriter, linalg::GenericOp op,
                      int64_t rows, llvm::DenseMap<PackedKey, Value> &packed,
                      llvm::SetVector<BlockArgument> &packedArguments) {
  if (!readsAsMatrix(op, 0, op.getNumLoops() - 3))
    return {};
  auto type = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  if (!type || !type.hasStaticShape() || type.getDimSize(0) % rows != 0)
    return {};
  // A slice of whole rows (the part of a split contraction), or a slice of
  // one: the offsets add up.
  int64_t first = 0;
  std::optional<Value> whole = unslice(op.getDpsInputs()[0], 0, first);
  if (!whole)
    return {};
  // The 8-row tiles of an M x K matrix are the panels of its transpose:
  // read column-wise from the constant itself, row-wise from a constant
  // K x M matrix that a transpose reads (a matmul with transpose_a).
  Value lhs = transposed2d(*whole);
  bool transposed = !lhs;
  if (!lhs)
    lhs = *whole;
  return packMatrix(rewriter, *whole, 1, lhs, transposed, first,
                    type.getDimSize(0), rows, "tessera_packed_lhs",
                    /*group=*/1, packed, packedArguments);
}

void dropPackedArguments(RewriterBase &rewriter, func::FuncOp func,
                         ArrayRef<BlockArgument> arguments) {
  SmallVector<unsigned> unused;
  for (BlockArgument argument : arguments) {
    SetVector<Operation *> readers;
    getForwardSlice(argument, &readers);
    for (Operation *reader : llvm::reverse(readers))
      if (isOpTriviallyDead(reader))
        rewriter.eraseOp(reader);
    if (argument.use_empty())
      unused.push_back(argument.getArgNumber());
  }
  if (unused.empty())
    return;
  llvm::sort(unused, std::greater<unsigned>());
  std::optional<SmallVector<func::CallOp>> calls = callsOf(func);
  if (!calls)
    return;
  for (unsigned index : unused) {
    if (failed(func.eraseArgument(index)))
      return;
    for (func::CallOp call : *calls)
      rewriter.modifyOpInPlace(call, [&] { call->eraseOperand(index); });
  }
}

} // namespace tessera::cpu
