//===- TesseraModule.cpp - tessera._tessera: the C API bound for Python ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Compiles and runs through libtessera_compiler.so's C API. Inputs are read
// where they live (the buffer protocol, or DLPack for anything else);
// outputs are NumPy arrays over the buffers the model allocated, each
// keeping its buffer alive. The GIL is released while compiling and
// running.
//
//===----------------------------------------------------------------------===//
#include "tessera-c/Compiler.h"

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

const char *dtypeName(tessera_dtype dtype) {
  switch (dtype) {
  case TESSERA_F32:
    return "float32";
  case TESSERA_F16:
    return "float16";
  case TESSERA_BF16:
    return "bfloat16";
  case TESSERA_I8:
    return "int8";
  case TESSERA_I32:
    return "int32";
  case TESSERA_I64:
    return "int64";
  case TESSERA_BOOL:
    return "bool";
  case TESSERA_F8E4M3FN:
    return "float8_e4m3fn";
  case TESSERA_F8E5M2:
    return "float8_e5m2";
  }
  return "unknown";
}

/// The dtype of a buffer-protocol format, or -1.
int dtypeFromFormat(const char *format, Py_ssize_t itemsize) {
  if (!format)
    return itemsize == 1 ? TESSERA_I8 : -1; // "B" is the default
  std::string f = format;
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@'))
    f = f.substr(1);
  if (f == "f" && itemsize == 4)
    return TESSERA_F32;
  if (f == "e" && itemsize == 2)
    return TESSERA_F16;
  if ((f == "q" || f == "l") && itemsize == 8)
    return TESSERA_I64;
  if ((f == "i" || f == "l") && itemsize == 4)
    return TESSERA_I32;
  if (f == "b" && itemsize == 1)
    return TESSERA_I8;
  if (f == "?" && itemsize == 1)
    return TESSERA_BOOL;
  return -1;
}

/// A name for a buffer-protocol format, for messages.
std::string formatName(const char *format, Py_ssize_t itemsize) {
  std::string f = format ? format : "B";
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@'))
    f = f.substr(1);
  if (f == "d")
    return "float64";
  if (f == "B")
    return "uint8";
  if (f == "H")
    return "uint16";
  if (f == "h")
    return "int16";
  if (f == "I" || f == "L" || f == "Q")
    return "uint" + std::to_string(8 * itemsize);
  int dtype = dtypeFromFormat(format, itemsize);
  return dtype >= 0 ? dtypeName(static_cast<tessera_dtype>(dtype))
                    : "format '" + f + "'";
}

/// The dtype of a DLPack tensor, or -1.
int dtypeFromDLPack(DLDataType type) {
  if (type.lanes != 1)
    return -1;
  switch (type.code) {
  case kDLFloat:
    return type.bits == 32 ? TESSERA_F32 : type.bits == 16 ? TESSERA_F16 : -1;
  case kDLBfloat:
    return type.bits == 16 ? TESSERA_BF16 : -1;
  case kDLInt:
    return type.bits == 64   ? TESSERA_I64
           : type.bits == 32 ? TESSERA_I32
           : type.bits == 8  ? TESSERA_I8
                             : -1;
  case 6: // kDLBool (DLPack 0.8); older producers say kDLUInt with 8 bits
    return type.bits == 8 ? TESSERA_BOOL : -1;
  default:
    return -1;
  }
}

std::string describeDLPack(DLDataType type) {
  const char *kind = type.code == kDLFloat    ? "float"
                     : type.code == kDLInt    ? "int"
                     : type.code == kDLUInt   ? "uint"
                     : type.code == kDLBfloat ? "bfloat"
                                              : "type code ";
  std::string name = kind + std::to_string(type.bits);
  if (type.code > kDLBfloat && type.code != 6)
    name = std::string("type code ") + std::to_string(type.code);
  if (type.code == 6)
    name = "bool";
  return name;
}

/// One input, viewed without a copy: a Py_buffer or a DLPack capsule
/// held until the run ends.
struct InputView {
  Py_buffer buffer{};
  bool hasBuffer = false;
  py::object capsule;
  DLManagedTensor *managed = nullptr;
  InputView() = default;
  InputView(const InputView &) = delete;
  InputView &operator=(const InputView &) = delete;
  ~InputView() {
    if (hasBuffer)
      PyBuffer_Release(&buffer);
    if (managed) {
      // The consumer of a DLPack capsule renames it and calls its deleter.
      PyCapsule_SetName(capsule.ptr(), "used_dltensor");
      if (managed->deleter)
        managed->deleter(managed);
    }
  }
};

