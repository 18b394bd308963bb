//===- Target.cpp - the systolic backend in the target registry -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Target.h"
#include "tessera/Sim/Analytical.h"
#include "tessera/Target/Systolic/Emitter.h"
#include "tessera/Target/Systolic/Passes.h"
#include "tessera/Target/Systolic/ProgramExecutable.h"

#include "Lowering.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <variant>

using namespace mlir;
using namespace ::tessera;

namespace {

namespace systolic = ::tessera::systolic;

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// What the accelerator fuses: a matmul with the vector ops applied to its
/// product (a bias row and ReLU in the drain, the rest on the vector unit
/// while the product stays on chip, row reductions while a row fits the
/// array's columns), and chains of vector ops that hand their results over
/// in the unified buffer. The graph phase forms these regions; the
/// lowering turns each into one step.
class SystolicTargetInfo : public TargetInfo {
public:
  explicit SystolicTargetInfo(
      std::shared_ptr<const sim::AcceleratorConfig> config)
      : config(std::move(config)) {
    for (ElementType type :
         {ElementType::BF16, ElementType::F16, ElementType::F8E4M3FN,
          ElementType::F8E5M2, ElementType::I8})
      if (this->config->supports(type))
        contractionTypes.push_back(type);
  }

  StringRef name() const override { return "systolic"; }
  /// The lowering compiles the importer's form of a learned upsampling as
  /// one GEMM and a strided copy of its own (ConvTranspose.cpp).
  bool upsamplesByMatmul() const override { return false; }
  /// A reshape here reinterprets a tensor the program has in memory (the
  /// vector unit's casts write the unified buffer): casts stay where the
  /// model put them.
  bool hoistsCasts() const override { return false; }
  /// The array multiplies the bf16, f16, fp8 and int8 operands the
  /// accelerator's configuration lists (accumulating in fp32 or int32);
  /// the vector unit computes in fp32; data moves in any number format of
  /// the DRAM image.
  ArrayRef<ElementType> supportedElementTypes(OpClass opClass) const override {
    static const ElementType kVector[] = {ElementType::F32};
    static const ElementType kData[] = {
        ElementType::F32,      ElementType::BF16,   ElementType::F16,
        ElementType::F8E4M3FN, ElementType::F8E5M2, ElementType::I8};
    switch (opClass) {
    case OpClass::Contraction:
      return contractionTypes;
    case OpClass::Elementwise:
    case OpClass::Reduction:
      return kVector;
    case OpClass::DataMovement:
      return kData;
    }
    return kVector;
  }
  /// The array multiplies bf16, f16, fp8 and int8 operands (the
  /// accelerator's configuration says which of them it has); what the
  /// policy leaves f32 runs in the policy's 16-bit format (fp16 under
  /// fp16, bf16 otherwise: tessera-systolic-operand-formats). The
  /// automatic policy starts from that 16-bit format, which an array of
  /// 8-bit formats only (tpu-v1) does not have.
  std::optional<std::string>
  rejectPrecisionPolicy(StringRef policy) const override {
    if (policy == "auto" && !config->supports(ElementType::BF16) &&
        !config->supports(ElementType::F16))
      return "--precision=auto chooses between the array's 16-bit and 8-bit "
             "formats, and the accelerator '" +
             config->name +
             "' multiplies 8-bit operands only: use --precision=int8 "
             "--quantize-heads";
    return std::nullopt;
  }
  /// The analytical model of docs/Systolic.md, in cycles. A matmul is a
  /// step whose chunks pipeline their loads, the array's folds
  /// (sim::analyzeGemm, pipelined when the configuration says so) and the
  /// vector unit's drain, so the step takes a DRAM latency to load and one
  /// to store plus the longest of the three:
  /// - over the DRAM channel: the weights, the lhs once per column tile of
  ///   the array (each tile streams it again) in the operand format, and
  ///   the f32 result;
  /// - the folds;
  /// - the results drained a vector of lanes per cycle (int8 twice: its
  ///   per-column dequantization is one more vector op).
  /// An 8-bit matmul's input is quantized by a step of its own before it
  /// (read in f32, written in 8 bits, a vector op per element). A 16-bit
  /// input costs nothing more: its producer writes it in that format. A
  /// type the array does not multiply (f32) is priced as the 16-bit
  /// format it reads instead. On single GEMMs from 1 x 1024 x 1024 to
  /// 128 x 768 x 3072 in bf16, fp8 and int8, on the default preset and on
  /// it with 16 bytes of DRAM per cycle, this came within 4% of the
  /// simulator's cycles, always under them.
  double contractionTime(const ContractionShape &shape,
                         ElementType element) const override {
    if (!config->supports(element))
      element = config->supports(ElementType::BF16) ? ElementType::BF16
                : config->supports(ElementType::F16)
                    ? ElementType::F16
                    : config->operandFormats.front();
    double lanes = double(std::max<int64_t>(config->vectorLanes, 1));
    double bandwidth = std::max(config->dramBytesPerCycle, 1e-9);
    double latencies = 2.0 * double(config->dramLatencyCycles);
    double m = double(shape.rows), n = double(shape.columns),
           k = double(shape.depth);
    auto analyzed = sim::analyzeGemm(
        config->array, config->dataflow,
        sim::GemmShape{shape.rows, shape.columns, shape.depth});
    double folds;
    if (const auto *result = std::get_if<sim::AnalyticalResult>(&analyzed))
      folds = double(config->pipelinedFolds ? result->pipelinedCycles
                                            : result->computeCycles);
    else // Too large for the model: the MACs at one per cell per cycle.
      folds = m * n * k / double(config->array.rows * config->array.cols);
    double size = double(sim::formatBytes(element));
    double columnTiles =
        std::ceil(n / double(std::max<int64_t>(config->array.cols, 1)));
    double bytes = (m * k * columnTiles + n * k) * size + m * n * 4.0;
    double drain = m * n / lanes * (element == ElementType::I8 ? 2.0 : 1.0);
    double step = latencies + std::max({bytes / bandwidth, folds, drain});
    if (element == ElementType::I8 || element == ElementType::F8E4M3FN ||
        element == ElementType::F8E5M2)
      step += latencies + std::max(shape.conversionBytes(element) / bandwidth,
                                   m * k / lanes);
    return step;
  }
  /// The array quantizes a matmul's input on the vector unit and reads
  /// its weights as constants: a product of two computed values
  /// (attention's) or a transposed input stays in the 16-bit format.
  std::optional<std::string>
  rejectQuantizedMatmul(Operation *matmul, StringRef policy) const override {
    auto op = cast<mlir::tessera::MatmulOp>(matmul);
    if (policy == "fp8-current")
      return std::string("the systolic array takes fp8 scales fixed at "
                         "compile time (--fp8-scaling=static)");
    if (!op.getRhs().getDefiningOp<mlir::tessera::ConstantOp>())
      return "the systolic array runs " + policy.str() +
             " matmuls with constant weights only";
    if (op.getTransposeA())
      return "the systolic array runs no " + policy.str() +
             " matmul with transpose_a";
    return std::nullopt;
  }
  bool quantizesComputedRhs() const override { return false; }
  /// The drain and the epilogue apply an int8 product's scales.
  bool epilogueTakesDequantize() const override { return true; }
  /// Matmuls (not convolutions, whose im2col GEMM takes no epilogue yet)
  /// and the vector unit's functions.
  bool canFuse(Operation *op) const override {
    return isa<mlir::tessera::MatmulOp>(op) || systolic::isVectorOp(op);
  }
  bool epilogueTakesReduction(Operation *reduction,
                              RankedTensorType result) const override {
    return systolic::isVectorOp(reduction) && result.hasStaticShape() &&
           result.getRank() >= 1 &&
           result.getShape().back() <= config->array.cols;
  }
  bool fusesAttention() const override { return false; }
  /// The epilogue reads any operand the vector unit takes (one broadcasts
  /// the vector unit does not is materialized first).
  std::optional<std::string>
  rejectEpilogueOperand(Value, RankedTensorType) const override {
    return std::nullopt;
  }
  /// Limited by the unified buffer, not by registers: a chain that does not
  /// fit is split by the lowering.
  unsigned maxEpilogueOps() const override { return 16; }
  bool recomputeIsCheap(Operation *, unsigned) const override {
    return false;
  }
  SmallVector<int64_t> tileSizes(StringRef kind) const override {
    if (kind == "epilogue")
      return {config->array.rows, config->array.cols};
    return {config->array.cols};
  }

private:
  std::shared_ptr<const sim::AcceleratorConfig> config;
  llvm::SmallVector<ElementType> contractionTypes;
};

/// The "default" preset, loaded once.
std::shared_ptr<const sim::AcceleratorConfig> defaultAccelerator() {
  static const std::shared_ptr<const sim::AcceleratorConfig> config = [] {
    auto loaded = systolic::loadAccelerator("default");
    if (!loaded) {
      llvm::consumeError(loaded.takeError());
      return std::make_shared<const sim::AcceleratorConfig>();
    }
    return std::shared_ptr<const sim::AcceleratorConfig>(std::move(*loaded));
  }();
  return config;
}

class SystolicCompilation : public TargetCompilation {
public:
  explicit SystolicCompilation(systolic::LoweringOptions options)
      : options(std::move(options)),
        info(std::make_shared<SystolicTargetInfo>(this->options.config)) {}

