//===- Lowering.h - the state of a lowering to a systolic program ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The lowering from graph-phase tessera IR to a systolic.program walks the
// function's ops in order and lowers each family (matmuls and their
// epilogues, vector chains, data movement) to scheduled instructions
// (GemmStep, VectorStep, CopyStep, GatherStep of
// tessera/Target/Systolic/Schedule.h). `Lowering` holds
// what the families share: the DRAM placement of every value, the
// instructions scheduled so far and the accelerator. Each family's code
// lives in its own file: Matmul.cpp, Windows.cpp (convolutions and
// pooling), Vector.cpp, DataMovement.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_SYSTOLIC_LOWERING_H
#define TESSERA_LIB_TARGET_SYSTOLIC_LOWERING_H

#include "tessera/Dialect/Systolic/IR/SystolicDialect.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Sim/Simulator.h"
#include "tessera/Target/Systolic/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>
#include <vector>

namespace tessera::systolic {

namespace ts = mlir::tessera;
/// Who writes and reads a tensor of the DRAM image.
using Role = mlir::systolic::TensorRole;

/// A tensor of the program, viewed as rows x cols (leading dims folded).
struct Placed {
  size_t index;
  int64_t rows, cols;
};

/// A tensor of the program's DRAM image.
struct TensorEntry {
  std::string name;
  Role role;
  sim::NumberFormat format;
  llvm::SmallVector<int64_t> shape;
  uint64_t offset;
  mlir::ElementsAttr value;
};

/// A matmul of quantized operands, in ONNX's QDQ form (the lhs a
/// dequantize of a quantize of an fp32 value, the rhs a dequantize of an
/// i8 or fp8 constant, both symmetric, in the same format) or as the
/// precision passes write it (the lhs a quantize, the rhs an i8 or fp8
/// constant; int8's i32 product dequantized after it, fp8's scaled by the
/// matmul's alpha); the input's scale per tensor, the weights' per tensor
/// or per output column.
struct QuantizedMatmul {
  sim::NumberFormat format;
  mlir::Value input;
  float inputScale;
  /// One scale, or one per column of the product.
  std::vector<float> weightScales;
  std::vector<float> weights;
  ts::QuantizeOp quantize;
  /// QDQ form: the dequantizes of the operands.
  ts::DequantizeOp lhsDequantize, rhsDequantize;
  /// The precision passes' int8 form: the dequantize of the i32 product,
  /// which the drain computes (its result is the GEMM's).
  ts::DequantizeOp resultDequantize;
};

/// A transposed convolution as the importer writes it (a convolution over
/// the input spread with zeros) whose kernel is its stride, with nothing
/// cropped: one GEMM whose columns scatter to the output
/// (ConvTranspose.cpp).
struct ConvTransposeMatch {
  /// The ConvTranspose's input, [N, C, H, W] fp32.
  mlir::Value input;
  int64_t sh, sw;
  /// The reshape, pad and reshape that spread it with zeros.
  llvm::SmallVector<mlir::Operation *, 3> spreading;
};

//===----------------------------------------------------------------------===//
// Helpers on the graph (ConstantValues.cpp, Matmul.cpp, Vector.cpp)
//===----------------------------------------------------------------------===//

/// The product of a type's dims but the last.
int64_t leadingRows(mlir::RankedTensorType type);
/// Row-major strides of `shape`, in elements.
llvm::SmallVector<int64_t> rowMajor(llvm::ArrayRef<int64_t> shape);
/// The narrow float format (bf16, f16, fp8) an fp32 value is cast to for
/// a matmul or convolution, when `value` is such a cast or a constant of
/// that format (a cast the precision passes folded into the weights).
std::optional<sim::NumberFormat> castFormat(mlir::Value value);
/// The fp32 value a cast for an operand reads, or `value` itself.
mlir::Value castSource(mlir::Value value);
/// The format in which every use of `value` (through reshapes) casts it
/// for a matmul operand, or nothing (then it is kept in fp32).
std::optional<sim::NumberFormat> matmulOnlyFormat(mlir::Value value);
/// Whether the accelerator holds values of `type` as fp32: fp32 values and
/// booleans (as 0.0 and 1.0).
bool heldAsF32(mlir::RankedTensorType type);
/// The vector function of a comparison.
sim::VectorFn compareFn(ts::CompareDirection direction);
/// The values of a constant (booleans as 0.0 and 1.0); of a reshape,
/// transpose or slice of such values; or of a where, comparison, logical
/// op or boolean cast whose operands are all constant (a causal mask),
/// evaluated with numpy broadcasting.
std::optional<std::vector<float>> constantValues(mlir::Value value);
/// The values of an i8 or fp8 constant as floats (exact).
std::optional<std::vector<float>> narrowValues(mlir::Value value);
/// The constant scales of a symmetric (de)quantization (no zero point, or
/// zero points of 0): one value, or `count` values.
std::optional<std::vector<float>>
symmetricScales(mlir::Value scale, mlir::Value zeroPoint, size_t count = 1);
/// `matmul` in QDQ form or as the precision passes quantize it, or
/// nothing.
std::optional<QuantizedMatmul> matchQuantized(ts::MatmulOp matmul);
/// `conv` as a transposed convolution that is one GEMM, or nothing.
std::optional<ConvTransposeMatch> matchConvTranspose(ts::Conv2dOp conv);
/// Whether `op` runs on the vector unit (elementwise, softmax, norms).
bool isVectorOp(mlir::Operation *op);

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

/// One spatial dim of a sliding window (convolution, pooling): the
/// input's extent, the kernel, stride, dilation, the pads at its start and
/// end, and the output's extent.
struct WindowDim {
  int64_t size = 0, kernel = 1, stride = 1, dilation = 1, padBegin = 0,
          padEnd = 0, out = 0;
  /// Extent of the padded input: the input and its pads, extended at the
  /// end to the last window (ceil mode).
  int64_t padded() const {
    return std::max(size + padBegin + padEnd,
                    (out - 1) * stride + (kernel - 1) * dilation + 1);
  }
};

/// One lowering of a function to a program for `config`; operand formats
/// come from the IR (casts, quantize/dequantize pairs).
class Lowering {
public:
  explicit Lowering(const sim::AcceleratorConfig &config) : config(config) {}

