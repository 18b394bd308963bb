//===- FormFusionRegions.cpp - group ops into kernels and explain why -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Transforms/Passes.h"
#include "tessera/Transforms/TargetInfo.h"

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace tessera {
#define GEN_PASS_DEF_FORMFUSIONREGIONSPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;

namespace {

/// Longest prologue or epilogue chain a reduction region takes.
constexpr unsigned kMaxReductionChain = 8;

enum class Role { Other, Contraction, Elementwise, Reduction, Attention };

Role roleOf(Operation *op) {
  if (isa<MatmulOp, Conv2dOp>(op))
    return Role::Contraction;
  if (isa<AttentionOp>(op))
    return Role::Attention;
  if (isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp, ReduceSumOp,
          ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp>(op))
    return Role::Reduction;
  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, CompareOp, AndOp,
          OrOp, XorOp, WhereOp, NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp,
          ReciprocalOp, TanhOp, ErfOp, SigmoidOp, ReluOp, SiluOp, NotOp, GeluOp,
          CastOp, RoundOp, FloorOp, CeilOp>(op))
    return Role::Elementwise;
  return Role::Other;
}

/// Ops that become a loop nest of their own when not fused (constants,
/// reshapes and shape queries do not).
bool isKernel(Operation *op) {
  return isa<TesseraDialect>(op->getDialect()) &&
         !isa<ConstantOp, ReshapeOp, ShapeOp, FusionOp, YieldOp>(op);
}

/// Bytes of a tensor value, or -1 when its shape is dynamic.
int64_t bytesOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return -1;
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

unsigned distinctUsers(Value value) {
  llvm::SmallPtrSet<Operation *, 4> users(value.getUsers().begin(),
                                          value.getUsers().end());
  return users.size();
}

struct Group {
  FusionKind kind;
  SmallVector<Operation *> ops;
};

struct Rejection {
  std::string op, node, kind, reason;
};

struct RegionRecord {
  std::string kind;
  SmallVector<std::string> ops, nodes;
  SmallVector<int64_t> tile;
  int64_t bytesSaved = 0;
  bool dynamic = false;
};

class FormFusionRegionsPass
    : public ::tessera::impl::FormFusionRegionsPassBase<FormFusionRegionsPass> {
public:
  using FormFusionRegionsPassBase::FormFusionRegionsPassBase;

  FormFusionRegionsPass(const ::tessera::FormFusionRegionsPassOptions &options,
                        std::shared_ptr<const ::tessera::TargetInfo> info)
      : FormFusionRegionsPassBase(options), configured(std::move(info)) {}

  void runOnOperation() override {
    // The compilation's own TargetInfo (configured for its hardware), else
    // the one registered under `target`.
    std::shared_ptr<const ::tessera::TargetInfo> info = configured;
    if (!info)
      info = ::tessera::lookupTargetInfo(target);
    if (!info) {
      getOperation().emitError() << "no fusion target named '" << target << "'";
      return signalPassFailure();
    }
    std::vector<FunctionRecord> functions;
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.getBody().empty())
        continue;
      Block &block = func.getBody().front();
      FunctionRecord record;
      record.name = func.getSymName().str();
      record.kernelsBefore = countKernels(block);
      rejected.clear();
      recomputed.clear();
      dead.clear();
      rejectedProducers.clear();
      SmallVector<Group> groups = findGroups(block, *info);
      for (auto [producer, copies] : recomputed)
        record.recomputed.push_back({producer->getName().getStringRef().str(),
                                     onnxNodeName(producer->getLoc()), copies});
      for (Operation *op : dead)
        op->erase();
      for (Group &group : groups)
        if (std::optional<RegionRecord> region = materialize(group, *info))
          record.regions.push_back(std::move(*region));
      record.kernelsAfter = countKernels(block);
      record.rejected = std::move(rejected);
      functions.push_back(std::move(record));
    }
    if (!report.empty() && failed(writeReport(*info, functions)))
      return signalPassFailure();
    if (!dot.empty() && failed(writeDot()))
      return signalPassFailure();
    if (summary)
      for (const FunctionRecord &function : functions)
        printSummary(llvm::errs(), *info, function);
  }

