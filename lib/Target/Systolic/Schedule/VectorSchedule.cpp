//===- VectorSchedule.cpp - vector-unit steps as load/vector/store code ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Transfer.h"
#include "tessera/Target/Systolic/Schedule.h"
#include "tessera/Sim/Simulator.h"

#include <algorithm>
#include <cstring>

using namespace tessera::sim;

namespace {
using Shape = VectorStep::Shape;

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }
} // namespace

void tessera::sim::appendVectorOpsOnBlock(const VectorStep &step,
                                          const std::vector<uint32_t> &address,
                                          int64_t n, int64_t cols,
                                          std::vector<Instruction> &out) {
  // The last op writing the output slot writes it in the output format;
  // earlier ones (and every other slot) hold fp32.
  size_t lastWriter = 0;
  for (size_t k = 0; k < step.ops.size(); ++k)
    if (step.ops[k].dst == step.output)
      lastWriter = k;
  for (size_t k = 0; k < step.ops.size(); ++k) {
    const VectorStep::Op &op = step.ops[k];
    const VectorStep::Slot &src = step.slots[op.src];
    Instruction i;
    i.opcode = Opcode::Vector;
    i.depth = static_cast<uint32_t>(op.fn);
    i.a = address[op.src];
    i.c = address[op.dst];
    // A Column slot is n x 1; a Row slot 1 x cols.
    i.rows = u32(src.shape == Shape::Row ? 1 : n);
    i.cols = u32(src.shape == Shape::Column ? 1 : cols);
    i.format =
        k == lastWriter && op.dst == step.output && !isRowReduction(op.fn)
            ? step.outFormat
            : NumberFormat::F32;
    if (op.fn == VectorFn::Quantize) {
      float value = op.immediate.value_or(1.0f);
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      i.dram = bits;
    }
    if (isBinary(op.fn)) {
      if (op.src2 < 0) {
        i.flags = static_cast<uint8_t>(VectorMode::Immediate);
        float value = *op.immediate;
        uint32_t bits;
        std::memcpy(&bits, &value, 4);
        i.dram = bits;
      } else {
        Shape other = step.slots[op.src2].shape;
        i.b = address[op.src2];
        i.flags =
            static_cast<uint8_t>(other == src.shape    ? VectorMode::Full
                                 : other == Shape::Row ? VectorMode::Row
                                                       : VectorMode::Column);
      }
    }
    out.push_back(i);
  }
}

