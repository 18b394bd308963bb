//===- ElementType.h - the element types every layer shares ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One enumeration of tensor element types for the runtime (host tensors,
// signatures), the simulator (number formats of the DRAM image and the
// array) and the C API (whose `tessera_dtype` values are these values).
// The dialect's MLIR types map onto it in tessera/Transforms/Signature.h.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SUPPORT_ELEMENTTYPE_H
#define TESSERA_SUPPORT_ELEMENTTYPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace tessera {

/// The values are the C API's `tessera_dtype` values (a stable ABI): new
/// types are appended.
enum class ElementType : uint8_t {
  F32 = 0,
  F16 = 1,
  BF16 = 2,
  I8 = 3,
  I32 = 4,
  I64 = 5,
  Bool = 6,
  F8E4M3FN = 7,
  F8E5M2 = 8,
};

/// ONNX TensorProto data types newer than the ONNX library Tessera builds
/// on (1.12), by their numbers: the fp8 formats of ONNX 1.14 (opset 19)
/// and the 4-bit integers of 1.16.
enum OnnxNewerDataType : int32_t {
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
};

/// Every element type, in value order.
llvm::ArrayRef<ElementType> allElementTypes();

/// Bytes per element as stored in memory (bool: one byte).
size_t elementSize(ElementType type);

/// The bytes of a dense tensor of `shape` and `type`, or nothing when a dim
/// is negative or the size does not fit in an int64_t, counting only the
/// non-zero dims (so that the strides and element counts of an accepted
/// shape never overflow). A file or a caller that claims such a shape is
/// refused before anything is allocated.
std::optional<uint64_t> denseByteSize(llvm::ArrayRef<int64_t> shape,
                                      ElementType type);

/// The name in MLIR's spelling: "f32", "f16", "bf16", "i8", "i32", "i64",
/// "i1", "f8E4M3FN", "f8E5M2".
llvm::StringRef elementTypeName(ElementType type);

/// The type named `name` (elementTypeName's spelling; "bool" is accepted
/// for i1), or nothing.
std::optional<ElementType> parseElementType(llvm::StringRef name);

/// Whether `type` is a floating-point type (fp32, fp16, bf16, fp8).
bool isFloat(ElementType type);

/// The element type of the value `value` of the C API's `tessera_dtype`,
/// or nothing when no type has that value.
std::optional<ElementType> elementTypeFromValue(int64_t value);

} // namespace tessera

#endif // TESSERA_SUPPORT_ELEMENTTYPE_H
