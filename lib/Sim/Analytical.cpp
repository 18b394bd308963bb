//===- Analytical.cpp - the analytical compute model of a systolic array --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Analytical.h"

#include <algorithm>

using namespace tessera::sim;

namespace {
/// Sizes beyond this could overflow the cycle products.
constexpr int64_t kMaxDim = int64_t(1) << 24;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::optional<std::string> checkDim(const char *name, int64_t value) {
  if (value <= 0)
    return std::string(name) + " must be positive (got " +
           std::to_string(value) + ")";
  if (value > kMaxDim)
    return std::string(name) + " is too large (" + std::to_string(value) +
           " > " + std::to_string(kMaxDim) + ")";
  return std::nullopt;
}
} // namespace

std::optional<Dataflow> tessera::sim::parseDataflow(std::string_view name) {
  if (name == "os")
    return Dataflow::OutputStationary;
  if (name == "ws")
    return Dataflow::WeightStationary;
  if (name == "is")
    return Dataflow::InputStationary;
  return std::nullopt;
}

const char *tessera::sim::dataflowName(Dataflow dataflow) {
  switch (dataflow) {
  case Dataflow::OutputStationary:
    return "os";
  case Dataflow::WeightStationary:
    return "ws";
  case Dataflow::InputStationary:
    return "is";
  }
  return "?";
}

Result<GemmShape> tessera::sim::convToGemm(const ConvShape &conv) {
  for (auto [name, value] :
       {std::pair("H", conv.h), std::pair("W", conv.w),
        std::pair("Fh", conv.fh), std::pair("Fw", conv.fw),
        std::pair("Cin", conv.cin), std::pair("Nf", conv.nf),
        std::pair("stride", conv.stride)})
    if (auto error = checkDim(name, value))
      return *error;
  if (conv.fh > conv.h || conv.fw > conv.w)
    return std::string("the filter (") + std::to_string(conv.fh) + "x" +
           std::to_string(conv.fw) + ") is larger than the input (" +
           std::to_string(conv.h) + "x" + std::to_string(conv.w) + ")";
  int64_t eh = ceilDiv(conv.h - conv.fh + conv.stride, conv.stride);
  int64_t ew = ceilDiv(conv.w - conv.fw + conv.stride, conv.stride);
  GemmShape gemm;
  gemm.m = eh * ew;
  gemm.k = conv.fh * conv.fw * conv.cin;
  gemm.n = conv.nf;
  for (auto [name, value] : {std::pair("M", gemm.m), std::pair("K", gemm.k)})
    if (auto error = checkDim(name, value))
      return *error;
  return gemm;
}

Result<AnalyticalResult>
tessera::sim::analyzeGemm(ArrayShape array, Dataflow dataflow, GemmShape gemm) {
  for (auto [name, value] :
       {std::pair("array rows", array.rows),
        std::pair("array columns", array.cols), std::pair("M", gemm.m),
        std::pair("N", gemm.n), std::pair("K", gemm.k)})
    if (auto error = checkDim(name, value))
      return *error;
  AnalyticalResult result;
  int64_t r = array.rows, c = array.cols;
  // The span D over which a fold's MAC slots count for utilization.
  int64_t span = 0;
  switch (dataflow) {
  case Dataflow::OutputStationary:
    result.mappedRows = gemm.m;
    result.mappedCols = gemm.n;
    result.streamed = gemm.k;
    result.cyclesPerFold = result.streamed + r + c - 2;
    span = result.streamed + r + c - 2;
    break;
  case Dataflow::WeightStationary:
    result.mappedRows = gemm.k;
    result.mappedCols = gemm.n;
    result.streamed = gemm.m;
    result.cyclesPerFold = result.streamed + 2 * r + c - 2;
    span = result.streamed + 2 * r + 2 * c - 3;
    break;
  case Dataflow::InputStationary:
    result.mappedRows = gemm.k;
    result.mappedCols = gemm.m;
    result.streamed = gemm.n;
    result.cyclesPerFold = result.streamed + 2 * r + c - 2;
    span = result.streamed + 2 * r + 2 * c - 3;
    break;
  }
  int64_t rowFolds = ceilDiv(result.mappedRows, r);
  int64_t colFolds = ceilDiv(result.mappedCols, c);
  result.folds = rowFolds * colFolds;
  result.computeCycles = result.folds * result.cyclesPerFold - 1;
  result.foldInterval = std::max(result.streamed, r);
  result.pipelinedCycles =
      (result.folds - 1) * result.foldInterval + result.cyclesPerFold - 1;
  // Every fold uses full rows but the last row fold, and likewise columns:
  // the mean over folds in closed form.
  double usedRows = 0, usedCols = 0;
  for (int64_t i = 0; i < rowFolds; ++i)
    usedRows += static_cast<double>(std::min(r, result.mappedRows - i * r));
  for (int64_t j = 0; j < colFolds; ++j)
    usedCols += static_cast<double>(std::min(c, result.mappedCols - j * c));
  double cells = static_cast<double>(r) * static_cast<double>(c);
  result.mappingEfficiency =
      usedRows * usedCols / (cells * static_cast<double>(result.folds));
  result.computeUtilization = result.mappingEfficiency *
                              static_cast<double>(result.streamed) /
                              static_cast<double>(span);
  return result;
}
