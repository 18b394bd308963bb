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

/// `paths` in name order with numbers read as numbers: by the file
/// name's text before its trailing number, then that number
/// (test_data_set_2 before test_data_set_10), then the whole path.
void sortNumbered(std::vector<std::string> &paths);

/// The test_data_set_* folders of ONNX's test layout in `dir`, in
/// sortNumbered's order.
std::vector<std::string> testDataSets(llvm::StringRef dir);

/// The samples a calibration reads in `dir`, in sortNumbered's order,
/// each a path
/// for testDataFiles(path, "input"): ONNX's test_data_set_* folders when
/// there are any; else the folders holding input_<K>.pb or .npy files;
/// else `dir` itself when it holds such files (one sample); else the .pb
/// and .npy files in `dir` (but output_*), one sample each of a model with
/// one input.
std::vector<std::string> calibrationSamples(llvm::StringRef dir);

/// The files named `<prefix>_<K>.pb` or `<prefix>_<K>.npy` in a test set
/// `dir` (prefix "input" or "output"), by K; a sample that is one file
/// (calibrationSamples) is its own one input.
std::vector<std::string> testDataFiles(llvm::StringRef dir,
                                       llvm::StringRef prefix);

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_TENSORIO_H
