//===- Compile.cpp - whole-model compilation entry points -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/Compile.h"
#include "tessera/Conversion/Passes.h"
#include "tessera/Conversion/SystolicEmitter.h"
#include "tessera/Driver/Pipelines.h"
#include "tessera/Import/ONNX/ImportONNX.h"
#include "tessera/Sim/Config.h"
#include "tessera/Target/CPU/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

static llvm::Error phaseFailed(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

llvm::Expected<tessera::LoweredModel>
tessera::lowerONNXForCpu(llvm::StringRef path, MLIRContext &context,
                         const cpu::CPUOptions &options,
                         const GraphOptions &graphOptions) {
  auto module = importONNXFile(path, context);
  if (failed(module))
    return phaseFailed("import failed");
  PassManager graph(&context);
  buildGraphPipeline(graph, graphOptions);
  if (failed(graph.run(**module)))
    return phaseFailed("graph passes failed");
  // The signature is read at the tensor level, before bufferization turns
  // results into output arguments.
  auto signature = runtime::readSignature(**module);
  if (!signature)
    return signature.takeError();
  // The signature now carries the names and symbolic dims; LLVM has no use
  // for them on arguments.
  (*module)->walk([](func::FuncOp func) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.setArgAttrs(i, ArrayRef<NamedAttribute>{});
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      func.setResultAttrs(i, ArrayRef<NamedAttribute>{});
  });
  PassManager lower(&context);
  cpu::buildLinalgPipeline(lower, graphOptions.fuse);
  cpu::buildLLVMPipeline(lower, options);
  if (failed(lower.run(**module)))
    return phaseFailed("lowering for the CPU failed");
  return LoweredModel{std::move(*module), std::move(*signature)};
}

llvm::Expected<std::unique_ptr<tessera::runtime::CpuJit>>
tessera::compileONNXForCpu(llvm::StringRef path, MLIRContext &context) {
  auto lowered = lowerONNXForCpu(path, context);
  if (!lowered)
    return lowered.takeError();
  return runtime::CpuJit::create(*lowered->module,
                                 std::move(lowered->signature));
}

llvm::Expected<std::map<std::string, int64_t>>
tessera::parseDimValues(llvm::ArrayRef<std::string> dims) {
  std::map<std::string, int64_t> values;
  for (const std::string &dim : dims) {
    auto [name, size] = llvm::StringRef(dim).split('=');
    int64_t value;
    if (name.empty() || size.getAsInteger(10, value) || value <= 0)
      return phaseFailed("--dim expects name=size with a positive size, got '" +
                         dim + "'");
    values[name.str()] = value;
  }
  return values;
}

llvm::Expected<OwningOpRef<ModuleOp>> tessera::lowerONNXForSystolic(
    llvm::StringRef path, MLIRContext &context, const SystolicOptions &options,
    llvm::function_ref<LogicalResult(PassManager &)> configure,
    TimingScope *timing) {
  std::optional<TimingScope> importTiming;
  if (timing)
    importTiming = timing->nest("Import ONNX");
  auto module = importONNXFile(path, context, options.import);
  if (importTiming)
    importTiming->stop();
  if (failed(module))
    return phaseFailed("import failed");
  PassManager pm(&context);
  if (configure && failed(configure(pm)))
    return phaseFailed("invalid pass manager options");
  GraphOptions graph;
  graph.fuse = false;
  buildGraphPipeline(pm, graph);
  ConvertTesseraToSystolicPassOptions lowering;
  lowering.accel = options.accel;
  lowering.format = options.operandFormat;
  pm.addPass(createConvertTesseraToSystolicPass(lowering));
  if (failed(pm.run(**module)))
    return phaseFailed("lowering for the systolic target failed");
  return std::move(*module);
}

llvm::Expected<tessera::sim::Program>
tessera::compileONNXForSystolic(llvm::StringRef path, MLIRContext &context,
                                const SystolicOptions &options) {
  auto config = sim::loadConfig(options.accel);
  if (auto *error = std::get_if<std::string>(&config))
    return phaseFailed(*error);
  auto module = lowerONNXForSystolic(path, context, options);
  if (!module)
    return module.takeError();
  auto program =
      emitSystolicProgram(**module, std::get<sim::AcceleratorConfig>(config));
  if (failed(program))
    return phaseFailed("the program emitter failed");
  return std::move(*program);
}