/// The signature entry of input `i`, for messages.
struct Port {
  std::string name;
  tessera_dtype dtype;
  std::vector<int64_t> shape; // -1 for dynamic
  std::vector<std::string> dimParams;
};

std::vector<Port> portsOf(const tessera_model *model, int output) {
  std::vector<Port> ports;
  int32_t n = output ? tessera_model_num_outputs(model)
                     : tessera_model_num_inputs(model);
  for (int32_t i = 0; i < n; ++i) {
    Port p;
    p.name = tessera_model_name(model, output, i);
    p.dtype = tessera_model_dtype(model, output, i);
    int32_t rank = tessera_model_rank(model, output, i);
    for (int32_t d = 0; d < rank; ++d) {
      p.shape.push_back(tessera_model_dim(model, output, i, d));
      const char *param = tessera_model_dim_param(model, output, i, d);
      p.dimParams.push_back(param ? param : "");
    }
    ports.push_back(std::move(p));
  }
  return ports;
}

/// Fills `tensor` from `object` without copying, or throws TypeError /
/// ValueError saying what is wrong with it.
void viewInput(const py::handle &object, const Port &port, InputView &view,
               tessera_tensor &tensor) {
  tensor = tessera_tensor{};
  std::string what = "input '" + port.name + "'";
  int dtype = -1;
  std::vector<int64_t> shape;
  if (PyObject_CheckBuffer(object.ptr())) {
    if (PyObject_GetBuffer(object.ptr(), &view.buffer,
                           PyBUF_STRIDES | PyBUF_FORMAT) != 0)
      throw py::error_already_set();
    view.hasBuffer = true;
    Py_buffer &b = view.buffer;
    dtype = dtypeFromFormat(b.format, b.itemsize);
    if (dtype < 0 || dtype != port.dtype)
      throw py::type_error(what + " must be " + dtypeName(port.dtype) +
                           ", got " + formatName(b.format, b.itemsize));
    shape.assign(b.shape, b.shape + b.ndim);
    if (!PyBuffer_IsContiguous(&b, 'C'))
      throw py::value_error(what +
                            " is not C-contiguous; pass "
                            "numpy.ascontiguousarray(x) (Tessera reads "
                            "inputs in place and never copies them)");
    tensor.data = b.buf;
    tensor.capacity = static_cast<size_t>(b.len);
  } else if (PyCapsule_CheckExact(object.ptr()) ||
             py::hasattr(object, "__dlpack__")) {
    // A DLPack capsule itself (what torch.utils.dlpack.to_dlpack returns),
    // or an object that makes one.
    bool isCapsule = PyCapsule_CheckExact(object.ptr());
    if (isCapsule && !PyCapsule_IsValid(object.ptr(), "dltensor"))
      throw py::value_error(what + " is a capsule but no unused DLPack "
                                   "tensor (a DLPack capsule is consumed "
                                   "once)");
    view.capsule = isCapsule ? py::reinterpret_borrow<py::object>(object)
                             : object.attr("__dlpack__")();
    auto *managed = static_cast<DLManagedTensor *>(
        PyCapsule_GetPointer(view.capsule.ptr(), "dltensor"));
    if (!managed)
      throw py::error_already_set();
    view.managed = managed;
    const DLTensor &t = managed->dl_tensor;
    if (t.device.device_type != kDLCPU)
      throw py::value_error(what + " is on a device (DLPack device type " +
                            std::to_string(t.device.device_type) +
                            "); Tessera runs CPU tensors only here");
    dtype = dtypeFromDLPack(t.dtype);
    if (dtype < 0 && t.dtype.code == kDLUInt && t.dtype.bits == 8 &&
        port.dtype == TESSERA_BOOL)
      dtype = TESSERA_BOOL;
    if (dtype < 0 || dtype != port.dtype)
      throw py::type_error(what + " must be " + dtypeName(port.dtype) +
                           ", got " + describeDLPack(t.dtype));
    shape.assign(t.shape, t.shape + t.ndim);
    if (t.strides) {
      int64_t expected = 1;
      for (int d = t.ndim - 1; d >= 0; --d) {
        if (t.shape[d] != 1 && t.strides[d] != expected)
          throw py::value_error(what +
                                " is not contiguous; pass x.contiguous() "
                                "(Tessera reads inputs in place and never "
                                "copies them)");
        expected *= t.shape[d];
      }
    }
    size_t count = 1;
    for (int64_t d : shape)
      count *= static_cast<size_t>(d);
    tensor.data = static_cast<char *>(t.data) + t.byte_offset;
    tensor.capacity = count * tessera_dtype_size(port.dtype);
  } else {
    throw py::type_error(what +
                         " must be a NumPy array, an object with "
                         "__dlpack__ or a DLPack capsule, got " +
                         std::string(py::str(py::type::of(object).attr(
                             "__name__"))));
  }
  if (shape.size() != port.shape.size())
    throw py::value_error(what + " must have rank " +
                          std::to_string(port.shape.size()) + ", got " +
                          std::to_string(shape.size()));
  if (shape.size() > TESSERA_MAX_RANK)
    throw py::value_error(what + " has rank " + std::to_string(shape.size()) +
                          " (at most " + std::to_string(TESSERA_MAX_RANK) +
                          ")");
  tensor.dtype = static_cast<tessera_dtype>(dtype);
  tensor.rank = static_cast<int32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), tensor.shape);
}

