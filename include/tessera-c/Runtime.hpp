//===- Runtime.hpp - a C++ wrapper over Tessera's C runtime API -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_C_RUNTIME_HPP
#define TESSERA_C_RUNTIME_HPP

#include "tessera-c/Runtime.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera {

/// A loaded artifact; errors throw std::runtime_error with the runtime's
/// message.
class Model {
public:
  explicit Model(const std::string &path)
      : model(tessera_model_load(path.c_str()), tessera_model_free) {
    if (!model)
      throw std::runtime_error(tessera_last_error());
  }
  /// Takes over a model opened through the C API (not NULL).
  explicit Model(tessera_model *opened) : model(opened, tessera_model_free) {}

  int numInputs() const { return tessera_model_num_inputs(model.get()); }
  int numOutputs() const { return tessera_model_num_outputs(model.get()); }
  std::string inputName(int i) const {
    return tessera_model_name(model.get(), 0, i);
  }
  std::string outputName(int i) const {
    return tessera_model_name(model.get(), 1, i);
  }
  /// The C handle, for the calls this wrapper does not cover.
  tessera_model *get() const { return model.get(); }

  /// Runs the model; each output's storage grows to the size the model
  /// reports.
  void run(const std::vector<tessera_tensor> &inputs,
           std::vector<tessera_tensor> &outputs,
           std::vector<std::vector<unsigned char>> &storage) {
    outputs.resize(numOutputs());
    storage.resize(numOutputs());
    for (size_t i = 0; i < outputs.size(); ++i) {
      outputs[i].data = storage[i].data();
      outputs[i].capacity = storage[i].size();
    }
    int status = call(inputs, outputs);
    if (status == 2) {
      // Too small: size each buffer from the reported shape and retry.
      for (size_t i = 0; i < outputs.size(); ++i) {
        size_t bytes = tessera_dtype_size(outputs[i].dtype);
        for (int d = 0; d < outputs[i].rank; ++d)
          bytes *= static_cast<size_t>(outputs[i].shape[d]);
        storage[i].resize(bytes);
        outputs[i].data = storage[i].data();
        outputs[i].capacity = bytes;
      }
      status = call(inputs, outputs);
    }
    if (status != 0)
      throw std::runtime_error(tessera_last_error());
  }

private:
  int call(const std::vector<tessera_tensor> &inputs,
           std::vector<tessera_tensor> &outputs) {
    return tessera_model_run(model.get(), inputs.data(),
                             static_cast<int32_t>(inputs.size()),
                             outputs.data(),
                             static_cast<int32_t>(outputs.size()));
  }

  std::unique_ptr<tessera_model, void (*)(tessera_model *)> model;
};

} // namespace tessera

#endif // TESSERA_C_RUNTIME_HPP