private:
  struct Recomputed {
    std::string op, node;
    unsigned copies;
  };
  struct FunctionRecord {
    std::string name;
    SmallVector<RegionRecord> regions;
    SmallVector<Rejection> rejected;
    SmallVector<Recomputed> recomputed;
    unsigned kernelsBefore = 0, kernelsAfter = 0;
  };

  std::shared_ptr<const ::tessera::TargetInfo> configured;
  SmallVector<Rejection> rejected;
  /// Elementwise producers computed again in their consumers' regions
  /// (with the number of copies), and those left without users.
  llvm::MapVector<Operation *, unsigned> recomputed;
  llvm::DenseSet<Operation *> dead, rejectedProducers;

  void reject(Operation *op, StringRef kind, const Twine &reason) {
    rejected.push_back({op->getName().getStringRef().str(),
                        onnxNodeName(op->getLoc()), kind.str(), reason.str()});
  }

  /// Records that the first free elementwise user of `value`, which has
  /// several users, was not fused.
  template <typename IsFree>
  void rejectSharedProducer(Value value, StringRef kind, IsFree isFree) {
    for (Operation *user : value.getUsers())
      if (roleOf(user) == Role::Elementwise && isFree(user)) {
        reject(user, kind,
               llvm::formatv("producer has {0} users", distinctUsers(value)));
        return;
      }
  }

  static unsigned countKernels(Block &block) {
    unsigned count = 0;
    for (Operation &op : block)
      count += isKernel(&op) || isa<FusionOp>(op);
    return count;
  }

  SmallVector<Group> findGroups(Block &block,
                                const ::tessera::TargetInfo &info) {
    SmallVector<Group> groups;
    llvm::DenseSet<Operation *> grouped;
    auto isFree = [&](Operation *op) {
      return op && op->getBlock() == &block && !grouped.contains(op);
    };
    auto take = [&](FusionKind kind, SmallVector<Operation *> ops) {
      grouped.insert(ops.begin(), ops.end());
      groups.push_back({kind, std::move(ops)});
    };

    // Attention: one kernel each; a softmax product the raising left says
    // why it is not attention.
    for (Operation &op : block) {
      if (auto why = op.getAttrOfType<StringAttr>(
              ::tessera::kAttentionNotRaisedAttr)) {
        reject(&op, "attention", why.getValue());
        op.removeAttr(::tessera::kAttentionNotRaisedAttr);
      }
      if (!isa<AttentionOp>(op))
        continue;
      if (info.fusesAttention())
        take(FusionKind::attention, {&op});
      else
        reject(&op, "attention", "target does not fuse attention");
    }

    // Contractions and their epilogues.
    for (Operation &op : block) {
      if (roleOf(&op) != Role::Contraction || !isFree(&op) ||
          !info.canFuse(&op))
        continue;
      SmallVector<Operation *> chain = {&op};
      Value current = op.getResult(0);
      auto resultType = cast<RankedTensorType>(current.getType());
      while (true) {
        unsigned users = distinctUsers(current);
        if (users == 0)
          break;
        if (users > 1) {
          rejectSharedProducer(current, "epilogue", isFree);
          break;
        }
        Operation *user = *current.getUsers().begin();
        // An int8 product's dequantization (scaled per column) starts the
        // epilogue where the target applies it to the product.
        bool dequantizes = chain.size() == 1 && isa<DequantizeOp>(user) &&
                           info.epilogueTakesDequantize();
        bool joins = dequantizes || roleOf(user) == Role::Elementwise ||
                     (roleOf(user) == Role::Reduction &&
                      info.epilogueTakesReduction(user, resultType));
        if (!joins || !isFree(user) || (!dequantizes && !info.canFuse(user)))
          break;
        // A dequantization changes the element type, not the shape.
        if (dequantizes
                ? cast<ShapedType>(user->getResult(0).getType()).getShape() !=
                      cast<ShapedType>(current.getType()).getShape()
                : user->getResult(0).getType() != current.getType()) {
          reject(user, "epilogue", "epilogue would broadcast the result");
          break;
        }
        std::optional<std::string> why;
        for (Value operand : user->getOperands())
          if (operand != current &&
              (why = info.rejectEpilogueOperand(
                   operand, cast<RankedTensorType>(current.getType()))))
            break;
        if (why) {
          reject(user, "epilogue", *why);
          break;
        }
        if (chain.size() - 1 >= info.maxEpilogueOps()) {
          reject(user, "epilogue", "exceeds register budget");
          break;
        }
        chain.push_back(user);
        current = user->getResult(0);
      }
      if (chain.size() > 1)
        take(FusionKind::epilogue, std::move(chain));
    }

    // Reductions with their elementwise prologue and epilogue.
    for (Operation &op : block) {
      if (roleOf(&op) != Role::Reduction || !isFree(&op) ||
          !info.canFuse(&op))
        continue;
      SmallVector<Operation *> prologue, epilogue;
      Value input = op.getOperand(0);
      while (prologue.size() < kMaxReductionChain) {
        Operation *producer = input.getDefiningOp();
        if (!producer || roleOf(producer) != Role::Elementwise ||
            !isFree(producer) || !info.canFuse(producer))
          break;
        if (unsigned users = distinctUsers(input); users > 1) {
          reject(producer, "reduction",
                 llvm::formatv("producer has {0} users", users));
          break;
        }
        prologue.push_back(producer);
        // Continue through the operand of the producer's own type, else
        // one of its shape (a count's cast from i1: the element type
        // differs). A select's f32 operand comes before its i1 condition.
        Value next, sameShape;
        auto inputType = cast<RankedTensorType>(input.getType());
        for (Value operand : producer->getOperands()) {
          if (operand.getType() == inputType) {
            next = operand;
            break;
          }
          auto type = dyn_cast<RankedTensorType>(operand.getType());
          if (!sameShape && type && type.getShape() == inputType.getShape())
            sameShape = operand;
        }
        if (!next)
          next = sameShape;
        if (!next)
          break;
        input = next;
      }
      Value current = op.getResult(0);
      while (epilogue.size() < kMaxReductionChain) {
        unsigned users = distinctUsers(current);
        if (users != 1) {
          if (users > 1)
            rejectSharedProducer(current, "reduction", isFree);
          break;
        }
        Operation *user = *current.getUsers().begin();
        if (roleOf(user) != Role::Elementwise || !isFree(user) ||
            !info.canFuse(user) ||
            user->getResult(0).getType() != current.getType())
          break;
        epilogue.push_back(user);
        current = user->getResult(0);
      }
      if (prologue.empty() && epilogue.empty())
        continue;
      SmallVector<Operation *> ops(prologue.rbegin(), prologue.rend());
      ops.push_back(&op);
      ops.append(epilogue);
      take(FusionKind::reduction, std::move(ops));
    }

    // Elementwise ops joined where a producer has only the consumer.
    llvm::EquivalenceClasses<Operation *> classes;
    SmallVector<Operation *> order;
    for (Operation &op : block) {
      if (roleOf(&op) != Role::Elementwise || !isFree(&op) ||
          !info.canFuse(&op))
        continue;
      classes.insert(&op);
      order.push_back(&op);
      for (OpOperand &use : op.getOpOperands()) {
        Value operand = use.get();
        Operation *producer = operand.getDefiningOp();
        if (!producer || roleOf(producer) != Role::Elementwise ||
            !isFree(producer) || dead.contains(producer) ||
            !info.canFuse(producer))
          continue;
        if (unsigned users = distinctUsers(operand); users > 1) {
          // Cheap to compute again here (its inputs are in memory, the
          // target says so): a copy joins this consumer.
          bool inputsInMemory =
              llvm::none_of(producer->getOperands(), [&](Value input) {
                Operation *def = input.getDefiningOp();
                return def && roleOf(def) == Role::Elementwise && isFree(def);
              });
          if (!inputsInMemory || !info.recomputeIsCheap(producer, users)) {
            // Once per producer, at its first consumer.
            if (rejectedProducers.insert(producer).second)
              reject(&op, "elementwise",
                     llvm::formatv("producer has {0} users", users));
            continue;
          }
          OpBuilder builder(&op);
          Operation *copy = builder.clone(*producer);
          op.replaceUsesOfWith(operand, copy->getResult(0));
          classes.insert(copy);
          classes.unionSets(copy, &op);
          ++recomputed[producer];
          if (producer->use_empty())
            dead.insert(producer);
          continue;
        }
        classes.unionSets(producer, &op);
      }
    }
    // Copies come right before their consumer, so collect members in
    // block order.
    order.clear();
    for (Operation &op : block)
      if (classes.contains(&op) && !dead.contains(&op))
        order.push_back(&op);
    // Each class's members in block order, the classes in the order of
    // their first member.
    llvm::MapVector<Operation *, SmallVector<Operation *>> byLeader;
    for (Operation *op : order)
      byLeader[classes.getLeaderValue(op)].push_back(op);
    for (auto &entry : byLeader) {
      SmallVector<Operation *> &members = entry.second;
      // Pieces of at most the target's size, in block order.
      size_t piece = std::max(2u, info.maxElementwiseOps());
      for (size_t first = 0; first + 1 < members.size(); first += piece) {
        size_t last = std::min(members.size(), first + piece);
        if (last - first > 1)
          take(FusionKind::elementwise,
               SmallVector<Operation *>(members.begin() + first,
                                        members.begin() + last));
      }
    }
    return groups;
  }

  /// Moves `group` into a tessera.fusion after its last op; nothing when a
  /// value it produces is used before that point.
  std::optional<RegionRecord> materialize(Group &group,
                                          const ::tessera::TargetInfo &info) {
    llvm::sort(group.ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    Operation *last = group.ops.back();
    llvm::SmallPtrSet<Operation *, 8> members(group.ops.begin(),
                                              group.ops.end());
    llvm::SetVector<Value> escaping;
    RegionRecord record;
    record.kind = stringifyFusionKind(group.kind).str();
    for (Operation *op : group.ops)
      for (Value result : op->getResults()) {
        bool internal = true;
        for (Operation *user : result.getUsers()) {
          if (members.contains(user))
            continue;
          internal = false;
          if (user->getBlock() == last->getBlock() &&
              user->isBeforeInBlock(last)) {
            reject(group.ops.front(), record.kind,
                   "a result is needed before the group's last op");
            return std::nullopt;
          }
        }
        if (!internal || result.use_empty()) {
          escaping.insert(result);
          continue;
        }
        int64_t bytes = bytesOf(result);
        if (bytes < 0)
          record.dynamic = true;
        else
          record.bytesSaved += 2 * bytes;
      }
    // Attention as one kernel never writes its scores and probabilities.
    if (auto attention = dyn_cast<AttentionOp>(group.ops.front())) {
      auto q = cast<RankedTensorType>(attention.getQuery().getType());
      auto k = cast<RankedTensorType>(attention.getKey().getType());
      if (q.hasStaticShape() && k.hasStaticShape()) {
        int64_t scores = q.getNumElements() / q.getShape().back() *
                         k.getDimSize(k.getRank() - 2);
        record.bytesSaved +=
            2 * 2 * scores * ((q.getElementTypeBitWidth() + 7) / 8);
      } else {
        record.dynamic = true;
      }
    }
    SmallVector<Location> locations;
    for (Operation *op : group.ops) {
      locations.push_back(op->getLoc());
      record.ops.push_back(op->getName().getStringRef().str());
      if (std::string node = onnxNodeName(op->getLoc()); !node.empty())
        record.nodes.push_back(node);
    }
    record.tile = info.tileSizes(record.kind);

    OpBuilder builder(last->getContext());
    builder.setInsertionPointAfter(last);
    Location loc = FusedLoc::get(last->getContext(), locations);
    SmallVector<Type> types;
    for (Value value : escaping)
      types.push_back(value.getType());
    auto fusion = FusionOp::create(builder, loc, types, group.kind);
    Block *body = new Block;
    fusion.getBody().push_back(body);
    for (Operation *op : group.ops)
      op->moveBefore(body, body->end());
    builder.setInsertionPointToEnd(body);
    YieldOp::create(builder, loc, escaping.getArrayRef());
    for (auto [index, escaped] : llvm::enumerate(escaping)) {
      Value value = escaped;
      value.replaceUsesWithIf(fusion.getResult(index), [&](OpOperand &use) {
        return !fusion->isProperAncestor(use.getOwner());
      });
    }
    return record;
  }

  LogicalResult writeReport(const ::tessera::TargetInfo &info,
                            ArrayRef<FunctionRecord> functions) {
    llvm::json::Array regions, rejections, recomputations;
    int64_t saved = 0;
    unsigned before = 0, after = 0;
    for (const FunctionRecord &function : functions) {
      before += function.kernelsBefore;
      after += function.kernelsAfter;
      for (const RegionRecord &record : function.regions) {
        saved += record.bytesSaved;
        regions.push_back(
            llvm::json::Object{{"function", function.name},
                               {"kind", record.kind},
                               {"ops", llvm::json::Array(record.ops)},
                               {"nodes", llvm::json::Array(record.nodes)},
                               {"tile", llvm::json::Array(record.tile)},
                               {"bytes_saved", record.bytesSaved},
                               {"dynamic_shapes", record.dynamic}});
      }
      for (const Recomputed &r : function.recomputed)
        recomputations.push_back(llvm::json::Object{{"function", function.name},
                                                    {"op", r.op},
                                                    {"node", r.node},
                                                    {"copies", r.copies}});
      for (const Rejection &r : function.rejected)
        rejections.push_back(llvm::json::Object{{"function", function.name},
                                                {"op", r.op},
                                                {"node", r.node},
                                                {"kind", r.kind},
                                                {"reason", r.reason}});
    }
    llvm::json::Object root{{"target", info.name().str()},
                            {"kernels_before", before},
                            {"kernels_after", after},
                            {"bytes_saved", saved},
                            {"regions", std::move(regions)},
                            {"recomputed", std::move(recomputations)},
                            {"rejected", std::move(rejections)}};
    std::error_code error;
    llvm::raw_fd_ostream out(report, error, llvm::sys::fs::OF_Text);
    if (error)
      return getOperation().emitError() << "cannot write the fusion report '"
                                        << report << "': " << error.message();
    out << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    return success();
  }

  void printSummary(raw_ostream &os, const ::tessera::TargetInfo &info,
                    const FunctionRecord &function) {
    os << "fusion (" << info.name() << ") in @" << function.name << ": "
       << function.kernelsBefore << " kernels before, " << function.kernelsAfter
       << " after, " << function.regions.size() << " regions\n";
    for (auto [i, record] : llvm::enumerate(function.regions)) {
      os << "  region " << i + 1 << ": " << record.kind << " [";
      llvm::interleaveComma(record.ops, os);
      os << "]";
      if (!record.nodes.empty()) {
        os << " nodes ";
        llvm::interleaveComma(record.nodes, os);
      }
      os << "; saves " << record.bytesSaved << " bytes"
         << (record.dynamic ? " (plus tensors of dynamic shape)" : "") << "\n";
    }
    for (const Recomputed &r : function.recomputed)
      os << "  recomputed (" << r.copies
         << (r.copies == 1 ? " extra copy" : " extra copies") << "): " << r.op
         << (r.node.empty() ? "" : " node '" + r.node + "'") << "\n";
    for (const Rejection &r : function.rejected)
      os << "  not fused (" << r.kind << "): " << r.op
         << (r.node.empty() ? "" : " node '" + r.node + "'") << ": " << r.reason
         << "\n";
  }

  LogicalResult writeDot() {
    std::error_code error;
    llvm::raw_fd_ostream out(dot, error, llvm::sys::fs::OF_Text);
    if (error)
      return getOperation().emitError()
             << "cannot write the graph '" << dot << "': " << error.message();
    out << "digraph tessera {\n  rankdir=TB;\n"
        << "  node [shape=box, fontname=\"monospace\"];\n";
    unsigned next = 0;
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>())
      if (!func.getBody().empty())
        writeFunctionGraph(out, func, next);
    out << "}\n";
    return success();
  }

  static std::string quote(StringRef text) {
    std::string escaped;
    for (char c : text) {
      if (c == '\n') {
        escaped += "\\n";
        continue;
      }
      if (c == '"' || c == '\\')
        escaped.push_back('\\');
      escaped.push_back(c);
    }
    return escaped;
  }

  /// One cluster: the function's inputs, one node per kernel (fusion
  /// regions list their ops), and an edge per tensor between them.
  void writeFunctionGraph(raw_ostream &out, func::FuncOp func, unsigned &next) {
    Block &block = func.getBody().front();
    std::string prefix = "f" + std::to_string(next++) + "_";
    out << "  subgraph \"cluster_" << quote(func.getSymName()) << "\" {\n"
        << "    label=\"@" << quote(func.getSymName()) << "\";\n";
    for (auto [i, arg] : llvm::enumerate(func.getArguments()))
      out << "    " << prefix << "arg" << i << " [shape=ellipse, label=\"input "
          << i << "\"];\n";
    llvm::DenseMap<Operation *, unsigned> ids;
    for (Operation &op : block) {
      if (!isKernel(&op) && !isa<FusionOp>(op))
        continue;
      unsigned id = ids.size();
      ids[&op] = id;
      std::string label;
      out << "    " << prefix << "n" << id;
      if (auto fusion = dyn_cast<FusionOp>(op)) {
        label = "fusion " + stringifyFusionKind(fusion.getKind()).str();
        for (Operation &inner : fusion.getBody().front().without_terminator())
          label += "\n" + inner.getName().getStringRef().str();
        out << " [style=filled, fillcolor=\"#dbeafe\", label=\"" << quote(label)
            << "\"];\n";
      } else {
        label = op.getName().getStringRef().str();
        if (std::string node = onnxNodeName(op.getLoc()); !node.empty())
          label += "\n" + node;
        out << " [label=\"" << quote(label) << "\"];\n";
      }
    }
    // Edges from the kernel (or input) producing each operand, looking
    // through ops that are not kernels (reshapes).
    std::function<void(Value, unsigned)> edge = [&](Value value, unsigned to) {
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (arg.getOwner() == &block)
          out << "    " << prefix << "arg" << arg.getArgNumber() << " -> "
              << prefix << "n" << to << ";\n";
        return;
      }
      Operation *producer = value.getDefiningOp();
      if (auto it = ids.find(producer); it != ids.end()) {
        out << "    " << prefix << "n" << it->second << " -> " << prefix << "n"
            << to << ";\n";
        return;
      }
      if (producer && !isa<ConstantOp>(producer))
        for (Value operand : producer->getOperands())
          edge(operand, to);
    };
    for (Operation &op : block) {
      auto it = ids.find(&op);
      if (it == ids.end())
        continue;
      llvm::SetVector<Value> inputs;
      op.walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (operand.getParentBlock() == &block)
            inputs.insert(operand);
      });
      for (Value input : inputs)
        edge(input, it->second);
    }
    out << "  }\n";
  }
};

} // namespace

namespace tessera {
std::unique_ptr<Pass>
createFormFusionRegionsPass(const FormFusionRegionsPassOptions &options,
                            std::shared_ptr<const TargetInfo> info) {
  return std::make_unique<FormFusionRegionsPass>(options, std::move(info));
}
} // namespace tessera
