//===- Einsum.cpp - ONNX Einsum as transposes, matmuls, products and sums --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The equation is normalized first: "..." becomes one digit per broadcast
// dim (right-aligned across operands, so they broadcast like numpy), and
// an implicit output is the letters used once, sorted, after the ellipsis
// dims. Each operand then takes its diagonals (a letter repeated: multiply
// by an identity mask, sum one of the two dims) and sums the letters no
// other term needs. Operands combine left to right: a (batched) matrix
// product when each of rows, columns and contracted dims is one letter,
// else a broadcast product summed over the contracted letters. A final
// transpose puts the output's order.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

static bool isLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

namespace {
struct Term {
  std::string letters;
  Value value;
};
} // namespace

/// The matrix product of Contraction.cpp (shape rule, result type).
Value buildMatmul(GraphImporter &im, Value lhs, Value rhs, bool transA,
                  bool transB, float alpha);

static Value permuteTo(GraphImporter &im, Value v, StringRef spec,
                       StringRef order) {
  SmallVector<int64_t> perm;
  for (char c : order)
    perm.push_back(spec.find(c));
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  return im.inferred<ts::TransposeOp>(v, perm);
}

/// Removes repeated letters (diagonals) and sums letters nobody else needs.
static LogicalResult reduceTerm(GraphImporter &im, Term &term,
                                StringRef needed) {
  for (size_t p = 0; p < term.letters.size(); ++p) {
    size_t q = term.letters.find(term.letters[p], p + 1);
    if (q == std::string::npos)
      continue;
    RankedTensorType type = tensorType(term.value);
    int64_t n = type.getDimSize(p);
    if (ShapedType::isDynamic(n) || n != type.getDimSize(q))
      return im.emitError() << "the diagonal of letter '" << term.letters[p]
                            << "' needs two equal static dims";
    // x * eye over dims p and q, then summed over q.
    SmallVector<int64_t> shape(type.getRank(), 1);
    shape[p] = shape[q] = n;
    auto maskType = RankedTensorType::get(shape, type.getElementType());
    SmallVector<Attribute> ones;
    Builder b(&im.context());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double v = i == j ? 1.0 : 0.0;
        ones.push_back(isa<FloatType>(type.getElementType())
                           ? Attribute(b.getFloatAttr(type.getElementType(), v))
                           : Attribute(b.getIntegerAttr(type.getElementType(),
                                                        static_cast<int64_t>(v))));
      }
    Value eye = im.create<ts::ConstantOp>(
        cast<ElementsAttr>(DenseElementsAttr::get(maskType, ones)));
    Value masked = im.inferred<ts::MulOp>(term.value, eye);
    if (!masked)
      return failure();
    term.value = im.inferred<ts::ReduceSumOp>(
        masked, ArrayRef<int64_t>{static_cast<int64_t>(q)}, false);
    if (!term.value)
      return failure();
    term.letters.erase(q, 1);
    --p; // the letter may repeat again
  }
  SmallVector<int64_t> summed;
  std::string kept;
  for (auto [i, c] : llvm::enumerate(term.letters)) {
    if (needed.contains(c))
      kept += c;
    else
      summed.push_back(i);
  }
  if (!summed.empty()) {
    term.value = im.inferred<ts::ReduceSumOp>(term.value, summed, false);
    if (!term.value)
      return failure();
    term.letters = kept;
  }
  return success();
}

/// lhs * rhs summed over the letters not in `out`; the result's letters are
/// `out`'s, in its order.
static FailureOr<Term> combine(GraphImporter &im, const Term &lhs,
                               const Term &rhs, StringRef out) {
  std::string batch, m, n, k;
  for (char c : lhs.letters) {
    bool inRhs = StringRef(rhs.letters).contains(c);
    bool inOut = out.contains(c);
    (inRhs ? (inOut ? batch : k) : m) += c;
  }
  for (char c : rhs.letters)
    if (!StringRef(lhs.letters).contains(c))
      n += c;
  if (m.size() == 1 && n.size() == 1 && k.size() == 1) {
    Value a = permuteTo(im, lhs.value, lhs.letters, batch + m + k);
    Value b = permuteTo(im, rhs.value, rhs.letters, batch + k + n);
    if (!a || !b)
      return failure();
    Value product = buildMatmul(im, a, b, false, false, 1.0f);
    if (!product)
      return failure();
    Value result = permuteTo(im, product, batch + m + n, out);
    if (!result)
      return failure();
    return Term{out.str(), result};
  }
  // A broadcast product over every letter (output first), then a sum.
  std::string all = out.str() + k;
  auto align = [&](const Term &t) -> Value {
    std::string order;
    for (char c : all)
      if (StringRef(t.letters).contains(c))
        order += c;
    Value v = permuteTo(im, t.value, t.letters, order);
    if (!v)
      return {};
    RankedTensorType type = tensorType(v);
    SmallVector<int64_t> shape;
    for (char c : all) {
      size_t at = order.find(c);
      shape.push_back(at == std::string::npos ? 1 : type.getDimSize(at));
    }
    if (shape.size() == static_cast<size_t>(type.getRank()))
      return v;
    return im.create<ts::ReshapeOp>(
        RankedTensorType::get(shape, type.getElementType()), v, Value());
  };
  Value a = align(lhs), b = align(rhs);
  if (!a || !b)
    return failure();
  Value product = im.inferred<ts::MulOp>(a, b);
  if (!product)
    return failure();
  if (!k.empty()) {
    SmallVector<int64_t> axes = llvm::to_vector(
        llvm::seq<int64_t>(out.size(), out.size() + k.size()));
    product = im.inferred<ts::ReduceSumOp>(product, axes, false);
    if (!product)
      return failure();
  }
  return Term{out.str(), product};
}

