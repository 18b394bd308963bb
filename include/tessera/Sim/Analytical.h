//===- Analytical.h - the analytical compute model of a systolic array ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Compute cycles of a GEMM on an R x C systolic array with SCALE-Sim's
// formulas (docs/Systolic.md): the operand dims mapped onto the array's
// rows (Sr) and columns (Sc) and the one streamed through it (T) depend on
// the dataflow; the work splits into ceil(Sr/R) * ceil(Sc/C) folds of
//   OS: T + R + C - 2 cycles        WS, IS: T + 2R + C - 2 cycles
// and the total is folds * cycles_per_fold - 1 (cycles numbered from 0,
// as SCALE-Sim does; memory stalls come on top). Plain C++: the simulator
// and its tools use it without MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SIM_ANALYTICAL_H
#define TESSERA_SIM_ANALYTICAL_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace tessera::sim {

enum class Dataflow { OutputStationary, WeightStationary, InputStationary };

/// "os", "ws" or "is".
std::optional<Dataflow> parseDataflow(std::string_view name);
const char *dataflowName(Dataflow dataflow);

/// M x K activations times K x N weights.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};

/// An H x W input with Cin channels, Nf filters of Fh x Fw, one stride.
struct ConvShape {
  int64_t h = 0, w = 0, fh = 0, fw = 0, cin = 0, nf = 0, stride = 1;
};

struct ArrayShape {
  int64_t rows = 0, cols = 0;
};

struct AnalyticalResult {
  /// The dims mapped onto the array's rows and columns, and streamed.
  int64_t mappedRows = 0, mappedCols = 0, streamed = 0;
  int64_t folds = 0, cyclesPerFold = 0, computeCycles = 0;
  /// With pipelined folds (a second weight or output register per cell):
  /// a fold occupies the array for foldInterval = max(streamed, R) cycles
  /// and the last one completes cyclesPerFold after it starts, so
  /// pipelinedCycles = (folds - 1) * foldInterval + cyclesPerFold - 1.
  int64_t foldInterval = 0, pipelinedCycles = 0;
  /// Means over folds: used cells / all cells, and useful MAC slots / all
  /// MAC slots of the fold's span (fractions, not percent).
  double mappingEfficiency = 0, computeUtilization = 0;
};

/// An error message or a value.
template <typename T> using Result = std::variant<std::string, T>;

/// SCALE-Sim's conv-to-GEMM mapping: M = Eh * Ew with
/// Eh = ceil((H - Fh + S) / S), K = Fh * Fw * Cin, N = Nf.
Result<GemmShape> convToGemm(const ConvShape &conv);

/// The compute cycles of `gemm` on `array` with `dataflow`; an error for
/// non-positive or too large sizes.
Result<AnalyticalResult> analyzeGemm(ArrayShape array, Dataflow dataflow,
                                     GemmShape gemm);

} // namespace tessera::sim

#endif // TESSERA_SIM_ANALYTICAL_H
