//===- Lowering.cpp - a function's ops placed in DRAM and lowered in order ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Lowering.h"

#include "tessera/Dialect/Systolic/IR/SystolicDialect.h"
#include "tessera/Support/ResourceLimits.h"
#include "tessera/Target/Systolic/Emitter.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace tessera::systolic {

size_t Lowering::place(StringRef name, Role role, sim::NumberFormat format,
                       ArrayRef<int64_t> shape, ElementsAttr value) {
  // Sizes saturate: run() refuses an image past the memory limit before
  // anything is allocated.
  uint64_t bytes = uint64_t(sim::formatBytes(format));
  for (int64_t d : shape)
    bytes = llvm::SaturatingMultiply(bytes, uint64_t(std::max<int64_t>(d, 0)));
  uint64_t offset = llvm::SaturatingAdd(dramBytes, uint64_t(63)) / 64 * 64;
  dramBytes = llvm::SaturatingAdd(offset, bytes);
  // Inputs and outputs keep the model's names (a second one is the
  // dialect verifier's error); what the lowering names itself is made
  // unique (several steps of one ONNX node).
  std::string unique = name.str();
  if (role != Role::Input && role != Role::Output)
    for (int suffix = 1; tensorNames.contains(unique); ++suffix)
      unique = (name + "_" + Twine(suffix)).str();
  tensorNames.insert(unique);
  tensors.push_back({unique, role, format,
                     SmallVector<int64_t>(shape), offset, value});
  return tensors.size() - 1;
}

size_t Lowering::placeConstant(Value value, ArrayRef<float> values) {
  Operation *key = value.getDefiningOp();
  auto known = placedConstants.find(key);
  if (known != placedConstants.end())
    return known->second;
  auto attr = DenseElementsAttr::get(
      RankedTensorType::get({int64_t(values.size())},
                            Float32Type::get(value.getContext())),
      values);
  std::string name = ts::onnxNodeName(value.getLoc());
  size_t at = place((name.empty() ? "constant" : name) + "/f32_" +
                        std::to_string(tensors.size()),
                    Role::Constant, sim::NumberFormat::F32,
                    {int64_t(values.size())}, attr);
  placedConstants[key] = at;
  return at;
}

std::optional<uint64_t> Lowering::fp32Source(Value value) {
  if (std::optional<std::vector<float>> values = constantValues(value))
    return tensors[placeConstant(value, *values)].offset;
  std::optional<Placed> at = inFormat(value, sim::NumberFormat::F32);
  if (!at)
    return std::nullopt;
  return tensors[at->index].offset;
}

size_t Lowering::placeResult(Operation *op, Value result) {
  auto type = cast<RankedTensorType>(result.getType());
  auto named = outputs.find(result);
  bool isOutput = named != outputs.end();
  sim::NumberFormat format =
      isOutput ? sim::NumberFormat::F32
               : matmulOnlyFormat(result).value_or(sim::NumberFormat::F32);
  std::string base = ts::onnxNodeName(op->getLoc());
  if (base.empty())
    base = op->getName().stripDialect().str() + "_" +
           std::to_string(tensors.size());
  size_t at = place(isOutput ? named->second : base + "/result",
                    isOutput ? Role::Output : Role::Scratch, format, type.getShape());
  placed[result] = {at, leadingRows(type), type.getShape().back()};
  return at;
}

size_t Lowering::placeConvolutionResult(Operation *conv) {
  Value visible = conv->getResult(0);
  if (visible.hasOneUse())
    if (auto wide = dyn_cast<ts::CastOp>(*visible.getUsers().begin());
        wide && wide.getType().getElementType().isF32())
      visible = wide.getResult();
  size_t to = placeResult(conv, visible);
  // A copy: inserting into the map may move the entry a reference reads.
  Placed result = placed[visible];
  placed[conv->getResult(0)] = result;
  return to;
}

