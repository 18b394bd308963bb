//===- TensorIO.h - reads tensors from ONNX TensorProto files -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_RUNTIME_TENSORIO_H
#define TESSERA_RUNTIME_TENSORIO_H

#include "tessera/Runtime/HostTensor.h"

namespace tessera::runtime {

/// Reads an ONNX TensorProto file (the test layout's input_K.pb).
llvm::Expected<HostTensor> readTensorProto(llvm::StringRef path);

/// Reads a NumPy .npy file (C order; f4, f2, i1, i4, i8 or b1).
llvm::Expected<HostTensor> readNpy(llvm::StringRef path);

/// Reads a .npy or (any other name) a TensorProto file.
llvm::Expected<HostTensor> readTensorFile(llvm::StringRef path);

/// Reads each file with readTensorFile, in order.
llvm::Expected<std::vector<HostTensor>>
readTensorFiles(llvm::ArrayRef<std::string> paths);

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_TENSORIO_H
