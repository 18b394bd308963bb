//===- TensorIO.cpp - reads tensors from ONNX TensorProto files -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/TensorIO.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h"

#include <cstring>

using namespace tessera::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<HostTensor>
tessera::runtime::readTensorProto(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read '" + path + "': " + buffer.getError().message());
  onnx::TensorProto proto;
  // Protobuf parses many byte strings; a tensor must name its element type.
  if (!proto.ParseFromArray((*buffer)->getBufferStart(),
                            static_cast<int>((*buffer)->getBufferSize())) ||
      proto.data_type() == onnx::TensorProto::UNDEFINED)
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
  case kFloat8E4M3FN:
    t.type = ElementType::F8E4M3FN;
    break;
  case kFloat8E5M2:
    t.type = ElementType::F8E5M2;
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
  // The header's shape decides nothing until the data is there for it.
  std::optional<uint64_t> size = denseByteSize(t.shape, t.type);
  if (!size)
    return fail("'" + path + "' declares a shape too large for memory");
  size_t bytes = *size;
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes)
      return fail("'" + path + "' declares " + llvm::Twine(bytes) +
                  " bytes but holds " + llvm::Twine(proto.raw_data().size()));
    t.data.assign(proto.raw_data().begin(), proto.raw_data().end());
    return t;
  }
  size_t n = bytes / elementSize(t.type);
  size_t have = t.type == ElementType::F32   ? proto.float_data_size()
                : t.type == ElementType::I64 ? proto.int64_data_size()
                                             : proto.int32_data_size();
  if (have != n)
    return fail("'" + path + "' declares " + llvm::Twine(n) +
                " elements but holds " + llvm::Twine(have));
  t.data.resize(bytes);
  auto store = [&](size_t i, auto v) {
    std::memcpy(t.data.data() + i * sizeof(v), &v, sizeof(v));
  };
  switch (t.type) {
  case ElementType::F32:
    for (size_t i = 0; i < n; ++i)
      store(i, proto.float_data(i));
    break;
  case ElementType::I64:
    for (size_t i = 0; i < n; ++i)
      store(i, static_cast<int64_t>(proto.int64_data(i)));
    break;
  default:
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

/// NumPy's .npy format, versions 1 to 3: magic, header length, a Python
/// dict literal ('descr', 'fortran_order', 'shape'), then the raw data.
llvm::Expected<HostTensor> tessera::runtime::readNpy(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read '" + path + "': " + buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return fail("'" + path + "' is not a .npy file");
  unsigned major = static_cast<uint8_t>(bytes[6]);
  size_t headerStart = major == 1 ? 10 : 12;
  if (bytes.size() < headerStart)
    return fail("'" + path + "' is truncated");
  size_t headerLength =
      major == 1
          ? static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8
          : static_cast<uint8_t>(bytes[8]) |
                static_cast<uint8_t>(bytes[9]) << 8 |
                static_cast<uint8_t>(bytes[10]) << 16 |
                static_cast<size_t>(static_cast<uint8_t>(bytes[11])) << 24;
  if (bytes.size() < headerStart + headerLength)
    return fail("'" + path + "' is truncated");
  llvm::StringRef header = bytes.substr(headerStart, headerLength);
  auto field = [&](llvm::StringRef key) {
    size_t at = header.find("'" + key.str() + "'");
    if (at == llvm::StringRef::npos)
      return llvm::StringRef();
    llvm::StringRef rest = header.substr(at + key.size() + 2).ltrim(" :");
    return rest;
  };
  llvm::StringRef descr = field("descr");
  if (descr.empty() || field("shape").empty())
    return fail("'" + path + "' has no descr or shape in its header");
  descr = descr.drop_front().take_until([](char c) { return c == '\''; });
  if (field("fortran_order").starts_with("True"))
    return fail("'" + path + "' is in Fortran order; save it C-contiguous");
  HostTensor t;
  t.name = llvm::sys::path::stem(path).str();
  static const std::pair<const char *, ElementType> kTypes[] = {
      {"<f4", ElementType::F32}, {"<f2", ElementType::F16},
      {"|i1", ElementType::I8},  {"<i4", ElementType::I32},
      {"<i8", ElementType::I64}, {"|b1", ElementType::Bool}};
  auto it =
      llvm::find_if(kTypes, [&](auto &entry) { return descr == entry.first; });
  if (it == std::end(kTypes))
    return fail("'" + path + "' holds dtype '" + descr +
                "', which Tessera does not read (f4, f2, i1, i4, i8, b1)");
  t.type = it->second;
  llvm::StringRef shape =
      field("shape").drop_front().take_until([](char c) { return c == ')'; });
  llvm::SmallVector<llvm::StringRef> dims;
  shape.split(dims, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef dim : dims) {
    int64_t d;
    if (dim.trim().getAsInteger(10, d) || d < 0 || d > (int64_t(1) << 40))
      return fail("'" + path + "' has an invalid shape");
    t.shape.push_back(d);
  }
  std::optional<uint64_t> bytesNeeded = denseByteSize(t.shape, t.type);
  if (!bytesNeeded)
    return fail("'" + path + "' declares a shape too large for memory");
  llvm::StringRef data = bytes.drop_front(headerStart + headerLength);
  if (data.size() != *bytesNeeded)
    return fail("'" + path + "' declares " + llvm::Twine(*bytesNeeded) +
                " bytes of data but holds " + llvm::Twine(data.size()));
  t.data.assign(data.begin(), data.end());
  return t;
}

llvm::Expected<HostTensor>
tessera::runtime::readTensorFile(llvm::StringRef path) {
  return path.ends_with(".npy") ? readNpy(path) : readTensorProto(path);
}

llvm::Expected<std::vector<HostTensor>>
tessera::runtime::readTensorFiles(llvm::ArrayRef<std::string> paths) {
  std::vector<HostTensor> tensors;
  for (const std::string &path : paths) {
    auto tensor = readTensorFile(path);
    if (!tensor)
      return tensor.takeError();
    tensors.push_back(std::move(*tensor));
  }
  return tensors;
}

std::vector<std::string> tessera::runtime::testDataSets(llvm::StringRef dir) {
  std::vector<std::string> sets;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with("test_data_set_"))
      sets.push_back(it->path());
  sortNumbered(sets);
  return sets;
}