std::optional<std::string>
tessera::sim::appendVectorStep(const AcceleratorConfig &config,
                               const VectorStep &step,
                               std::vector<Instruction> &out) {
  const int64_t rows = step.rows, cols = step.cols;
  if (rows <= 0 || cols <= 0 || rows > 0xffffffffLL || cols > 0xffff)
    return "a vector step of " + std::to_string(rows) + " x " +
           std::to_string(cols) + " values is beyond the vector unit";
  auto slotCount = static_cast<int>(step.slots.size());
  auto valid = [&](int s) { return s >= 0 && s < slotCount; };
  if (!valid(step.output) || step.ops.empty())
    return std::string("a vector step needs ops and an output slot");
  for (const VectorStep::Op &op : step.ops)
    if (!valid(op.dst) || !valid(op.src) || (op.src2 >= 0 && !valid(op.src2)) ||
        (isBinary(op.fn) && op.src2 < 0 && !op.immediate))
      return std::string("a vector step's op names a slot it does not have");

  // Rows per chunk: what fits the unified buffer (the Row slots once, the
  // others per row), at most 65535 (an instruction's row count).
  int64_t fixed = 0, perRow = 0;
  for (const VectorStep::Slot &slot : step.slots) {
    if (slot.shape == Shape::Row)
      fixed += (cols * 4 + 63) / 64 * 64;
    else
      perRow += slot.shape == Shape::Full ? cols * 4 : 4;
  }
  int64_t room = config.unifiedBufferBytes - fixed - 64 * slotCount;
  if (room < perRow)
    return "one row of a " + std::to_string(cols) +
           "-column vector step does not fit the " +
           std::to_string(config.unifiedBufferBytes) + "-byte unified buffer";
  int64_t chunk = std::min<int64_t>({rows, room / perRow, 0xffff});

  // The slots' addresses: Row slots first, then each per-chunk slot.
  std::vector<uint32_t> address(step.slots.size());
  int64_t next = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int s = 0; s < slotCount; ++s) {
      const VectorStep::Slot &slot = step.slots[s];
      if ((slot.shape == Shape::Row) != (pass == 0))
        continue;
      address[s] = u32(next);
      int64_t bytes = slot.shape == Shape::Row    ? cols * 4
                      : slot.shape == Shape::Full ? chunk * cols * 4
                                                  : chunk * 4;
      next = (next + bytes + 63) / 64 * 64;
    }

  auto load = [](uint64_t dram, uint32_t sram, int64_t bytes) {
    return contiguousTransfer(Opcode::Load, dram, sram, bytes);
  };
  bool first = true;
  auto emitLoad = [&](Instruction i) {
    if (first)
      i.flags |= kLoadFence;
    first = false;
    out.push_back(i);
  };
  // Row slots, once.
  for (int s = 0; s < slotCount; ++s)
    if (step.slots[s].shape == Shape::Row && step.slots[s].dram)
      emitLoad(load(*step.slots[s].dram, address[s], cols * 4));

  const VectorStep::Slot &outSlot = step.slots[step.output];
  int64_t outSize = formatBytes(step.outFormat);
  int64_t chunks = (rows + chunk - 1) / chunk;
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t r0 = c * chunk, n = std::min(chunk, rows - r0);
    bool last = c + 1 == chunks;
    // Loads of this chunk's Full and Column inputs; the first waits until
    // the vector unit is done with the previous chunk's buffers.
    std::vector<Instruction> loads;
    for (int s = 0; s < slotCount; ++s) {
      const VectorStep::Slot &slot = step.slots[s];
      if (slot.shape == Shape::Row || !slot.dram)
        continue;
      int64_t width = slot.shape == Shape::Full ? cols * 4 : 4;
      loads.push_back(
          load(*slot.dram + uint64_t(r0 * width), address[s], n * width));
    }
    if (loads.empty()) {
      // A step of Row inputs only still hands the vector unit a token.
      loads.push_back(load(step.slots[0].dram.value_or(0), address[0], 4));
    }
    if (c > 0)
      loads.front().waitMask |= 1u << VectorToLoad;
    loads.back().signalMask |= 1u << LoadToVector;
    for (Instruction &i : loads)
      emitLoad(i);

    size_t firstOp = out.size();
    appendVectorOpsOnBlock(step, address, n, cols, out);
    out[firstOp].waitMask |= 1u << LoadToVector;
    if (c > 0)
      out[firstOp].waitMask |= 1u << StoreToVector;
    out.back().signalMask |= 1u << VectorToStore;
    if (!last)
      out.back().signalMask |= 1u << VectorToLoad;

    int64_t width = outSlot.shape == Shape::Full ? cols * outSize : 4;
    Instruction store =
        contiguousTransfer(Opcode::Store, step.out + uint64_t(r0 * width),
                           address[step.output], n * width);
    store.waitMask = 1u << VectorToStore;
    if (!last)
      store.signalMask = 1u << StoreToVector;
    out.push_back(store);
  }
  return std::nullopt;
}