/// An output buffer the model allocated, the base of the NumPy array over
/// it: frees the buffer when the last array (or DLPack consumer) goes.
struct OutputBuffer {
  tessera_buffer *buffer;
  uintptr_t address; // where the C API put the output
  size_t nbytes;
  OutputBuffer(tessera_buffer *buffer, const void *data, size_t nbytes)
      : buffer(buffer), address(reinterpret_cast<uintptr_t>(data)),
        nbytes(nbytes) {}
  OutputBuffer(const OutputBuffer &) = delete;
  OutputBuffer &operator=(const OutputBuffer &) = delete;
  ~OutputBuffer() { tessera_buffer_free(buffer); }
};

/// A NumPy array over an output buffer the model allocated; the array's
/// base (an OutputBuffer) keeps the buffer until the array goes.
py::object outputArray(const tessera_tensor &out, tessera_buffer *buffer,
                       const std::string &name) {
  py::object owner = py::cast(new OutputBuffer(buffer, out.data, out.capacity),
                              py::return_value_policy::take_ownership);
  const char *format = nullptr;
  switch (out.dtype) {
  case TESSERA_F32:
    format = "float32";
    break;
  case TESSERA_F16:
    format = "float16";
    break;
  case TESSERA_I8:
    format = "int8";
    break;
  case TESSERA_I32:
    format = "int32";
    break;
  case TESSERA_I64:
    format = "int64";
    break;
  case TESSERA_BOOL:
    format = "bool";
    break;
  default:
    throw py::type_error("output '" + name + "' is " + dtypeName(out.dtype) +
                         ", which NumPy has no type for");
  }
  std::vector<py::ssize_t> shape(out.shape, out.shape + out.rank);
  py::dtype dtype(format);
  if (out.capacity == 0)
    return py::array(dtype, shape); // nothing to share
  return py::array(dtype, shape, out.data, owner);
}

/// A loaded model. Runs may overlap (the C API serializes them where the
/// model needs it); close() waits for none: the C model is freed when the
/// last run holding it ends.
class Model {
public:
  explicit Model(tessera_model *model)
      : handle(model, tessera_model_free), inputs(portsOf(model, 0)),
        outputs(portsOf(model, 1)) {}

  std::shared_ptr<tessera_model> get() const {
    std::lock_guard<std::mutex> lock(mutex);
    if (!handle)
      throw py::value_error("the model is closed");
    return handle;
  }

  void close() {
    std::lock_guard<std::mutex> lock(mutex);
    handle.reset();
  }
  bool closed() const {
    std::lock_guard<std::mutex> lock(mutex);
    return !handle;
  }