std::optional<Placed> Lowering::inFormat(Value value,
                                         sim::NumberFormat format) {
  auto it = placed.find(value);
  if (it == placed.end())
    return std::nullopt;
  Placed at = it->second;
  sim::NumberFormat held = tensors[at.index].format;
  if (held == format)
    return at;
  if (held != sim::NumberFormat::F32)
    return std::nullopt;
  if (auto known = converted.find(value); known != converted.end())
    return known->second;
  size_t to = place(tensors[at.index].name + "/" + sim::formatName(format),
                    Role::Scratch, format, tensors[at.index].shape);
  if (mapStep(tensors[at.index].offset, at.rows, at.cols, sim::VectorFn::Copy,
              std::nullopt, tensors[to].offset, format))
    return std::nullopt;
  Placed result{to, at.rows, at.cols};
  converted[value] = result;
  return result;
}

void Lowering::unwrapFusionRegions(func::FuncOp func) {
  unsigned next = 0;
  for (auto fusion : llvm::make_early_inc_range(
           func.getBody().front().getOps<ts::FusionOp>())) {
    unsigned id = next++;
    Block &body = fusion.getBody().front();
    auto yield = cast<ts::YieldOp>(body.getTerminator());
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
      regionOf[&op] = id;
      op.moveBefore(fusion);
    }
    fusion.replaceAllUsesWith(yield.getValues());
    fusion.erase();
  }
}

/// Each result of a split as a slice of its input (q, k and v split from
/// one projection), which the data movement lowering copies. A split with
/// a piece dynamic along its axis is left to the lowering, which reports
/// it.
static void splitsAsSlices(func::FuncOp func) {
  SmallVector<ts::SplitOp> splits;
  func.walk([&](ts::SplitOp split) { splits.push_back(split); });
  for (ts::SplitOp split : splits) {
    auto type = cast<RankedTensorType>(split.getInput().getType());
    auto axis = static_cast<int64_t>(split.getAxis()); // I64Attr: unsigned
    if (axis < 0)
      axis += type.getRank();
    if (llvm::any_of(split.getResults(), [&](Value piece) {
          return cast<RankedTensorType>(piece.getType()).isDynamicDim(axis);
        }))
      continue;
    OpBuilder b(split);
    int64_t offset = 0;
    std::string node = ts::onnxNodeName(split.getLoc());
    for (auto [i, piece] : llvm::enumerate(split.getResults())) {
      int64_t size = cast<RankedTensorType>(piece.getType()).getDimSize(axis);
      // Each piece's tensor is named after its output (names are unique).
      Location loc = split.getLoc();
      if (!node.empty())
        loc = NameLoc::get(
            b.getStringAttr(node + "/output_" + std::to_string(i)), loc);
      auto slice = ts::SliceOp::create(
          b, loc, piece.getType(), split.getInput(),
          b.getDenseI64ArrayAttr({offset}),
          b.getDenseI64ArrayAttr({offset + size}),
          b.getDenseI64ArrayAttr({axis}), DenseI64ArrayAttr());
      piece.replaceAllUsesWith(slice.getResult());
      offset += size;
    }
    split.erase();
  }
}

/// A select of scores against a constant at most -1e30 (masked_fill of
/// attention scores with -inf or the float's minimum) as the scores plus a
/// mask at the condition's shape (a constant when the condition is; else
/// computed once on the vector unit): -0 where they are kept
/// (x + -0 is x, bit for bit), the fill elsewhere. For finite scores it
/// is exact: a score under 1e22 in magnitude rounds away next to the fill.
/// A masked NaN or +inf score would give NaN where the select gives the
/// fill.
static void selectsAsMasks(func::FuncOp func) {
  SmallVector<ts::WhereOp> selects;
  func.walk([&](ts::WhereOp where) { selects.push_back(where); });
  for (ts::WhereOp where : selects) {
    auto type = dyn_cast<RankedTensorType>(where.getType());
    if (!type || !type.getElementType().isF32())
      continue;
    for (bool keepOn : {true, false}) {
      Value kept = keepOn ? where.getOnTrue() : where.getOnFalse();
      Value other = keepOn ? where.getOnFalse() : where.getOnTrue();
      std::optional<std::vector<float>> fill = constantValues(other);
      if (kept.getType() != type || !fill || fill->size() != 1 ||
          !(fill->front() <= -1e30f) || constantValues(kept))
        continue;
      OpBuilder b(where);
      Location loc = where.getLoc();
      auto scalarType = RankedTensorType::get({}, b.getF32Type());
      auto scalar = [&](float v) -> Value {
        return ts::ConstantOp::create(
            b, loc, cast<ElementsAttr>(DenseElementsAttr::get(scalarType, v)));
      };
      Value keep = scalar(-0.0f), masked = scalar(fill->front());
      auto conditionType =
          cast<RankedTensorType>(where.getCondition().getType());
      Value mask = ts::WhereOp::create(
          b, loc, conditionType.clone(b.getF32Type()), where.getCondition(),
          keepOn ? keep : masked, keepOn ? masked : keep);
      Value sum = ts::AddOp::create(b, loc, type, kept, mask);
      where.replaceAllUsesWith(sum);
      where.erase();
      break;
    }
  }
}

