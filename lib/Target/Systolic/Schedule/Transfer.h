//===- Transfer.h - DMA instructions the schedules build ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Internal to the systolic schedules: the load and store instructions that
// the GEMM and vector-unit schedules emit.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_SYSTOLIC_SCHEDULE_TRANSFER_H
#define TESSERA_LIB_TARGET_SYSTOLIC_SCHEDULE_TRANSFER_H

#include "tessera/Sim/Program.h"

namespace tessera::sim {

/// A 2-D DMA: `rows` rows of `rowBytes`, DRAM row stride `stride`, SRAM
/// contiguous.
inline Instruction transfer(Opcode opcode, Buffer buffer, uint64_t dram,
                            uint32_t sram, int64_t rows, int64_t rowBytes,
                            int64_t stride) {
  Instruction i;
  i.opcode = opcode;
  i.flags = opcode == Opcode::Load ? static_cast<uint8_t>(buffer) : 0;
  i.dram = dram;
  i.a = sram;
  i.rows = static_cast<uint32_t>(rows);
  i.c = static_cast<uint32_t>(rowBytes);
  i.b = static_cast<uint32_t>(stride);
  return i;
}

/// `bytes` contiguous bytes each side, one DMA row.
inline Instruction contiguousTransfer(Opcode opcode, uint64_t dram,
                                      uint32_t sram, int64_t bytes) {
  return transfer(opcode, Buffer::Unified, dram, sram, 1, bytes, bytes);
}

} // namespace tessera::sim

#endif // TESSERA_LIB_TARGET_SYSTOLIC_SCHEDULE_TRANSFER_H
