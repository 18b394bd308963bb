//===- Target.cpp - the systolic backend in the target registry -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Target.h"
#include "tessera/Target/Systolic/Emitter.h"
#include "tessera/Target/Systolic/Passes.h"
#include "tessera/Target/Systolic/ProgramExecutable.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tessera;

namespace {

namespace systolic = ::tessera::systolic;

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The accelerator schedules each op itself (matmul epilogues and vector
/// chains are formed by its lowering): the graph keeps one op per kernel.
class SystolicTargetInfo : public TargetInfo {
public:
  StringRef name() const override { return "systolic"; }
  bool formsFusionRegions() const override { return false; }
  /// The array multiplies bf16, f16, fp8 and int8 operands (accumulating in
  /// fp32 or int32); the vector unit computes in fp32; data moves in any
  /// number format of the DRAM image.
  ArrayRef<ElementType>
  supportedElementTypes(OpClass opClass) const override {
    static const ElementType kContraction[] = {
        ElementType::BF16, ElementType::F16, ElementType::F8E4M3FN,
        ElementType::F8E5M2, ElementType::I8};
    static const ElementType kVector[] = {ElementType::F32};
    static const ElementType kData[] = {
        ElementType::F32,      ElementType::BF16,   ElementType::F16,
        ElementType::F8E4M3FN, ElementType::F8E5M2, ElementType::I8};
    switch (opClass) {
    case OpClass::Contraction:
      return kContraction;
    case OpClass::Elementwise:
    case OpClass::Reduction:
      return kVector;
    case OpClass::DataMovement:
      return kData;
    }
    return kVector;
  }
  bool fusesAttention() const override { return false; }
  std::optional<std::string>
  rejectEpilogueOperand(Value, RankedTensorType) const override {
    return std::string("the systolic target forms no fusion regions");
  }
  unsigned maxEpilogueOps() const override { return 0; }
  bool recomputeIsCheap(Operation *, unsigned) const override {
    return false;
  }
  SmallVector<int64_t> tileSizes(StringRef) const override { return {}; }
};

class SystolicCompilation : public TargetCompilation {
public:
  explicit SystolicCompilation(systolic::LoweringOptions options)
      : options(std::move(options)) {}

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
    llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message());
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
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
         "default"},
        {"operand-format", "format",
         "the matmul operand format (bf16, f16, f8E4M3FN, f8E5M2)", "bf16"}};
    return kOptions;
  }
  const TargetInfo &info() const override { return targetInfo; }
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
    if (auto it = values.find("accel"); it != values.end())
      options.accel = it->second;
    if (auto it = values.find("operand-format"); it != values.end())
      options.operandFormat = it->second;
    auto config = systolic::loadAccelerator(options.accel);
    if (!config)
      return config.takeError();
    options.config = std::move(*config);
    return std::make_unique<SystolicCompilation>(std::move(options));
  }

private:
  SystolicTargetInfo targetInfo;
};

} // namespace

namespace tessera::systolic {
/// Registers the systolic target (tessera/Target/Targets.def).
void registerTarget();
} // namespace tessera::systolic

void ::tessera::systolic::registerTarget() {
  registerTesseraSystolicPasses();
  registerTargetInfo("systolic",
                     [] { return std::make_unique<SystolicTargetInfo>(); });
  ::tessera::registerTarget(std::make_unique<SystolicTarget>());
}
