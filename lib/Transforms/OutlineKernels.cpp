//===- OutlineKernels.cpp - repeated kernels compiled once ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A transformer of N layers holds N copies of each kernel that differ only
// in the weights they read. Each kernel (a fusion region, or a contraction
// or reduction outside one) is cloned into a candidate function whose
// arguments are the values it reads from outside; candidates that print
// the same are one kernel, outlined once and called from every place.
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <utility>

namespace tessera {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
namespace ts = mlir::tessera;

namespace {

/// Constants this small (or splats) are part of a kernel's identity.
constexpr int64_t kInlinedConstantElements = 16;

bool isKernel(Operation *op) {
  return isa<ts::FusionOp, ts::MatmulOp, ts::Conv2dOp, ts::AttentionOp,
             ts::SoftmaxOp, ts::LogSoftmaxOp, ts::LayerNormOp, ts::RmsNormOp,
             ts::ReduceSumOp, ts::ReduceMeanOp, ts::ReduceMaxOp,
             ts::ReduceMinOp, ts::ReduceProdOp, ts::MaxPoolOp,
             ts::AvgPoolOp>(op);
}

/// A constant copied into the kernel rather than passed to it.
bool isInlinedConstant(Value value) {
  auto constant = value.getDefiningOp<ts::ConstantOp>();
  if (!constant)
    return false;
  ElementsAttr elements = constant.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(elements))
    if (dense.isSplat())
      return true;
  return elements.getNumElements() <= kInlinedConstantElements;
}

/// A kernel, or a run of the ops between two kernels, in block order.
using Piece = SmallVector<Operation *>;

/// The values `piece` reads from outside itself, in order of first use.
llvm::SetVector<Value> pieceInputs(const Piece &piece) {
  llvm::SmallPtrSet<Operation *, 8> members(piece.begin(), piece.end());
  llvm::SetVector<Value> inputs;
  auto add = [&](Value value) {
    if (!members.contains(value.getDefiningOp()))
      inputs.insert(value);
  };
  for (Operation *op : piece) {
    llvm::for_each(op->getOperands(), add);
    llvm::SetVector<Value> above;
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, above);
    llvm::for_each(above, add);
  }
  return inputs;
}

/// The values of `piece` used after it.
SmallVector<Value> pieceOutputs(const Piece &piece) {
  llvm::SmallPtrSet<Operation *, 8> members(piece.begin(), piece.end());
  SmallVector<Value> outputs;
  for (Operation *op : piece)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(
                op->getBlock()->findAncestorOpInBlock(*user));
          }))
        outputs.push_back(result);
  return outputs;
}

/// The values a call to `piece`'s function passes: its inputs but the
/// constants copied in.
SmallVector<Value> pieceArguments(const Piece &piece) {
  SmallVector<Value> arguments;
  for (Value input : pieceInputs(piece))
    if (!isInlinedConstant(input))
      arguments.push_back(input);
  return arguments;
}

/// A private function computing `piece`'s outputs from its inputs: the
/// small constants among them copied in, the rest as arguments.
func::FuncOp buildCandidate(OpBuilder &b, const Piece &piece) {
  llvm::SetVector<Value> inputs = pieceInputs(piece);
  SmallVector<Value> outputs = pieceOutputs(piece);
  SmallVector<Type> argumentTypes;
  for (Value input : inputs)
    if (!isInlinedConstant(input))
      argumentTypes.push_back(input.getType());
  auto type = b.getFunctionType(argumentTypes, ValueRange(outputs).getTypes());
  Location loc = piece.front()->getLoc();
  auto func = func::FuncOp::create(b, loc, "tessera_kernel", type);
  func.setPrivate();
  Block *body = func.addEntryBlock();
  OpBuilder inner = OpBuilder::atBlockBegin(body);
  IRMapping mapping;
  unsigned next = 0;
  for (Value input : inputs) {
    if (isInlinedConstant(input))
      mapping.map(input, inner.clone(*input.getDefiningOp())->getResult(0));
    else
      mapping.map(input, body->getArgument(next++));
  }
  for (Operation *op : piece)
    inner.clone(*op, mapping);
  SmallVector<Value> results;
  for (Value output : outputs)
    results.push_back(mapping.lookup(output));
  func::ReturnOp::create(inner, loc, results);
  return func;
}

/// What makes two candidates the same kernel: the whole function as
/// printed (every candidate has the same name until it is kept), with
/// every flag that could hide a difference or add a spurious one set here
/// rather than taken from the command line's --mlir-print-* options.
std::string kernelKey(func::FuncOp func) {
  std::string key;
  llvm::raw_string_ostream os(key);
  OpPrintingFlags flags;
  flags.printGenericOpForm()
      .useLocalScope()
      .enableDebugInfo(false)
      .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
      .elideLargeResourceString(std::numeric_limits<int64_t>::max())
      .skipRegions(false)
      .assumeVerified()
      .printValueUsers(false)
      .printUniqueSSAIDs(false)
      .printNameLocAsPrefix(false);
  func->print(os, flags);
  return key;
}

