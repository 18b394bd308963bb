//===- Passes.h - target-independent passes on the tessera dialect --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TRANSFORMS_PASSES_H
#define TESSERA_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace tessera {

#define GEN_PASS_DECL
#include "tessera/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessera/Transforms/Passes.h.inc"

} // namespace tessera

#endif // TESSERA_TRANSFORMS_PASSES_H
