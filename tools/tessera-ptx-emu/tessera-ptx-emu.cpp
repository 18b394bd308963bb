//===- tessera-ptx-emu.cpp - Run one PTX kernel launch on the emulator ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//   tessera-ptx-emu k.ptx --kernel=gemm --grid=2,2 --block=128 \
//       --buffer=A:f16:4096=rand:1 --buffer=C:f32:4096 \
//       --args=@A,@C,64 --print=C:0:8 --expect=C:file:c.bin:1e-3 --run-stats
//
// Buffers are typed arrays mapped into the emulator's global memory. Their
// initial contents: zero (default), iota, ramp:P (i mod P), const:V, rand:SEED
// (uniform in
// [-1, 1), rounded to the type), values:V,V,..., or file:PATH (raw bytes).
// Arguments are @BUFFER (its device address), integers, or f32:V / f64:V.
// --tensor-map=NAME:BUFFER:RANK:DIMS:STRIDES:BOX:SWIZZLE[:nan] defines a TMA
// tensor map over BUFFER (what cuTensorMapEncodeTiled would be given): DIMS
// and BOX are RANK comma-separated element counts, innermost first; STRIDES
// the RANK-1 byte strides of dims 1.. ('-' for rank 1); SWIZZLE none, 32, 64
// or 128; nan fills out-of-bounds elements with NaN instead of zero. The
// element size is BUFFER's. @NAME is the address of the map's 128-byte
// object in global memory, for cp.async.bulk.tensor.
// --run-stats (or -v) prints the warp and thread instructions executed and
// their rate (launch time only: parsing and buffer set-up are not counted);
// --repeat=N launches N times for a steadier rate. (LLVM itself owns -stats.)
//===----------------------------------------------------------------------===//
#include "tessera/Target/CUDA/Emulator/Emulator.h"
#include "tessera/Target/CUDA/Emulator/FloatFormats.h"
#include "tessera/Target/CUDA/Emulator/PTXParser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <random>

using namespace llvm;
using namespace tessera::ptx;

static cl::OptionCategory category("tessera-ptx-emu options");

static cl::opt<std::string> inputFile(cl::Positional, cl::cat(category),
                                      cl::desc("<input.ptx>"), cl::Required);
static cl::opt<std::string>
    kernelName("kernel", cl::cat(category),
               cl::desc("Kernel to launch (default: the only one)"));
static cl::opt<std::string> gridOpt("grid", cl::cat(category),
                                    cl::desc("Grid X[,Y[,Z]]"), cl::init("1"));
static cl::opt<std::string> blockOpt("block", cl::cat(category),
                                     cl::desc("Block X[,Y[,Z]]"),
                                     cl::init("32"));
static cl::opt<unsigned> dynSmem("dynamic-smem", cl::cat(category),
                                 cl::desc("Dynamic shared memory bytes"),
                                 cl::init(0));
static cl::list<std::string> buffers("buffer", cl::cat(category),
                                     cl::desc("NAME:TYPE:COUNT[=INIT]"));
static cl::opt<std::string>
    argsOpt("args", cl::cat(category),
            cl::desc("Comma-separated kernel arguments"));
static cl::list<std::string> tensorMaps(
    "tensor-map", cl::cat(category),
    cl::desc("NAME:BUFFER:RANK:DIMS:STRIDES:BOX:SWIZZLE[:nan] defines a TMA "
             "tensor map over BUFFER; @NAME is its address. DIMS, BOX: RANK "
             "comma-separated element counts, innermost first; STRIDES: the "
             "byte strides of dims 1..RANK-1 ('-' for rank 1); SWIZZLE: "
             "none|32|64|128; nan: out-of-bounds elements read as NaN, not 0"));
static cl::list<std::string>
    prints("print", cl::cat(category),
           cl::desc("NAME[:START[:COUNT]] prints elements"));
static cl::list<std::string>
    expects("expect", cl::cat(category),
            cl::desc("NAME:file:PATH[:TOL] or NAME:values:V,..[:TOL]"));
