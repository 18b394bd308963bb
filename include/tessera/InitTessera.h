//===- InitTessera.h - registration of every dialect and pass Tessera uses ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_INITTESSERA_H
#define TESSERA_INITTESSERA_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tessera {

/// Adds Tessera's dialects and the upstream dialects its pipelines produce
/// (func, arith, math, tensor, linalg, bufferization, memref, scf, vector,
/// llvm) to `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers Tessera's passes and pipelines and the upstream passes they
/// build on, so that tessera-opt can run each one by name.
void registerAllPasses();

} // namespace tessera

#endif // TESSERA_INITTESSERA_H
