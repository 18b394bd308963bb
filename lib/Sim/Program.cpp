//===- Program.cpp - the accelerator's instructions and program format ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Program.h"

#include <algorithm>
#include <cstring>

using namespace tessera::sim;

namespace {

constexpr char kMagic[4] = {'T', 'S', 'P', 'G'};
constexpr size_t kInstructionBytes = 32;

/// Little-endian writer and bounds-checked reader.
struct Writer {
  std::vector<uint8_t> bytes;
  template <typename T> void put(T value) {
    for (size_t i = 0; i < sizeof(T); ++i)
      bytes.push_back(
          static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i)));
  }
};

struct Reader {
  const std::vector<uint8_t> &bytes;
  size_t at = 0;
  bool failed = false;
  template <typename T> T get() {
    if (at + sizeof(T) > bytes.size()) {
      failed = true;
      return T();
    }
    uint64_t value = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
      value |= uint64_t(bytes[at + i]) << (8 * i);
    at += sizeof(T);
    return static_cast<T>(value);
  }
};

/// The number formats in the order of their codes in the binary format.
constexpr NumberFormat kFormatCodes[] = {
    NumberFormat::F32,      NumberFormat::BF16,   NumberFormat::F16,
    NumberFormat::F8E4M3FN, NumberFormat::F8E5M2, NumberFormat::I8};

uint8_t formatToByte(NumberFormat format) {
  for (size_t code = 0; code < std::size(kFormatCodes); ++code)
    if (kFormatCodes[code] == format)
      return static_cast<uint8_t>(code);
  return 0xff;
}

std::optional<NumberFormat> formatFromByte(uint8_t value) {
  if (value >= std::size(kFormatCodes))
    return std::nullopt;
  return kFormatCodes[value];
}

} // namespace

const char *tessera::sim::queueName(Queue queue) {
  switch (queue) {
  case Queue::Load:
    return "load";
  case Queue::Matrix:
    return "matrix";
  case Queue::Vector:
    return "vector";
  case Queue::Store:
    return "store";
  }
  return "?";
}

Queue tessera::sim::channelProducer(Channel channel) {
  static const Queue producers[kNumChannels] = {
      Queue::Load,   Queue::Matrix, Queue::Matrix, Queue::Vector,
      Queue::Vector, Queue::Store,  Queue::Load,   Queue::Vector};
  return producers[channel];
}

Queue tessera::sim::channelConsumer(Channel channel) {
  static const Queue consumers[kNumChannels] = {
      Queue::Matrix, Queue::Load,   Queue::Vector, Queue::Matrix,
      Queue::Store,  Queue::Vector, Queue::Vector, Queue::Load};
  return consumers[channel];
}

Queue tessera::sim::queueOf(Opcode opcode) {
  switch (opcode) {
  case Opcode::Load:
    return Queue::Load;
  case Opcode::Matmul:
    return Queue::Matrix;
  case Opcode::Drain:
    return Queue::Vector;
  case Opcode::Store:
    return Queue::Store;
  case Opcode::Vector:
    return Queue::Vector;
  case Opcode::Gather:
    return Queue::Load;
  }
  return Queue::Load;
}

bool tessera::sim::isUnary(VectorFn fn) {
  return static_cast<uint16_t>(fn) <= static_cast<uint16_t>(VectorFn::Log) ||
         fn == VectorFn::Quantize;
}
bool tessera::sim::isBinary(VectorFn fn) {
  return fn >= VectorFn::Add && fn <= VectorFn::Unless;
}
bool tessera::sim::isRowReduction(VectorFn fn) {
  return fn == VectorFn::RowSum || fn == VectorFn::RowMax;
}