static cl::list<std::string> dumps("dump", cl::cat(category),
                                   cl::desc("NAME:PATH writes the raw bytes"));
static cl::opt<bool>
    noHazards("no-hazard-checks", cl::cat(category),
              cl::desc("Disable the race and cp.async checks"));
static cl::opt<bool>
    parseOnly("parse-only", cl::cat(category),
              cl::desc("Parse and decode, print a summary, do not run"));
static cl::opt<unsigned> repeat("repeat", cl::cat(category),
                                cl::desc("Launch N times (for timing)"),
                                cl::init(1));
static cl::opt<bool> printStats(
    "run-stats", cl::cat(category),
    cl::desc("Print the emulated instruction counts and instructions/second"));
static cl::alias verbose("v", cl::cat(category),
                         cl::desc("Alias for --run-stats"),
                         cl::aliasopt(printStats));

namespace {

struct Buffer {
  std::string name;
  Ty type;
  size_t count;
  std::vector<uint8_t> bytes;
  uint64_t addr = 0;
};

[[noreturn]] void die(const Twine &msg) {
  errs() << "tessera-ptx-emu: error: " << msg << "\n";
  exit(1);
}

bool parseDim(StringRef s, Dim3 &d) {
  SmallVector<StringRef, 3> parts;
  s.split(parts, ',');
  uint32_t *f[3] = {&d.x, &d.y, &d.z};
  if (parts.empty() || parts.size() > 3)
    return false;
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].trim().getAsInteger(10, *f[i]))
      return false;
  return true;
}

double getElem(const Buffer &b, size_t i) {
  const uint8_t *p = b.bytes.data() + i * byteSize(b.type);
  uint64_t v = 0;
  std::memcpy(&v, p, byteSize(b.type));
  switch (b.type) {
  case Ty::F32:
    return bitsToF32(uint32_t(v));
  case Ty::F64:
    return bitsToF64(v);
  case Ty::F16:
    return decodeFormat(uint32_t(v), FloatFormat::F16);
  case Ty::BF16:
    return decodeFormat(uint32_t(v), FloatFormat::BF16);
  case Ty::S8:
    return int8_t(v);
  case Ty::S16:
    return int16_t(v);
  case Ty::S32:
    return int32_t(v);
  case Ty::S64:
    return double(int64_t(v));
  default:
    return double(v);
  }
}

/// Floats with 9 significant digits (round-trips f32), integers exactly.
std::string formatElem(const Buffer &b, size_t i) {
  double v = getElem(b, i);
  if (isFloat(b.type))
    return llvm::formatv("{0}", llvm::format("%.9g", v)).str();
  uint64_t raw = 0;
  std::memcpy(&raw, b.bytes.data() + i * byteSize(b.type), byteSize(b.type));
  return isSigned(b.type) ? std::to_string(int64_t(v)) : std::to_string(raw);
}

void setElem(Buffer &b, size_t i, double x) {
  uint64_t v;
  switch (b.type) {
  case Ty::F32:
    v = f32ToBits(float(x));
    break;
  case Ty::F64:
    v = f64ToBits(x);
    break;
  case Ty::F16:
    v = roundToFormat(x, FloatFormat::F16, Rnd::RN, false);
    break;
  case Ty::BF16:
    v = roundToFormat(x, FloatFormat::BF16, Rnd::RN, false);
    break;
  default:
    v = uint64_t(int64_t(x));
    break;
  }
  std::memcpy(b.bytes.data() + i * byteSize(b.type), &v, byteSize(b.type));
}

