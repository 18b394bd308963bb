//===- Tensors.cpp - ONNX TensorProto to MLIR elements attributes ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Weights are the bulk of a model: large tensors move their bytes out of the
// parsed protobuf into a resource blob without copying, and external data is
// mapped from its file. Every size a file declares is checked against the
// data it holds before anything is read.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "tessera/Support/ElementType.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace tessera::onnx_import {

Type convertElementType(int32_t dataType,
                                              MLIRContext &context) {
  Builder b(&context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case kFloat8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case kFloat8E5M2:
    return b.getType<Float8E5M2Type>();
  default:
    return {};
  }
}

StringRef dataTypeName(int32_t dataType) {
  // Types of ONNX 1.14 and later, which the ONNX library Tessera builds on
  // does not name.
  switch (dataType) {
  case kFloat8E4M3FN:
    return "FLOAT8E4M3FN";
  case kFloat8E4M3FNUZ:
    return "FLOAT8E4M3FNUZ";
  case kFloat8E5M2:
    return "FLOAT8E5M2";
  case kFloat8E5M2FNUZ:
    return "FLOAT8E5M2FNUZ";
  case kUInt4:
    return "UINT4";
  case kInt4:
    return "INT4";
  default:
    break;
  }
  if (!onnx::TensorProto_DataType_IsValid(dataType))
    return "an unknown data type";
  return onnx::TensorProto_DataType_Name(
      static_cast<onnx::TensorProto_DataType>(dataType));
}

/// Bytes per element as ONNX stores them in raw_data.
static int64_t rawElementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return type.getIntOrFloatBitWidth() / 8;
}

/// Reads external data. The location is relative to the model's folder and
/// may not escape it: absolute paths and ".." components are refused, as are
/// offsets and lengths beyond the file.
static FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readExternal(const onnx::TensorProto &tensor, StringRef modelDir,
             int64_t expectedBytes, Location loc) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      int64_t value;
      if (StringRef(entry.value()).getAsInteger(10, value) || value < 0)
        return emitError(loc) << "tensor '" << tensor.name() << "' has an "
                              << entry.key() << " that is not a "
                              << "non-negative integer: '" << entry.value()
                              << "'";
      (entry.key() == "offset" ? offset : length) = value;
    }
  }
  if (location.empty())
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has external data without a location";
  if (modelDir.empty())
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has external data, but the model was not "
                             "read from a file";
  namespace path = llvm::sys::path;
  if (path::is_absolute(location) || path::is_absolute_gnu(location) ||
      llvm::is_contained(llvm::make_range(path::begin(location),
                                          path::end(location)),
                         ".."))
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': external data location '" << location
                          << "' must be a relative path inside the model's "
                             "folder";
  SmallString<256> file(modelDir);
  path::append(file, location);
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(file, fileSize))
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': cannot read external data file '" << file
                          << "': " << ec.message();
  int64_t size = static_cast<int64_t>(fileSize);
  if (length < 0)
    length = size - offset;
  if (offset > size || length > size - offset)
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': external data range [" << offset << ", "
                          << offset << " + " << length
                          << ") lies beyond the end of '" << location << "' ("
                          << size << " bytes)";
  if (length != expectedBytes)
    return emitError(loc) << "tensor '" << tensor.name() << "' needs "
                          << expectedBytes << " bytes but its external data "
                          << "holds " << length;
  // Maps only the tensor's slice of the file; no copy for large tensors.
  auto slice = llvm::MemoryBuffer::getFileSlice(file, length, offset);
  if (!slice)
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': cannot read external data file '" << file
                          << "': " << slice.getError().message();
  return std::move(*slice);
}

/// Packs a typed repeated field (float_data, int32_data, int64_data) into
/// little-endian bytes of `type`.
static std::string packTypedData(const onnx::TensorProto &tensor, Type type) {
  std::string bytes;
  auto append = [&](auto value) {
    bytes.append(reinterpret_cast<const char *>(&value), sizeof(value));
  };
  if (type.isF32()) {
    for (float v : tensor.float_data())
      append(v);
  } else if (type.isInteger(64)) {
    for (int64_t v : tensor.int64_data())
      append(v);
  } else if (type.isInteger(32)) {
    for (int32_t v : tensor.int32_data())
      append(v);
  } else if (type.isF16() || type.isBF16()) {
    // 16-bit floats travel as their bit patterns in int32_data.
    for (int32_t v : tensor.int32_data())
      append(static_cast<uint16_t>(v));
  } else {
    for (int32_t v : tensor.int32_data()) // i8 and bool
      append(static_cast<int8_t>(v));
  }
  return bytes;
}

