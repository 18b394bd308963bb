//===- TargetInfo.h - what a backend can compile as one kernel ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The fusion pass asks the backend it compiles for which groups of ops it
// can compile as one kernel and with which tiles, so that one
// target-independent pass serves every backend. Backends register their
// TargetInfo under a name (`cpu`, ...) that the pass's `target` option
// selects.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TRANSFORMS_TARGETINFO_H
#define TESSERA_TRANSFORMS_TARGETINFO_H

#include "tessera/Support/ElementType.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>

namespace tessera {

/// Ops grouped by how precision applies to them (their precision-class
/// trait, tessera/Transforms/Precision.h): contractions (matmul, conv,
/// attention's products) compute in low precision, elementwise ops follow
/// their inputs, `Reduction` ops keep fp32 inside (reductions, softmax,
/// norm statistics, exp, log, pow and reciprocals), data movement copies
/// whatever it is given.
enum class OpClass { Contraction, Elementwise, Reduction, DataMovement };

/// A contraction as the automatic precision policy prices it: `rows` x
/// `columns` results (the rows of every batch together), each a dot
/// product of `depth` terms; `constantRhs` when the rhs is a constant
/// weight, converted to the narrow type at compile time.
struct ContractionShape {
  int64_t rows = 1, columns = 1, depth = 1;
  bool constantRhs = true;
  double flops() const {
    return 2.0 * double(rows) * double(columns) * double(depth);
  }
  /// Bytes the contraction reads and writes: its lhs and rhs in `element`,
  /// its f32 result.
  double operandBytes(ElementType element) const {
    double size = double(elementSize(element));
    return (double(rows) + double(columns)) * double(depth) * size +
           double(rows) * double(columns) * 4.0;
  }
  /// Bytes that converting its operands to `element` (narrower than f32)
  /// at the precision boundary reads and writes: the lhs, and the rhs
  /// unless it is a constant.
  double conversionBytes(ElementType element) const {
    if (element == ElementType::F32)
      return 0.0;
    double elements = double(rows) * double(depth) +
                      (constantRhs ? 0.0 : double(columns) * double(depth));
    return elements * (4.0 + double(elementSize(element)));
  }
};

class TargetInfo {
public:
  virtual ~TargetInfo() = default;
  virtual llvm::StringRef name() const = 0;

  /// Whether the graph phase groups ops into tessera.fusion regions for
  /// this target (false: one op per kernel, the backend schedules alone).
  virtual bool formsFusionRegions() const { return true; }
  /// Whether the target's lowering says, as a remark at each op, which
  /// contractions it left off its fast kernels (kReportSlowPathsOptionKey):
  /// the fusion report's `slow_paths`.
  virtual bool reportsSlowPaths() const { return false; }
  /// Whether float casts move across reshapes and transposes to the
  /// narrow side (`tessera-hoist-casts`): by default where data movement
  /// takes both 16-bit float types (the pass runs after legalization);
  /// false for a target whose reshapes only reinterpret what is already in
  /// memory.
  virtual bool hoistsCasts() const {
    llvm::ArrayRef<ElementType> movement =
        supportedElementTypes(OpClass::DataMovement);
    return llvm::is_contained(movement, ElementType::BF16) &&
           llvm::is_contained(movement, ElementType::F16);
  }
  /// Whether a transposed convolution whose kernel is its stride becomes
  /// one matmul and a transpose in the graph phase
  /// (`tessera-upsampling-to-matmul`); a target that compiles the
  /// importer's form as one GEMM of its own says false.
  virtual bool upsamplesByMatmul() const { return true; }

  /// The element types the target computes ops of `opClass` in (what the
  /// precision passes may choose from).
  virtual llvm::ArrayRef<ElementType>
  supportedElementTypes(OpClass opClass) const = 0;

  /// The predicted time of `shape` computed on `element` operands (the
  /// automatic precision policy's cost model), converting its operands at
  /// the precision boundary included, in a unit of the target's own: only
  /// the times of one target are compared. A type the target does not
  /// compute contractions in is priced as what it computes instead. By
  /// default its FLOPs, whatever the type (no reason to narrow for speed).
  virtual double contractionTime(const ContractionShape &shape,
                                 ElementType element) const {
    return shape.flops();
  }

  /// Why the target cannot take the precision policy `policy` (a policy
  /// other than fp32 that the precision passes would apply); nothing when
  /// it can.
  virtual std::optional<std::string>
  rejectPrecisionPolicy(llvm::StringRef policy) const {
    return std::nullopt;
  }

