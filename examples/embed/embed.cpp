// embed.cpp - runs a Tessera CPU artifact from C++ through the runtime's wrapper.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Usage: tessera-embed-cpp model.so SHAPE...
// Runs a model with one f32 input of the given shape (dynamic dims allowed),
// filled with 0, 1, 2, ..., and prints each output's shape and first values.
#include "tessera-c/Runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s model.so DIM...\n", argv[0]);
    return 2;
  }
  try {
    tessera::Model model(argv[1]);
    tessera_tensor input{};
    input.dtype = TESSERA_F32;
    input.rank = argc - 2;
    size_t count = 1;
    for (int d = 0; d < input.rank; ++d)
      count *= static_cast<size_t>(input.shape[d] = std::atoll(argv[2 + d]));
    std::vector<float> data(count);
    for (size_t k = 0; k < count; ++k)
      data[k] = static_cast<float>(k);
    input.data = data.data();
    input.capacity = count * sizeof(float);
    std::vector<tessera_tensor> outputs;
    std::vector<std::vector<unsigned char>> storage;
    model.run({input}, outputs, storage);
    for (int i = 0; i < model.numOutputs(); ++i) {
      std::printf("output %s: [", model.outputName(i).c_str());
      for (int d = 0; d < outputs[i].rank; ++d)
        std::printf(d ? ", %lld" : "%lld",
                    static_cast<long long>(outputs[i].shape[d]));
      std::printf("]");
      auto *values = reinterpret_cast<const float *>(storage[i].data());
      for (size_t k = 0; k < storage[i].size() / sizeof(float) && k < 6; ++k)
        std::printf(" %g", values[k]);
      std::printf("\n");
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