  /// Lowers `func` and replaces it by a systolic.program in `module`;
  /// errors are reported at the ops that cause them.
  mlir::LogicalResult run(mlir::ModuleOp module, mlir::func::FuncOp func);

private:
  //--- Placement (Lowering.cpp) -------------------------------------------//

  /// Places a new tensor in the DRAM image (64-byte aligned), named `name`
  /// or, when a tensor has that name already (several steps of one ONNX
  /// node), `name` with a numeric suffix.
  size_t place(llvm::StringRef name, Role role,
               sim::NumberFormat format, llvm::ArrayRef<int64_t> shape,
               mlir::ElementsAttr value = {});
  /// An fp32 constant (or constant-foldable value) placed once in DRAM.
  size_t placeConstant(mlir::Value value, llvm::ArrayRef<float> values);
  /// `value` as an fp32 row-major view in DRAM: its byte offset.
  std::optional<uint64_t> fp32Source(mlir::Value value);
  /// Places `result` of `op`: an fp32 output, or scratch in the operand
  /// format when only matmuls read it, else in fp32.
  size_t placeResult(mlir::Operation *op, mlir::Value result);
  /// Places a convolution's result as its readers see it (in fp32, through
  /// a cast back from the operand format when that is its one use), the
  /// convolution's own result a view of it; the tensor's index.
  size_t placeConvolutionResult(mlir::Operation *conv);
  /// `value` in DRAM in `format`: as placed, or for a matmul reading an
  /// fp32 value, a copy converted on the vector unit (once per value).
  std::optional<Placed> inFormat(mlir::Value value, sim::NumberFormat format);
  /// Lowers one op of the function by its family.
  mlir::LogicalResult lowerOp(mlir::Operation *op);
  /// The systolic.program of what was lowered, at the end of `module`.
  void buildProgram(mlir::ModuleOp module, mlir::Location loc);

  //--- Matmuls and their epilogues (Matmul.cpp) ---------------------------//