  /// Runs on `args` (a sequence in input order); a list of arrays.
  py::list run(const py::sequence &args) {
    std::shared_ptr<tessera_model> model = get();
    size_t n = inputs.size();
    if (static_cast<size_t>(py::len(args)) != n)
      throw py::type_error("the model takes " + std::to_string(n) +
                           " inputs (" + inputNames() + "), got " +
                           std::to_string(py::len(args)));
    std::vector<InputView> views(n);
    std::vector<tessera_tensor> tensors(n);
    for (size_t i = 0; i < n; ++i)
      viewInput(args[i], inputs[i], views[i], tensors[i]);
    std::vector<tessera_tensor> results(outputs.size());
    std::vector<tessera_buffer *> buffers(outputs.size(), nullptr);
    int status;
    std::string error;
    {
      py::gil_scoped_release release;
      status = tessera_model_run_nocopy(
          model.get(), tensors.data(), static_cast<int32_t>(n),
          results.data(), buffers.data(),
          static_cast<int32_t>(results.size()));
      if (status)
        error = tessera_last_error();
    }
    if (status)
      throw py::value_error(error);
    py::list arrays;
    size_t i = 0;
    try {
      for (; i < results.size(); ++i)
        arrays.append(outputArray(results[i], buffers[i], outputs[i].name));
    } catch (...) {
      for (size_t j = i + 1; j < buffers.size(); ++j)
        tessera_buffer_free(buffers[j]);
      throw;
    }
    return arrays;
  }

  /// The address each input of `args` is read from: what run() hands the
  /// C API, after the same checks (for tests that show no copy is made).
  py::list inputAddresses(const py::sequence &args) {
    get();
    size_t n = inputs.size();
    if (static_cast<size_t>(py::len(args)) != n)
      throw py::type_error("the model takes " + std::to_string(n) +
                           " inputs (" + inputNames() + "), got " +
                           std::to_string(py::len(args)));
    std::vector<InputView> views(n);
    std::vector<tessera_tensor> tensors(n);
    py::list addresses;
    for (size_t i = 0; i < n; ++i) {
      viewInput(args[i], inputs[i], views[i], tensors[i]);
      addresses.append(reinterpret_cast<uintptr_t>(tensors[i].data));
    }
    return addresses;
  }

  std::string device() const { return tessera_model_device(get().get()); }
  bool concurrentRuns() const {
    return tessera_model_concurrent_runs(get().get());
  }

  static py::list describe(const std::vector<Port> &ports) {
    py::list list;
    for (const Port &p : ports) {
      py::list shape;
      for (size_t d = 0; d < p.shape.size(); ++d) {
        if (p.shape[d] >= 0)
          shape.append(p.shape[d]);
        else if (!p.dimParams[d].empty())
          shape.append(p.dimParams[d]);
        else
          shape.append(py::none());
      }
      list.append(py::make_tuple(p.name, dtypeName(p.dtype), shape));
    }
    return list;
  }

  std::string inputNames() const {
    std::string names;
    for (const Port &p : inputs)
      names += (names.empty() ? "" : ", ") + p.name;
    return names;
  }

  mutable std::mutex mutex;
  std::shared_ptr<tessera_model> handle;
  std::vector<Port> inputs, outputs;
};

/// A finished compile.
class CompileResult {
public:
  explicit CompileResult(tessera_compile_result *result)
      : result(result, tessera_compile_result_free) {}

  bool ok() const { return tessera_compile_result_ok(result.get()); }
  py::bytes artifact() const {
    size_t size = 0;
    const void *data = tessera_compile_result_artifact(result.get(), &size);
    return py::bytes(static_cast<const char *>(data), size);
  }
  std::string kind() const {
    return tessera_compile_result_artifact_kind(result.get());
  }
  std::string extension() const {
    return tessera_compile_result_artifact_extension(result.get());
  }
  std::string fusionReport() const {
    return tessera_compile_result_fusion_report(result.get());
  }
  std::string messages() const {
    return tessera_compile_result_messages(result.get());
  }
  /// (severity, node, op_type, message, location) per diagnostic.
  py::list diagnostics() const {
    static const char *severities[] = {"error", "warning", "note", "remark"};
    py::list list;
    tessera_diagnostic d;
    for (int32_t i = 0;
         i < tessera_compile_result_num_diagnostics(result.get()); ++i)
      if (!tessera_compile_result_diagnostic(result.get(), i, &d))
        list.append(py::make_tuple(severities[d.severity], d.node, d.op_type,
                                   d.message, d.location));
    return list;
  }
  void write(const std::string &path) const {
    if (tessera_compile_result_write(result.get(), path.c_str()))
      throw py::value_error(tessera_last_error());
  }
  std::shared_ptr<Model> load(const std::map<std::string, std::string> &opts) {
    std::vector<const char *> names, values;
    for (const auto &[name, value] : opts)
      names.push_back(name.c_str()), values.push_back(value.c_str());
    tessera_model *model;
    std::string error;
    {
      py::gil_scoped_release release;
      model = tessera_compile_result_load(result.get(), names.data(),
                                          values.data(),
                                          static_cast<int32_t>(names.size()));
      if (!model)
        error = tessera_last_error();
    }
    if (!model)
      throw py::value_error(error);
    return std::make_shared<Model>(model);
  }

private:
  std::unique_ptr<tessera_compile_result, void (*)(tessera_compile_result *)>
      result;
};

