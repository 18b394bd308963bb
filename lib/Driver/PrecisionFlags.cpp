//===- PrecisionFlags.cpp - the precision options of the tools ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/PrecisionFlags.h"

namespace cl = llvm::cl;

tessera::PrecisionFlags::PrecisionFlags(cl::OptionCategory &category)
    : precision(
          "precision", cl::init("fp32"),
          cl::desc("The precision policy (docs/Precision.md): fp32 (the "
                   "model's own types); bf16 or fp16 (matmuls take narrow "
                   "operands and accumulate in fp32; softmax, norms, "
                   "reductions, exp and log, attention and convolutions "
                   "stay fp32, but for attention the cuda target's fused "
                   "kernel accumulates in fp32); fp8 (E4M3 operands, "
                   "per-tensor scales from "
                   "--calibrate folded into the matmul's alpha, or "
                   "computed each run with --fp8-scaling=current); int8 "
                   "(int8 operands into int32: weights per output channel, "
                   "activations per tensor from --calibrate). Under fp8 "
                   "and int8, output heads and first layers stay fp32. What "
                   "the target "
                   "cannot compute narrow stays fp32 (the systolic array, "
                   "which has no fp32 operands, reads it in bf16, or fp16 "
                   "under fp16). auto: per matmul, "
                   "the policy that saves the most time within "
                   "--accuracy-budget, measured on --calibrate's samples "
                   "and verified on held-out ones"),
          cl::value_desc("fp32|bf16|fp16|fp8|int8|auto"), cl::cat(category)),
      keepFp32("keep-fp32",
               cl::desc("Keep the matmuls of the ONNX nodes whose names "
                        "match this regular expression (the whole name) in "
                        "fp32 under --precision (repeatable), e.g. "
                        "--keep-fp32='/lm_head.*'"),
               cl::value_desc("regex"), cl::cat(category)),
      quantizeHeads(
          "quantize-heads", cl::init(false),
          cl::desc("Under --precision=int8 or fp8, narrow the output heads "
                   "too (matmuls whose results reach the model's outputs "
                   "through elementwise ops only; by default they stay "
                   "fp32)"),
          cl::cat(category)),
      quantizeFirstLayers(
          "quantize-first-layers", cl::init(false),
          cl::desc("Under --precision=int8 or fp8, narrow the first layers "
                   "too (matmuls whose activation comes from the model's "
                   "inputs through elementwise ops and data movement only; "
                   "by default they stay fp32, as output heads do)"),
          cl::cat(category)),
      allowTF32(
          "allow-tf32", cl::init(false),
          cl::desc("Let fp32 matmuls run on tensor cores as tf32 (operands "
                   "rounded to 10 mantissa bits, fp32 accumulation) on a "
                   "target that has them (cuda); without it they stay "
                   "exact fp32"),
          cl::cat(category)),
      smoothQuant(
          "smooth-quant", cl::ValueOptional,
          cl::desc("Under --precision=int8, SmoothQuant: move activation "
                   "outlier channels into the weights (x / s, diag(s) W) "
                   "with s = amax(x)^alpha / amax(W)^(1-alpha) per channel "
                   "from --calibrate; 'auto' (the default value) chooses "
                   "alpha per matmul, or give one in [0, 1]"),
          cl::value_desc("auto|alpha"), cl::cat(category)),
      fp8Scaling(
          "fp8-scaling", cl::init("static"),
          cl::desc("Under --precision=fp8, how each activation (an operand "
                   "that is not a constant) is scaled into E4M3: static "
                   "(the default: its --calibrate range / 448, fixed at "
                   "compile time) or current (its own largest |value| / "
                   "448, computed by the program each run: nothing "
                   "saturates and no calibration is needed, at the cost of "
                   "a pass over the activation). Weights are scaled by "
                   "their own range either way"),
          cl::value_desc("static|current"), cl::cat(category)),
      fp8Format(
          "fp8-format", cl::init("e4m3"),
          cl::desc("Under --precision=fp8, the operands' format: e4m3 (the "
                   "default: 3 mantissa bits, largest 448) or e5m2 (2 "
                   "mantissa bits, largest 57344: range for values with "
                   "outliers, at half e4m3's precision)"),
          cl::value_desc("e4m3|e5m2"), cl::cat(category)),
      saturationCounts(
          "saturation-counts", cl::init(false),
          cl::desc("Count, on every run, the values each int8 or fp8 "
                   "quantize with a fixed scale saturates (clips to its "
                   "type's largest value): one more output per quantized "
                   "activation, two i64 (values saturated, values "
                   "quantized) named "
                   "'tessera.saturated:<ONNX node>:<operand>', which "
                   "tessera-run prints apart from the model's outputs. "
                   "Costs a pass over each such activation"),
          cl::cat(category)),
      calibrate(
          "calibrate",
          cl::desc("Calibrate --precision on the samples in this folder "
                   "(test_data_set_* folders of ONNX's test layout, folders "
                   "of input_K.pb or .npy files, or .pb/.npy files of a "
                   "one-input model): the model runs in fp32 on this CPU "
                   "and each matmul operand's range informs the policy "
                   "(scales; fp16 refused where it would overflow)"),
          cl::value_desc("dir"), cl::cat(category)),
      calibrationCache(
          "calibration-cache",
          cl::desc("Where --calibrate writes what it measured (JSON), or, "
                   "without --calibrate, a cache to read"),
          cl::value_desc("file.json"), cl::cat(category)),
      calibrationMethod(
          "calibration-method", cl::init("max"),
          cl::desc("How --calibrate turns the values it saw into the range "
                   "int8 and fp8 scale to (what lies beyond saturates): "
                   "max (the largest |value|), percentile (the |value| "
                   "that --calibration-percentile of them do not exceed), "
                   "entropy (the clipping threshold whose 128-level "
                   "histogram is closest to the values' own in KL "
                   "divergence), per tensor, and per channel of the lhs "
                   "under --smooth-quant (its factors read each channel's "
                   "range); fp16's overflow rule always reads the "
                   "largest"),
          cl::value_desc("max|percentile|entropy"), cl::cat(category)),
      calibrationPercentile(
          "calibration-percentile", cl::init(99.99),
          cl::desc("The percentage of |values| that "
                   "--calibration-method=percentile keeps within the range "
                   "(default 99.99)"),
          cl::value_desc("percent"), cl::cat(category)),
      accuracyBudget(
          "accuracy-budget", cl::init("cos:0.999,nrel:0.02"),
          cl::desc("Under --precision=auto, the accuracy each output keeps "
                   "against the fp32 program on the held-out samples: the "
                   "least cosine similarity and the largest relative L2 "
                   "error (default cos:0.999,nrel:0.02)"),
          cl::value_desc("cos:C,nrel:E"), cl::cat(category)),
      precisionPlan(
          "precision-plan",
          cl::desc("With --precision=auto, where to write the plan it found "
                   "(JSON: each matmul's precision, shape, FLOPs, "
                   "predicted time under each policy and measured "
                   "errors); without, a plan to apply as it is"),
          cl::value_desc("file.json"), cl::cat(category)),
      precisionCosts(
          "precision-costs",
          cl::desc("Under --precision=auto, a matmul's time under each "
                   "narrow policy named, relative to its time at the same "
                   "shape in what the plan leaves wide (fp32; bf16 on the "
                   "systolic array), instead of the target's cost model (cpu: "
                   "a roofline over its kernels' measured rates; cuda: an "
                   "H100's roofline; systolic: the array's analytical "
                   "model), e.g. int8:0.25,bf16:0.5"),
          cl::value_desc("policy:cost,..."), cl::cat(category)) {}

