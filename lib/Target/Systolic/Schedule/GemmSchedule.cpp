//===- GemmSchedule.cpp - GEMMs as load/matrix/vector/store code ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The weight- and output-stationary GEMM schedules (tiles rotating through
// slots, batches, epilogues on the vector unit) and the GEMM program
// builder.
//
//===----------------------------------------------------------------------===//
#include "Transfer.h"
#include "tessera/Target/Systolic/Schedule.h"
#include "tessera/Sim/Simulator.h"

#include <algorithm>
#include <array>
#include <cstring>

using namespace tessera::sim;

/// A GEMM epilogue's slots in the unified buffer: each block slot holds
/// every epilogue slot for up to `maxRows` rows of C columns.
struct EpilogueLayout {
  std::vector<uint32_t> offset;
  int64_t bytes = 0;
};

static EpilogueLayout layoutEpilogue(const VectorStep &epilogue,
                                     int64_t maxRows, int64_t C) {
  EpilogueLayout layout;
  for (const VectorStep::Slot &slot : epilogue.slots) {
    layout.offset.push_back(static_cast<uint32_t>(layout.bytes));
    int64_t bytes = slot.shape == VectorStep::Shape::Row    ? C * 4
                    : slot.shape == VectorStep::Shape::Full ? maxRows * C * 4
                                                            : maxRows * 4;
    layout.bytes += (bytes + 63) / 64 * 64;
  }
  return layout;
}

/// Where one output block's epilogue runs: its slots' addresses and the
/// block's first row and column in the epilogue's view.
struct EpilogueBlock {
  const VectorStep *ops;
  std::vector<uint32_t> address;
  int64_t viewRow = 0, col0 = 0;
};

/// The epilogue of the output block at (`viewRow`, `col0`) whose block
/// slot is `slot`, with the layout's regions from `base`; none when the
/// step has no epilogue.
static std::optional<EpilogueBlock>
epilogueBlock(const GemmStep &step, const EpilogueLayout &layout, uint32_t base,
              uint32_t slot, int64_t viewRow, int64_t col0) {
  if (!step.epilogue)
    return std::nullopt;
  EpilogueBlock block{&*step.epilogue, {}, viewRow, col0};
  for (uint32_t offset : layout.offset)
    block.address.push_back(base + slot * static_cast<uint32_t>(layout.bytes) +
                            offset);
  return block;
}