/// Python's precision arguments: the policy, the --keep-fp32 patterns,
/// the calibration folder and cache ("" for none), tf32, the calibration
/// method and its percentile, and fp8's scaling.
struct PrecisionArgs {
  std::string policy = "fp32";
  std::vector<std::string> keepFp32;
  std::string calibrate, calibrationCache;
  bool allowTF32 = false;
  std::string calibrationMethod = "max";
  double calibrationPercentile = 99.99;
  std::string fp8Scaling = "static";
  std::string fp8Format = "e4m3";
  bool saturationCounts = false;
  bool quantizeHeads = false, quantizeFirstLayers = false;
};

/// C options from Python's: target, target options, fusion, threads,
/// artifact, dims, precision.
std::unique_ptr<tessera_compile_options, void (*)(tessera_compile_options *)>
makeOptions(const std::string &target,
            const std::map<std::string, std::string> &targetOptions,
            bool fusion, int compilerThreads, const std::string &artifact,
            const std::map<std::string, int64_t> &dims,
            const PrecisionArgs &precision) {
  std::unique_ptr<tessera_compile_options, void (*)(tessera_compile_options *)>
      options(tessera_compile_options_create(), tessera_compile_options_free);
  tessera_compile_options_set_target(options.get(), target.c_str());
  for (const auto &[name, value] : targetOptions)
    tessera_compile_options_set_target_option(options.get(), name.c_str(),
                                              value.c_str());
  tessera_compile_options_set_fusion(options.get(), fusion);
  tessera_compile_options_set_compiler_threads(options.get(), compilerThreads);
  tessera_compile_options_set_artifact(options.get(), artifact.c_str());
  for (const auto &[name, size] : dims)
    tessera_compile_options_set_dim(options.get(), name.c_str(), size);
  tessera_compile_options_set_precision(options.get(),
                                        precision.policy.c_str());
  for (const std::string &pattern : precision.keepFp32)
    tessera_compile_options_add_keep_fp32(options.get(), pattern.c_str());
  tessera_compile_options_set_allow_tf32(options.get(), precision.allowTF32);
  tessera_compile_options_set_quantize_layers(
      options.get(), precision.quantizeHeads, precision.quantizeFirstLayers);
  tessera_compile_options_set_calibration(
      options.get(),
      precision.calibrate.empty() ? nullptr : precision.calibrate.c_str(),
      precision.calibrationCache.empty() ? nullptr
                                         : precision.calibrationCache.c_str());
  tessera_compile_options_set_calibration_method(
      options.get(), precision.calibrationMethod.c_str(),
      precision.calibrationPercentile);
  tessera_compile_options_set_fp8(options.get(), precision.fp8Scaling.c_str(),
                                  precision.fp8Format.c_str());
  tessera_compile_options_set_saturation_counts(options.get(),
                                                precision.saturationCounts);
  return options;
}

} // namespace

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "Tessera's compiler and runtime (libtessera_compiler.so)";
  py::class_<OutputBuffer>(m, "Buffer",
                           "An output buffer the model allocated (the base "
                           "of the NumPy array over it)")
      .def_readonly("address", &OutputBuffer::address)
      .def_readonly("nbytes", &OutputBuffer::nbytes);
  py::class_<Model, std::shared_ptr<Model>>(m, "Model")
      .def("run", &Model::run, py::arg("inputs"))
      .def("input_addresses", &Model::inputAddresses, py::arg("inputs"))
      .def("close", &Model::close)
      .def_property_readonly("closed", &Model::closed)
      .def_property_readonly("device", &Model::device)
      .def_property_readonly("concurrent_runs", &Model::concurrentRuns)
      .def_property_readonly(
          "inputs", [](const Model &model) { return Model::describe(model.inputs); })
      .def_property_readonly("outputs", [](const Model &model) {
        return Model::describe(model.outputs);
      });

  py::class_<PrecisionArgs>(m, "Precision",
                            "The precision arguments of a compile")
      .def(py::init([](std::string policy, std::vector<std::string> keep,
                       std::string calibrate, std::string cache, bool allowTF32,
                       std::string method, double percentile,
                       std::string fp8Scaling, std::string fp8Format,
                       bool saturationCounts, bool quantizeHeads,
                       bool quantizeFirstLayers) {
             return PrecisionArgs{std::move(policy),
                                  std::move(keep),
                                  std::move(calibrate),
                                  std::move(cache),
                                  allowTF32,
                                  std::move(method),
                                  percentile,
                                  std::move(fp8Scaling),
                                  std::move(fp8Format),
                                  saturationCounts,
                                  quantizeHeads,
                                  quantizeFirstLayers};
           }),
           py::arg("policy"), py::arg("keep_fp32"), py::arg("calibrate"),
           py::arg("calibration_cache"), py::arg("allow_tf32") = false,
           py::arg("calibration_method") = "max",
           py::arg("calibration_percentile") = 99.99,
           py::arg("fp8_scaling") = "static", py::arg("fp8_format") = "e4m3",
           py::arg("saturation_counts") = false,
           py::arg("quantize_heads") = false,
           py::arg("quantize_first_layers") = false);
  py::class_<CompileResult>(m, "CompileResult")
      .def_property_readonly("ok", &CompileResult::ok)
      .def_property_readonly("artifact", &CompileResult::artifact)
      .def_property_readonly("kind", &CompileResult::kind)
      .def_property_readonly("extension", &CompileResult::extension)
      .def_property_readonly("fusion_report", &CompileResult::fusionReport)
      .def_property_readonly("messages", &CompileResult::messages)
      .def_property_readonly("diagnostics", &CompileResult::diagnostics)
      .def("write", &CompileResult::write, py::arg("path"))
      .def("load", &CompileResult::load,
           py::arg("options") = std::map<std::string, std::string>());

  m.def(
      "compile_file",
      [](const std::string &path, const std::string &target,
         const std::map<std::string, std::string> &targetOptions, bool fusion,
         int threads, const std::string &artifact,
         const std::map<std::string, int64_t> &dims,
         const PrecisionArgs &precision) {
        auto options = makeOptions(target, targetOptions, fusion, threads,
                                   artifact, dims, precision);
        tessera_compile_result *result;
        {
          py::gil_scoped_release release;
          result = tessera_compile_file(path.c_str(), options.get());
        }
        return std::make_unique<CompileResult>(result);
      },
      py::arg("path"), py::arg("target"), py::arg("target_options"),
      py::arg("fusion"), py::arg("compiler_threads"), py::arg("artifact"),
      py::arg("dims"), py::arg("precision"));
  m.def(
      "compile_bytes",
      [](const py::bytes &data, const std::string &name,
         const std::string &target,
         const std::map<std::string, std::string> &targetOptions, bool fusion,
         int threads, const std::string &artifact,
         const std::map<std::string, int64_t> &dims,
         const PrecisionArgs &precision) {
        auto options = makeOptions(target, targetOptions, fusion, threads,
                                   artifact, dims, precision);
        char *bytes;
        Py_ssize_t size;
        if (PyBytes_AsStringAndSize(data.ptr(), &bytes, &size) != 0)
          throw py::error_already_set();
        tessera_compile_result *result;
        {
          // `data` stays alive (the caller holds it) while the GIL is out.
          py::gil_scoped_release release;
          result = tessera_compile_buffer(bytes, static_cast<size_t>(size),
                                          name.c_str(), options.get());
        }
        return std::make_unique<CompileResult>(result);
      },
      py::arg("data"), py::arg("name"), py::arg("target"),
      py::arg("target_options"), py::arg("fusion"),
      py::arg("compiler_threads"), py::arg("artifact"), py::arg("dims"),
      py::arg("precision"));
  m.def(
      "load",
      [](const std::string &path,
         const std::map<std::string, std::string> &opts) {
        std::vector<const char *> names, values;
        for (const auto &[name, value] : opts)
          names.push_back(name.c_str()), values.push_back(value.c_str());
        tessera_model *model;
        std::string error;
        {
          py::gil_scoped_release release;
          model = tessera_model_load_with_options(
              path.c_str(), names.data(), values.data(),
              static_cast<int32_t>(names.size()));
          if (!model)
            error = tessera_last_error();
        }
        if (!model)
          throw py::value_error(error);
        return std::make_shared<Model>(model);
      },
      py::arg("path"),
      py::arg("options") = std::map<std::string, std::string>());
}