namespace {
struct VectorFnName {
  VectorFn fn;
  const char *name;
};
const VectorFnName kVectorFnNames[] = {
    {VectorFn::Copy, "copy"},       {VectorFn::Exp, "exp"},
    {VectorFn::Tanh, "tanh"},       {VectorFn::Erf, "erf"},
    {VectorFn::Sigmoid, "sigmoid"}, {VectorFn::Relu, "relu"},
    {VectorFn::GeluErf, "gelu"},    {VectorFn::GeluTanh, "gelu_tanh"},
    {VectorFn::Silu, "silu"},       {VectorFn::Sqrt, "sqrt"},
    {VectorFn::Rsqrt, "rsqrt"},     {VectorFn::Reciprocal, "reciprocal"},
    {VectorFn::Neg, "neg"},         {VectorFn::Abs, "abs"},
    {VectorFn::Log, "log"},         {VectorFn::Quantize, "quantize"},
    {VectorFn::Add, "add"},         {VectorFn::Sub, "sub"},
    {VectorFn::Mul, "mul"},         {VectorFn::Div, "div"},
    {VectorFn::Max, "max"},         {VectorFn::Min, "min"},
    {VectorFn::Pow, "pow"},         {VectorFn::Less, "lt"},
    {VectorFn::LessEqual, "le"},    {VectorFn::Greater, "gt"},
    {VectorFn::GreaterEqual, "ge"}, {VectorFn::Equal, "eq"},
    {VectorFn::NotEqual, "ne"},     {VectorFn::When, "when"},
    {VectorFn::Unless, "unless"},   {VectorFn::RowSum, "row_sum"},
    {VectorFn::RowMax, "row_max"},
};
} // namespace

const char *tessera::sim::vectorFnName(VectorFn fn) {
  for (const VectorFnName &entry : kVectorFnNames)
    if (entry.fn == fn)
      return entry.name;
  return nullptr;
}

std::optional<VectorFn> tessera::sim::parseVectorFn(const std::string &name) {
  for (const VectorFnName &entry : kVectorFnNames)
    if (name == entry.name)
      return entry.fn;
  return std::nullopt;
}

int64_t TensorInfo::bytes() const {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count * formatBytes(format);
}

std::vector<uint8_t> tessera::sim::encodeProgram(const Program &program) {
  Writer w;
  for (char c : kMagic)
    w.put<uint8_t>(static_cast<uint8_t>(c));
  w.put<uint32_t>(kProgramVersion);
  w.put<uint32_t>(static_cast<uint32_t>(program.instructions.size()));
  w.put<uint32_t>(static_cast<uint32_t>(program.tensors.size()));
  w.put<uint64_t>(program.dram.size());
  // 32 bytes each: opcode, format, wait mask, signal mask, flags, a
  // reserved byte, cols (16 bits), the DRAM address (64), a, b, c (32
  // each), rows and depth (16 each).
  for (const Instruction &i : program.instructions) {
    w.put<uint8_t>(static_cast<uint8_t>(i.opcode));
    w.put<uint8_t>(formatToByte(i.format));
    w.put<uint8_t>(i.waitMask);
    w.put<uint8_t>(i.signalMask);
    w.put<uint8_t>(i.flags);
    w.put<uint8_t>(0);
    w.put<uint16_t>(static_cast<uint16_t>(i.cols));
    w.put<uint64_t>(i.dram);
    w.put<uint32_t>(i.a);
    w.put<uint32_t>(i.b);
    w.put<uint32_t>(i.c);
    w.put<uint16_t>(static_cast<uint16_t>(i.rows));
    w.put<uint16_t>(static_cast<uint16_t>(i.depth));
  }
  for (const TensorInfo &t : program.tensors) {
    w.put<uint16_t>(static_cast<uint16_t>(t.name.size()));
    for (char c : t.name)
      w.put<uint8_t>(static_cast<uint8_t>(c));
    w.put<uint8_t>(static_cast<uint8_t>(t.role));
    w.put<uint8_t>(formatToByte(t.format));
    w.put<uint8_t>(static_cast<uint8_t>(t.shape.size()));
    for (int64_t d : t.shape)
      w.put<uint64_t>(static_cast<uint64_t>(d));
    w.put<uint64_t>(t.offset);
  }
  w.bytes.insert(w.bytes.end(), program.dram.begin(), program.dram.end());
  return w.bytes;
}