  /// A matmul with constant weights (or of quantized operands, `quant`)
  /// and the bias, ReLU and vector ops after it.
  mlir::LogicalResult lowerMatmul(ts::MatmulOp matmul,
                                  const QuantizedMatmul *quant = nullptr);
  /// A matmul whose rhs is computed (attention's products).
  mlir::LogicalResult lowerComputedMatmul(ts::MatmulOp matmul);
  /// Fuses the vector ops after a GEMM's `result` in `contraction`'s
  /// fusion region into its epilogue and returns the last fused value.
  mlir::Value attachEpilogue(mlir::Operation *contraction,
                             sim::GemmStep &step, mlir::Value result,
                             std::optional<uint64_t> columnScales = {});
  /// The format the IR gives `op`'s float operands (casts); an error at
  /// `op` when they have none or the accelerator lacks it.
  mlir::FailureOr<sim::NumberFormat> operandFormatOf(mlir::Operation *op);
  /// `step` in `format`, behind the earlier stores.
  mlir::LogicalResult gemm(mlir::Operation *op, sim::NumberFormat format,
                           sim::GemmStep step);
  /// A GEMM in `format`, behind the earlier stores.
  mlir::LogicalResult gemm(mlir::Operation *op, sim::NumberFormat format,
                           uint64_t a, uint64_t b, uint64_t c, int64_t m,
                           int64_t n, int64_t k, sim::NumberFormat outFormat,
                           std::optional<uint64_t> bias = std::nullopt);
  /// The lhs of a transpose_a matmul, transposed into `format`.
  std::optional<Placed> transposedLhs(ts::MatmulOp matmul,
                                      sim::NumberFormat format);
  /// `value` (fp32) divided by `scale` and converted to `format` (i8 or
  /// fp8) on the vector unit, as a new scratch tensor.
  std::optional<Placed> quantizeInput(mlir::Operation *op, mlir::Value value,
                                      float scale, sim::NumberFormat format);

  //--- Convolutions and pooling (Windows.cpp) -----------------------------//

  /// conv2d (grouped, padded, strided, dilated) as im2col and a GEMM per
  /// group.
  mlir::LogicalResult lowerConv(ts::Conv2dOp conv);
  /// A transposed convolution whose kernel is its stride as one GEMM and
  /// a scattering copy (ConvTranspose.cpp).
  mlir::LogicalResult lowerConvTranspose(ts::Conv2dOp conv,
                                         const ConvTransposeMatch &match);
  /// max_pool and avg_pool of [N, C, H, W] as window copies and row
  /// reductions.
  mlir::LogicalResult lowerPool(mlir::Operation *op);
  /// A pad with a constant as a copy into a constant tensor of it.
  mlir::LogicalResult lowerPad(ts::PadOp pad);
  /// `input` (fp32 [N, C, H, W]) with every window of `dims` inside it:
  /// as it is, or copied into a constant tensor of `fill`.
  std::optional<uint64_t> paddedWindows(mlir::Operation *op,
                                        mlir::Value input,
                                        llvm::ArrayRef<WindowDim> dims,
                                        float fill, llvm::StringRef base);

  //--- Resizing (Resize.cpp) ----------------------------------------------//

  /// tessera.resize with constant scales: nearest as strided copies,
  /// linear and cubic as copies of each tap and a weighted sum.
  mlir::LogicalResult lowerResize(ts::ResizeOp op);
  /// Copies `src` (fp32, `inShape`) resampled by one index map per dim
  /// (-1: read `fill`) into tensor `to` of `outShape`.
  mlir::LogicalResult resampleCopy(mlir::Operation *op, uint64_t src,
                                   llvm::ArrayRef<int64_t> inShape,
                                   llvm::ArrayRef<std::vector<int64_t>> maps,
                                   std::optional<uint64_t> fill, size_t to,
                                   llvm::ArrayRef<int64_t> outShape);

  //--- The vector unit (Vector.cpp) ---------------------------------------//