/// The end of a block of outputs: the drain of accumulator rows from
/// `accRow` into the unified buffer at `sram` (with the step's bias row at
/// `biasAt` and ReLU), the epilogue's ops if any (its inputs loaded for
/// the block), and the store of its `rows` x `cols` to DRAM at `dram`.
/// Blocks rotate through `slots` of everything: block `index` of `count`
/// waits for what block index - slots released and releases for block
/// index + slots.
static void appendDrainAndStore(const GemmStep &step, uint32_t accRow,
                                uint32_t sram, uint32_t biasAt, int64_t rows,
                                int64_t cols, uint64_t dram, int64_t index,
                                int64_t count, int64_t slots,
                                const EpilogueBlock *epilogue,
                                std::vector<Instruction> &out) {
  int64_t outSize = formatBytes(step.outFormat);
  bool reused = index + slots < count;
  bool epilogueLoads = false;
  if (epilogue) {
    const VectorStep &e = *epilogue->ops;
    int64_t n = e.cols;
    std::vector<Instruction> loads;
    for (size_t s = 1; s < e.slots.size(); ++s) {
      const VectorStep::Slot &slot = e.slots[s];
      if (!slot.dram)
        continue;
      uint32_t to = epilogue->address[s];
      switch (slot.shape) {
      case VectorStep::Shape::Full:
        loads.push_back(transfer(
            Opcode::Load, Buffer::Unified,
            *slot.dram + uint64_t(epilogue->viewRow * n + epilogue->col0) * 4,
            to, rows, cols * 4, n * 4));
        break;
      case VectorStep::Shape::Column:
        loads.push_back(transfer(Opcode::Load, Buffer::Unified,
                                 *slot.dram + uint64_t(epilogue->viewRow) * 4,
                                 to, 1, rows * 4, rows * 4));
        break;
      case VectorStep::Shape::Row:
        loads.push_back(transfer(Opcode::Load, Buffer::Unified,
                                 *slot.dram + uint64_t(epilogue->col0) * 4, to,
                                 1, cols * 4, cols * 4));
        break;
      }
    }
    if (!loads.empty()) {
      epilogueLoads = true;
      if (index >= slots)
        loads.front().waitMask |= 1u << VectorToLoad;
      loads.back().signalMask |= 1u << LoadToVector;
      out.insert(out.end(), loads.begin(), loads.end());
    }
  }
  Instruction drain;
  drain.opcode = Opcode::Drain;
  drain.format = epilogue ? NumberFormat::F32 : step.outFormat;
  drain.a = accRow;
  drain.b = epilogue ? epilogue->address[0] : sram;
  drain.rows = static_cast<uint32_t>(rows);
  drain.cols = static_cast<uint32_t>(cols);
  drain.flags = step.relu ? kDrainRelu : 0;
  if (step.format == NumberFormat::I8 && step.outFormat != NumberFormat::I8)
    drain.flags |= kDrainInt32;
  if (step.scale) {
    drain.flags |= kDrainScale;
    float value = *step.scale;
    std::memcpy(&drain.c, &value, 4);
  }
  drain.waitMask = 1u << MatrixToVector;
  if (step.bias) {
    drain.flags |= kDrainBias;
    drain.dram = biasAt;
    drain.waitMask |= 1u << LoadToVector;
    if (reused)
      drain.signalMask |= 1u << VectorToLoad;
  }
  if (index >= slots)
    drain.waitMask |= 1u << StoreToVector;
  if (!epilogue)
    drain.signalMask |= 1u << VectorToStore;
  if (reused)
    drain.signalMask |= 1u << VectorToMatrix;
  out.push_back(drain);
  if (epilogue) {
    size_t first = out.size();
    appendVectorOpsOnBlock(*epilogue->ops, epilogue->address, rows, cols, out);
    if (epilogueLoads)
      out[first].waitMask |= 1u << LoadToVector;
    out.back().signalMask |= 1u << VectorToStore;
    if (epilogueLoads && reused)
      out.back().signalMask |= 1u << VectorToLoad;
    sram = epilogue->address[epilogue->ops->output];
  }
  Instruction store = transfer(Opcode::Store, Buffer::Unified, dram, sram, rows,
                               cols * outSize, step.shape.n * outSize);
  store.waitMask = 1u << VectorToStore;
  if (reused)
    store.signalMask = 1u << StoreToVector;
  out.push_back(store);
}

/// The load of block `index`'s bias row (columns from `col0`), if the step
/// has a bias: it waits until the drain `slots` blocks back has read the
/// row it replaces, and as the step's first load for the earlier stores
/// (an earlier GEMM's drains may still read the same row).
static void appendBiasLoad(const GemmStep &step, int64_t col0, int64_t cols,
                           uint32_t biasAt, int64_t index, int64_t slots,
                           std::vector<Instruction> &out) {
  if (!step.bias)
    return;
  Instruction bias =
      transfer(Opcode::Load, Buffer::Unified, *step.bias + col0 * 4, biasAt, 1,
               cols * 4, cols * 4);
  bias.waitMask = index >= slots ? 1u << VectorToLoad : 0;
  bias.signalMask = 1u << LoadToVector;
  if (index == 0 && step.fence)
    bias.flags |= kLoadFence;
  out.push_back(bias);
}

/// The addresses of batch member `index`'s operands (A, B, C).
static std::array<uint64_t, 3> batchOperands(const GemmStep &step,
                                             int64_t index) {
  auto at = [&](uint64_t base, uint64_t stride) {
    return base + uint64_t(index) * stride;
  };
  return {at(step.a, step.aStride), at(step.b, step.bStride),
          at(step.c, step.cStride)};
}

