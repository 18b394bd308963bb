//===- SystolicIO.h - host tensors in and out of a systolic program -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A systolic program (.tsp) seen as a model: its input and output tensors,
// fp32 at the boundary, written into and read from its DRAM image in each
// tensor's format. Shared by tessera-run and tessera-sim.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_SYSTOLIC_SYSTOLICIO_H
#define TESSERA_TARGET_SYSTOLIC_SYSTOLICIO_H

#include "tessera/Runtime/Invoke.h"
#include "tessera/Sim/Program.h"

namespace tessera::runtime {

/// The program's inputs and outputs (fp32, static shapes), in order.
ModelSignature programSignature(const sim::Program &program);

/// Writes `inputs` (in the program's input order) into its DRAM image,
/// converted to each tensor's format: fp32 values, or integer indices
/// (i32/i64, exact as fp32 below 2^24). Errors name the input and the
/// shape it must have.
llvm::Error writeProgramInputs(sim::Program &program,
                               llvm::ArrayRef<HostTensor> inputs);

/// The program's outputs read back from its DRAM image as fp32.
std::vector<HostTensor> readProgramOutputs(const sim::Program &program);

} // namespace tessera::runtime

#endif // TESSERA_TARGET_SYSTOLIC_SYSTOLICIO_H