std::optional<std::string>
tessera::sim::appendCopyStep(const AcceleratorConfig &config,
                             const CopyStep &step,
                             std::vector<Instruction> &out) {
  size_t rank = step.shape.size();
  if (rank == 0 || step.srcStrides.size() != rank ||
      step.dstStrides.size() != rank)
    return std::string("a copy needs a shape and a stride per dim");
  // At least two dims: [rows, length] blocks.
  std::vector<int64_t> shape = step.shape, src = step.srcStrides,
                       dst = step.dstStrides;
  if (rank == 1) {
    shape.insert(shape.begin(), 1);
    src.insert(src.begin(), 0);
    dst.insert(dst.begin(), 0);
    rank = 2;
  }
  for (int64_t d : shape)
    if (d <= 0)
      return std::string("a copy of an empty view");
  int64_t rows = shape[rank - 2], length = shape[rank - 1];
  if (rows > 0xffff || length > 0xffff)
    return "a copy block of " + std::to_string(rows) + " x " +
           std::to_string(length) + " is beyond the DMA engines";
  int64_t outSize = formatBytes(step.dstFormat);
  int64_t blockIn = rows * length * 4, blockOut = rows * length * outSize;
  // Blocks per chunk: both the fp32 block and the converted one fit half
  // the unified buffer.
  int64_t perChunk = config.unifiedBufferBytes / 2 / (blockIn + blockOut);
  if (perChunk < 1)
    return "a " + std::to_string(rows) + " x " + std::to_string(length) +
           " copy block does not fit the unified buffer";
  int64_t blocks = 1;
  for (size_t d = 0; d + 2 < rank; ++d)
    blocks *= shape[d];
  perChunk = std::min<int64_t>(perChunk, 0xffff / rows);
  perChunk = std::max<int64_t>(perChunk, 1);
  uint32_t inArea = 0;
  auto outArea = static_cast<uint32_t>((perChunk * blockIn + 63) / 64 * 64);

  // The DRAM offsets (in elements) of block b's first element.
  auto blockOffset = [&](int64_t b, const std::vector<int64_t> &strides) {
    int64_t offset = 0;
    for (size_t d = rank - 2; d-- > 0;) {
      offset += (b % shape[d]) * strides[d];
      b /= shape[d];
    }
    return offset;
  };
  bool first = true;
  int64_t chunks = (blocks + perChunk - 1) / perChunk;
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t b0 = c * perChunk, n = std::min(perChunk, blocks - b0);
    bool last = c + 1 == chunks;
    size_t firstLoad = out.size();
    for (int64_t b = b0; b < b0 + n; ++b) {
      auto sram = static_cast<uint32_t>(inArea + (b - b0) * blockIn);
      int64_t base = blockOffset(b, src);
      auto emit = [&](int64_t element, uint32_t at, int64_t dmaRows,
                      int64_t rowBytes, int64_t stride) {
        int64_t address = int64_t(step.src) + element * 4;
        if (address < 0)
          return;
        Instruction i = transfer(Opcode::Load, Buffer::Unified,
                                 static_cast<uint64_t>(address), at, dmaRows,
                                 rowBytes, stride);
        if (first)
          i.flags |= kLoadFence;
        first = false;
        out.push_back(i);
      };
      if (src[rank - 1] == 1) {
        emit(base, sram, rows, length * 4, src[rank - 2] * 4);
      } else {
        for (int64_t r = 0; r < rows; ++r)
          emit(base + r * src[rank - 2], sram + u32(r * length * 4), length, 4,
               src[rank - 1] * 4);
      }
    }
    if (c > 0)
      out[firstLoad].waitMask |= 1u << VectorToLoad;
    out.back().signalMask |= 1u << LoadToVector;

    Instruction copy;
    copy.opcode = Opcode::Vector;
    copy.depth = static_cast<uint32_t>(VectorFn::Copy);
    copy.a = inArea;
    copy.c = outArea;
    copy.rows = u32(n * rows);
    copy.cols = u32(length);
    copy.format = step.dstFormat;
    copy.waitMask = 1u << LoadToVector;
    if (c > 0)
      copy.waitMask |= 1u << StoreToVector;
    copy.signalMask = 1u << VectorToStore;
    if (!last)
      copy.signalMask |= 1u << VectorToLoad;
    out.push_back(copy);

    size_t firstStore = out.size();
    for (int64_t b = b0; b < b0 + n; ++b) {
      auto sram = static_cast<uint32_t>(outArea + (b - b0) * blockOut);
      int64_t base = blockOffset(b, dst);
      auto emit = [&](int64_t element, uint32_t at, int64_t dmaRows,
                      int64_t rowBytes, int64_t stride) {
        out.push_back(transfer(
            Opcode::Store, Buffer::Unified,
            static_cast<uint64_t>(int64_t(step.dst) + element * outSize), at,
            dmaRows, rowBytes, stride));
      };
      if (dst[rank - 1] == 1) {
        emit(base, sram, rows, length * outSize, dst[rank - 2] * outSize);
      } else {
        for (int64_t r = 0; r < rows; ++r)
          emit(base + r * dst[rank - 2], sram + u32(r * length * outSize),
               length, outSize, dst[rank - 1] * outSize);
      }
    }
    out[firstStore].waitMask |= 1u << VectorToStore;
    if (!last)
      out.back().signalMask |= 1u << StoreToVector;
  }
  return std::nullopt;
}

