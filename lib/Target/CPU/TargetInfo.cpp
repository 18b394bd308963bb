//===- TargetInfo.cpp - what the CPU backend compiles as one kernel -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Convolutions.h"

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Target/CPU/Pipeline.h"
#include "tessera/Transforms/TargetInfo.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <algorithm>

using namespace mlir;

namespace {

class CPUTargetInfo : public ::tessera::TargetInfo {
public:
  explicit CPUTargetInfo(::tessera::cpu::DotProducts dots) : dots(dots) {}

  StringRef name() const override { return "cpu"; }

  /// Contractions left on a generic loop nest, convolutions left direct
  /// (tessera-cpu-tile-contractions' report-generic) and attention left
  /// decomposed (convert-tessera-to-linalg's report-slow-paths).
  bool reportsSlowPaths() const override { return true; }

  /// A roofline over Tessera's own kernels: the longer of computing and
  /// moving the operands, plus converting a narrow lhs (read in f32,
  /// written narrow) in a pass of its own.
  /// - Computing: the FLOPs at f32's rate times the type's cost measured
  ///   on compute-bound shapes (docs/Precision.md, "Speed on this CPU").
  ///   Where the CPU the code is for (--mcpu, else this machine's) has
  ///   the dot products the CPU target uses (vdpbf16ps
  ///   on AMD's Zen 4 and newer, vpdpbusd with AVX-512 VNNI; on a Zen 5
  ///   EPYC): bf16 0.52x the time of a 1024^3 GEMM, int8 0.40x the time of
  ///   the BERT-base layer. fp8 computes as bf16 does: its operands are
  ///   decoded to bf16 (constant weights when compiling, so they are
  ///   moved as bf16), its activation quantized and then decoded (a pass
  ///   more over it). Elsewhere the tiled GEMM widens narrow operands to
  ///   fp32 (measured on an Intel Xeon): bf16 1.7x, fp8 1.7x, int8 2.4x.
  ///   fp16 is always widened: 1.4x.
  /// - Moving: the weights and the lhs in the operand type and the f32
  ///   result, kFlopsPerByte f32 FLOPs' time per byte. On the 2-core Zen 5
  ///   the 1024^3 f32 GEMM ran at about 220 GFLOP/s and a 1 x 4096 x 4096
  ///   one streamed its f32 weights at 30-40 GB/s: 6 FLOPs per byte.
  ///   Narrow weights are what make a GEMV faster: that one took 0.2-0.25x
  ///   the f32 time in bf16 and 0.1x in int8.
  double contractionTime(const ::tessera::ContractionShape &shape,
                         ::tessera::ElementType element) const override {
    using ::tessera::ElementType;
    constexpr double kFlopsPerByte = 6.0;
    double cost = 1.0;
    // What the GEMM reads its operands as (fp8: bf16), and the passes that
    // convert them before it (fp8: quantized, then decoded to bf16).
    double conversionPasses = 1.0;
    bool movedAsBF16 = false;
    switch (element) {
    case ElementType::BF16:
      cost = dots.bf16 ? 0.52 : 1.7;
      break;
    case ElementType::F16:
      cost = 1.4;
      break;
    case ElementType::F8E4M3FN:
    case ElementType::F8E5M2:
      cost = dots.bf16 ? 0.52 : 1.7;
      movedAsBF16 = true;
      // Quantized (4 + 1 bytes an element), then decoded (1 + 2).
      conversionPasses = 8.0 / 5.0;
      break;
    case ElementType::I8:
      cost = dots.int8 ? 0.40 : 2.4;
      break;
    default:
      element = ElementType::F32;
      break;
    }
    ElementType moved = movedAsBF16 ? ElementType::BF16 : element;
    return std::max(shape.flops() * cost,
                    shape.operandBytes(moved) * kFlopsPerByte) +
           shape.conversionBytes(element) * conversionPasses * kFlopsPerByte;
  }
  /// The CPU lowering computes matmuls on fp32, bf16 and fp16 operands
  /// (accumulating in fp32; fp8 operands decoded to bf16 first) and on
  /// int8 ones (into int32), reductions in fp32; elementwise ops and data
  /// movement also take integers and booleans.
  ArrayRef<::tessera::ElementType>
  supportedElementTypes(::tessera::OpClass opClass) const override {
    using ::tessera::ElementType;
    static const ElementType kFloat[] = {ElementType::F32};
    static const ElementType kContraction[] = {
        ElementType::F32,      ElementType::BF16,   ElementType::F16,
        ElementType::F8E4M3FN, ElementType::F8E5M2, ElementType::I8};
    static const ElementType kElementwise[] = {
        ElementType::F32, ElementType::I32, ElementType::I64,
        ElementType::Bool};
    static const ElementType kAny[] = {
        ElementType::F32, ElementType::F16, ElementType::BF16,
        ElementType::I8,  ElementType::I32, ElementType::I64,
        ElementType::Bool};
    switch (opClass) {
    case ::tessera::OpClass::Contraction:
      return kContraction;
    case ::tessera::OpClass::Reduction:
      return kFloat;
    case ::tessera::OpClass::Elementwise:
      return kElementwise;
    case ::tessera::OpClass::DataMovement:
      return kAny;
    }
    return kFloat;
  }

