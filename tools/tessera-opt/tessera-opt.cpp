//===- tessera-opt.cpp - runs passes over MLIR with Tessera's dialects ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/InitTessera.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  tessera::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Tessera optimizer: runs Tessera's and MLIR's passes\n",
      registry));
}