std::optional<std::string>
tessera::sim::appendGatherStep(const AcceleratorConfig &config,
                               const GatherStep &step,
                               std::vector<Instruction> &out) {
  if (step.count <= 0 || step.rowElements <= 0 || step.tableRows <= 0 ||
      step.tableRows >= (int64_t(1) << 32) || step.rowElements > 0xffff)
    return std::string("a gather of that shape is beyond the accelerator");
  int64_t outSize = formatBytes(step.outFormat);
  // Per index: two fp32 copies of it, the fp32 row and the converted row.
  int64_t perIndex = 8 + step.rowElements * (4 + outSize);
  int64_t chunk = std::min<int64_t>(
      {step.count, (config.unifiedBufferBytes - 256) / perIndex, 0xffff});
  if (chunk < 1)
    return std::string("one gathered row does not fit the unified buffer");
  auto align = [](int64_t v) { return (v + 63) / 64 * 64; };
  uint32_t ids = 0, handed = u32(align(chunk * 4)),
           rows = u32(handed + align(chunk * 4)),
           converted = u32(rows + align(chunk * step.rowElements * 4));
  auto copy = [](uint32_t from, uint32_t to, int64_t rows, int64_t cols,
                 NumberFormat format) {
    Instruction i;
    i.opcode = Opcode::Vector;
    i.depth = static_cast<uint32_t>(VectorFn::Copy);
    i.a = from;
    i.c = to;
    i.rows = u32(rows);
    i.cols = u32(cols);
    i.format = format;
    return i;
  };
  int64_t chunks = (step.count + chunk - 1) / chunk;
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t i0 = c * chunk, n = std::min(chunk, step.count - i0);
    bool first = c == 0, last = c + 1 == chunks;
    Instruction load = contiguousTransfer(
        Opcode::Load, step.indices + uint64_t(i0 * 4), ids, n * 4);
    load.flags = first ? kLoadFence : 0;
    load.waitMask = first ? 0 : 1u << VectorToLoad;
    load.signalMask = 1u << LoadToVector;
    out.push_back(load);
    // The indices have landed once the vector unit has them: it hands a
    // copy to the gather, which the load queue issues after the token.
    Instruction hand = copy(ids, handed, n, 1, NumberFormat::F32);
    hand.waitMask = 1u << LoadToVector;
    if (!first)
      hand.waitMask |= 1u << StoreToVector;
    hand.signalMask = 1u << VectorToLoad;
    out.push_back(hand);
    Instruction gather;
    gather.opcode = Opcode::Gather;
    gather.dram = step.table;
    gather.a = rows;
    gather.b = handed;
    gather.rows = u32(n);
    gather.c = u32(step.rowElements * 4);
    gather.cols = u32(step.tableRows % 65536);
    gather.depth = u32(step.tableRows / 65536);
    gather.waitMask = 1u << VectorToLoad;
    gather.signalMask = 1u << LoadToVector;
    out.push_back(gather);
    Instruction convert =
        copy(rows, converted, n, step.rowElements, step.outFormat);
    convert.waitMask = 1u << LoadToVector;
    convert.signalMask = 1u << VectorToStore;
    if (!last)
      convert.signalMask |= 1u << VectorToLoad;
    out.push_back(convert);
    Instruction store = contiguousTransfer(
        Opcode::Store, step.out + uint64_t(i0 * step.rowElements * outSize),
        converted, n * step.rowElements * outSize);
    store.waitMask = 1u << VectorToStore;
    if (!last)
      store.signalMask = 1u << StoreToVector;
    out.push_back(store);
  }
  return std::nullopt;
}
