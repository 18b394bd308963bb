//===- AutoPrecision.cpp - precision chosen under an accuracy budget ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// `--precision=auto`: which matmuls run in which narrow type is decided per
// matmul from what each choice costs (the target's cost model at the
// matmul's shape, TargetInfo::contractionTime) and what it does to
// accuracy (the matmul's own error, measured with its f32 operands), then
// checked end to end on samples the measurements did not use.
//
//===----------------------------------------------------------------------===//
#include "AutoPrecision.h"

#include "tessera/Runtime/Executable.h"
#include "tessera/Runtime/TensorIO.h"
#include "tessera/Target/Target.h"
#include "tessera/Transforms/Precision.h"
#include "tessera/Transforms/TargetInfo.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace tessera;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The narrow policies, from the fewest bits, and the type each computes
/// in.
struct Candidate {
  const char *policy;
  ElementType type;
};
constexpr Candidate kCandidates[] = {{"int8", ElementType::I8},
                                     {"fp8", ElementType::F8E4M3FN},
                                     {"bf16", ElementType::BF16},
                                     {"fp16", ElementType::F16}};

/// Cosine and relative L2 error of values against a reference, summed over
/// samples.
struct Agreement {
  double dot = 0, actual = 0, expected = 0, error = 0;
  void add(const runtime::HostTensor &reference,
           const runtime::HostTensor &value) {
    int64_t n = std::min(reference.numElements(), value.numElements());
    for (int64_t i = 0; i < n; ++i) {
      double e = reference.at(i), a = value.at(i);
      dot += a * e;
      actual += a * a;
      expected += e * e;
      error += (a - e) * (a - e);
    }
  }
  /// A value that is not finite (NaN, inf) agrees with nothing: cosine
  /// -1, relative error infinite.
  double cosine() const {
    if (!std::isfinite(dot) || !std::isfinite(actual) ||
        !std::isfinite(expected))
      return -1.0;
    return actual > 0 && expected > 0 ? dot / std::sqrt(actual * expected)
                                      : (actual == expected ? 1.0 : 0.0);
  }
  double relativeL2() const {
    if (!std::isfinite(error) || !std::isfinite(expected))
      return INFINITY;
    return expected > 0 ? std::sqrt(error / expected)
                        : (error > 0 ? INFINITY : 0.0);
  }
};

/// What one policy does to one matmul, measured.
struct Measured {
  Agreement local;
  /// Elements of the matmul's result (one sample) and of its rows.
  int64_t resultElements = 0, columns = 1;
};

/// Runs `options`' program on the inputs of `sets`.
llvm::Expected<std::vector<std::vector<runtime::HostTensor>>>
runSets(llvm::StringRef modelPath, mlir::MLIRContext &context,
        const CompileOptions &options, llvm::ArrayRef<std::string> sets,
        std::vector<std::string> *outputNames = nullptr) {
  auto executable = compileAndLoad(modelPath, context, options);
  if (!executable)
    return executable.takeError();
  if (outputNames)
    for (const runtime::TensorSignature &sig :
         (*executable)->signature().outputs)
      outputNames->push_back(sig.name);
  std::vector<std::vector<runtime::HostTensor>> results;
  for (const std::string &set : sets) {
    auto inputs =
        runtime::readTensorFiles(runtime::testDataFiles(set, "input"));
    if (!inputs)
      return inputs.takeError();
    auto outputs = (*executable)->run(*inputs);
    if (!outputs)
      return fail(set + ": " + llvm::toString(outputs.takeError()));
    results.push_back(std::move(*outputs));
  }
  return results;
}

/// The worst agreement over the outputs of a planned program with the f32
/// program's.
struct Verdict {
  double cosine = 1, relativeL2 = 0;
  bool within(const AccuracyBudget &budget) const {
    return cosine >= budget.minCosine && relativeL2 <= budget.maxRelativeL2;
  }
};

} // namespace