static LogicalResult convertEinsum(GraphImporter &im,
                                   const onnx::NodeProto &node) {
  std::string equation = im.stringAttr("equation", "");
  llvm::erase(equation, ' ');
  StringRef eq(equation);
  auto [inputs, output] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> specs;
  inputs.split(specs, ',');
  if (static_cast<int>(specs.size()) != node.input_size())
    return im.emitError() << "equation '" << equation << "' names "
                          << specs.size() << " operands, the node has "
                          << node.input_size();
  SmallVector<Term> terms;
  int64_t ellipsisDims = 0;
  for (auto [i, spec] : llvm::enumerate(specs)) {
    Value v = im.input(i);
    if (!v)
      return failure();
    int64_t letters = static_cast<int64_t>(spec.size()) -
                      (spec.contains("...") ? 3 : 0);
    int64_t rank = tensorType(v).getRank();
    if ((!spec.contains("...") && letters != rank) || letters > rank ||
        llvm::any_of(spec.str(), [](char c) {
          return !isLetter(c) && c != '.';
        }))
      return im.emitError() << "operand " << i << " of rank " << rank
                            << " does not match '" << spec
                            << "' in equation '" << equation << "'";
    if (spec.contains("..."))
      ellipsisDims = std::max(ellipsisDims, rank - letters);
    terms.push_back({spec.str(), v});
  }
  // "..." as digits, right-aligned: the last ellipsis dim of every operand
  // is digit ellipsisDims - 1.
  auto expand = [&](StringRef spec, int64_t count) {
    size_t at = spec.find("...");
    if (at == StringRef::npos)
      return spec.str();
    std::string digits;
    for (int64_t d = ellipsisDims - count; d < ellipsisDims; ++d)
      digits += static_cast<char>('0' + d);
    return (spec.take_front(at) + digits + spec.drop_front(at + 3)).str();
  };
  if (ellipsisDims > 10)
    return im.emitError() << "more than 10 dims under '...'";
  for (Term &t : terms) {
    int64_t rank = tensorType(t.value).getRank();
    t.letters = expand(t.letters, rank - (static_cast<int64_t>(t.letters.size()) - 3));
  }
  std::string out;
  if (explicitOutput) {
    out = expand(output, ellipsisDims);
  } else {
    // numpy's implicit output: ellipsis dims, then letters used once,
    // alphabetically.
    for (int64_t d = 0; d < ellipsisDims; ++d)
      out += static_cast<char>('0' + d);
    std::string once;
    for (char c = 'A'; c <= 'z'; ++c) {
      if (!isLetter(c))
        continue;
      int count = 0;
      for (const Term &t : terms)
        count += llvm::count(t.letters, c);
      if (count == 1)
        once += c;
    }
    out += once;
  }
  for (char c : out)
    if (llvm::count(out, c) != 1 ||
        llvm::none_of(terms, [&](const Term &t) {
          return StringRef(t.letters).contains(c);
        }))
      return im.emitError() << "output letter '" << c
                            << "' must appear once and in an operand, in '"
                            << equation << "'";
  // Each term keeps what the output or another term needs.
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string needed = out;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != i)
        needed += terms[j].letters;
    if (failed(reduceTerm(im, terms[i], needed)))
      return failure();
  }
  Term acc = terms.front();
  for (size_t i = 1; i < terms.size(); ++i) {
    // What later terms or the output need, in the order they appear.
    std::string later = out;
    for (size_t j = i + 1; j < terms.size(); ++j)
      later += terms[j].letters;
    std::string keep;
    for (char c : acc.letters + terms[i].letters)
      if (StringRef(later).contains(c) && !StringRef(keep).contains(c))
        keep += c;
    FailureOr<Term> next = combine(im, acc, terms[i], keep);
    if (failed(next))
      return failure();
    acc = *next;
  }
  return im.setOutput(0, permuteTo(im, acc.value, acc.letters, out));
}

void registerEinsumConverters(ConverterRegistry &r) {
  r["Einsum"] = convertEinsum;
}

} // namespace tessera::onnx_import