Buffer makeBuffer(StringRef spec) {
  auto [decl, init] = spec.split('=');
  SmallVector<StringRef, 3> parts;
  decl.split(parts, ':');
  if (parts.size() != 3)
    die("--buffer wants NAME:TYPE:COUNT[=INIT], got '" + spec + "'");
  Buffer b;
  b.name = parts[0].str();
  StringRef ty = parts[1];
  b.type = ty == "i8"    ? Ty::S8
           : ty == "i16" ? Ty::S16
           : ty == "i32" ? Ty::S32
           : ty == "i64" ? Ty::S64
                         : parseTypeName(ty);
  if (b.type == Ty::None || b.type == Ty::Pred || byteSize(b.type) == 0 ||
      b.type == Ty::F16x2 || b.type == Ty::BF16x2 || b.type == Ty::TF32)
    die("unknown buffer type '" + ty + "'");
  if (parts[2].getAsInteger(10, b.count))
    die("bad count in '" + spec + "'");
  b.bytes.assign(b.count * byteSize(b.type), 0);
  auto [kind, arg] = init.split(':');
  if (init.empty() || kind == "zero")
    return b;
  if (kind == "iota") {
    for (size_t i = 0; i < b.count; ++i)
      setElem(b, i, double(i));
  } else if (kind == "ramp") {
    size_t period;
    if (arg.getAsInteger(10, period) || period == 0)
      die("bad period in '" + spec + "'");
    for (size_t i = 0; i < b.count; ++i)
      setElem(b, i, double(i % period));
  } else if (kind == "const") {
    double v;
    if (arg.getAsDouble(v))
      die("bad constant in '" + spec + "'");
    for (size_t i = 0; i < b.count; ++i)
      setElem(b, i, v);
  } else if (kind == "rand") {
    unsigned seed = 0;
    if (arg.getAsInteger(10, seed))
      die("bad seed in '" + spec + "'");
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (size_t i = 0; i < b.count; ++i)
      setElem(b, i, dist(gen));
  } else if (kind == "values") {
    SmallVector<StringRef, 16> vals;
    arg.split(vals, ',');
    if (vals.size() != b.count)
      die("'" + spec + "' needs exactly COUNT values");
    for (size_t i = 0; i < vals.size(); ++i) {
      double v;
      if (vals[i].trim().getAsDouble(v))
        die("bad value '" + vals[i] + "'");
      setElem(b, i, v);
    }
  } else if (kind == "file") {
    auto mb = MemoryBuffer::getFile(arg);
    if (!mb)
      die("cannot read '" + arg + "'");
    if ((*mb)->getBufferSize() != b.bytes.size())
      die("'" + arg + "' has " + Twine((*mb)->getBufferSize()) +
          " bytes, buffer needs " + Twine(b.bytes.size()));
    std::memcpy(b.bytes.data(), (*mb)->getBufferStart(), b.bytes.size());
  } else {
    die("unknown initialiser '" + init + "'");
  }
  return b;
}

Buffer *findBuffer(std::vector<Buffer> &bufs, StringRef name) {
  for (Buffer &b : bufs)
    if (b.name == name)
      return &b;
  die("no buffer named '" + name + "'");
}

/// Compares a buffer with expected values; prints every mismatch up to 10.
bool checkExpect(std::vector<Buffer> &bufs, StringRef spec) {
  SmallVector<StringRef, 4> parts;
  spec.split(parts, ':');
  if (parts.size() < 3)
    die("--expect wants NAME:file:PATH[:TOL] or NAME:values:V,..[:TOL]");
  Buffer &b = *findBuffer(bufs, parts[0]);
  double tol = 0;
  if (parts.size() > 3 && parts[3].getAsDouble(tol))
    die("bad tolerance in '" + spec + "'");
  Buffer ref = b;
  if (parts[1] == "file") {
    auto mb = MemoryBuffer::getFile(parts[2]);
    if (!mb || (*mb)->getBufferSize() != ref.bytes.size())
      die("cannot read '" + parts[2] + "' with " + Twine(ref.bytes.size()) +
          " bytes");
    std::memcpy(ref.bytes.data(), (*mb)->getBufferStart(), ref.bytes.size());
  } else if (parts[1] == "values") {
    SmallVector<StringRef, 16> vals;
    parts[2].split(vals, ',');
    if (vals.size() != b.count)
      die("--expect values: need " + Twine(b.count) + " values");
    for (size_t i = 0; i < vals.size(); ++i) {
      double v;
      if (vals[i].getAsDouble(v))
        die("bad value '" + vals[i] + "'");
      setElem(ref, i, v);
    }
  } else {
    die("unknown --expect source '" + parts[1] + "'");
  }
  size_t bad = 0;
  double maxErr = 0;
  for (size_t i = 0; i < b.count; ++i) {
    double x = getElem(b, i), y = getElem(ref, i);
    double err = std::fabs(x - y);
    bool ok = (std::isnan(x) && std::isnan(y)) || err <= tol;
    if (!std::isnan(err))
      maxErr = std::max(maxErr, err);
    if (!ok && bad++ < 10)
      outs() << "mismatch " << b.name << "[" << i << "]: got "
             << formatElem(b, i) << ", expected " << formatElem(ref, i) << "\n";
  }
  outs() << "expect " << b.name << ": " << (bad ? "FAIL" : "OK") << " (" << bad
         << " of " << b.count << " mismatches, max abs error " << maxErr
         << ")\n";
  return bad == 0;
}