/// Whether `name` is a tensor file: .pb or .npy.
static bool isTensorFile(llvm::StringRef name) {
  return name.ends_with(".pb") || name.ends_with(".npy");
}

void tessera::runtime::sortNumbered(std::vector<std::string> &paths) {
  // A name's trailing number ("test_data_set_12", "sample_3.npy") and
  // the text before it.
  auto split = [](llvm::StringRef path) {
    llvm::StringRef name = llvm::sys::path::stem(path);
    llvm::StringRef stem = name.rtrim("0123456789");
    uint64_t number = 0;
    bool numbered = !name.drop_front(stem.size()).getAsInteger(10, number);
    return std::make_tuple(stem, !numbered, number, path);
  };
  llvm::sort(paths, [&](const std::string &a, const std::string &b) {
    return split(a) < split(b);
  });
}

std::vector<std::string>
tessera::runtime::calibrationSamples(llvm::StringRef dir) {
  std::vector<std::string> sets = testDataSets(dir);
  if (!sets.empty())
    return sets;
  std::vector<std::string> folders, files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::sys::fs::file_status status;
    // Hidden entries (an editor's or a file system's) are no samples.
    if (llvm::sys::path::filename(it->path()).starts_with(".") ||
        llvm::sys::fs::status(it->path(), status))
      continue;
    if (llvm::sys::fs::is_directory(status)) {
      if (!testDataFiles(it->path(), "input").empty())
        folders.push_back(it->path());
    } else if (isTensorFile(llvm::sys::path::filename(it->path()))) {
      files.push_back(it->path());
    }
  }
  if (folders.empty() && !testDataFiles(dir, "input").empty())
    return {dir.str()};
  // Loose files are inputs (a test set's outputs are not).
  llvm::erase_if(files, [](const std::string &path) {
    return llvm::sys::path::filename(path).starts_with("output_");
  });
  std::vector<std::string> &samples = folders.empty() ? files : folders;
  sortNumbered(samples);
  return samples;
}

std::vector<std::string>
tessera::runtime::testDataFiles(llvm::StringRef dir, llvm::StringRef prefix) {
  if (llvm::sys::fs::is_regular_file(dir))
    return prefix == "input" ? std::vector<std::string>{dir.str()}
                             : std::vector<std::string>{};
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    int k;
    if (name.consume_front(prefix) && name.consume_front("_") &&
        (name.consume_back(".pb") || name.consume_back(".npy")) &&
        !name.getAsInteger(10, k))
      found.emplace_back(k, it->path());
  }
  // One file per K: the .pb of ONNX's layout when a .npy copy is beside
  // it (".npy" sorts after ".pb").
  llvm::sort(found);
  found.erase(std::unique(found.begin(), found.end(),
                          [](const auto &a, const auto &b) {
                            return a.first == b.first;
                          }),
              found.end());
  llvm::sort(found);
  std::vector<std::string> paths;
  for (auto &f : found)
    paths.push_back(f.second);
  return paths;
}
