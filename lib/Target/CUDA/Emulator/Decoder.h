//===- Decoder.h - Opcode-string decoding shared by the parser --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_TARGET_CUDA_EMULATOR_DECODER_H
#define TESSERA_LIB_TARGET_CUDA_EMULATOR_DECODER_H

#include "tessera/Target/CUDA/Emulator/PTXProgram.h"
#include "llvm/Support/Error.h"

namespace tessera::ptx {

/// Fills inst.op and its modifier fields from inst.opcode; an unknown opcode
/// or a modifier the opcode does not take is an error.
llvm::Error decodeOpcode(Instruction &inst);

/// Checks operand count and kinds once operands are parsed, and converts
/// float literals to the bit pattern of the operand's type.
llvm::Error checkOperands(Instruction &inst);

} // namespace tessera::ptx

#endif // TESSERA_LIB_TARGET_CUDA_EMULATOR_DECODER_H