/// Whether a value may cross a function boundary without hiding what
/// the lowering needs to see: not an integer tensor (a shape or indices,
/// which ops such as reshape and slice read at compile time).
bool crossesBoundary(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && !(isa<IntegerType>(type.getElementType()) &&
                   type.getElementTypeBitWidth() > 1);
}

/// Whether a run of the ops between kernels is worth a function: it
/// computes something (not only reshapes, which are views), and its
/// inputs and outputs may cross a function boundary.
bool isOutlinableRun(const Piece &run) {
  if (llvm::all_of(run, [](Operation *op) { return isa<ts::ReshapeOp>(op); }))
    return false;
  return llvm::all_of(pieceInputs(run), crossesBoundary) &&
         llvm::all_of(pieceOutputs(run), crossesBoundary);
}

/// Whether `op` is a reduction region to one value that reads nothing but
/// the results of `kernel` and constants (fp8 current scaling's amax):
/// such a region is compiled with the kernel it reduces, so that the CPU
/// lowering can compute it as the kernel writes its result
/// (tessera-cpu-fuse-full-reductions).
bool reducesToScalar(Operation *op, Operation *kernel) {
  auto region = dyn_cast<ts::FusionOp>(op);
  if (!region || region.getKind() != ts::FusionKind::reduction ||
      region->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(region->getResult(0).getType());
  if (!type || type.getRank() != 0)
    return false;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(region.getBody(), above);
  bool readsKernel = false;
  for (Value value : above) {
    if (value.getDefiningOp() == kernel)
      readsKernel = true;
    else if (!value.getDefiningOp<ts::ConstantOp>())
      return false;
  }
  return readsKernel;
}

/// The kernels of `block` and the runs of other ops between them (the
/// constants, which stay where they are, do not end a run). A reduction
/// to one value of a kernel's result that follows it (see
/// reducesToScalar) joins the kernel's piece.
SmallVector<Piece> pieces(Block &block) {
  SmallVector<Piece> result;
  Piece run;
  auto endRun = [&] {
    if (!run.empty() && isOutlinableRun(run))
      result.push_back(run);
    run.clear();
  };
  // The kernel just before `op` with nothing but constants between.
  Operation *previousKernel = nullptr;
  for (Operation &op : block) {
    if (isa<ts::ConstantOp>(op))
      continue;
    Operation *previous = std::exchange(previousKernel, nullptr);
    if (op.hasTrait<OpTrait::IsTerminator>() || !isKernel(&op)) {
      if (!op.hasTrait<OpTrait::IsTerminator>() &&
          op.getDialect() == op.getContext()->getLoadedDialect("tessera"))
        run.push_back(&op);
      else
        endRun();
      continue;
    }
    endRun();
    previousKernel = &op;
    if (previous && result.back() == Piece{previous} &&
        reducesToScalar(&op, previous)) {
      result.back().push_back(&op);
      continue;
    }
    result.push_back({&op});
  }
  endRun();
  return result;
}

struct Member {
  Piece ops;
  /// Read when the piece is built: the results a call replaces.
  SmallVector<Value> outputs;
};

struct Group {
  func::FuncOp function;
  SmallVector<Member> members;
};

struct OutlineKernelsPass
    : ::tessera::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  using OutlineKernelsPassBase::OutlineKernelsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);

    // Candidates are built at the module's end, then kept or erased.
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    llvm::StringMap<unsigned> byKey;
    SmallVector<Group> ordered;
    for (func::FuncOp entry : entries) {
      if (!entry.getBody().hasOneBlock())
        continue;
      for (Piece &piece : pieces(entry.getBody().front())) {
        func::FuncOp candidate = buildCandidate(b, piece);
        std::string key = kernelKey(candidate);
        auto [it, inserted] = byKey.try_emplace(key, ordered.size());
        if (inserted)
          ordered.push_back({candidate, {}});
        else
          candidate.erase();
        SmallVector<Value> outputs = pieceOutputs(piece);
        ordered[it->second].members.push_back(
            {std::move(piece), std::move(outputs)});
      }
    }

    unsigned outlined = 0, calls = 0;
    for (Group &group : ordered) {
      if (group.members.size() < minUses) {
        group.function.erase();
        continue;
      }
      group.function.setSymName("tessera_kernel_" + std::to_string(outlined));
      symbols.insert(group.function);
      ++outlined;
      // The arguments are read now: an input may be the result of a
      // piece already replaced by a call. The call goes after the
      // piece's last op, where every input is defined (a constant among
      // a run's ops may be one).
      for (Member &member : group.members) {
        Operation *last = member.ops.back();
        OpBuilder at(last->getBlock(), std::next(last->getIterator()));
        auto call = func::CallOp::create(at, member.ops.front()->getLoc(),
                                         group.function,
                                         pieceArguments(member.ops));
        for (auto [output, result] :
             llvm::zip_equal(member.outputs, call.getResults()))
          output.replaceAllUsesWith(result);
        for (Operation *op : llvm::reverse(member.ops))
          op->erase();
        ++calls;
      }
    }
    if (summary && outlined)
      llvm::errs() << "shared kernels: " << outlined
                   << " compiled once, called from " << calls << " places\n";
  }
};

} // namespace