llvm::Expected<AccuracyBudget>
tessera::parseAccuracyBudget(llvm::StringRef text) {
  AccuracyBudget budget;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    auto [key, value] = part.trim().split(':');
    double v;
    if (value.getAsDouble(v) || !(key == "cos" || key == "nrel"))
      return fail("--accuracy-budget takes cos:C and nrel:E separated by "
                  "commas (e.g. cos:0.999,nrel:0.02), got '" + part + "'");
    if (key == "cos" && !(v > 0 && v <= 1))
      return fail("--accuracy-budget: cos must be in (0, 1], got " + value);
    if (key == "nrel" && !(v >= 0))
      return fail("--accuracy-budget: nrel must be at least 0, got " + value);
    (key == "cos" ? budget.minCosine : budget.maxRelativeL2) = v;
  }
  return budget;
}

llvm::Expected<std::map<std::string, double>>
tessera::parsePrecisionCosts(llvm::StringRef text) {
  std::map<std::string, double> costs;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    auto [policy, value] = part.trim().split(':');
    double v;
    bool known = llvm::any_of(kCandidates, [&](const Candidate &c) {
      return policy == c.policy;
    });
    if (!known || value.getAsDouble(v) || !(v > 0))
      return fail("--precision-costs takes policy:cost pairs (bf16, fp16, "
                  "fp8 or int8, and a positive time relative to fp32's at "
                  "the same shape) separated by commas, e.g. "
                  "int8:0.25,bf16:0.5; got '" +
                  part + "'");
    costs[policy.str()] = v;
  }
  return costs;
}

