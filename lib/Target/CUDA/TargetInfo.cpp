//===- TargetInfo.cpp - what the CUDA backend fuses -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "FlashAttention.h"

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Target/CUDA/Pipeline.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;

namespace {

/// Kernels are formed after the lowering to linalg, by fusing elementwise
/// producers into their consumers: the graph phase forms no regions.
/// Attention is raised: bf16/f16 attention becomes one tensor-core kernel
/// (tessera-cuda-flash-attention), other attention its products and
/// softmax.
class CUDATargetInfo : public ::tessera::TargetInfo {
public:
  StringRef name() const override { return "cuda"; }
  bool formsFusionRegions() const override { return false; }

  /// A roofline at an H100 SXM's peak rates (its data sheet; not measured
  /// here: no GPU), in nanoseconds: the longer of computing (dense tensor
  /// cores: bf16 and fp16 989 TFLOP/s, fp8 and int8 1979, the rate of
  /// sm_90a's wgmma, whatever --gpu lists; fp32 FMA 67) and moving the
  /// operands in their type and the f32 result through HBM3 at 3.35 TB/s,
  /// plus converting a narrow lhs (read in f32, written narrow) in a pass
  /// of its own. On sm_80 an fp8 matmul decodes its tiles to bf16 and
  /// runs at bf16's rate, which this does not price.
  double contractionTime(const ::tessera::ContractionShape &shape,
                         ::tessera::ElementType element) const override {
    using ::tessera::ElementType;
    constexpr double kBytesPerNs = 3350.0;
    double flopsPerNs = 67e3;
    switch (element) {
    case ElementType::BF16:
    case ElementType::F16:
      flopsPerNs = 989e3;
      break;
    case ElementType::F8E4M3FN:
    case ElementType::F8E5M2:
    case ElementType::I8:
      flopsPerNs = 1979e3;
      break;
    default:
      element = ElementType::F32;
      break;
    }
    return std::max(shape.flops() / flopsPerNs,
                    shape.operandBytes(element) / kBytesPerNs) +
           shape.conversionBytes(element) / kBytesPerNs;
  }
  ArrayRef<::tessera::ElementType>
  supportedElementTypes(::tessera::OpClass opClass) const override {
    using ::tessera::ElementType;
    static const ElementType kFloat[] = {ElementType::F32};
    // bf16/f16/fp8 operands accumulate in f32 on the tensor cores
    // (tessera-cuda-tensor-core-matmul; fp8 on sm_90a's wgmma, decoded to
    // bf16 for mma.sync elsewhere), int8 in i32 (mma.sync s8).
    static const ElementType kContraction[] = {
        ElementType::F32,      ElementType::BF16,   ElementType::F16,
        ElementType::F8E4M3FN, ElementType::F8E5M2, ElementType::I8};
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
    case ::tessera::OpClass::DataMovement:
      return kAny;
    }
    return kFloat;
  }

  /// An int8 product reads B along K (mma.sync's 8-bit fragments come from
  /// ldmatrix without .trans): a computed B stored [k][n] would run the
  /// SIMT loop nest.
  std::optional<std::string>
  rejectQuantizedMatmul(Operation *matmul, StringRef policy) const override {
    auto op = cast<mlir::tessera::MatmulOp>(matmul);
    if (policy == "int8" && !op.getTransposeB() &&
        !op.getRhs().getDefiningOp<mlir::tessera::ConstantOp>())
      return std::string("the cuda target's int8 products read B along K, "
                         "and this B is a computed [k][n] tensor");
    return std::nullopt;
  }
  /// sm_90a's fp8 wgmma and every 8-bit mma.sync (ldmatrix transposes only
  /// 16-bit elements) read A and B K-major: a weight [k][n] would need a
  /// transpose each run.
  bool storesQuantizedWeightsKMajor() const override { return true; }
  bool fusesAttention() const override { return true; }
  std::optional<std::string>
  rejectWideAccumulation(Operation *op, Type element) const override {
    if (!isa<BFloat16Type, Float16Type>(element))
      return op->getName().getStringRef().str() +
             " stays f32 under every policy";
    if (auto conv = dyn_cast<mlir::tessera::Conv2dOp>(op)) {
      // tessera-cuda-convolution-gemms: an im2col and a tensor-core GEMM.
      if (conv.getGroup() != 1)
        return std::string("the cuda target's tensor-core convolutions "
                           "are ungrouped: a narrow grouped one would run "
                           "no faster");
      if (llvm::any_of(conv.getDilations(), [](int64_t d) { return d != 1; }))
        return std::string("the cuda target's tensor-core convolutions "
                           "are undilated: a narrow dilated one would run "
                           "no faster");
      if (!conv.getInput().getType().hasStaticShape() ||
          !conv.getFilter().getType().hasStaticShape() ||
          !conv.getType().hasStaticShape())
        return std::string("the cuda target's tensor-core convolutions "
                           "have static shapes: a narrow one with a "
                           "dynamic dim would run no faster");
      return std::nullopt;
    }
    if (std::optional<std::string> why =
            ::tessera::cuda::flash_attention::whyNot(op, element))
      return "the fused attention kernel does not take " +
             op->getName().getStringRef().str() + " (" + *why + ")";
    return std::nullopt;
  }
  std::optional<std::string> rejectEpilogueOperand(Value,
                                                   RankedTensorType) const override {
    return std::string("the CUDA target forms no epilogues yet");
  }
  unsigned maxEpilogueOps() const override { return 0; }
  bool recomputeIsCheap(Operation *, unsigned) const override { return false; }
  SmallVector<int64_t> tileSizes(StringRef) const override { return {256}; }
};

} // namespace

auto ::tessera::cuda::createCUDATargetInfo()
    -> std::unique_ptr<::tessera::TargetInfo> {
  return std::make_unique<CUDATargetInfo>();
}
