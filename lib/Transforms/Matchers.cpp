//===- Matchers.cpp - matching helpers for the raising passes -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Matchers.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using llvm::APFloat;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::SmallVectorImpl;
using mlir::cast;
using mlir::DenseFPElementsAttr;
using mlir::dyn_cast;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

std::optional<double> tessera::splatValue(Value value) {
  auto constant = value.getDefiningOp<mlir::tessera::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !(dense.isSplat() || dense.getNumElements() == 1))
    return std::nullopt;
  return (*dense.value_begin<APFloat>()).convertToDouble();
}

bool tessera::isSplat(Value value, double expected, double relative) {
  std::optional<double> got = splatValue(value);
  if (!got)
    return false;
  if (expected == 0)
    return *got == 0;
  return std::fabs(*got - expected) <= relative * std::fabs(expected);
}

bool tessera::hasOneUse(Value value) { return value.hasOneUse(); }

static bool collect(Value value, SmallVectorImpl<Value> &factors,
                    SmallVectorImpl<Operation *> &ops, unsigned limit,
                    bool root) {
  auto mul = value.getDefiningOp<mlir::tessera::MulOp>();
  if (mul && (root || value.hasOneUse())) {
    ops.push_back(mul);
    return collect(mul.getLhs(), factors, ops, limit, false) &&
           collect(mul.getRhs(), factors, ops, limit, false);
  }
  factors.push_back(value);
  return factors.size() <= limit;
}

bool tessera::collectFactors(Value value, SmallVectorImpl<Value> &factors,
                             SmallVectorImpl<Operation *> &ops,
                             unsigned limit) {
  return collect(value, factors, ops, limit, true);
}

bool tessera::takeFactor(SmallVectorImpl<Value> &factors, Value value) {
  auto it = llvm::find(factors, value);
  if (it == factors.end())
    return false;
  factors.erase(it);
  return true;
}

bool tessera::takeSplatFactor(SmallVectorImpl<Value> &factors,
                              double expected) {
  auto it =
      llvm::find_if(factors, [&](Value v) { return isSplat(v, expected); });
  if (it == factors.end())
    return false;
  factors.erase(it);
  return true;
}

bool tessera::reducesLastAxis(mlir::tessera::ReduceMeanOp op) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  ArrayRef<int64_t> axes = op.getAxes();
  int64_t rank = type.getRank();
  return op.getKeepdims() && axes.size() == 1 &&
         (axes[0] == -1 || axes[0] == rank - 1);
}

bool tessera::isSquareOf(Value value, Value base) {
  if (auto pow = value.getDefiningOp<mlir::tessera::PowOp>())
    return pow.getLhs() == base && isSplat(pow.getRhs(), 2.0, 0);
  if (auto mul = value.getDefiningOp<mlir::tessera::MulOp>())
    return mul.getLhs() == base && mul.getRhs() == base;
  return false;
}

bool tessera::sameType(Value value, Value reference) {
  return value.getType() == reference.getType();
}

std::optional<llvm::SmallVector<float>>
tessera::floatElements(mlir::Value value) {
  auto constant = value.getDefiningOp<mlir::tessera::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto type = cast<mlir::ShapedType>(constant.getType());
  if (!type.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  llvm::SmallVector<float> out;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue())) {
    for (APFloat v : dense.getValues<APFloat>())
      out.push_back(v.convertToFloat());
    return out;
  }
  auto resource =
      dyn_cast<mlir::DenseResourceElementsAttr>(constant.getValue());
  mlir::AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return std::nullopt;
  ArrayRef<char> bytes = blob->getData();
  if (static_cast<int64_t>(bytes.size()) !=
      type.getNumElements() * static_cast<int64_t>(sizeof(float)))
    return std::nullopt;
  out.resize(type.getNumElements());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

/// The largest finite |x| of `values`.
static float largestFinite(ArrayRef<float> values) {
  float largest = 0;
  for (float element : values)
    if (std::isfinite(element))
      largest = std::max(largest, std::fabs(element));
  return largest;
}

std::optional<float> tessera::largestFiniteMagnitude(Value value) {
  if (std::optional<SmallVector<float>> values = ::tessera::floatElements(value))
    return largestFinite(*values);
  return std::nullopt;
}

mlir::func::FuncOp tessera::entryFunction(mlir::ModuleOp module) {
  for (auto func : module.getOps<mlir::func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      return func;
  return {};
}

llvm::LogicalResult tessera::appendNamedResults(
    mlir::func::FuncOp entry,
    llvm::ArrayRef<std::pair<std::string, mlir::Value>> results) {
  mlir::MLIRContext *context = entry.getContext();
  mlir::Operation *terminator = entry.getBody().back().getTerminator();
  for (const auto &[name, value] : results) {
    mlir::NamedAttribute attribute(
        mlir::StringAttr::get(context, "tessera.name"),
        mlir::StringAttr::get(context, name));
    if (mlir::failed(entry.insertResult(
            entry.getNumResults(), value.getType(),
            mlir::DictionaryAttr::get(context, {attribute}))))
      return mlir::failure();
    terminator->insertOperands(terminator->getNumOperands(), value);
  }
  return mlir::success();
}