  std::shared_ptr<const TargetInfo> targetInfo() const override {
    return info;
  }

  void buildPipeline(OpPassManager &pm, StringRef) override {
    systolic::buildLoweringPipeline(pm, options);
  }

  llvm::Error writeArtifact(ModuleOp module, const ArtifactKind &,
                            StringRef path, TimingScope &timing) override {
    TimingScope emitTiming = timing.nest("Program emission");
    FailureOr<sim::Program> program =
        emitSystolicProgram(module, *options.config);
    if (failed(program))
      return fail("the program emitter failed");
    std::vector<uint8_t> bytes = sim::encodeProgram(*program);
    std::error_code ec;
    llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message());
    out.os().write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    out.os().close();
    if (out.os().has_error()) {
      std::string why = out.os().error().message();
      out.os().clear_error();
      return fail("cannot write '" + path + "': " + why);
    }
    out.keep();
    return llvm::Error::success();
  }

  llvm::Expected<std::unique_ptr<runtime::Executable>>
  load(ModuleOp module, const runtime::LoadOptions &runOptions) override {
    FailureOr<sim::Program> program =
        emitSystolicProgram(module, *options.config);
    if (failed(program))
      return fail("the program emitter failed");
    return std::unique_ptr<runtime::Executable>(
        systolic::ProgramExecutable::fromProgram(std::move(*program),
                                                 options.config, runOptions));
  }

private:
  systolic::LoweringOptions options;
  std::shared_ptr<const SystolicTargetInfo> info;
};

