// compile.cpp - compiles an ONNX model in process from C++ and runs it, also from many threads.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Usage: tessera-embed-compile-cpp model.onnx [--no-fusion] [--dim=N]
//                                  [--threads=T --runs=R]
// Compiles the model with tessera::Compiled::fromFile (errors come back as
// tessera::CompileError with one Diagnostic per problem), opens it from
// memory and runs it on deterministic inputs (dynamic dims take N, default
// 2): f32 inputs get (k % 7) / 10, integer inputs k % 5. Prints each
// output's shape and first values. With --threads, T threads then run the
// same model R times each at once and every output is compared bit for bit
// with the serial run's.
#include "tessera-c/Compiler.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

/// Inputs for `model`, with their storage.
struct Inputs {
  std::vector<tessera_tensor> tensors;
  std::vector<std::vector<unsigned char>> storage;
};

Inputs makeInputs(const tessera::Model &model, int64_t dynamicSize) {
  Inputs in;
  tessera_model *m = model.get();
  in.tensors.resize(model.numInputs());
  in.storage.resize(model.numInputs());
  for (int i = 0; i < model.numInputs(); ++i) {
    tessera_tensor &t = in.tensors[i];
    t = tessera_tensor{};
    t.dtype = tessera_model_dtype(m, 0, i);
    t.rank = tessera_model_rank(m, 0, i);
    size_t count = 1;
    for (int d = 0; d < t.rank; ++d) {
      int64_t dim = tessera_model_dim(m, 0, i, d);
      t.shape[d] = dim < 0 ? dynamicSize : dim;
      count *= static_cast<size_t>(t.shape[d]);
    }
    size_t width = tessera_dtype_size(t.dtype);
    in.storage[i].resize(count * width);
    unsigned char *bytes = in.storage[i].data();
    for (size_t k = 0; k < count; ++k) {
      if (t.dtype == TESSERA_F32) {
        float v = static_cast<float>(k % 7) / 10;
        std::memcpy(bytes + k * 4, &v, 4);
      } else if (t.dtype == TESSERA_I64) {
        int64_t v = static_cast<int64_t>(k % 5);
        std::memcpy(bytes + k * 8, &v, 8);
      } else if (t.dtype == TESSERA_I32) {
        int32_t v = static_cast<int32_t>(k % 5);
        std::memcpy(bytes + k * 4, &v, 4);
      } else {
        bytes[k * width] = static_cast<unsigned char>(k % 2);
      }
    }
    t.data = bytes;
    t.capacity = in.storage[i].size();
  }
  return in;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s model.onnx [options...]\n", argv[0]);
    return 2;
  }
  tessera::CompilerOptions options;
  int64_t dynamicSize = 2;
  int threads = 0, runs = 1;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-fusion"))
      options.fusion = false;
    else if (!std::strncmp(argv[i], "--dim=", 6))
      dynamicSize = std::atoll(argv[i] + 6);
    else if (!std::strncmp(argv[i], "--threads=", 10))
      threads = std::atoi(argv[i] + 10);
    else if (!std::strncmp(argv[i], "--runs=", 7))
      runs = std::atoi(argv[i] + 7);
    else {
      std::fprintf(stderr, "error: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  try {
    tessera::Compiled compiled = tessera::Compiled::fromFile(argv[1], options);
    tessera::Model model = compiled.load();
    Inputs inputs = makeInputs(model, dynamicSize);
    std::vector<tessera_tensor> outputs;
    std::vector<std::vector<unsigned char>> reference;
    model.run(inputs.tensors, outputs, reference);
    for (int i = 0; i < model.numOutputs(); ++i) {
      std::printf("output %s: [", model.outputName(i).c_str());
      for (int d = 0; d < outputs[i].rank; ++d)
        std::printf(d ? ", %lld" : "%lld",
                    static_cast<long long>(outputs[i].shape[d]));
      std::printf("]");
      if (outputs[i].dtype == TESSERA_F32) {
        auto *values = reinterpret_cast<const float *>(reference[i].data());
        for (size_t k = 0; k < reference[i].size() / 4 && k < 4; ++k)
          std::printf(" %.6g", values[k]);
      }
      std::printf("\n");
    }
    if (threads <= 0)
      return 0;

    // One model, many threads: each run must give the serial run's bits.
    std::vector<int> mismatches(threads, 0), failures(threads, 0);
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        std::vector<tessera_tensor> outs;
        std::vector<std::vector<unsigned char>> storage;
        for (int r = 0; r < runs; ++r) {
          try {
            model.run(inputs.tensors, outs, storage);
          } catch (const std::exception &) {
            ++failures[t];
            continue;
          }
          if (storage != reference)
            ++mismatches[t];
        }
      });
    for (std::thread &thread : pool)
      thread.join();
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    int bad = 0, failed = 0;
    for (int t = 0; t < threads; ++t)
      bad += mismatches[t], failed += failures[t];
    std::printf("concurrent: %d threads x %d runs (%s): %d differ from the "
                "serial run, %d failed (%.1f runs/s)\n",
                threads, runs,
                tessera_model_concurrent_runs(model.get()) ? "in parallel"
                                                           : "serialized",
                bad, failed, threads * runs / seconds);
    return bad || failed ? 1 : 0;
  } catch (const tessera::CompileError &error) {
    for (const tessera::Diagnostic &d : error.diagnostics())
      std::fprintf(stderr, "diagnostic: node='%s' op_type='%s': %s\n",
                   d.node.c_str(), d.opType.c_str(), d.message.c_str());
    return 1;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
