// ptx-hw-run.cu - runs one PTX kernel launch on a real GPU (CUDA driver API).
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The hardware side of the emulator's differential pack (scripts/gpu-check.sh).
// It takes the same launch options as tessera-ptx-emu, so one line of
// cases.txt runs unchanged on the GPU and on the emulator:
//
//   ptx-hw-run k.ptx --kernel=K --grid=X[,Y[,Z]] --block=X[,Y[,Z]]
//       [--dynamic-smem=N] --buffer=NAME:TYPE:COUNT[=INIT] ... --args=A,B,..
//       [--tensor-map=NAME:BUFFER:RANK:DIMS:STRIDES:BOX:SWIZZLE[:nan] ...]
//       --dump=NAME:PATH ...
//
// --tensor-map encodes a tiled TMA tensor map over BUFFER with
// cuTensorMapEncodeTiled (element strides 1, no interleave, no L2 promotion)
// and copies its 128 bytes to a device buffer NAME, so @NAME passes the
// map's global address as the emulator's option of the same syntax does.
//
// INIT is zero, iota, ramp:P, const:V or values:V,...; tessera-ptx-emu's
// rand:SEED is not offered here (use file:PATH for random data). The PTX is
// loaded as text (cuModuleLoadData), so the driver JIT-compiles exactly the
// PTX the emulator runs. Built by gpu-check.sh with nvcc; needs a GPU.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "ptx-hw-run: error: %s\n", msg.c_str());
  std::exit(1);
}

void check(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS)
    return;
  const char *name = nullptr;
  cuGetErrorName(r, &name);
  die(std::string(what) + " failed: " + (name ? name : "unknown error"));
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    out.push_back(item);
  return out;
}

struct Buffer {
  std::string name, type;
  size_t count = 0, elemBytes = 0;
  std::vector<uint8_t> bytes;
  CUdeviceptr dev = 0;
};

size_t typeBytes(const std::string &t) {
  if (t == "f16" || t == "bf16" || t == "i16" || t == "u16" || t == "s16" ||
      t == "b16")
    return 2;
  if (t == "f32" || t == "i32" || t == "u32" || t == "s32" || t == "b32")
    return 4;
  if (t == "f64" || t == "i64" || t == "u64" || t == "s64" || t == "b64")
    return 8;
  if (t == "i8" || t == "u8" || t == "s8" || t == "b8")
    return 1;
  die("unknown buffer type '" + t + "'");
}

void setElem(Buffer &b, size_t i, double x) {
  uint8_t *p = b.bytes.data() + i * b.elemBytes;
  if (b.type == "f16") {
    __half h = __double2half(x);
    std::memcpy(p, &h, 2);
  } else if (b.type == "bf16") {
    __nv_bfloat16 h = __double2bfloat16(x);
    std::memcpy(p, &h, 2);
  } else if (b.type == "f32") {
    float f = float(x);
    std::memcpy(p, &f, 4);
  } else if (b.type == "f64") {
    std::memcpy(p, &x, 8);
  } else {
    int64_t v = int64_t(x);
    std::memcpy(p, &v, b.elemBytes);
  }
}

Buffer makeBuffer(const std::string &spec) {
  size_t eq = spec.find('=');
  std::string decl = spec.substr(0, eq),
              init = eq == std::string::npos ? "" : spec.substr(eq + 1);
  std::vector<std::string> parts = split(decl, ':');
  if (parts.size() != 3)
    die("--buffer wants NAME:TYPE:COUNT[=INIT], got '" + spec + "'");
  Buffer b;
  b.name = parts[0];
  b.type = parts[1];
  b.elemBytes = typeBytes(b.type);
  b.count = std::stoull(parts[2]);
  b.bytes.assign(b.count * b.elemBytes, 0);
  size_t colon = init.find(':');
  std::string kind = init.substr(0, colon),
              arg = colon == std::string::npos ? "" : init.substr(colon + 1);
  if (kind.empty() || kind == "zero")
    return b;
  if (kind == "iota" || kind == "ramp" || kind == "const") {
    double c = kind == "const" ? std::stod(arg) : 0;
    size_t period = kind == "ramp" ? std::stoull(arg) : 0;
    for (size_t i = 0; i < b.count; ++i)
      setElem(b, i,
              kind == "iota"   ? double(i)
              : kind == "ramp" ? double(i % period)
                               : c);
  } else if (kind == "values") {
    std::vector<std::string> vals = split(arg, ',');
    if (vals.size() != b.count)
      die("'" + spec + "' needs exactly COUNT values");
    for (size_t i = 0; i < vals.size(); ++i)
      setElem(b, i, std::stod(vals[i]));
  } else if (kind == "file") {
    std::ifstream f(arg, std::ios::binary);
    f.read(reinterpret_cast<char *>(b.bytes.data()), b.bytes.size());
    if (!f || f.peek() != EOF)
      die("'" + arg + "' does not have exactly " +
          std::to_string(b.bytes.size()) + " bytes");
  } else {
    die("initialiser '" + init + "' is not supported on hardware");
  }
  return b;
}

