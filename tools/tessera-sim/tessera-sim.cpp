//===- tessera-sim.cpp - the systolic accelerator model's command line ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Analytical.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace tessera::sim;

static cl::SubCommand
    analyzeCommand("analyze",
                   "Compute cycles of a GEMM or convolution on an R x C "
                   "array with the analytical (SCALE-Sim) model; prints "
                   "JSON with folds, compute_cycles, mapping_efficiency "
                   "and compute_utilization (fractions)");
static cl::opt<std::string> arrayOption("array", cl::desc("Array size"),
                                        cl::value_desc("RxC"),
                                        cl::sub(analyzeCommand));
static cl::opt<std::string>
    dataflowOption("dataflow", cl::init("ws"),
                   cl::desc("Dataflow: os (output stationary), ws (weight "
                            "stationary, the default) or is (input "
                            "stationary)"),
                   cl::value_desc("os|ws|is"), cl::sub(analyzeCommand));
static cl::opt<std::string>
    gemmOption("gemm", cl::desc("GEMM of M x K activations and K x N weights"),
               cl::value_desc("M,N,K"), cl::sub(analyzeCommand));
static cl::opt<std::string> convOption(
    "conv",
    cl::desc("Convolution mapped to a GEMM as SCALE-Sim does (M = output "
             "pixels, K = Fh*Fw*Cin, N = Nf)"),
    cl::value_desc("H,W,Fh,Fw,Cin,Nf,stride"), cl::sub(analyzeCommand));

static int fail(const Twine &message) {
  errs() << "tessera-sim: error: " << message << "\n";
  return 1;
}

/// `count` comma-separated integers (or `separator`-separated).
static std::optional<SmallVector<int64_t>>
parseList(StringRef text, size_t count, char separator = ',') {
  SmallVector<StringRef> parts;
  text.split(parts, separator);
  if (parts.size() != count)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (StringRef part : parts) {
    int64_t value;
    if (part.trim().getAsInteger(10, value))
      return std::nullopt;
    values.push_back(value);
  }
  return values;
}

static int analyze() {
  if (arrayOption.empty())
    return fail("--array=RxC is required");
  auto array = parseList(StringRef(arrayOption).lower(), 2, 'x');
  if (!array)
    return fail("--array must be RxC (for example 128x128), got '" +
                arrayOption + "'");
  std::optional<Dataflow> dataflow = parseDataflow(dataflowOption);
  if (!dataflow)
    return fail("--dataflow must be os, ws or is, got '" + dataflowOption +
                "'");
  if (gemmOption.empty() == convOption.empty())
    return fail("give exactly one of --gemm=M,N,K and "
                "--conv=H,W,Fh,Fw,Cin,Nf,stride");
  GemmShape gemm;
  json::Object input;
  if (!gemmOption.empty()) {
    auto values = parseList(gemmOption, 3);
    if (!values)
      return fail("--gemm must be M,N,K, got '" + gemmOption + "'");
    gemm = {(*values)[0], (*values)[1], (*values)[2]};
  } else {
    auto values = parseList(convOption, 7);
    if (!values)
      return fail("--conv must be H,W,Fh,Fw,Cin,Nf,stride, got '" +
                  convOption + "'");
    ConvShape conv{(*values)[0], (*values)[1], (*values)[2], (*values)[3],
                   (*values)[4], (*values)[5], (*values)[6]};
    Result<GemmShape> mapped = convToGemm(conv);
    if (auto *error = std::get_if<std::string>(&mapped))
      return fail(*error);
    gemm = std::get<GemmShape>(mapped);
    input["conv"] = json::Object{{"h", conv.h},     {"w", conv.w},
                                 {"fh", conv.fh},   {"fw", conv.fw},
                                 {"cin", conv.cin}, {"nf", conv.nf},
                                 {"stride", conv.stride}};
  }
  Result<AnalyticalResult> analyzed =
      analyzeGemm({(*array)[0], (*array)[1]}, *dataflow, gemm);
  if (auto *error = std::get_if<std::string>(&analyzed))
    return fail(*error);
  const AnalyticalResult &r = std::get<AnalyticalResult>(analyzed);
  json::Object out{
      {"array", json::Array{(*array)[0], (*array)[1]}},
      {"dataflow", dataflowName(*dataflow)},
      {"gemm", json::Object{{"m", gemm.m}, {"n", gemm.n}, {"k", gemm.k}}},
      {"mapped_rows", r.mappedRows},
      {"mapped_cols", r.mappedCols},
      {"streamed", r.streamed},
      {"folds", r.folds},
      {"cycles_per_fold", r.cyclesPerFold},
      {"compute_cycles", r.computeCycles},
      {"mapping_efficiency", r.mappingEfficiency},
      {"compute_utilization", r.computeUtilization}};
  for (auto &entry : input)
    out[entry.first] = std::move(entry.second);
  outs() << formatv("{0:2}", json::Value(std::move(out))) << "\n";
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Tessera's systolic accelerator model\n\n"
      "  tessera-sim analyze --array=32x32 --dataflow=ws --gemm=256,128,256\n");
  if (analyzeCommand)
    return analyze();
  return fail("give a command: analyze (see tessera-sim --help)");
}
