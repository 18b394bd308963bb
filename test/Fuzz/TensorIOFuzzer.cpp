//===- TensorIOFuzzer.cpp - libFuzzer target: .pb and .npy tensor files ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each input is a tensor file as tessera-run reads it with --input and
// --expected: an ONNX TensorProto (.pb) or a NumPy array (.npy), chosen by
// the first byte (even: .pb, odd: .npy; the rest is the file). The file goes
// through readTensorFile, then, like tessera-run's comparison of an output
// with its expected value, through compareTensors() against itself. An error is a
// fine outcome; a crash, a sanitizer report, a leak or an allocation the
// file's size does not justify is a finding.
//
// The reader takes a path, so each input is written to a private temporary
// folder.
//
//===----------------------------------------------------------------------===//
#include "tessera/Runtime/HostTensor.h"
#include "tessera/Runtime/TensorIO.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {
std::string folder;
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  folder = std::string(tmp && *tmp ? tmp : "/tmp") +
           "/tessera-fuzz-tensor-io.XXXXXX";
  if (!mkdtemp(folder.data())) {
    std::perror("tessera-fuzz-tensor-io: mkdtemp");
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  std::string path = folder + (data[0] % 2 ? "/input.npy" : "/input.pb");
  {
    FILE *file = std::fopen(path.c_str(), "wb");
    if (!file)
      std::abort();
    if (size > 1 && std::fwrite(data + 1, 1, size - 1, file) != size - 1)
      std::abort();
    std::fclose(file);
  }
  auto tensor = tessera::runtime::readTensorFile(path);
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return 0;
  }
  tessera::runtime::Comparison same =
      tessera::runtime::compareTensors(*tensor, *tensor, 1e-5, 1e-5);
  if (!same.shapesMatch)
    std::abort(); // a tensor differs in shape from itself

  return 0;
}