  /// Why the target does not compute `op`, a contraction other than a
  /// matmul (conv2d, attention), on `element` inputs (bf16, f16)
  /// accumulating in f32 and rounding only its result, as a fused attention
  /// kernel does; nothing when it does. Such an op accumulates in its
  /// inputs' type otherwise, so the precision passes keep it f32.
  virtual std::optional<std::string>
  rejectWideAccumulation(mlir::Operation *op, mlir::Type element) const {
    return op->getName().getStringRef().str() +
           " stays f32 under every policy";
  }

  /// Why the target cannot run `matmul` quantized as the 8-bit policy
  /// `policy` (int8, fp8, or fp8-current: fp8 whose activations' scales
  /// the program computes each run) quantizes it (its input per tensor,
  /// its weights per column or per tensor); nothing when it can.
  virtual std::optional<std::string>
  rejectQuantizedMatmul(mlir::Operation *matmul, llvm::StringRef policy) const {
    return std::nullopt;
  }

  /// Whether a constant weight that the fp8 or int8 policy quantizes is
  /// stored transposed ([.., n, k], read by the matmul with transpose_b),
  /// for tensor cores that read both 8-bit operands along K.
  virtual bool storesQuantizedWeightsKMajor() const { return false; }

  /// Whether an 8-bit policy may quantize a matmul whose rhs is computed
  /// (attention's products), not a constant weight; where not,
  /// rejectQuantizedMatmul keeps such a matmul wider and the automatic
  /// policy does not offer it 8 bits.
  virtual bool quantizesComputedRhs() const { return true; }

  /// Whether an int8 matmul's product, dequantized (i32 to f32, scaled per
  /// column), may go on into an epilogue: the dequantization and the ops
  /// after it applied to the product before it is stored.
  virtual bool epilogueTakesDequantize() const { return false; }

  /// Whether the target computes `op` inside a fusion region at all (an
  /// accelerator's vector unit has a fixed set of functions); an op it
  /// does not stays a kernel of its own.
  virtual bool canFuse(mlir::Operation *op) const { return true; }

  /// Whether a contraction's epilogue may go on through `reduction` (a
  /// softmax or normalization of the contraction's `result` rows), as an
  /// accelerator whose accumulators hold whole rows can.
  virtual bool epilogueTakesReduction(mlir::Operation *reduction,
                                      mlir::RankedTensorType result) const {
    return false;
  }

  /// Whether attention becomes one kernel (tiled, with an online softmax).
  virtual bool fusesAttention() const = 0;

  /// Why `operand`, a second input of an elementwise op applied to a
  /// contraction's result of type `result`, cannot be read in the
  /// contraction's epilogue; nothing when it can.
  virtual std::optional<std::string>
  rejectEpilogueOperand(mlir::Value operand,
                        mlir::RankedTensorType result) const = 0;

  /// The most elementwise ops an epilogue may apply to the accumulator
  /// tile while it stays in registers.
  virtual unsigned maxEpilogueOps() const = 0;

  /// The most ops one elementwise region holds; a longer chain becomes
  /// several regions, in order (so a periodic chain's pieces are
  /// identical kernels, which a backend compiles once).
  virtual unsigned maxElementwiseOps() const {
    return std::numeric_limits<unsigned>::max();
  }

  /// Whether computing `producer` (an elementwise op with `users` users,
  /// whose own operands are already in memory) once more in each
  /// consumer's kernel costs less than writing its result and reading it
  /// back.
  virtual bool recomputeIsCheap(mlir::Operation *producer,
                                unsigned users) const = 0;

  /// The tile sizes the backend uses for a kind of region (for the fusion
  /// report): rows x columns for contractions, query x key block for
  /// attention, elements per vector step otherwise.
  virtual llvm::SmallVector<int64_t> tileSizes(llvm::StringRef kind) const = 0;
};

/// Makes `create` the TargetInfo named `name` (replacing any other).
void registerTargetInfo(llvm::StringRef name,
                        std::function<std::unique_ptr<TargetInfo>()> create);

/// The TargetInfo registered as `name`, or null.
std::unique_ptr<TargetInfo> lookupTargetInfo(llvm::StringRef name);

} // namespace tessera

#endif // TESSERA_TRANSFORMS_TARGETINFO_H
