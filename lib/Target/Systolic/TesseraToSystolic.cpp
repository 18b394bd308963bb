//===- TesseraToSystolic.cpp - a model as a systolic accelerator program --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Lowering.h"

#include "tessera/Target/Systolic/Passes.h"

namespace tessera {
#define GEN_PASS_DEF_CONVERTTESSERATOSYSTOLICPASS
#include "tessera/Target/Systolic/Passes.h.inc"
} // namespace tessera

using namespace mlir;
namespace sim = ::tessera::sim;

namespace {

struct ConvertTesseraToSystolicPass
    : ::tessera::impl::ConvertTesseraToSystolicPassBase<
          ConvertTesseraToSystolicPass> {
  using ConvertTesseraToSystolicPassBase::ConvertTesseraToSystolicPassBase;

  ConvertTesseraToSystolicPass(
      const ::tessera::ConvertTesseraToSystolicPassOptions &options,
      std::shared_ptr<const sim::AcceleratorConfig> config)
      : ConvertTesseraToSystolicPassBase(options), config(std::move(config)) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    if (funcs.size() != 1) {
      module.emitError("the systolic target compiles a module with one "
                       "function, not ")
          << funcs.size();
      return signalPassFailure();
    }
    // The caller's configuration, else the one `accel` names.
    std::shared_ptr<const sim::AcceleratorConfig> accelerator = config;
    if (!accelerator) {
      sim::Result<sim::AcceleratorConfig> loaded = sim::loadConfig(accel);
      if (auto *error = std::get_if<std::string>(&loaded)) {
        module.emitError() << *error;
        return signalPassFailure();
      }
      accelerator = std::make_shared<const sim::AcceleratorConfig>(
          std::move(std::get<sim::AcceleratorConfig>(loaded)));
    }
    ::tessera::systolic::Lowering lowering(*accelerator);
    if (failed(lowering.run(module, funcs.front())))
      return signalPassFailure();
  }

  /// The accelerator loaded by the caller, or null to load `accel`.
  std::shared_ptr<const sim::AcceleratorConfig> config;
};

} // namespace

namespace tessera {
std::unique_ptr<Pass> createConvertTesseraToSystolicPass(
    const ConvertTesseraToSystolicPassOptions &options,
    std::shared_ptr<const sim::AcceleratorConfig> config) {
  return std::make_unique<ConvertTesseraToSystolicPass>(options,
                                                        std::move(config));
}
} // namespace tessera
