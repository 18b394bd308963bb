//===- PTXParser.h - Parse PTX text into decoded kernels --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Accepts the PTX subset that MLIR 22's NVPTX backend and nvcc 13 emit for
// Tessera's kernels. Anything outside it (an unknown directive, opcode or
// modifier, a call) is an error naming the buffer and line.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CUDA_EMULATOR_PTXPARSER_H
#define TESSERA_TARGET_CUDA_EMULATOR_PTXPARSER_H

#include "tessera/Target/CUDA/Emulator/PTXProgram.h"
#include "llvm/Support/Error.h"

namespace tessera::ptx {

/// Parses and decodes a whole PTX module. Errors read
/// "<bufferName>:<line>: <message>".
llvm::Expected<Module> parsePTX(llvm::StringRef text,
                                llvm::StringRef bufferName = "<ptx>");

} // namespace tessera::ptx

#endif // TESSERA_TARGET_CUDA_EMULATOR_PTXPARSER_H