/// Tiles in flight per GEMM at most: enough to cover a DRAM latency of a
/// few hundred cycles with pipelined folds of R cycles.
static constexpr int64_t kMaxSlots = 16;

/// The output-stationary schedule: each fold holds an R x C block of
/// outputs and streams the whole depth; its weight (K x cols) and
/// activation (rows x K) tiles, accumulator block, output tile and bias
/// row rotate through as many slots as the memories hold (at least two,
/// at most kMaxSlots), so that loads run that many folds ahead.
static std::optional<std::string>
appendGemmOutputStationary(const AcceleratorConfig &config,
                           const GemmStep &step,
                           std::vector<Instruction> &out) {
  const GemmShape &gemm = step.shape;
  int64_t R = config.array.rows, C = config.array.cols;
  int64_t size = formatBytes(step.format);
  int64_t outSize = formatBytes(step.outFormat);
  int64_t mTiles = (gemm.m + R - 1) / R, nTiles = (gemm.n + C - 1) / C;
  uint32_t aSlot = static_cast<uint32_t>(R * gemm.k * size);
  uint32_t oSlot = static_cast<uint32_t>(R * C * outSize);
  uint32_t wSlot = static_cast<uint32_t>(gemm.k * C * size);
  EpilogueLayout epilogue;
  if (step.epilogue)
    epilogue = layoutEpilogue(*step.epilogue, R, C);
  int64_t slots =
      gemm.k > 0xffff
          ? 0
          : std::min(
                {kMaxSlots, config.weightBufferBytes / int64_t(wSlot),
                 config.accumulatorBytes / (R * C * 4),
                 config.unifiedBufferBytes / (int64_t(aSlot) + int64_t(oSlot) +
                                              C * 4 + epilogue.bytes)});
  if (slots < 2)
    return std::string("the on-chip memories are too small to double-buffer "
                       "the output-stationary tiles of this GEMM (its whole "
                       "depth per tile)");
  uint32_t slotCount = static_cast<uint32_t>(slots);
  uint32_t biasBase = slotCount * (aSlot + oSlot);
  uint32_t epilogueBase = biasBase + slotCount * static_cast<uint32_t>(C * 4);
  int64_t folds = step.batch * mTiles * nTiles, fold = 0;
  for (int64_t bt = 0; bt < step.batch; ++bt)
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      int64_t rows = std::min(R, gemm.m - mt * R);
      auto [a, b, c] = batchOperands(step, bt);
      for (int64_t nt = 0; nt < nTiles; ++nt, ++fold) {
        int64_t cols = std::min(C, gemm.n - nt * C);
        uint32_t slot = static_cast<uint32_t>(fold % slots);
        uint32_t biasAt = biasBase + slot * static_cast<uint32_t>(C * 4);
        appendBiasLoad(step, nt * C, cols, biasAt, fold, slots, out);
        Instruction weights =
            transfer(Opcode::Load, Buffer::Weights, b + nt * C * size,
                     slot * wSlot, gemm.k, cols * size, gemm.n * size);
        weights.waitMask = fold >= slots ? 1u << MatrixToLoad : 0;
        if (fold == 0 && step.fence)
          weights.flags |= kLoadFence;
        out.push_back(weights);
        Instruction acts =
            transfer(Opcode::Load, Buffer::Unified, a + mt * R * gemm.k * size,
                     slot * aSlot, rows, gemm.k * size, gemm.k * size);
        acts.signalMask = 1u << LoadToMatrix;
        out.push_back(acts);
        Instruction mm;
        mm.opcode = Opcode::Matmul;
        mm.format = step.format;
        mm.a = slot * wSlot;
        mm.b = slot * aSlot;
        mm.c = slot * static_cast<uint32_t>(R);
        mm.rows = static_cast<uint32_t>(rows);
        mm.depth = static_cast<uint32_t>(gemm.k);
        mm.cols = static_cast<uint32_t>(cols);
        mm.waitMask = 1u << LoadToMatrix;
        if (fold >= slots)
          mm.waitMask |= 1u << VectorToMatrix;
        mm.signalMask = 1u << MatrixToVector;
        if (fold + slots < folds)
          mm.signalMask |= 1u << MatrixToLoad;
        out.push_back(mm);
        std::optional<EpilogueBlock> block = epilogueBlock(
            step, epilogue, epilogueBase, slot, bt * gemm.m + mt * R, nt * C);
        appendDrainAndStore(step, mm.c, slotCount * aSlot + slot * oSlot,
                            biasAt, rows, cols,
                            c + (mt * R * gemm.n + nt * C) * outSize, fold,
                            folds, slots, block ? &*block : nullptr, out);
      }
    }
  return std::nullopt;
}

