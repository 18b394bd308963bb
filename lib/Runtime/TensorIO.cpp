//===- TensorIO.cpp - reads tensors from ONNX TensorProto files -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/TensorIO.h"

#include "llvm/Support/MemoryBuffer.h"

#include "onnx/onnx_pb.h"

#include <cstring>

using namespace tessera::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<HostTensor> tessera::runtime::readTensorProto(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read '" + path + "': " + buffer.getError().message());
  onnx::TensorProto proto;
  if (!proto.ParseFromArray((*buffer)->getBufferStart(),
                            static_cast<int>((*buffer)->getBufferSize())))
    return fail("'" + path + "' is not an ONNX TensorProto");
  HostTensor t;
  t.name = proto.name();
  switch (proto.data_type()) {
  case onnx::TensorProto::FLOAT:
    t.type = ElementType::F32;
    break;
  case onnx::TensorProto::FLOAT16:
    t.type = ElementType::F16;
    break;
  case onnx::TensorProto::BFLOAT16:
    t.type = ElementType::BF16;
    break;
  case onnx::TensorProto::INT8:
    t.type = ElementType::I8;
    break;
  case onnx::TensorProto::INT32:
    t.type = ElementType::I32;
    break;
  case onnx::TensorProto::INT64:
    t.type = ElementType::I64;
    break;
  case onnx::TensorProto::BOOL:
    t.type = ElementType::Bool;
    break;
  default:
    return fail("'" + path + "' holds element type " +
                llvm::Twine(proto.data_type()) +
                ", which Tessera does not support");
  }
  for (int64_t d : proto.dims()) {
    if (d < 0 || d > (int64_t(1) << 40))
      return fail("'" + path + "' has an invalid dimension " + llvm::Twine(d));
    t.shape.push_back(d);
  }
  size_t bytes = t.numElements() * elementSize(t.type);
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes)
      return fail("'" + path + "' declares " + llvm::Twine(bytes) +
                  " bytes but holds " + llvm::Twine(proto.raw_data().size()));
    t.data.assign(proto.raw_data().begin(), proto.raw_data().end());
    return t;
  }
  t.data.resize(bytes);
  auto store = [&](size_t i, auto v) {
    std::memcpy(t.data.data() + i * sizeof(v), &v, sizeof(v));
  };
  size_t n = t.numElements();
  auto check = [&](size_t have) -> llvm::Error {
    if (have != n)
      return fail("'" + path + "' declares " + llvm::Twine(n) +
                  " elements but holds " + llvm::Twine(have));
    return llvm::Error::success();
  };
  switch (t.type) {
  case ElementType::F32:
    if (auto e = check(proto.float_data_size()))
      return std::move(e);
    for (size_t i = 0; i < n; ++i)
      store(i, proto.float_data(i));
    break;
  case ElementType::I64:
    if (auto e = check(proto.int64_data_size()))
      return std::move(e);
    for (size_t i = 0; i < n; ++i)
      store(i, static_cast<int64_t>(proto.int64_data(i)));
    break;
  default:
    if (auto e = check(proto.int32_data_size()))
      return std::move(e);
    for (size_t i = 0; i < n; ++i) {
      int32_t v = proto.int32_data(i);
      if (t.type == ElementType::I32)
        store(i, v);
      else if (elementSize(t.type) == 2)
        store(i, static_cast<uint16_t>(v));
      else
        store(i, static_cast<int8_t>(v));
    }
  }
  return t;
}

