//===- SystolicIO.cpp - host tensors in and out of a systolic program -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Systolic/SystolicIO.h"
#include "tessera/Sim/Simulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstring>

using namespace tessera;
using namespace tessera::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

ModelSignature runtime::programSignature(const sim::Program &program) {
  ModelSignature signature;
  for (const sim::TensorInfo &t : program.tensors) {
    if (t.role == sim::TensorInfo::Role::Constant ||
        t.role == sim::TensorInfo::Role::Scratch)
      continue;
    TensorSignature sig;
    sig.name = t.name;
    sig.type = ElementType::F32;
    sig.shape = t.shape;
    sig.dimParams.assign(t.shape.size(), "");
    (t.role == sim::TensorInfo::Role::Input ? signature.inputs
                                            : signature.outputs)
        .push_back(sig);
  }
  return signature;
}

llvm::Error runtime::writeProgramInputs(sim::Program &program,
                                        llvm::ArrayRef<HostTensor> inputs) {
  size_t count = llvm::count_if(program.tensors, [](const sim::TensorInfo &t) {
    return t.role == sim::TensorInfo::Role::Input;
  });
  if (inputs.size() != count)
    return fail("the program takes " + llvm::Twine(count) + " inputs, got " +
                llvm::Twine(inputs.size()));
  size_t next = 0;
  for (const sim::TensorInfo &t : program.tensors) {
    if (t.role != sim::TensorInfo::Role::Input)
      continue;
    const HostTensor &in = inputs[next++];
    // Booleans (masks) go in as 0.0 and 1.0, integers (token ids) as
    // fp32, exact below 2^24.
    bool integer = in.type == ElementType::I64 || in.type == ElementType::I32 ||
                   in.type == ElementType::Bool;
    if ((in.type != ElementType::F32 && !integer) || in.shape != t.shape)
      return fail(
          "input '" + t.name +
          "' must be f32 (or boolean, or integer indices) of shape [" +
          llvm::join(llvm::map_range(
                         t.shape, [](int64_t d) { return std::to_string(d); }),
                     ", ") +
          "]");
    if (!integer) {
      sim::writeTensor(program, t,
                       reinterpret_cast<const float *>(in.data.data()));
      continue;
    }
    std::vector<float> values(static_cast<size_t>(in.numElements()));
    for (int64_t i = 0; i < in.numElements(); ++i) {
      double v = in.at(i);
      if (std::fabs(v) > double(1 << 24))
        return fail("input '" + t.name + "' holds " +
                    std::to_string(int64_t(v)) +
                    ", beyond the fp32 indices' exact range (2^24)");
      values[i] = static_cast<float>(v);
    }
    sim::writeTensor(program, t, values.data());
  }
  return llvm::Error::success();
}

std::vector<HostTensor>
runtime::readProgramOutputs(const sim::Program &program) {
  std::vector<HostTensor> outputs;
  for (const sim::TensorInfo &t : program.tensors) {
    if (t.role != sim::TensorInfo::Role::Output)
      continue;
    HostTensor out;
    out.name = t.name;
    out.type = ElementType::F32;
    out.shape = t.shape;
    std::vector<float> values = sim::readTensor(program, t);
    out.data.resize(values.size() * 4);
    std::memcpy(out.data.data(), values.data(), out.data.size());
    outputs.push_back(std::move(out));
  }
  return outputs;
}