/// Parses --tensor-map; adds the map's 128-byte object as buffer NAME.
void defineTensorMap(Emulator &emu, std::vector<Buffer> &bufs, StringRef spec) {
  SmallVector<StringRef, 8> parts;
  spec.split(parts, ':');
  if (parts.size() != 7 && !(parts.size() == 8 && parts[7] == "nan"))
    die("--tensor-map wants NAME:BUFFER:RANK:DIMS:STRIDES:BOX:SWIZZLE[:nan], "
        "got '" +
        spec + "'");
  Buffer &src = *findBuffer(bufs, parts[1]);
  TensorMap tm;
  tm.elementBytes = byteSize(src.type);
  tm.globalAddress = src.addr;
  if (parts[2].getAsInteger(10, tm.rank) || tm.rank < 1 || tm.rank > 5)
    die("--tensor-map rank must be 1 to 5 in '" + spec + "'");
  auto list = [&](StringRef s, unsigned n, auto &out, unsigned first) {
    SmallVector<StringRef, 5> items;
    if (s != "-")
      s.split(items, ',');
    if (items.size() != n)
      die("--tensor-map: '" + s + "' needs " + Twine(n) + " values in '" +
          spec + "'");
    for (unsigned i = 0; i < n; ++i) {
      uint64_t v;
      if (items[i].trim().getAsInteger(10, v))
        die("--tensor-map: bad number '" + items[i] + "'");
      out[first + i] = v;
    }
  };
  list(parts[3], tm.rank, tm.globalDims, 0);
  list(parts[4], tm.rank - 1, tm.globalStrides, 1);
  list(parts[5], tm.rank, tm.boxDims, 0);
  StringRef sw = parts[6];
  if (sw == "none")
    tm.swizzle = TensorMap::Swizzle::None;
  else if (sw == "32")
    tm.swizzle = TensorMap::Swizzle::B32;
  else if (sw == "64")
    tm.swizzle = TensorMap::Swizzle::B64;
  else if (sw == "128")
    tm.swizzle = TensorMap::Swizzle::B128;
  else
    die("--tensor-map swizzle must be none, 32, 64 or 128, got '" + sw + "'");
  tm.oobNaN = parts.size() == 8;
  Buffer obj;
  obj.name = parts[0].str();
  obj.type = Ty::U8;
  obj.count = 128;
  obj.bytes.assign(128, 0);
  bufs.push_back(std::move(obj));
  Buffer &b = bufs.back();
  b.addr = emu.memory().map(b.bytes.data(), b.bytes.size());
  emu.memory().defineTensorMap(b.addr, tm);
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&category, &llvm::getColorCategory()});
  cl::ParseCommandLineOptions(argc, argv,
                              "Tessera's functional PTX emulator\n");
  auto file = MemoryBuffer::getFile(inputFile);
  if (!file)
    die("cannot read '" + inputFile + "'");
  Expected<Module> mod = parsePTX((*file)->getBuffer(), inputFile);
  if (!mod)
    die(toString(mod.takeError()));
  if (parseOnly) {
    for (const Kernel &k : mod->kernels)
      outs() << "kernel " << k.name << ": " << k.params.size() << " params, "
             << k.body.size() << " instructions, " << k.numRegs
             << " registers, " << k.staticSharedBytes
             << " bytes static shared\n";
    return 0;
  }
  if (kernelName.empty()) {
    if (mod->kernels.size() != 1)
      die("the module has several kernels; pass --kernel");
    kernelName = mod->kernels[0].name;
  }
  const Kernel *k = mod->findKernel(kernelName);
  if (!k)
    die("no kernel named '" + kernelName + "'");
  LaunchConfig cfg;
  if (!parseDim(gridOpt, cfg.grid) || !parseDim(blockOpt, cfg.block))
    die("bad --grid or --block");
  cfg.dynamicSharedBytes = dynSmem;
  Emulator emu(*mod);
  std::vector<Buffer> bufs;
  for (const std::string &s : buffers)
    bufs.push_back(makeBuffer(s));
  for (Buffer &b : bufs)
    b.addr = emu.memory().map(b.bytes.data(), b.bytes.size());
  for (const std::string &t : tensorMaps)
    defineTensorMap(emu, bufs, t);
  std::vector<uint64_t> args;
  SmallVector<StringRef, 16> argParts;
  StringRef(argsOpt).split(argParts, ',', -1, false);
  for (StringRef a : argParts) {
    a = a.trim();
    uint64_t v;
    double d;
    if (a.consume_front("@"))
      v = findBuffer(bufs, a)->addr;
    else if (a.consume_front("f32:") && !a.getAsDouble(d))
      v = f32ToBits(float(d));
    else if (a.consume_front("f64:") && !a.getAsDouble(d))
      v = f64ToBits(d);
    else if (a.starts_with("-") &&
             !a.getAsInteger(10, *reinterpret_cast<int64_t *>(&v)))
      ;
    else if (a.getAsInteger(0, v))
      die("bad argument '" + a + "'");
    args.push_back(v);
  }
  Expected<std::vector<uint8_t>> params = packParams(*k, args);
  if (!params)
    die(toString(params.takeError()));
  EmulatorOptions opts;
  opts.checkHazards = !noHazards;
  LaunchStats total;
  for (unsigned r = 0; r < repeat; ++r) {
    Expected<LaunchStats> st = emu.launch(kernelName, cfg, *params, opts);
    if (!st)
      die(toString(st.takeError()));
    total.warpInstructions += st->warpInstructions;
    total.threadInstructions += st->threadInstructions;
    total.seconds += st->seconds;
  }
  for (const std::string &p : prints) {
    SmallVector<StringRef, 3> parts;
    StringRef(p).split(parts, ':');
    Buffer &b = *findBuffer(bufs, parts[0]);
    size_t start = 0, count = b.count;
    if (parts.size() > 1 && parts[1].getAsInteger(10, start))
      die("bad --print");
    if (parts.size() > 2 && parts[2].getAsInteger(10, count))
      die("bad --print");
    for (size_t i = start; i < std::min(b.count, start + count); ++i)
      outs() << b.name << "[" << i << "] = " << formatElem(b, i) << "\n";
  }
  for (const std::string &d : dumps) {
    auto [name, path] = StringRef(d).split(':');
    Buffer &b = *findBuffer(bufs, name);
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (ec)
      die("cannot write '" + path + "'");
    os.write(reinterpret_cast<const char *>(b.bytes.data()), b.bytes.size());
  }
  bool ok = true;
  for (const std::string &e : expects)
    ok &= checkExpect(bufs, e);
  if (printStats) {
    double s = std::max(total.seconds, 1e-9);
    outs() << "stats: " << total.warpInstructions << " warp instructions, "
           << total.threadInstructions << " thread instructions in "
           << format("%.3f", total.seconds)
           << " s: " << format("%.3g", total.warpInstructions / s)
           << " warp instructions/s, "
           << format("%.3g", total.threadInstructions / s)
           << " thread instructions/s\n";
  }
  return ok ? 0 : 1;
}