  /// A chain of vector ops from `first` as one vector step.
  mlir::LogicalResult lowerVectorChain(mlir::Operation *first);
  /// Extends a vector step by the ops after `last` in `anchor`'s fusion
  /// region that `accept` takes.
  mlir::Value extendVectorChain(
      mlir::Operation *anchor, mlir::Value last, sim::VectorStep &step,
      llvm::DenseMap<mlir::Value, int> &onChip, int &out,
      llvm::function_ref<bool(const sim::VectorStep &, int)> accept);
  /// The ops of `first`'s fusion region from `first` on, as one vector
  /// step whose last op's result is the region's; false (nothing lowered)
  /// when they do not make one step.
  mlir::FailureOr<bool> lowerRegionAsOneStep(mlir::Operation *first);
  /// Stores the chain's last result from slot `out`.
  mlir::LogicalResult finishVectorStep(mlir::Operation *op,
                                       sim::VectorStep &step, int out);
  /// Appends `op`'s vector instructions to `step`; returns its slot.
  mlir::FailureOr<int> appendVectorOps(mlir::Operation *op,
                                       sim::VectorStep &step,
                                       llvm::DenseMap<mlir::Value, int> &onChip,
                                       bool report);
  /// One vector function over a rows x cols fp32 tensor at `src`.
  std::optional<std::string> mapStep(uint64_t src, int64_t rows, int64_t cols,
                                     sim::VectorFn fn,
                                     std::optional<float> immediate,
                                     uint64_t out, sim::NumberFormat outFormat);

  //--- Data movement (DataMovement.cpp) -----------------------------------//

  /// Transposes, slices, concatenations, broadcasts and gathers of one
  /// constant index.
  mlir::LogicalResult lowerDataMovement(mlir::Operation *op);
  /// A gather of indices computed at run time (an embedding lookup).
  mlir::LogicalResult lowerLookup(ts::GatherOp gather);
  /// `value` broadcast numpy-style to `type`, as a new fp32 tensor.
  std::optional<uint64_t> broadcastTo(mlir::Value value,
                                      mlir::RankedTensorType type);
  /// Copies a strided view into (part of) a placed tensor.
  mlir::LogicalResult copy(mlir::Operation *op, uint64_t src,
                           llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<int64_t> srcStrides, size_t to,
                           uint64_t dstOffset,
                           llvm::ArrayRef<int64_t> dstStrides);

  const sim::AcceleratorConfig &config;
  llvm::SmallVector<TensorEntry> tensors;
  /// The names of `tensors`.
  llvm::StringSet<> tensorNames;
  uint64_t dramBytes = 0;
  std::vector<sim::Instruction> instructions;
  llvm::DenseMap<mlir::Value, Placed> placed;
  /// Values broadcast to a shape (their copy's DRAM offset).
  llvm::DenseMap<std::pair<mlir::Value, mlir::Type>, uint64_t> broadcasts;
  /// Values converted to the operand format for a matmul.
  llvm::DenseMap<mlir::Value, Placed> converted;
  /// Constants placed in DRAM as fp32, by op.
  llvm::DenseMap<mlir::Operation *, size_t> placedConstants;
  /// The values the function returns, with their output names.
  llvm::DenseMap<mlir::Value, std::string> outputs;
  /// Unwraps the graph's tessera.fusion regions into the function's body,
  /// recording which region each op came from.
  void unwrapFusionRegions(mlir::func::FuncOp func);
  /// Whether `a` and `b` came from the same fusion region.
  bool sameRegion(mlir::Operation *a, mlir::Operation *b) const {
    auto ia = regionOf.find(a), ib = regionOf.find(b);
    return ia != regionOf.end() && ib != regionOf.end() &&
           ia->second == ib->second;
  }

  /// The fusion region (numbered from 0) of each op that was in one: the
  /// graph phase decided what the accelerator fuses (its TargetInfo).
  llvm::DenseMap<mlir::Operation *, unsigned> regionOf;
  /// Ops lowered as part of another (fused epilogues, QDQ pairs).
  llvm::DenseSet<mlir::Operation *> done;
  /// Matmuls of quantized operands.
  llvm::DenseMap<mlir::Operation *, QuantizedMatmul> quantized;
  /// The quantized input each quantize op (shared by the matmuls that read
  /// it: a layer's query, key and value projections) became, once.
  llvm::DenseMap<mlir::Operation *, Placed> quantizedInputs;
  /// Convolutions that are transposed convolutions lowered as one GEMM.
  llvm::DenseMap<mlir::Operation *, ConvTransposeMatch> convTransposes;
};

} // namespace tessera::systolic

#endif // TESSERA_LIB_TARGET_SYSTOLIC_LOWERING_H