class SystolicTarget : public Target {
public:
  StringRef name() const override { return "systolic"; }
  StringRef description() const override {
    return "Tessera's systolic-array accelerator model (docs/Systolic.md): "
           "a program (.tsp) for its cycle-level simulator";
  }
  ArrayRef<TargetOption> options() const override {
    static const TargetOption kOptions[] = {
        {"accel", "preset|file.json",
         "the accelerator: a preset (tpu-v1, default, small) or a JSON "
         "configuration file",
         "default"}};
    return kOptions;
  }
  /// For the default accelerator (what tessera-opt's pipelines fuse for),
  /// made when first asked.
  const TargetInfo &info() const override {
    static const SystolicTargetInfo info(defaultAccelerator());
    return info;
  }
  ArrayRef<TargetPhase> phases() const override {
    static const TargetPhase kPhases[] = {
        {"program", "the schedule as a systolic.program",
         /*elideConstants=*/true}};
    return kPhases;
  }
  StringRef defaultPrintPhase() const override { return "program"; }
  ArrayRef<ArtifactKind> artifacts() const override {
    static const ArtifactKind kArtifacts[] = {
        {"program", ".tsp", "the accelerator's binary program"}};
    return kArtifacts;
  }
  bool needsStaticShapes() const override { return true; }

  llvm::Expected<std::unique_ptr<TargetCompilation>>
  configure(const TargetOptionValues &values, bool) const override {
    systolic::LoweringOptions options;
    options.accel = optionValue(values, "accel");
    auto config = systolic::loadAccelerator(options.accel);
    if (!config)
      return config.takeError();
    options.config = std::move(*config);
    // The array has no f32 operands: what --precision leaves f32 (all of
    // it without a policy) is read in fp16 under fp16 or on an array
    // without bf16, else in bf16.
    auto policy = values.find(kPrecisionOptionKey);
    bool f16 = (policy != values.end() && policy->second == "fp16") ||
               !options.config->supports(ElementType::BF16);
    options.operandFormat =
        f16 && options.config->supports(ElementType::F16) ? "f16" : "bf16";
    return std::make_unique<SystolicCompilation>(std::move(options));
  }

};

} // namespace

namespace tessera::systolic {
/// Registers the systolic target (tessera/Target/Targets.def).
void registerTarget();
} // namespace tessera::systolic

void ::tessera::systolic::registerTarget() {
  registerTesseraSystolicPasses();
  registerTargetInfo("systolic", [] {
    return std::make_unique<SystolicTargetInfo>(defaultAccelerator());
  });
  ::tessera::registerTarget(std::make_unique<SystolicTarget>());
}