LogicalResult Lowering::run(ModuleOp module, func::FuncOp func) {
  // Rewrites first, inside the fusion regions, so that the ops they create
  // belong to the region of the ops they replace.
  splitsAsSlices(func);
  selectsAsMasks(func);
  unwrapFusionRegions(func);
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    // Integer inputs are indices (token ids) that gathers read; the host
    // writes them as fp32 (exact below 2^24).
    bool indices = type && isa<IntegerType>(type.getElementType()) &&
                   !arg.use_empty() &&
                   llvm::all_of(arg.getUses(), [](OpOperand &use) {
                     return isa<ts::GatherOp>(use.getOwner()) &&
                            use.getOperandNumber() == 1;
                   });
    // Boolean inputs (masks) too, as 0.0 and 1.0.
    if (!type || !type.hasStaticShape() ||
        (!heldAsF32(type) && !indices) || type.getRank() < 1)
      return func.emitError()
             << "input " << i
             << " must be a static f32 or boolean tensor (or integer indices "
                "that only gathers read) on the systolic target";
    std::string name = "input_" + std::to_string(i);
    if (auto attr = func.getArgAttrOfType<StringAttr>(i, "tessera.name"))
      name = attr.str();
    // Inputs only matmuls read come in the operand format, others in
    // fp32 (converted on chip for a matmul that also reads them).
    placed[arg] = {place(name, Role::Input,
                         matmulOnlyFormat(arg).value_or(
                             sim::NumberFormat::F32),
                         type.getShape()),
                   leadingRows(type), type.getShape().back()};
    // A boolean input is read as x != 0 (the host may write any number
    // there), so that and, or and xor on it see 0.0 and 1.0 only.
    if (type.getElementType().isInteger(1)) {
      size_t input = placed[arg].index;
      size_t normalized = place(name + "/boolean", Role::Scratch,
                                sim::NumberFormat::F32, type.getShape());
      if (auto why = mapStep(tensors[input].offset, leadingRows(type),
                             type.getShape().back(), sim::VectorFn::NotEqual,
                             0.0f, tensors[normalized].offset,
                             sim::NumberFormat::F32))
        return func.emitError() << "input " << i << ": " << *why;
      placed[arg].index = normalized;
    }
  }
  // Values the function returns, with their output names.
  auto returnOp = cast<func::ReturnOp>(func.getBody().front().back());
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
    std::string name = "output_" + std::to_string(i);
    if (auto attr = func.getResultAttrOfType<StringAttr>(i, "tessera.name"))
      name = attr.str();
    outputs[value] = name;
  }

  // Matmuls of quantized operands: their quantize and dequantize ops run
  // as part of them (the quantization on the vector unit, the
  // dequantization in the drain).
  func.walk([&](ts::MatmulOp matmul) {
    std::optional<QuantizedMatmul> match = matchQuantized(matmul);
    if (!match)
      return;
    for (Operation *op : {match->lhsDequantize.getOperation(),
                          match->rhsDequantize.getOperation(),
                          match->quantize.getOperation()})
      if (op && op->getResult(0).hasOneUse())
        done.insert(op);
    quantized.try_emplace(matmul, std::move(*match));
  });
  // A quantize that several such matmuls read (the policy's, for the
  // projections of one input) runs once, with the first of them.
  func.walk([&](ts::QuantizeOp quantize) {
    if (!quantize->use_empty() &&
        llvm::all_of(quantize->getUsers(), [&](Operation *user) {
          auto it = quantized.find(user);
          return it != quantized.end() && it->second.quantize == quantize;
        }))
      done.insert(quantize);
  });
  // Transposed convolutions whose kernel is their stride: the ops that
  // spread their input with zeros are not run (when nothing else reads
  // them), the GEMM reads the input itself.
  func.walk([&](ts::Conv2dOp conv) {
    std::optional<ConvTransposeMatch> match = matchConvTranspose(conv);
    if (!match)
      return;
    for (Operation *op : llvm::reverse(match->spreading)) {
      if (!op->getResult(0).hasOneUse() || outputs.count(op->getResult(0)))
        break;
      done.insert(op);
    }
    convTransposes.try_emplace(conv, std::move(*match));
  });
  for (Operation &op : func.getBody().front()) {
    if (done.contains(&op) || isa<ts::ConstantOp, func::ReturnOp>(op))
      continue;
    if (failed(lowerOp(&op)))
      return failure();
  }
  for (Value value : returnOp.getOperands()) {
    auto it = placed.find(value);
    if (it == placed.end() || tensors[it->second.index].role != Role::Output)
      return returnOp.emitError(
          "each result must be computed on the accelerator (an input or "
          "constant returned as it is is not supported)");
  }
  // The program's DRAM image (inputs, weights, every intermediate and the
  // padded and im2col copies) is allocated whole when it is written and
  // when it runs.
  if (dramBytes > ::tessera::memoryLimitBytes())
    return func.emitError()
           << "the systolic program's DRAM image needs "
           << ::tessera::describeBytes(dramBytes)
           << ", more than the memory limit of "
           << ::tessera::describeBytes(::tessera::memoryLimitBytes())
           << " (TESSERA_MEMORY_LIMIT)";
  buildProgram(module, func.getLoc());
  func.erase();
  return success();
}

