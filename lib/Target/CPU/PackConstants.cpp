//===- PackConstants.cpp - constant rhs panels packed at compile time ----===//
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

/// `constant` (a K x N matrix, or N x K when `transposed`), its columns
/// [first, first + n) as n / `width` contiguous K x `width` panels: a new
/// constant next to it; nothing when its bytes cannot be read.
Value packConstantPanels(RewriterBase &rewriter, arith::ConstantOp constant,
                         bool transposed, int64_t first, int64_t n,
                         int64_t width) {
  std::optional<ArrayRef<char>> bytes = constantBytes(constant.getValue());
  if (!bytes)
    return {};
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  if (!type || type.getRank() != 2)
    return {};
  int64_t k = type.getDimSize(transposed ? 1 : 0);
  int64_t total = type.getDimSize(transposed ? 0 : 1);
  int64_t size = type.getElementTypeBitWidth() / 8;
  if (static_cast<int64_t>(bytes->size()) != k * total * size ||
      first + n > total)
    return {};
  // Written straight into the blob the new constant owns.
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(k * n * size, 64);
  MutableArrayRef<char> panels = blob.getMutableData();
  int64_t row = width * size;
  for (int64_t panel = 0; panel < n / width; ++panel)
    for (int64_t i = 0; i < k; ++i) {
      char *to = &panels[(panel * k + i) * row];
      int64_t column = first + panel * width;
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
  auto attr = DenseResourceElementsAttr::get(flatType, "tessera_packed_rhs",
                                             std::move(blob));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(constant);
  Value flat = arith::ConstantOp::create(rewriter, constant.getLoc(), attr);
  auto packedType =
      RankedTensorType::get({n / width, k, width}, type.getElementType());
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

} // namespace

Value packConstantRhs(RewriterBase &rewriter, linalg::GenericOp op,
                      int64_t width, llvm::DenseMap<PackedKey, Value> &packed,
                      llvm::SetVector<BlockArgument> &packedArguments) {
  unsigned loops = op.getNumLoops();
  MLIRContext *ctx = op.getContext();
  AffineMap expected = AffineMap::get(
      loops, 0,
      {getAffineDimExpr(loops - 2, ctx), getAffineDimExpr(loops - 1, ctx)},
      ctx);
  if (op.getIndexingMapsArray()[1] != expected)
    return {};
  // A slice of whole columns (the part of a split contraction), or a slice
  // of one (a part of a part: 1000 columns are 960, then 32 and 8): the
  // offsets add up.
  Value rhs = op.getDpsInputs()[1];
  int64_t first = 0;
  while (auto slice = rhs.getDefiningOp<tensor::ExtractSliceOp>()) {
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    if (!slice.hasUnitStride() || slice.getSourceType().getRank() != 2 ||
        offsets[0] != 0 || ShapedType::isDynamic(offsets[1]) ||
        slice.getSourceType().getDimSize(0) != slice.getType().getDimSize(0))
      return {};
    first += offsets[1];
    rhs = slice.getSource();
  }
  // The constant itself, or a constant N x K matrix transposed (a matmul
  // with transpose_b): the panels are read from it column-wise.
  Value whole = rhs;
  bool transposed = false;
  if (auto transpose = rhs.getDefiningOp<linalg::TransposeOp>();
      transpose && transpose.getPermutation() == ArrayRef<int64_t>{1, 0}) {
    rhs = transpose.getInput();
    transposed = true;
  }
  int64_t n =
      cast<RankedTensorType>(op.getDpsInputs()[1].getType()).getDimSize(1);
  PackedKey key{whole, 0, first, width};
  if (Value known = packed.lookup(key))
    return known;
  if (auto constant = rhs.getDefiningOp<arith::ConstantOp>()) {
    Value result =
        packConstantPanels(rewriter, constant, transposed, first, n, width);
    if (result)
      packed[key] = result;
    return result;
  }
  auto argument = dyn_cast<BlockArgument>(rhs);
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
    PackedKey constantKey{constant.getResult(), transposed ? 1 : 0, first,
                          width};
    Value panel = packed.lookup(constantKey);
    if (!panel) {
      panel =
          packConstantPanels(rewriter, constant, transposed, first, n, width);
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
