//===- Signature.h - a model's signature recorded in its IR ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The pass tessera-record-signature writes the entry function's inputs and
// outputs as the `tessera.signature` attribute (the JSON of
// runtime::signatureToJSON); these read it back and map the dialect's
// element types onto the shared enumeration.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TRANSFORMS_SIGNATURE_H
#define TESSERA_TRANSFORMS_SIGNATURE_H

#include "tessera/Dialect/Tessera/IR/ElementTypes.h"
#include "tessera/Runtime/Invoke.h"
#include "tessera/Support/ElementType.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Types.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace tessera {

/// The attribute on the entry function that holds the signature.
constexpr const char *kSignatureAttrName = "tessera.signature";


/// The signature recorded on `module`'s entry function; an error when no
/// function has one (the pipeline did not run tessera-record-signature).
llvm::Expected<runtime::ModelSignature> recordedSignature(mlir::ModuleOp module);

} // namespace tessera

#endif // TESSERA_TRANSFORMS_SIGNATURE_H