/// Whether only convolutions read `value`, as their filter (through
/// casts, transposes and slices).
static bool onlyFilters(Value value) {
  return !value.use_empty() &&
         llvm::all_of(value.getUses(), [](OpOperand &use) {
           Operation *user = use.getOwner();
           if (isa<ts::Conv2dOp>(user))
             return use.getOperandNumber() == 1;
           return isa<ts::CastOp, ts::TransposeOp, ts::SliceOp>(user) &&
                  onlyFilters(user->getResult(0));
         });
}

/// Whether `op`'s result is constant and only convolutions read it, as
/// their filter, so that it is evaluated where they read it.
static bool isConstantFilter(Operation *op) {
  return onlyFilters(op->getResult(0)) && constantValues(op->getResult(0));
}

/// Whether `op`'s result is constant and every op that reads it is
/// evaluated at compile time too (a causal buffer sliced to the sequence
/// and compared with zero), so that it is never read on the accelerator.
static bool onlyReadAsConstant(Operation *op) {
  Value result = op->getResult(0);
  return !result.use_empty() &&
         llvm::all_of(result.getUsers(),
                      [](Operation *user) {
                        return isa<ts::WhereOp, ts::CompareOp, ts::AndOp,
                                   ts::OrOp, ts::XorOp, ts::NotOp,
                                   ts::CastOp>(user) &&
                               constantValues(user->getResult(0));
                      }) &&
         constantValues(result);
}

