//===- OptFuzzer.cpp - libFuzzer target: textual IR through Tessera's passes ==//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each input is an MLIR file as tessera-opt reads it. Its first line may
// name the passes to run, `// passes: NAME NAME ...` (at most 4; Tessera's
// own passes only: names starting with `tessera-` or `convert-tessera-`;
// other names are ignored); without it the graph phase's Tessera passes run
// (raise-composites, raise-attention, form-fusion-regions). The file is
// parsed and verified; IR that does not verify is rejected, as tessera-opt
// does. Verified IR goes through the passes, with the verifier after each,
// and is printed. MLIR's rule is that verifier-valid IR never crashes a
// pass: a diagnostic or a failed pass is a fine outcome, a crash, a
// sanitizer report or a leak is a finding.
//
//===----------------------------------------------------------------------===//
#include "tessera/InitTessera.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace {
const char *const kDefaultPasses[] = {"tessera-raise-composites",
                                      "tessera-raise-attention",
                                      "tessera-form-fusion-regions"};

bool isTesseraPass(llvm::StringRef name) {
  return name.starts_with("tessera-") || name.starts_with("convert-tessera-");
}

/// Adds the pass `name` to `pm`, nested on functions when it runs on them.
void addPass(mlir::PassManager &pm, llvm::StringRef name) {
  if (!isTesseraPass(name))
    return;
  const mlir::PassInfo *info = mlir::PassInfo::lookup(name);
  if (!info)
    return;
  auto ignore = [](const llvm::Twine &) { return mlir::failure(); };
  // An op-agnostic pass manager tells which op the pass runs on.
  mlir::OpPassManager probe(mlir::OpPassManager::Nesting::Explicit);
  if (mlir::failed(info->addToPipeline(probe, "", ignore)) ||
      probe.getPasses().empty())
    return;
  std::optional<llvm::StringRef> anchor = probe.getPasses().begin()->getOpName();
  if (anchor && *anchor == mlir::func::FuncOp::getOperationName())
    (void)info->addToPipeline(pm.nest<mlir::func::FuncOp>(), "", ignore);
  else if (!anchor || *anchor == mlir::ModuleOp::getOperationName())
    (void)info->addToPipeline(pm, "", ignore);
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  tessera::registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::SmallVector<llvm::StringRef> passes;
  llvm::StringRef first = text.take_until([](char c) { return c == '\n'; });
  if (first.consume_front("// passes:")) {
    first.split(passes, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    if (passes.size() > 4)
      passes.resize(4);
  } else {
    passes.assign(std::begin(kDefaultPasses), std::end(kDefaultPasses));
  }

  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics are expected for most inputs; keep the output quiet.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config);
  if (!module)
    return 0;
  mlir::PassManager pm(&context);
  for (llvm::StringRef name : passes)
    addPass(pm, name.trim());
  if (mlir::succeeded(pm.run(*module))) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    module->print(os);
  }
  return 0;
}