static size_t typedDataCount(const onnx::TensorProto &tensor, Type type) {
  if (type.isF32())
    return tensor.float_data_size();
  if (type.isInteger(64))
    return tensor.int64_data_size();
  return tensor.int32_data_size();
}

FailureOr<ElementsAttr>
convertTensor(onnx::TensorProto &tensor,
                                    StringRef modelDir,
                                    int64_t inlineElementLimit, Location loc) {
  MLIRContext &ctx = *loc.getContext();
  Type type = convertElementType(tensor.data_type(), ctx);
  if (!type)
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has element type "
                          << dataTypeName(tensor.data_type())
                          << ", which Tessera does not support";
  SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  std::optional<int64_t> count = ::tessera::staticElementCount(dims);
  int64_t elementBytes = rawElementBytes(type);
  if (!count || *count > std::numeric_limits<int64_t>::max() / elementBytes)
    return emitError(loc) << "tensor '" << tensor.name() << "' has invalid "
                          << "dimensions [" << llvm::interleaved(dims)
                          << "] (negative, or too many elements)";
  int64_t expectedBytes = *count * elementBytes;
  auto shapedType = RankedTensorType::get(dims, type);

  // Gather the bytes from whichever field holds them.
  std::string owned;
  std::unique_ptr<llvm::MemoryBuffer> external;
  ArrayRef<char> bytes;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto buffer = readExternal(tensor, modelDir, expectedBytes, loc);
    if (failed(buffer))
      return failure();
    external = std::move(*buffer);
    bytes = ArrayRef<char>(external->getBufferStart(),
                           external->getBufferSize());
  } else if (tensor.has_raw_data()) {
    if (static_cast<int64_t>(tensor.raw_data().size()) != expectedBytes)
      return emitError(loc) << "tensor '" << tensor.name() << "' declares "
                            << ::tessera::formatShape(dims) << " ("
                            << expectedBytes << " bytes) but holds "
                            << tensor.raw_data().size() << " bytes";
    // Steal the bytes: the proto is not read again.
    owned = std::move(*tensor.mutable_raw_data());
    tensor.clear_raw_data();
    bytes = ArrayRef<char>(owned.data(), owned.size());
  } else {
    size_t n = typedDataCount(tensor, type);
    if (static_cast<int64_t>(n) != *count)
      return emitError(loc) << "tensor '" << tensor.name() << "' declares "
                            << ::tessera::formatShape(dims) << " ("
                            << *count << " elements) but holds " << n
                            << " values";
    owned = packTypedData(tensor, type);
    bytes = ArrayRef<char>(owned.data(), owned.size());
  }

  // Booleans and small tensors stay inline: readable and foldable.
  if (type.isInteger(1)) {
    SmallVector<bool> bits(llvm::map_range(bytes, [](char c) { return c != 0; }));
    return cast<ElementsAttr>(DenseElementsAttr::get(shapedType, bits));
  }
  if (*count <= inlineElementLimit)
    return cast<ElementsAttr>(
        DenseElementsAttr::getFromRawBuffer(shapedType, bytes));

  // Hand the storage to the blob without copying when it is aligned.
  size_t alignment = static_cast<size_t>(elementBytes);
  std::string blobName = tensor.name().empty() ? "tensor" : tensor.name();
  AsmResourceBlob blob;
  if (external &&
      reinterpret_cast<uintptr_t>(bytes.data()) % alignment == 0) {
    auto *buffer = external.release();
    blob = AsmResourceBlob(bytes, alignment,
                           [buffer](void *, size_t, size_t) { delete buffer; },
                           /*dataIsMutable=*/false);
  } else if (!external) {
    auto *buffer = new std::string(std::move(owned));
    ArrayRef<char> data(buffer->data(), buffer->size());
    if (reinterpret_cast<uintptr_t>(data.data()) % alignment == 0) {
      blob = AsmResourceBlob(
          data, alignment, [buffer](void *, size_t, size_t) { delete buffer; },
          /*dataIsMutable=*/false);
    } else {
      blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignment);
      delete buffer;
    }
  } else {
    blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignment);
  }
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(shapedType, blobName, std::move(blob)));
}

} // namespace tessera::onnx_import