/// --tensor-map: encodes the map and adds its 128-byte object as buffer NAME
/// (uploaded with the other buffers; BUFFER must already have its address).
void addTensorMap(std::vector<Buffer> &bufs, const std::string &spec) {
  std::vector<std::string> p = split(spec, ':');
  if (p.size() != 7 && !(p.size() == 8 && p[7] == "nan"))
    die("--tensor-map wants NAME:BUFFER:RANK:DIMS:STRIDES:BOX:SWIZZLE[:nan]");
  const Buffer *src = nullptr;
  for (const Buffer &b : bufs)
    if (b.name == p[1])
      src = &b;
  if (!src || !src->dev)
    die("no buffer named '" + p[1] + "'");
  CUtensorMapDataType type =
      src->type == "bf16"  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
      : src->type == "f16" ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
      : src->type == "f32" ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
      : src->type == "f64" ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64
      : src->elemBytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
      : src->elemBytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
      : src->elemBytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                            : CU_TENSOR_MAP_DATA_TYPE_UINT64;
  unsigned rank = unsigned(std::stoul(p[2]));
  std::vector<std::string> dims = split(p[3], ','), box = split(p[5], ',');
  std::vector<std::string> strides =
      p[4] == "-" ? std::vector<std::string>() : split(p[4], ',');
  if (rank < 1 || rank > 5 || dims.size() != rank || box.size() != rank ||
      strides.size() != rank - 1)
    die("--tensor-map: RANK values for DIMS and BOX, RANK-1 STRIDES");
  cuuint64_t gdim[5], gstride[5];
  cuuint32_t bdim[5], estride[5];
  for (unsigned d = 0; d < rank; ++d) {
    gdim[d] = std::stoull(dims[d]);
    bdim[d] = cuuint32_t(std::stoul(box[d]));
    estride[d] = 1;
    if (d + 1 < rank)
      gstride[d] = std::stoull(strides[d]);
  }
  CUtensorMapSwizzle swizzle =
      p[6] == "none" ? CU_TENSOR_MAP_SWIZZLE_NONE
      : p[6] == "32" ? CU_TENSOR_MAP_SWIZZLE_32B
      : p[6] == "64" ? CU_TENSOR_MAP_SWIZZLE_64B
      : p[6] == "128" ? CU_TENSOR_MAP_SWIZZLE_128B
                      : (die("--tensor-map swizzle: none, 32, 64 or 128"),
                         CU_TENSOR_MAP_SWIZZLE_NONE);
  CUtensorMap map;
  check(cuTensorMapEncodeTiled(
            &map, type, rank, reinterpret_cast<void *>(src->dev), gdim,
            gstride, bdim, estride, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
            CU_TENSOR_MAP_L2_PROMOTION_NONE,
            p.size() == 8 ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                          : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled");
  Buffer obj;
  obj.name = p[0];
  obj.type = "u8";
  obj.elemBytes = 1;
  obj.count = sizeof(map);
  obj.bytes.assign(reinterpret_cast<uint8_t *>(&map),
                   reinterpret_cast<uint8_t *>(&map) + sizeof(map));
  check(cuMemAlloc(&obj.dev, obj.bytes.size()), "cuMemAlloc");
  check(cuMemcpyHtoD(obj.dev, obj.bytes.data(), obj.bytes.size()),
        "cuMemcpyHtoD");
  bufs.push_back(std::move(obj));
}

void parseDim(const std::string &s, unsigned d[3]) {
  std::vector<std::string> p = split(s, ',');
  if (p.empty() || p.size() > 3)
    die("bad dimensions '" + s + "'");
  d[0] = d[1] = d[2] = 1;
  for (size_t i = 0; i < p.size(); ++i)
    d[i] = unsigned(std::stoul(p[i]));
}

} // namespace

int main(int argc, char **argv) {
  std::string ptxFile, kernel, args;
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1}, dynSmem = 0;
  std::vector<Buffer> bufs;
  std::vector<std::pair<std::string, std::string>> dumps;
  std::vector<std::string> tensorMaps;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto opt = [&](const char *name, std::string &v) {
      std::string p = std::string("--") + name + "=";
      if (a.rfind(p, 0) != 0)
        return false;
      v = a.substr(p.size());
      return true;
    };
    std::string v;
    if (opt("kernel", kernel) || opt("args", args))
      continue;
    if (opt("grid", v))
      parseDim(v, grid);
    else if (opt("block", v))
      parseDim(v, block);
    else if (opt("dynamic-smem", v))
      dynSmem = unsigned(std::stoul(v));
    else if (opt("buffer", v))
      bufs.push_back(makeBuffer(v));
    else if (opt("tensor-map", v))
      tensorMaps.push_back(v);
    else if (opt("dump", v)) {
      size_t c = v.find(':');
      dumps.push_back({v.substr(0, c), v.substr(c + 1)});
    } else if (a.rfind("--", 0) != 0 && ptxFile.empty())
      ptxFile = a;
    else
      die("unsupported option '" + a + "'");
  }
  if (ptxFile.empty() || kernel.empty())
    die("usage: ptx-hw-run FILE.ptx --kernel=NAME ...");
  std::ifstream f(ptxFile);
  std::string ptx((std::istreambuf_iterator<char>(f)),
                  std::istreambuf_iterator<char>());
  if (ptx.empty())
    die("cannot read '" + ptxFile + "'");

  check(cuInit(0), "cuInit");
  CUdevice dev;
  CUcontext ctx;
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmodule mod;
  char log[8192] = "";
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
  if (cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals) != CUDA_SUCCESS)
    die("cannot load '" + ptxFile + "': " + log);
  CUfunction fn;
  check(cuModuleGetFunction(&fn, mod, kernel.c_str()), "cuModuleGetFunction");
  if (dynSmem > 48 * 1024)
    check(cuFuncSetAttribute(
              fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynSmem),
          "cuFuncSetAttribute");
  for (Buffer &b : bufs) {
    check(cuMemAlloc(&b.dev, b.bytes.size() ? b.bytes.size() : 1),
          "cuMemAlloc");
    if (!b.bytes.empty())
      check(cuMemcpyHtoD(b.dev, b.bytes.data(), b.bytes.size()),
            "cuMemcpyHtoD");
  }
  for (const std::string &t : tensorMaps)
    addTensorMap(bufs, t);
  // Arguments, packed at the offsets the driver reports for the kernel.
  std::vector<std::string> argv2 =
      args.empty() ? std::vector<std::string>() : split(args, ',');
  std::vector<uint8_t> block2(4096, 0);
  std::vector<void *> params;
  for (size_t i = 0; i < argv2.size(); ++i) {
    size_t off = 0, size = 0;
    check(cuFuncGetParamInfo(fn, i, &off, &size), "cuFuncGetParamInfo");
    std::string a = argv2[i];
    uint64_t v = 0;
    if (a[0] == '@') {
      bool found = false;
      for (Buffer &b : bufs)
        if (b.name == a.substr(1)) {
          v = b.dev;
          found = true;
        }
      if (!found)
        die("no buffer named '" + a.substr(1) + "'");
    } else if (a.rfind("f32:", 0) == 0) {
      float x = std::stof(a.substr(4));
      std::memcpy(&v, &x, 4);
    } else if (a.rfind("f64:", 0) == 0) {
      double x = std::stod(a.substr(4));
      std::memcpy(&v, &x, 8);
    } else {
      v = uint64_t(std::stoll(a, nullptr, 0));
    }
    if (size > 8 || off + size > block2.size())
      die("parameter " + std::to_string(i) + " is not a scalar");
    std::memcpy(block2.data() + off, &v, size);
    params.push_back(block2.data() + off);
  }
  size_t off = 0, size = 0;
  if (cuFuncGetParamInfo(fn, argv2.size(), &off, &size) == CUDA_SUCCESS)
    die("kernel takes more than " + std::to_string(argv2.size()) +
        " arguments");
  check(cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1],
                       block[2], dynSmem, nullptr, params.data(), nullptr),
        "cuLaunchKernel");
  check(cuCtxSynchronize(), "kernel execution");
  for (auto &[name, path] : dumps) {
    Buffer *b = nullptr;
    for (Buffer &c : bufs)
      if (c.name == name)
        b = &c;
    if (!b)
      die("no buffer named '" + name + "'");
    check(cuMemcpyDtoH(b->bytes.data(), b->dev, b->bytes.size()),
          "cuMemcpyDtoH");
    std::ofstream o(path, std::ios::binary);
    o.write(reinterpret_cast<const char *>(b->bytes.data()), b->bytes.size());
    if (!o)
      die("cannot write '" + path + "'");
  }
  return 0;
}
