//===- Passes.h - target-independent passes on the tessera dialect --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TRANSFORMS_PASSES_H
#define TESSERA_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace tessera {

#define GEN_PASS_DECL
#include "tessera/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessera/Transforms/Passes.h.inc"

class TargetInfo;

/// The attribute tessera-raise-attention leaves on a product of a softmax
/// that it did not raise (why, in words); the fusion pass reports it as a
/// rejected attention candidate and removes it.
inline constexpr char kAttentionNotRaisedAttr[] = "tessera.attention_not_raised";

/// Forms fusion regions as `info` (a compilation's TargetInfo, configured
/// for its hardware) says; a null `info` uses the one registered under
/// `options.target`.
std::unique_ptr<mlir::Pass>
createFormFusionRegionsPass(const FormFusionRegionsPassOptions &options,
                            std::shared_ptr<const TargetInfo> info);

} // namespace tessera

#endif // TESSERA_TRANSFORMS_PASSES_H