void tessera::PrecisionFlags::apply(CompileOptions &options) const {
  options.precision = precision;
  options.keepFp32.assign(keepFp32.begin(), keepFp32.end());
  options.keepHeads = !quantizeHeads;
  options.keepFirstLayers = !quantizeFirstLayers;
  options.allowTF32 = allowTF32;
  if (smoothQuant.getNumOccurrences())
    options.smoothQuant =
        smoothQuant.empty() ? std::string("auto") : smoothQuant.getValue();
  options.fp8Scaling = fp8Scaling;
  options.fp8Format = fp8Format;
  options.saturationCounts = saturationCounts;
  options.calibrate = calibrate;
  options.calibrationCache = calibrationCache;
  options.calibrationMethod = calibrationMethod;
  options.calibrationPercentile = calibrationPercentile;
  options.accuracyBudget = accuracyBudget;
  options.precisionPlan = precisionPlan;
  options.precisionCosts = precisionCosts;
}

bool tessera::PrecisionFlags::given() const {
  return precision.getNumOccurrences() || !keepFp32.empty() ||
         quantizeHeads.getNumOccurrences() ||
         quantizeFirstLayers.getNumOccurrences() ||
         allowTF32.getNumOccurrences() || smoothQuant.getNumOccurrences() ||
         fp8Scaling.getNumOccurrences() || fp8Format.getNumOccurrences() ||
         saturationCounts.getNumOccurrences() || !calibrate.empty() ||
         !calibrationCache.empty() || calibrationMethod.getNumOccurrences() ||
         calibrationPercentile.getNumOccurrences() ||
         accuracyBudget.getNumOccurrences() || !precisionPlan.empty() ||
         !precisionCosts.empty();
}

std::optional<std::string> tessera::PrecisionFlags::misuse() const {
  if (precision == "int8" || precision == "fp8")
    return std::nullopt;
  for (const cl::opt<bool> *flag : {&quantizeHeads, &quantizeFirstLayers})
    if (*flag)
      return ("--" + flag->ArgStr +
              " applies to --precision=int8 and fp8 (the other policies "
              "narrow output heads and first layers as any other matmul; "
              "the automatic policy and a plan choose every matmul's "
              "precision themselves)")
          .str();
  return std::nullopt;
}