  bool fusesAttention() const override { return true; }

  /// Convolutions accumulate bf16 and f16 products in f32 and round their
  /// result once (convert-tessera-to-linalg). Static dense ones become
  /// im2col GEMMs on the narrow operands (on vdpbf16ps where it pays:
  /// a torchvision ResNet-18 at 224x224 1.45x faster). Depthwise ones would
  /// widen their narrow operands in their taps, and 1x1 ones cost more in
  /// casts than they save (a MobileNetV2 measured slower with either); the
  /// pixel panels of an image of dynamic size and the grouped GEMMs take
  /// f32 operands only.
  std::optional<std::string>
  rejectWideAccumulation(Operation *op, Type element) const override {
    auto conv = dyn_cast<mlir::tessera::Conv2dOp>(op);
    if (!conv || !isa<BFloat16Type, Float16Type>(element))
      return TargetInfo::rejectWideAccumulation(op, element);
    RankedTensorType input = conv.getInput().getType();
    RankedTensorType filter = conv.getFilter().getType();
    bool depthwise =
        conv.getGroup() > 1 &&
        filter.getDimSize(0) == static_cast<int64_t>(conv.getGroup()) &&
        filter.getDimSize(1) == 1;
    if (depthwise)
      return std::string("the cpu target's depthwise convolutions widen "
                         "narrow operands in their taps: no faster");
    if (conv.getGroup() != 1)
      return std::string("the cpu target's grouped convolutions take f32 "
                         "operands only");
    if (llvm::any_of(conv.getDilations(), [](int64_t d) { return d != 1; }))
      return std::string("the cpu target's dilated convolutions take f32 "
                         "operands only");
    if (filter.getDimSize(2) * filter.getDimSize(3) == 1)
      return std::string("a 1x1 convolution reads each input element once "
                         "per filter: narrowing its input costs more than "
                         "its bf16 GEMM saves");
    if (!input.hasStaticShape() || !filter.hasStaticShape())
      return std::string("the cpu target's convolutions over an image of "
                         "dynamic size take f32 operands only");
    if (!::tessera::cpu::isWholeNarrowGemm(
            filter.getShape(), conv.getResult().getType().getShape()))
      return std::string("the cpu target's bf16 convolution GEMMs take whole "
                         "tiles only (filters a multiple of 8, pixels of 16, "
                         "an even depth)");
    return std::nullopt;
  }

  /// The epilogue runs on each 8 x 32 accumulator tile: a second operand
  /// must be a scalar, a row vector over the columns, or as large as the
  /// result (read tile by tile).
  std::optional<std::string>
  rejectEpilogueOperand(Value operand, RankedTensorType result) const override {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return std::string("operand is not a ranked tensor");
    if (type.getNumElements() == 1 && type.hasStaticShape())
      return std::nullopt;
    if (type == result)
      return std::nullopt;
    int64_t columns = result.getDimSize(result.getRank() - 1);
    bool rowVector = llvm::all_of(type.getShape().drop_back(),
                                  [](int64_t d) { return d == 1; }) &&
                     type.getRank() >= 1 && type.getShape().back() == columns &&
                     columns != ShapedType::kDynamic;
    if (rowVector)
      return std::nullopt;
    return std::string("broadcast not supported in epilogue");
  }

  /// Sixteen zmm registers hold the accumulator; a few more keep an
  /// epilogue's temporaries.
  unsigned maxEpilogueOps() const override { return 8; }
  // As many as one fused loop body holds (tessera-cpu-fuse-elementwise).
  unsigned maxElementwiseOps() const override { return 64; }

  /// One op of at most two operands for at most four users: recomputing
  /// it is a few vector ops per element, less than a store and a load.
  bool recomputeIsCheap(Operation *producer, unsigned users) const override {
    return users <= 4 && producer->getNumOperands() <= 2 &&
           producer->getNumResults() == 1;
  }

  SmallVector<int64_t> tileSizes(StringRef kind) const override {
    if (kind == "epilogue")
      return {8, 32};
    if (kind == "attention")
      return {8, 64};
    return {64};
  }

private:
  ::tessera::cpu::DotProducts dots;
};

} // namespace

auto ::tessera::cpu::createCPUTargetInfo(std::optional<DotProducts> dots)
    -> std::unique_ptr<::tessera::TargetInfo> {
  static const DotProducts host = hostDotProducts();
  return std::make_unique<CPUTargetInfo>(dots.value_or(host));
}

void ::tessera::cpu::registerCPUTargetInfo() {
  registerTargetInfo("cpu", [] { return createCPUTargetInfo(); });
}