std::optional<std::string>
tessera::sim::appendGemm(const AcceleratorConfig &config, const GemmStep &step,
                         std::vector<Instruction> &out) {
  const GemmShape &gemm = step.shape;
  if (gemm.m <= 0 || gemm.n <= 0 || gemm.k <= 0 || step.batch <= 0)
    return std::string("GEMM sizes must be positive");
  if (!config.supports(step.format) || step.format == NumberFormat::F32)
    return std::string("operand format ") + formatName(step.format) +
           " is not one this accelerator multiplies";
  if (step.format == NumberFormat::I8 && step.outFormat == NumberFormat::I8)
    return std::string("an int8 GEMM's products go out dequantized (f32, "
                       "bf16 or f16)");
  if (step.epilogue) {
    const VectorStep &e = *step.epilogue;
    auto count = static_cast<int>(e.slots.size());
    auto valid = [&](int s) { return s >= 0 && s < count; };
    if (e.rows != step.batch * gemm.m || e.cols != gemm.n)
      return std::string("a GEMM epilogue's view must be the batch's "
                         "outputs (batch * M rows x N columns)");
    if (e.slots.empty() || e.slots[0].shape != VectorStep::Shape::Full ||
        e.slots[0].dram || !valid(e.output) || e.ops.empty() ||
        e.slots[e.output].shape != VectorStep::Shape::Full)
      return std::string("a GEMM epilogue needs ops, the product in slot 0 "
                         "and a whole-view output slot");
    for (const VectorStep::Op &op : e.ops) {
      if (!valid(op.dst) || !valid(op.src) ||
          (op.src2 >= 0 && !valid(op.src2)) ||
          (isBinary(op.fn) && op.src2 < 0 && !op.immediate))
        return std::string("a GEMM epilogue's op names a slot it does not "
                           "have");
      if (isRowReduction(op.fn) && gemm.n > config.array.cols)
        return std::string("a GEMM epilogue reduces rows only when one "
                           "block holds whole rows (N <= the array's "
                           "columns)");
    }
    if (e.outFormat != step.outFormat)
      return std::string("a GEMM epilogue stores in the GEMM's output "
                         "format");
  }
  if (config.dataflow == Dataflow::OutputStationary)
    return appendGemmOutputStationary(config, step, out);
  if (config.dataflow == Dataflow::InputStationary)
    return std::string("the input-stationary dataflow has no GEMM schedule "
                       "yet (use ws or os)");
  int64_t R = config.array.rows, C = config.array.cols;
  int64_t size = formatBytes(step.format);
  int64_t outSize = formatBytes(step.outFormat);
  int64_t kTiles = (gemm.k + R - 1) / R, nTiles = (gemm.n + C - 1) / C;
  // Fold slots (a weight tile and an activation tile each) rotate so that
  // loads run ahead of the array; block slots (an accumulator block, an
  // output tile and a bias row each) so that draining a block overlaps the
  // next blocks' folds: as many as a block's folds leave to cover.
  int64_t wSlotBytes = R * C * size;
  int64_t slots = std::min(kMaxSlots, config.weightBufferBytes / wSlotBytes);
  int64_t blockSlots = std::clamp<int64_t>(slots / kTiles, 2, kMaxSlots);
  int64_t accRows = config.accumulatorBytes / (4 * C);
  int64_t biasBytes = step.bias ? blockSlots * C * 4 : 0;
  int64_t perRow = slots * R * size + blockSlots * C * outSize;
  // An epilogue's slots, per block slot: Full and Column ones per row, Row
  // ones (and the alignment) fixed.
  int64_t fixed = biasBytes;
  if (step.epilogue) {
    int64_t rowSlots = 0;
    for (const VectorStep::Slot &slot : step.epilogue->slots)
      rowSlots += slot.shape == VectorStep::Shape::Row;
    int64_t perBlockRow = 0;
    for (const VectorStep::Slot &slot : step.epilogue->slots)
      perBlockRow += slot.shape == VectorStep::Shape::Full     ? C * 4
                     : slot.shape == VectorStep::Shape::Column ? 4
                                                               : 0;
    perRow += blockSlots * perBlockRow;
    fixed += blockSlots *
             (rowSlots * C * 4 + 64 * int64_t(step.epilogue->slots.size()));
  }
  int64_t chunk =
      std::min({gemm.m, accRows / blockSlots,
                (config.unifiedBufferBytes - fixed) / perRow, int64_t(0xffff)});
  if (chunk <= 0 || slots < 2)
    return std::string("the on-chip memories are too small to double-buffer "
                       "one weight tile and one row of activations");
  int64_t mChunks = (gemm.m + chunk - 1) / chunk;

  // Every fold loads its weight and activation tiles into its fold slot
  // (waiting until the matmul `slots` folds back has freed it); after a
  // block's last fold the vector unit drains it (adding the bias, loaded
  // for the block, and applying ReLU) and the store queue writes it back.
  uint32_t aSlot = static_cast<uint32_t>(chunk * R * size);
  uint32_t oSlot = static_cast<uint32_t>(chunk * C * outSize);
  uint32_t outBase = static_cast<uint32_t>(slots) * aSlot;
  uint32_t biasBase = outBase + static_cast<uint32_t>(blockSlots) * oSlot;
  uint32_t epilogueBase = biasBase + static_cast<uint32_t>(blockSlots) *
                                         static_cast<uint32_t>(C * 4);
  EpilogueLayout epilogue;
  if (step.epilogue)
    epilogue = layoutEpilogue(*step.epilogue, chunk, C);
  uint32_t wSlot = static_cast<uint32_t>(wSlotBytes);
  int64_t blocks = step.batch * mChunks * nTiles;
  int64_t fold = 0, block = 0;
  for (int64_t bt = 0; bt < step.batch; ++bt)
    for (int64_t mc = 0; mc < mChunks; ++mc) {
      int64_t rows = std::min(chunk, gemm.m - mc * chunk);
      auto [a, b, c] = batchOperands(step, bt);
      for (int64_t nt = 0; nt < nTiles; ++nt, ++block) {
        int64_t cols = std::min(C, gemm.n - nt * C);
        uint32_t blockSlot = static_cast<uint32_t>(block % blockSlots);
        uint32_t accBase = static_cast<uint32_t>(blockSlot * chunk);
        uint32_t biasAt = biasBase + blockSlot * static_cast<uint32_t>(C * 4);
        appendBiasLoad(step, nt * C, cols, biasAt, block, blockSlots, out);
        for (int64_t kt = 0; kt < kTiles; ++kt, ++fold) {
          int64_t depth = std::min(R, gemm.k - kt * R);
          uint32_t slot = static_cast<uint32_t>(fold % slots);
          Instruction weights =
              transfer(Opcode::Load, Buffer::Weights,
                       b + (kt * R * gemm.n + nt * C) * size, slot * wSlot,
                       depth, cols * size, gemm.n * size);
          weights.waitMask = fold >= slots ? 1u << MatrixToLoad : 0;
          // The first load of a GEMM reading an earlier GEMM's result waits
          // for its stores.
          if (fold == 0 && step.fence)
            weights.flags |= kLoadFence;
          out.push_back(weights);
          Instruction acts =
              transfer(Opcode::Load, Buffer::Unified,
                       a + (mc * chunk * gemm.k + kt * R) * size, slot * aSlot,
                       rows, depth * size, gemm.k * size);
          acts.signalMask = 1u << LoadToMatrix;
          out.push_back(acts);
          Instruction mm;
          mm.opcode = Opcode::Matmul;
          mm.format = step.format;
          mm.a = slot * wSlot;
          mm.b = slot * aSlot;
          mm.c = accBase;
          mm.rows = static_cast<uint32_t>(rows);
          mm.depth = static_cast<uint32_t>(depth);
          mm.cols = static_cast<uint32_t>(cols);
          mm.flags = kt > 0 ? 1 : 0;
          mm.waitMask = 1u << LoadToMatrix;
          // A block's first fold waits until the block blockSlots back is
          // drained.
          if (kt == 0 && block >= blockSlots)
            mm.waitMask |= 1u << VectorToMatrix;
          if (fold + slots < blocks * kTiles)
            mm.signalMask = 1u << MatrixToLoad;
          if (kt + 1 == kTiles)
            mm.signalMask |= 1u << MatrixToVector;
          out.push_back(mm);
        }
        std::optional<EpilogueBlock> fused =
            epilogueBlock(step, epilogue, epilogueBase, blockSlot,
                          bt * gemm.m + mc * chunk, nt * C);
        appendDrainAndStore(step, accBase, outBase + blockSlot * oSlot, biasAt,
                            rows, cols,
                            c + (mc * chunk * gemm.n + nt * C) * outSize, block,
                            blocks, blockSlots, fused ? &*fused : nullptr, out);
      }
    }
  return std::nullopt;
}