LogicalResult Lowering::lowerOp(Operation *op) {
  auto fail = [&](const Twine &why) -> LogicalResult {
    return op->emitError() << "'" << op->getName() << "' " << why;
  };
  // Reshapes are views; those of constant values are read where they are
  // used, as the values are.
  if (auto reshape = dyn_cast<ts::ReshapeOp>(op)) {
    if (constantValues(reshape.getResult()))
      return success();
    auto it = placed.find(reshape->getOperand(0));
    auto type = cast<RankedTensorType>(reshape->getResult(0).getType());
    if (it == placed.end() || !type.hasStaticShape())
      return fail("reshapes only what is already in memory");
    // A model output that is a view of a value computed here (a
    // classifier's Flatten after its pooling): that value's tensor becomes
    // the output, with the output's name and shape (the same bytes).
    if (auto named = outputs.find(reshape.getResult());
        named != outputs.end()) {
      TensorEntry &source = tensors[it->second.index];
      if (source.role == Role::Scratch &&
          source.format == sim::NumberFormat::F32 &&
          !outputs.contains(reshape->getOperand(0))) {
        source.role = Role::Output;
        source.name = named->second;
        source.shape.assign(type.getShape().begin(), type.getShape().end());
        tensorNames.insert(named->second);
      } else if (source.role == Role::Output && source.name != named->second) {
        return fail("returns a view of another of the model's results; "
                    "return it once");
      }
    }
    placed[reshape->getResult(0)] = {it->second.index, leadingRows(type),
                                     type.getShape().back()};
    return success();
  }
  if (auto matmul = dyn_cast<ts::MatmulOp>(op)) {
    if (auto it = quantized.find(matmul); it != quantized.end())
      return lowerMatmul(matmul, &it->second);
    return castSource(matmul.getRhs()).getDefiningOp<ts::ConstantOp>()
               ? lowerMatmul(matmul)
               : lowerComputedMatmul(matmul);
  }
  // An operand's cast to the array's format is read where it is used (a
  // value kept in that format, or converted on the vector unit once).
  if (isa<ts::CastOp>(op) && castFormat(op->getResult(0)))
    return success();
  // A cast back to fp32 of what the accelerator holds in fp32 (a
  // convolution's product) is a view.
  if (auto cast = dyn_cast<ts::CastOp>(op);
      cast && cast.getType().getElementType().isF32()) {
    auto it = placed.find(cast.getInput());
    if (it != placed.end() &&
        tensors[it->second.index].format == sim::NumberFormat::F32) {
      Placed view = it->second; // the insertion below may move it
      placed[cast.getResult()] = view;
      return success();
    }
  }
  // Constant masks are evaluated where they are read, and so are
  // transposes and slices of constant filters (a transposed convolution's).
  if (isa<ts::WhereOp, ts::CompareOp, ts::AndOp, ts::OrOp, ts::XorOp,
          ts::NotOp, ts::CastOp>(op) &&
      constantValues(op->getResult(0)))
    return success();
  if (isa<ts::TransposeOp, ts::SliceOp>(op) &&
      (isConstantFilter(op) || onlyReadAsConstant(op)))
    return success();
  if (auto gather = dyn_cast<ts::GatherOp>(op);
      gather && !gather.getIndices().getDefiningOp<ts::ConstantOp>())
    return lowerLookup(gather);
  if (auto conv = dyn_cast<ts::Conv2dOp>(op)) {
    if (auto it = convTransposes.find(conv); it != convTransposes.end())
      return lowerConvTranspose(conv, it->second);
    return lowerConv(conv);
  }
  if (isa<ts::MaxPoolOp, ts::AvgPoolOp>(op))
    return lowerPool(op);
  if (auto pad = dyn_cast<ts::PadOp>(op))
    return lowerPad(pad);
  if (auto resize = dyn_cast<ts::ResizeOp>(op))
    return lowerResize(resize);
  if (isa<ts::TransposeOp, ts::SliceOp, ts::ConcatOp, ts::GatherOp,
          ts::ExpandOp>(op))
    return lowerDataMovement(op);
  if (isVectorOp(op))
    return lowerVectorChain(op);
  return fail("cannot run on the systolic target yet: its lowering handles "
              "matmuls, convolutions, pooling, constant pads, resizes, "
              "elementwise ops, softmax, layer_norm, rms_norm, sums, means "
              "and maxima over trailing axes, transposes, slices, splits, "
              "concatenations, broadcasts and gathers of one constant index");
}

void Lowering::buildProgram(ModuleOp module, Location loc) {
  OpBuilder builder(module.getBodyRegion());
  builder.setInsertionPointToEnd(module.getBody());
  auto program = mlir::systolic::ProgramOp::create(
      builder, loc, builder.getStringAttr(config.name),
      builder.getI64IntegerAttr(static_cast<int64_t>(dramBytes)));
  Block *body = new Block;
  program.getBody().push_back(body);
  builder.setInsertionPointToStart(body);
  for (const TensorEntry &t : tensors)
    mlir::systolic::TensorOp::create(
        builder, loc, builder.getStringAttr(t.name),
        mlir::systolic::TensorRoleAttr::get(builder.getContext(), t.role),
        mlir::TypeAttr::get(mlir::systolic::getFormatType(builder.getContext(),
                                                          t.format)),
        builder.getDenseI64ArrayAttr(t.shape),
        builder.getI64IntegerAttr(static_cast<int64_t>(t.offset)), t.value);
  for (const sim::Instruction &i : instructions)
    ::tessera::buildInstructionOp(builder, loc, i);
}

} // namespace tessera::systolic