Result<Program> tessera::sim::decodeProgram(const std::vector<uint8_t> &bytes,
                                            const AcceleratorConfig &config) {
  Reader r{bytes};
  char magic[4];
  for (char &c : magic)
    c = static_cast<char>(r.get<uint8_t>());
  if (r.failed || std::memcmp(magic, kMagic, 4) != 0)
    return std::string("not a Tessera systolic program (bad magic)");
  uint32_t version = r.get<uint32_t>();
  if (version != 1 && version != kProgramVersion)
    return "unsupported program version " + std::to_string(version) +
           " (this simulator reads versions 1 to " +
           std::to_string(kProgramVersion) + ")";
  uint32_t count = r.get<uint32_t>();
  uint32_t tensors = r.get<uint32_t>();
  uint64_t dramSize = r.get<uint64_t>();
  if (r.failed)
    return std::string("truncated program header");
  if (uint64_t(count) * kInstructionBytes > bytes.size())
    return "the header promises " + std::to_string(count) +
           " instructions but the file is " + std::to_string(bytes.size()) +
           " bytes";
  Program program;
  program.instructions.reserve(count);
  for (uint32_t n = 0; n < count; ++n) {
    Instruction i;
    uint8_t opcode = r.get<uint8_t>();
    uint8_t format = r.get<uint8_t>();
    i.waitMask = r.get<uint8_t>();
    i.signalMask = r.get<uint8_t>();
    i.flags = r.get<uint8_t>();
    r.get<uint8_t>();
    i.cols = r.get<uint16_t>();
    i.dram = r.get<uint64_t>();
    i.a = r.get<uint32_t>();
    i.b = r.get<uint32_t>();
    i.c = r.get<uint32_t>();
    i.rows = r.get<uint16_t>();
    i.depth = r.get<uint16_t>();
    if (r.failed)
      return "truncated instruction " + std::to_string(n);
    if (opcode < 1 || opcode > (version >= 2 ? 6 : 4))
      return "instruction " + std::to_string(n) + ": unknown opcode " +
             std::to_string(opcode);
    i.opcode = static_cast<Opcode>(opcode);
    std::optional<NumberFormat> f = formatFromByte(format);
    if (!f)
      return "instruction " + std::to_string(n) + ": unknown format " +
             std::to_string(format);
    i.format = *f;
    program.instructions.push_back(i);
  }
  for (uint32_t n = 0; n < tensors; ++n) {
    TensorInfo t;
    uint16_t length = r.get<uint16_t>();
    if (r.failed || r.at + length > bytes.size())
      return "truncated tensor table entry " + std::to_string(n);
    t.name.assign(reinterpret_cast<const char *>(bytes.data() + r.at), length);
    r.at += length;
    uint8_t role = r.get<uint8_t>();
    std::optional<NumberFormat> f = formatFromByte(r.get<uint8_t>());
    uint8_t rank = r.get<uint8_t>();
    if (r.failed || role > 3 || !f || rank > 8)
      return "tensor '" + t.name + "': bad role, format or rank";
    t.role = static_cast<TensorInfo::Role>(role);
    t.format = *f;
    for (uint8_t d = 0; d < rank; ++d) {
      uint64_t dim = r.get<uint64_t>();
      if (dim == 0 || dim > (uint64_t(1) << 32))
        return "tensor '" + t.name + "': bad dimension";
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    t.offset = r.get<uint64_t>();
    if (r.failed)
      return "truncated tensor table entry " + std::to_string(n);
    // The size in bytes, computed so that it cannot overflow: every
    // partial product stays within the image (dims of up to 2^32 and a
    // rank of 8 overflow 64 bits), and so does offset + size (an offset
    // near 2^64 wraps around).
    uint64_t size = static_cast<uint64_t>(formatBytes(t.format));
    bool fits = size <= dramSize;
    for (int64_t dim : t.shape)
      if (fits) {
        fits = size <= dramSize / static_cast<uint64_t>(dim);
        size *= fits ? static_cast<uint64_t>(dim) : 1;
      }
    if (!fits || t.offset > dramSize || size > dramSize - t.offset)
      return "tensor '" + t.name + "' lies beyond the DRAM image";
    program.tensors.push_back(std::move(t));
  }
  if (bytes.size() - r.at != dramSize)
    return "the DRAM image is " + std::to_string(bytes.size() - r.at) +
           " bytes but the header says " + std::to_string(dramSize);
  program.dram.assign(bytes.begin() + static_cast<long>(r.at), bytes.end());
  if (auto error = validateProgram(program, config))
    return *error;
  return program;
}

std::optional<std::string>
tessera::sim::validateProgram(const Program &program,
                              const AcceleratorConfig &config) {
  int64_t accRows = config.accumulatorBytes / (4 * config.array.cols);
  int64_t balance[kNumChannels] = {};
  for (size_t n = 0; n < program.instructions.size(); ++n) {
    const Instruction &i = program.instructions[n];
    auto fail = [&](const std::string &what) {
      return "instruction " + std::to_string(n) + " (" +
             queueName(queueOf(i.opcode)) + "): " + what;
    };
    Queue queue = queueOf(i.opcode);
    if (i.rows > 0xffff || i.depth > 0xffff || i.cols > 0xffff)
      return fail("rows, depth and columns are limited to 65535");
    for (int ch = 0; ch < kNumChannels; ++ch) {
      if (i.waitMask >> ch & 1) {
        if (channelConsumer(Channel(ch)) != queue)
          return fail("waits on token channel " + std::to_string(ch) +
                      ", which does not lead into its queue");
        --balance[ch];
      }
      if (i.signalMask >> ch & 1) {
        if (channelProducer(Channel(ch)) != queue)
          return fail("signals token channel " + std::to_string(ch) +
                      ", which does not start at its queue");
        ++balance[ch];
      }
    }
    auto within = [&](uint64_t start, uint64_t size, uint64_t limit,
                      const char *what) -> std::optional<std::string> {
      if (start > limit || size > limit - start)
        return fail(std::string(what) + " [" + std::to_string(start) + ", " +
                    std::to_string(start + size) + ") is beyond its " +
                    std::to_string(limit) + " bytes");
      return std::nullopt;
    };
    switch (i.opcode) {
    case Opcode::Load:
    case Opcode::Store: {
      if (i.opcode == Opcode::Load && (i.flags & ~3u))
        return fail("unknown load flags " + std::to_string(i.flags));
      if (i.opcode == Opcode::Store && i.flags)
        return fail("unknown store flags " + std::to_string(i.flags));
      uint64_t rows = std::max<uint64_t>(i.rows, 1);
      // Loads may read rows again (a broadcast); stores write each byte
      // once.
      if (i.opcode == Opcode::Store && rows > 1 && i.b < i.c)
        return fail("the DRAM row stride (" + std::to_string(i.b) +
                    ") is smaller than a row (" + std::to_string(i.c) + ")");
      bool weights = i.opcode == Opcode::Load && (i.flags & 1);
      uint64_t limit =
          weights ? config.weightBufferBytes : config.unifiedBufferBytes;
      if (auto e = within(i.a, rows * i.c, limit,
                          weights ? "the weight-buffer range"
                                  : "the unified-buffer range"))
        return e;
      if (auto e = within(i.dram, (rows - 1) * i.b + i.c, program.dram.size(),
                          "the DRAM range"))
        return e;
      break;
    }
    case Opcode::Matmul: {
      if (!config.supports(i.format))
        return fail(std::string("operand format ") + formatName(i.format) +
                    " is not supported by this accelerator");
      if (i.rows == 0 || i.depth == 0 || i.cols == 0)
        return fail("empty matmul");
      // Weight stationary (and input stationary) hold a depth x cols
      // weight tile in the array; output stationary holds rows x cols
      // outputs and streams the depth.
      if (config.dataflow == Dataflow::OutputStationary) {
        if (i.rows > config.array.rows || i.cols > config.array.cols)
          return fail("a " + std::to_string(i.rows) + " x " +
                      std::to_string(i.cols) +
                      " output tile does not fit the " +
                      std::to_string(config.array.rows) + " x " +
                      std::to_string(config.array.cols) + " array");
      } else if (i.depth > config.array.rows || i.cols > config.array.cols) {
        return fail("a " + std::to_string(i.depth) + " x " +
                    std::to_string(i.cols) + " weight tile does not fit the " +
                    std::to_string(config.array.rows) + " x " +
                    std::to_string(config.array.cols) + " array");
      }
      int64_t size = formatBytes(i.format);
      if (auto e = within(i.a, uint64_t(i.depth) * i.cols * size,
                          config.weightBufferBytes, "the weight tile"))
        return e;
      if (auto e = within(i.b, uint64_t(i.rows) * i.depth * size,
                          config.unifiedBufferBytes, "the activations"))
        return e;
      if (i.c + uint64_t(i.rows) > uint64_t(accRows))
        return fail("accumulator rows [" + std::to_string(i.c) + ", " +
                    std::to_string(i.c + i.rows) + ") exceed the " +
                    std::to_string(accRows) + " rows");
      break;
    }
    case Opcode::Drain: {
      if (i.rows == 0 || i.cols == 0 || i.cols > config.array.cols)
        return fail("a drain of " + std::to_string(i.rows) + " x " +
                    std::to_string(i.cols) + " does not match the array");
      if (i.format != NumberFormat::F32 && i.format != NumberFormat::I8 &&
          i.format != NumberFormat::BF16 && i.format != NumberFormat::F16)
        return fail(std::string("cannot drain to ") + formatName(i.format));
      if (i.a + uint64_t(i.rows) > uint64_t(accRows))
        return fail("accumulator rows beyond the accumulators");
      if (i.flags & ~15u)
        return fail("unknown drain flags " + std::to_string(i.flags));
      if ((i.flags & (kDrainScale | kDrainInt32)) &&
          i.format == NumberFormat::I8)
        return fail("an int8 drain requantizes; it takes no dequantization "
                    "scale");
      if (i.flags & kDrainBias)
        if (auto e = within(i.dram, uint64_t(i.cols) * 4,
                            config.unifiedBufferBytes, "the bias row"))
          return e;
      if (auto e =
              within(i.b, uint64_t(i.rows) * i.cols * formatBytes(i.format),
                     config.unifiedBufferBytes, "the drained range"))
        return e;
      break;
    }
    case Opcode::Gather: {
      if (i.flags & ~kLoadFence)
        return fail("unknown gather flags " + std::to_string(i.flags));
      uint64_t tableRows = uint64_t(i.cols) + 65536 * uint64_t(i.depth);
      if (i.rows == 0 || i.c == 0 || tableRows == 0)
        return fail("a gather needs rows, a row size and a table");
      if (auto e = within(i.a, uint64_t(i.rows) * i.c,
                          config.unifiedBufferBytes, "the gathered rows"))
        return e;
      if (auto e = within(i.b, uint64_t(i.rows) * 4, config.unifiedBufferBytes,
                          "the indices"))
        return e;
      if (auto e = within(i.dram, tableRows * i.c, program.dram.size(),
                          "the DRAM table"))
        return e;
      break;
    }
    case Opcode::Vector: {
      auto fn = static_cast<VectorFn>(i.depth);
      if (!vectorFnName(fn))
        return fail("unknown vector function " + std::to_string(i.depth));
      if (i.rows == 0 || i.cols == 0)
        return fail("a vector operation needs rows and columns");
      bool reduction = isRowReduction(fn);
      bool narrow = i.format == NumberFormat::I8 ||
                    i.format == NumberFormat::F8E4M3FN ||
                    i.format == NumberFormat::F8E5M2;
      if (reduction ? i.format != NumberFormat::F32
                    : narrow && fn != VectorFn::Quantize)
        return fail(std::string("cannot write ") + formatName(i.format) +
                    " from the vector unit" +
                    (reduction ? " (row reductions write f32)"
                               : " (only quantize writes i8 and fp8)"));
      if (!isBinary(fn) && i.flags)
        return fail("only binary vector functions take a second operand");
      if (i.flags > static_cast<uint8_t>(VectorMode::Immediate))
        return fail("unknown second-operand mode " + std::to_string(i.flags));
      uint64_t elements = uint64_t(i.rows) * i.cols;
      if (auto e = within(i.a, elements * 4, config.unifiedBufferBytes,
                          "the first source"))
        return e;
      if (isBinary(fn)) {
        auto mode = static_cast<VectorMode>(i.flags);
        uint64_t size = mode == VectorMode::Full     ? elements * 4
                        : mode == VectorMode::Row    ? uint64_t(i.cols) * 4
                        : mode == VectorMode::Column ? uint64_t(i.rows) * 4
                                                     : 0;
        if (size)
          if (auto e = within(i.b, size, config.unifiedBufferBytes,
                              "the second source"))
            return e;
      }
      uint64_t out =
          reduction ? uint64_t(i.rows) * 4 : elements * formatBytes(i.format);
      if (auto e =
              within(i.c, out, config.unifiedBufferBytes, "the destination"))
        return e;
      break;
    }
    }
  }
  for (int ch = 0; ch < kNumChannels; ++ch)
    if (balance[ch] != 0)
      return "token channel " + std::to_string(ch) + " (" +
             queueName(channelProducer(Channel(ch))) + " -> " +
             queueName(channelConsumer(Channel(ch))) + ") has " +
             std::to_string(balance[ch] > 0 ? balance[ch] : -balance[ch]) +
             (balance[ch] > 0 ? " more signals than waits"
                              : " more waits than signals");
  return std::nullopt;
}