llvm::Expected<std::map<std::string, std::string>>
tessera::readPrecisionPlan(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail("cannot read the precision plan " + path + ": " +
                buffer.getError().message());
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail(path + ": " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Object *nodes = root ? root->getObject("nodes") : nullptr;
  if (!root || root->getString("format") != "tessera-precision-plan" ||
      !nodes)
    return fail(path + " is not a precision plan (a JSON object with "
                       "\"format\": \"tessera-precision-plan\" and \"nodes\")");
  std::map<std::string, std::string> plan;
  for (const auto &[node, value] : *nodes) {
    const llvm::json::Object *entry = value.getAsObject();
    std::optional<llvm::StringRef> policy =
        entry ? entry->getString("precision") : std::nullopt;
    if (!policy || !isPrecisionPolicy(*policy))
      return fail(path + ": node '" + node.str() +
                  "' has no known \"precision\"");
    // What the plan's target leaves wide (its "base": bf16 on the
    // systolic array) is what no policy gives.
    if (*policy != "fp32" && *policy != root->getString("base").value_or(""))
      plan[node.str()] = policy->str();
  }
  return plan;
}

tessera::AutoSampleSplit
tessera::splitAutoSamples(std::vector<std::string> sets) {
  AutoSampleSplit split{sets, sets};
  if (sets.size() >= 2) {
    size_t held = std::max<size_t>(1, sets.size() / 4);
    split.measure.assign(sets.begin(), sets.end() - held);
    split.verify.assign(sets.end() - held, sets.end());
  }
  return split;
}

llvm::Expected<std::map<std::string, std::string>> tessera::searchPrecisionPlan(
    llvm::StringRef modelPath, mlir::MLIRContext &context,
    const CompileOptions &options, llvm::StringRef calibrationCache,
    bool raiseAttention, const TargetInfo &info) {
  auto budget = parseAccuracyBudget(options.accuracyBudget);
  if (!budget)
    return budget.takeError();
  registerAllTargets();

  std::vector<std::string> sets = runtime::calibrationSamples(options.calibrate);
  auto [measure, verify] = splitAutoSamples(sets);
  mlir::Location where = mlir::FileLineColLoc::get(&context, modelPath, 0, 0);
  if (sets.size() < 2)
    mlir::emitWarning(where)
        << "--precision=auto verifies its plan on the one calibration "
           "sample it measured on; give more samples to hold some out";

  // The programs measured run on this machine's CPU, as calibration does.
  CompileOptions base;
  base.target = defaultTargetName().str();
  base.raiseAttention = raiseAttention;
  base.calibrationCache = calibrationCache.str();
  base.keepHeads = false;
  base.keepFirstLayers = false;

  // Each narrow policy the target computes: every matmul's own error.
  std::vector<const Candidate *> candidates;
  std::map<std::string, std::map<std::string, Measured>> measured;
  for (const Candidate &candidate : kCandidates) {
    if (!llvm::is_contained(info.supportedElementTypes(OpClass::Contraction),
                            candidate.type) ||
        info.rejectPrecisionPolicy(candidate.policy))
      continue;
    CompileOptions probe = base;
    probe.precision = candidate.policy;
    probe.precisionReportMode = "local";
    std::vector<std::string> names;
    auto runs = runSets(modelPath, context, probe, measure, &names);
    if (!runs)
      return fail("--precision=auto: measuring " +
                  llvm::Twine(candidate.policy) + ": " +
                  llvm::toString(runs.takeError()));
    candidates.push_back(&candidate);
    std::map<std::string, std::vector<const runtime::HostTensor *>> refs;
    for (const std::vector<runtime::HostTensor> &outputs : *runs) {
      std::map<std::string, const runtime::HostTensor *> reference;
      for (size_t i = 0; i < outputs.size(); ++i) {
        // The automatic policy chooses among matmuls (the report's
        // convolutions and attention follow the 16-bit policies).
        std::optional<ReportOutput> out = parseReportOutputName(names[i]);
        if (!out || out->op != "matmul")
          continue;
        llvm::StringRef role = out->role, key = out->key;
        if (role == "reference") {
          reference[key.str()] = &outputs[i];
          continue;
        }
        auto ref = reference.find(key.str());
        if (role != "local" || ref == reference.end())
          continue;
        Measured &m = measured[key.str()][candidate.policy];
        m.local.add(*ref->second, outputs[i]);
        m.resultElements = ref->second->numElements();
        m.columns = ref->second->shape.empty() ? 1 : ref->second->shape.back();
      }
    }
  }

  // FLOPs from the result's size and the depth K (the lhs's channels in
  // the calibration cache).
  CalibrationTable ranges;
  if (auto buffer = llvm::MemoryBuffer::getFile(calibrationCache)) {
    auto table = CalibrationTable::fromJSON((*buffer)->getBuffer());
    if (table)
      ranges = std::move(*table);
    else
      llvm::consumeError(table.takeError());
  }
  struct Node {
    std::string key;
    ContractionShape shape;
    std::map<std::string, double> nrel, oneMinusCos;
  };
  std::vector<Node> nodes;
  for (const auto &[key, byPolicy] : measured) {
    Node node;
    node.key = key;
    const Measured &any = byPolicy.begin()->second;
    auto channels = ranges.channels.find(key + ":lhs");
    double depth = channels != ranges.channels.end()
                       ? double(channels->second.amax.size())
                       : 1.0;
    int64_t columns = std::max<int64_t>(any.columns, 1);
    node.shape.rows = std::max<int64_t>(any.resultElements / columns, 1);
    node.shape.columns = columns;
    node.shape.depth = int64_t(depth);
    // Calibration records the operands that are not constants.
    node.shape.constantRhs = !ranges.amax.count(key + ":rhs");
    for (const auto &[policy, m] : byPolicy) {
      // A product of two computed values the target keeps out of 8 bits.
      if ((policy == "int8" || policy == "fp8") && !node.shape.constantRhs &&
          !info.quantizesComputedRhs())
        continue;
      node.nrel[policy] = m.local.relativeL2();
      node.oneMinusCos[policy] = 1.0 - m.local.cosine();
    }
    nodes.push_back(std::move(node));
  }
  // Time per node and policy: the target's cost model for the
  // contraction's shape, or, for the policies --precision-costs names,
  // that factor times the target's time for what the plan leaves wide.
  // What the plan leaves "fp32" runs on the target's widest contraction
  // type: f32, or a 16-bit format on a target without f32 contractions
  // (the systolic array's bf16).
  auto given = parsePrecisionCosts(options.precisionCosts);
  if (!given)
    return given.takeError();
  llvm::ArrayRef<ElementType> computed =
      info.supportedElementTypes(OpClass::Contraction);
  std::string basePolicy = "fp32";
  ElementType baseType = ElementType::F32;
  if (!llvm::is_contained(computed, ElementType::F32))
    for (const Candidate *c : llvm::reverse(candidates))
      if (c->type == ElementType::BF16 || c->type == ElementType::F16) {
        basePolicy = c->policy;
        baseType = c->type;
        if (c->type == ElementType::BF16)
          break;
      }
  if (basePolicy != "fp32" && given->count(basePolicy))
    return fail("--precision-costs: on the " + options.target + " target " +
                basePolicy +
                " is what the plan leaves wide, the time the other policies "
                "are priced against; name only the others");
  auto costOf = [&](const Node &node, const std::string &policy) -> double {
    if (policy == "fp32")
      return info.contractionTime(node.shape, baseType);
    for (const Candidate &c : kCandidates) {
      if (policy != c.policy)
        continue;
      auto it = given->find(c.policy);
      return it != given->end()
                 ? it->second * info.contractionTime(node.shape, baseType)
                 : info.contractionTime(node.shape, c.type);
    }
    return INFINITY;
  };

  // Greedy: the move (one matmul to a cheaper policy) that saves the most
  // time per unit of predicted error, while the summed local errors stay
  // within half the budget (errors grow as they travel through the
  // layers; verification checks the rest).
  std::map<std::string, std::string> choice;
  for (const Node &node : nodes)
    choice[node.key] = "fp32";
  auto nrelOf = [&](const Node &n, const std::string &p) {
    const std::string &q = p == "fp32" ? basePolicy : p;
    return q == "fp32" || !n.nrel.count(q) ? 0.0 : n.nrel.at(q);
  };
  auto cosOf = [&](const Node &n, const std::string &p) {
    const std::string &q = p == "fp32" ? basePolicy : p;
    return q == "fp32" || !n.oneMinusCos.count(q) ? 0.0 : n.oneMinusCos.at(q);
  };
  // The room holds what the moves add to the base's errors (a 16-bit base
  // has its own, which verification counts).
  double predictedNrel = 0, predictedCos = 0;
  const double nrelRoom = budget->maxRelativeL2 / 2,
               cosRoom = (1 - budget->minCosine) / 2;
  while (true) {
    const Node *bestNode = nullptr;
    std::string bestPolicy;
    double bestScore = 0;
    for (const Node &node : nodes) {
      const std::string &now = choice[node.key];
      for (const auto &[policy, nrel] : node.nrel) {
        if (policy == basePolicy)
          continue;
        double saved = costOf(node, now) - costOf(node, policy);
        double dNrel = nrel - nrelOf(node, now);
        double dCos = cosOf(node, policy) - cosOf(node, now);
        if (saved <= 0 || predictedNrel + dNrel > nrelRoom ||
            predictedCos + dCos > cosRoom)
          continue;
        double score = saved / std::max(dNrel, 1e-9);
        if (score > bestScore) {
          bestScore = score;
          bestNode = &node;
          bestPolicy = policy;
        }
      }
    }
    if (!bestNode)
      break;
    const std::string &now = choice[bestNode->key];
    predictedNrel += nrelOf(*bestNode, bestPolicy) - nrelOf(*bestNode, now);
    predictedCos += cosOf(*bestNode, bestPolicy) - cosOf(*bestNode, now);
    choice[bestNode->key] = bestPolicy;
  }

  // Verification on the held-out samples against the f32 program; the
  // narrowed matmul with the largest own error widens (to the next
  // candidate with more bits, then f32) until the plan holds. The planned
  // program runs on this machine's CPU, which computes each type as the
  // cpu and cuda targets do; a target without f32 contractions runs its
  // own program (the systolic target's simulator), since on the CPU what
  // the plan leaves wide would compute in f32.
  // What runs where the plan says "fp32", as the outputs name it.
  auto shown = [&](const std::string &policy) {
    return policy == "fp32" ? basePolicy : policy;
  };
  bool onTarget = basePolicy != "fp32";
  CompileOptions wide = base;
  wide.calibrationCache.clear();
  auto reference = runSets(modelPath, context, wide, verify);
  if (!reference)
    return fail("--precision=auto: the f32 program: " +
                llvm::toString(reference.takeError()));
  auto verdictOf =
      [&](const std::map<std::string, std::string> &plan) -> llvm::Expected<Verdict> {
    CompileOptions probe = base;
    for (const auto &[key, policy] : plan)
      if (policy != "fp32")
        probe.precisionPlanNodes[key] = policy;
    Verdict verdict;
    if (probe.precisionPlanNodes.empty()) {
      if (!onTarget)
        return verdict;
      probe.calibrationCache.clear();
    }
    if (onTarget) {
      probe.target = options.target;
      probe.targetOptions = options.targetOptions;
      probe.dimValues = options.dimValues;
    }
    auto runs = runSets(modelPath, context, probe, verify);
    if (!runs)
      return runs.takeError();
    size_t outputs = (*reference)[0].size();
    for (size_t o = 0; o < outputs; ++o) {
      Agreement agreement;
      for (size_t s = 0; s < runs->size(); ++s)
        agreement.add((*reference)[s][o], (*runs)[s][o]);
      verdict.cosine = std::min(verdict.cosine, agreement.cosine());
      verdict.relativeL2 = std::max(verdict.relativeL2, agreement.relativeL2());
    }
    return verdict;
  };
  auto verdict = verdictOf(choice);
  if (!verdict)
    return fail("--precision=auto: verifying: " +
                llvm::toString(verdict.takeError()));
  // Where a narrowed matmul widens to: the measured policy of more bits
  // with the least own error (a 16-bit base competes on its own measured
  // error), else an fp32 base; nothing when none has more bits (a 16-bit
  // matmul where the base is 16 bits too).
  auto bits = [&](const std::string &policy) {
    return policy == "fp32" ? (basePolicy == "fp32" ? 32 : 16)
           : policy == "int8" || policy == "fp8" ? 8
                                                 : 16;
  };
  auto widerOf = [&](const Node &node) -> std::optional<std::string> {
    const std::string &now = choice[node.key];
    std::optional<std::string> next;
    for (const Candidate *c : candidates)
      if (c->policy != basePolicy && bits(c->policy) > bits(now) &&
          node.nrel.count(c->policy) &&
          (!next || nrelOf(node, c->policy) < nrelOf(node, *next)))
        next = c->policy;
    if (bits("fp32") > bits(now) &&
        (!next ||
         (basePolicy != "fp32" && nrelOf(node, "fp32") < nrelOf(node, *next))))
      next = "fp32";
    return next;
  };
  std::vector<std::string> widened;
  while (!verdict->within(*budget)) {
    const Node *worst = nullptr;
    for (const Node &node : nodes)
      if (choice[node.key] != "fp32" && widerOf(node) &&
          (!worst ||
           nrelOf(node, choice[node.key]) > nrelOf(*worst, choice[worst->key])))
        worst = &node;
    if (!worst)
      break;
    std::string &now = choice[worst->key];
    std::string next = *widerOf(*worst);
    widened.push_back(worst->key + " " + shown(now) + " -> " + shown(next));
    now = next;
    verdict = verdictOf(choice);
    if (!verdict)
      return fail("--precision=auto: verifying: " +
                  llvm::toString(verdict.takeError()));
  }

  if (!verdict->within(*budget))
    mlir::emitWarning(where)
        << "precision auto: the budget " << options.accuracyBudget
        << " cannot be met on the " << options.target
        << " target, whose widest matmuls are 16 bits: with every matmul "
           "there the held-out samples give cosine "
        << llvm::formatv("{0:f6}", verdict->cosine) << " and relative L2 "
        << llvm::formatv("{0:e2}", verdict->relativeL2)
        << "; the plan keeps them there";

  double fp32Cost = 0, planCost = 0;
  std::map<std::string, int> counts;
  for (const Node &node : nodes) {
    fp32Cost += costOf(node, "fp32");
    planCost += costOf(node, choice[node.key]);
    ++counts[shown(choice[node.key])];
  }
  double ratio = fp32Cost > 0 ? planCost / fp32Cost : 1.0;
  std::string tally;
  for (const auto &[policy, count] : counts)
    tally += (tally.empty() ? "" : ", ") + policy + " " + std::to_string(count);
  bool anyCheaper = llvm::any_of(nodes, [&](const Node &node) {
    return llvm::any_of(candidates, [&](const Candidate *c) {
      return costOf(node, c->policy) < costOf(node, "fp32");
    });
  });
  if (options.verbose && !anyCheaper)
    mlir::emitRemark(where)
        << "precision auto: no narrow policy computes a matmul faster than "
        << basePolicy << " on the " << options.target
        << " target (its cost model at each matmul's shape; "
           "--precision-costs gives others), so every matmul stays "
        << basePolicy;
  if (options.verbose)
    mlir::emitRemark(where)
        << "precision auto: " << nodes.size() << " matmuls (" << tally
        << "), predicted time " << llvm::formatv("{0:f3}", ratio) << " of "
        << basePolicy << "'s; on " << verify.size() << " held-out sample"
        << (verify.size() == 1 ? "" : "s") << ": cosine "
        << llvm::formatv("{0:f6}", verdict->cosine) << ", relative L2 "
        << llvm::formatv("{0:e2}", verdict->relativeL2) << " (budget "
        << options.accuracyBudget << ")"
        << (widened.empty()
                ? ""
                : "; widened after verification: " + llvm::join(widened, ", "));

  if (!options.precisionPlan.empty()) {
    llvm::json::Object planNodes;
    for (const Node &node : nodes) {
      llvm::json::Object local, time;
      for (const auto &[policy, nrel] : node.nrel)
        local[policy] = llvm::json::Object{
            {"relative_l2", nrel}, {"cosine", 1 - node.oneMinusCos.at(policy)}};
      time[basePolicy] = costOf(node, "fp32");
      for (const Candidate *c : candidates)
        time[c->policy] = costOf(node, c->policy);
      planNodes[node.key] = llvm::json::Object{
          {"precision", shown(choice[node.key])},
          {"shape", llvm::json::Array{node.shape.rows, node.shape.columns,
                                      node.shape.depth}},
          {"flops", node.shape.flops()},
          {"predicted_time", std::move(time)},
          {"local", std::move(local)}};
    }
    llvm::json::Array widenedJSON;
    for (const std::string &w : widened)
      widenedJSON.push_back(w);
    llvm::json::Object root{
        {"format", "tessera-precision-plan"},
        {"version", 1},
        {"target", options.target},
        {"base", basePolicy},
        {"budget", llvm::json::Object{{"cosine", budget->minCosine},
                                      {"relative_l2", budget->maxRelativeL2}}},
        {"predicted_time_ratio", ratio},
        {"verified",
         llvm::json::Object{{"samples", static_cast<int64_t>(verify.size())},
                            {"cosine", verdict->cosine},
                            {"relative_l2", verdict->relativeL2}}},
        {"widened", std::move(widenedJSON)},
        {"nodes", std::move(planNodes)}};
    std::error_code ec;
    llvm::raw_fd_ostream out(options.precisionPlan, ec);
    if (ec)
      return fail("cannot write " + options.precisionPlan + ": " +
                  ec.message());
    out << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  }
  std::map<std::string, std::string> plan;
  for (const auto &[key, policy] : choice)
    if (policy != "fp32")
      plan[key] = policy;
  return plan;
}