Result<Program> tessera::sim::buildGemmProgram(const AcceleratorConfig &config,
                                               GemmShape gemm,
                                               NumberFormat format,
                                               const std::vector<float> &a,
                                               const std::vector<float> &b) {
  if (auto error = validateConfig(config))
    return "invalid configuration: " + *error;
  if (gemm.m <= 0 || gemm.n <= 0 || gemm.k <= 0)
    return std::string("GEMM sizes must be positive");
  if (int64_t(a.size()) != gemm.m * gemm.k ||
      int64_t(b.size()) != gemm.k * gemm.n)
    return std::string("operand data does not match the GEMM's sizes");
  // DRAM: A (M x K) and B (K x N) row-major in `format`, C (M x N)
  // row-major in fp32.
  Program p;
  int64_t size = formatBytes(format);
  auto place = [&](const std::string &name, TensorInfo::Role role,
                   NumberFormat f, std::vector<int64_t> shape) {
    TensorInfo t{name, role, f, std::move(shape), p.dram.size()};
    p.dram.resize(p.dram.size() + static_cast<size_t>(t.bytes()));
    p.tensors.push_back(t);
    return t.offset;
  };
  GemmStep step;
  step.shape = gemm;
  step.format = format;
  step.a = place("A", TensorInfo::Role::Input, format, {gemm.m, gemm.k});
  step.b = place("B", TensorInfo::Role::Input, format, {gemm.k, gemm.n});
  step.c =
      place("C", TensorInfo::Role::Output, NumberFormat::F32, {gemm.m, gemm.n});
  (void)size;
  writeTensor(p, p.tensors[0], a.data());
  writeTensor(p, p.tensors[1], b.data());
  if (auto error = appendGemm(config, step, p.instructions))
    return *error;
  if (auto error = validateProgram(p, config))
    return "internal error: the GEMM program is invalid: " + *error;
  return p;
}
