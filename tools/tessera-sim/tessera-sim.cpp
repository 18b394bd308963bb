//===- tessera-sim.cpp - the systolic accelerator model's command line ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/Compare.h"
#include "tessera/Runtime/TensorIO.h"
#include "tessera/Target/Systolic/ProgramExecutable.h"
#include "tessera/Target/Systolic/SystolicIO.h"
#include "tessera/Sim/Analytical.h"
#include "tessera/Sim/Simulator.h"
#include "tessera/Target/Systolic/Schedule.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <random>

using namespace llvm;
using namespace tessera::sim;

static cl::SubCommand
    analyzeCommand("analyze",
                   "Compute cycles of a GEMM or convolution on an R x C "
                   "array with the analytical (SCALE-Sim) model; prints "
                   "JSON with folds, compute_cycles, mapping_efficiency "
                   "and compute_utilization (fractions), and for an array "
                   "that pipelines its folds fold_interval and "
                   "pipelined_compute_cycles");
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

static cl::SubCommand
    runCommand("run",
               "Run a program (.tsp) on the cycle-level model; prints cycles, "
               "busy and stall cycles per unit, utilization, bytes, energy and "
               "the simulator's own speed as JSON");
static cl::SubCommand
    gemmCommand("gemm",
                "Build a weight-stationary GEMM program on random data, run it "
                "and check its result against a float64 reference");
static cl::opt<std::string>
    programPath(cl::Positional, cl::desc("<program.tsp>"), cl::sub(runCommand));
static cl::opt<std::string>
    accelOption("accel", cl::init("default"),
                cl::desc("The accelerator: a preset (tpu-v1, default, "
                         "small) or a JSON configuration file"),
                cl::value_desc("preset|file.json"), cl::sub(runCommand),
                cl::sub(gemmCommand));
static cl::opt<std::string> traceOption(
    "trace", cl::desc("Write a Chrome trace-event timeline of every unit"),
    cl::value_desc("file.json"), cl::sub(runCommand), cl::sub(gemmCommand));
static cl::opt<std::string> reportOption(
    "report", cl::desc("Write a one-page HTML report with a utilization plot"),
    cl::value_desc("file.html"), cl::sub(runCommand), cl::sub(gemmCommand));
static cl::list<std::string> inputOption(
    "input",
    cl::desc("An input as an ONNX TensorProto (.pb) or a NumPy array (.npy), "
             "in the program's input order (without: the inputs stored in "
             "the program)"),
    cl::value_desc("file"), cl::sub(runCommand));
static cl::list<std::string> expectedOption(
    "expected",
    cl::desc("An expected output (.pb or .npy), in the program's output "
             "order; the JSON gets each output's errors and the exit code "
             "is 1 on a mismatch"),
    cl::value_desc("file"), cl::sub(runCommand));
static cl::opt<double> rtolOption("rtol", cl::init(1e-3),
                                  cl::desc("Relative tolerance (default 1e-3)"),
                                  cl::sub(runCommand));
static cl::opt<double> atolOption("atol", cl::init(1e-5),
                                  cl::desc("Absolute tolerance (default 1e-5)"),
                                  cl::sub(runCommand));
static cl::opt<double> errorRatioOption(
    "max-error-ratio", cl::init(0.0),
    cl::desc("Pass when each output's max abs error is at most this fraction "
             "of its max |expected| (instead of --rtol/--atol)"),
    cl::value_desc("F"), cl::sub(runCommand));
static cl::opt<double> minCosineOption(
    "min-cosine", cl::init(0.0),
    cl::desc("Also require each output's cosine similarity to the expected "
             "one to be at least this"),
    cl::value_desc("C"), cl::sub(runCommand));
static cl::opt<std::string> gemmRunOption("gemm", cl::desc("GEMM sizes"),
                                          cl::value_desc("M,N,K"),
                                          cl::sub(gemmCommand));
static cl::opt<std::string>
    formatOption("format", cl::init("bf16"),
                 cl::desc("Operand format: bf16, f16, f8E4M3FN or f8E5M2"),
                 cl::sub(gemmCommand));
static cl::opt<std::string> outputOption("o",
                                         cl::desc("Also write the program"),
                                         cl::value_desc("program.tsp"),
                                         cl::sub(gemmCommand));

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
      return fail("--conv must be H,W,Fh,Fw,Cin,Nf,stride, got '" + convOption +
                  "'");
    ConvShape conv{(*values)[0], (*values)[1], (*values)[2], (*values)[3],
                   (*values)[4], (*values)[5], (*values)[6]};
    Result<GemmShape> mapped = convToGemm(conv);
    if (auto *error = std::get_if<std::string>(&mapped))
      return fail(*error);
    gemm = std::get<GemmShape>(mapped);
    input["conv"] =
        json::Object{{"h", conv.h},          {"w", conv.w},     {"fh", conv.fh},
                     {"fw", conv.fw},        {"cin", conv.cin}, {"nf", conv.nf},
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
      {"compute_utilization", r.computeUtilization},
      {"fold_interval", r.foldInterval},
      {"pipelined_compute_cycles", r.pipelinedCycles}};
  for (auto &entry : input)
    out[entry.first] = std::move(entry.second);
  outs() << formatv("{0:2}", json::Value(std::move(out))) << "\n";
  return 0;
}

static std::optional<AcceleratorConfig> loadConfig() {
  Result<AcceleratorConfig> config = tessera::sim::loadConfig(accelOption);
  if (auto *error = std::get_if<std::string>(&config)) {
    fail(*error);
    return std::nullopt;
  }
  return std::get<AcceleratorConfig>(config);
}

/// Prints a run's statistics, with the simulator's own speed, and writes
/// its trace and report when asked.
static int reportRun(
    const tessera::systolic::SimulatedRun &run, const AcceleratorConfig &config,
    json::Object extra,
    std::function<void(const Program &, json::Object &)> check = {}) {
  const SimStats &stats = run.stats;
  double wall = run.wallSeconds;
  Expected<json::Value> parsed = json::parse(statsToJSON(stats, config));
  if (!parsed)
    return fail(toString(parsed.takeError()));
  json::Object &out = *parsed->getAsObject();
  out["array"] = std::to_string(config.array.rows) + "x" +
                 std::to_string(config.array.cols);
  out["simulator"] = json::Object{
      {"wall_seconds", wall},
      {"simulated_cycles_per_second", wall > 0 ? stats.cycles / wall : 0.0},
      {"macs_per_second", wall > 0 ? stats.macs / wall : 0.0}};
  for (auto &entry : extra)
    out[entry.first] = std::move(entry.second);
  if (check)
    check(run.program, out);
  if (llvm::Error error = tessera::systolic::writeTraceAndReport(
          stats, config, traceOption, reportOption,
          "tessera-sim on " + config.name))
    return fail(toString(std::move(error)));
  outs() << formatv("{0:2}", json::Value(std::move(*parsed))) << "\n";
  return 0;
}

static bool keepTrace() { return !traceOption.empty() || !reportOption.empty(); }

static int run() {
  if (programPath.empty())
    return fail("give the program to run (tessera-sim run program.tsp)");
  auto executable =
      tessera::systolic::ProgramExecutable::load(programPath, {{"accel", accelOption}});
  if (!executable)
    return fail(toString(executable.takeError()));
  auto inputs = tessera::runtime::readTensorFiles(inputOption);
  auto expected = tessera::runtime::readTensorFiles(expectedOption);
  if (!inputs || !expected)
    return fail(toString(inputs ? expected.takeError() : inputs.takeError()));
  auto ran = (*executable)->simulate(*inputs, keepTrace());
  if (!ran)
    return fail(programPath + ": " + toString(ran.takeError()));
  // With --expected: each output's errors in the JSON, judged by the rule
  // tessera-run uses.
  tessera::runtime::Tolerances tolerances;
  tolerances.rtol = rtolOption;
  tolerances.atol = atolOption;
  tolerances.maxErrorRatio = errorRatioOption;
  tolerances.minCosine = minCosineOption;
  bool ok = true;
  auto check = [&](const Program &ran, json::Object &out) {
    if (expected->empty())
      return;
    std::vector<tessera::runtime::HostTensor> outputs =
        tessera::runtime::readProgramOutputs(ran);
    if (outputs.size() != expected->size()) {
      out["error"] = "the program has " + std::to_string(outputs.size()) +
                     " outputs but " + std::to_string(expected->size()) +
                     " expected values";
      ok = false;
      return;
    }
    json::Array results;
    for (size_t i = 0; i < outputs.size(); ++i) {
      tessera::runtime::Verdict v =
          tessera::runtime::judgeOutput(outputs[i], (*expected)[i], tolerances);
      const tessera::runtime::Comparison &c = v.comparison;
      ok &= v.ok;
      results.push_back(json::Object{{"name", outputs[i].name},
                                     {"shape_matches", c.shapesMatch},
                                     {"max_abs_error", c.maxAbsError},
                                     {"max_rel_error", c.maxRelError},
                                     {"max_abs_expected", c.maxAbsExpected},
                                     {"cosine", c.cosine},
                                     {"mismatches", c.mismatches},
                                     {"ok", v.ok}});
    }
    out["outputs"] = std::move(results);
    out["ok"] = ok;
  };
  if (int status =
          reportRun(*ran, (*executable)->config(), {}, check))
    return status;
  return ok ? 0 : 1;
}

static int gemm() {
  std::optional<AcceleratorConfig> config = loadConfig();
  if (!config)
    return 1;
  auto values = parseList(gemmRunOption, 3);
  if (!values)
    return fail("--gemm must be M,N,K, got '" + gemmRunOption + "'");
  GemmShape shape{(*values)[0], (*values)[1], (*values)[2]};
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 ||
      shape.m * shape.k > (int64_t(1) << 28) ||
      shape.k * shape.n > (int64_t(1) << 28))
    return fail("--gemm sizes must be positive and each operand at most "
                "2^28 elements");
  std::optional<NumberFormat> format = parseFormat(formatOption);
  if (!format)
    return fail("--format must be bf16, f16, f8E4M3FN or f8E5M2, got '" +
                formatOption + "'");
  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  std::vector<float> a(size_t(shape.m * shape.k)), b(size_t(shape.k * shape.n));
  for (float &v : a)
    v = normal(rng);
  for (float &v : b)
    v = normal(rng);
  Result<Program> built = buildGemmProgram(*config, shape, *format, a, b);
  if (auto *error = std::get_if<std::string>(&built))
    return fail(*error);
  Program &program = std::get<Program>(built);
  if (!outputOption.empty()) {
    std::error_code ec;
    raw_fd_ostream out(outputOption, ec, sys::fs::OF_None);
    if (ec)
      return fail("cannot write '" + outputOption + "': " + ec.message());
    std::vector<uint8_t> bytes = encodeProgram(program);
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }
  json::Object extra;
  Result<AnalyticalResult> analytical =
      analyzeGemm(config->array, config->dataflow, shape);
  if (auto *r = std::get_if<AnalyticalResult>(&analytical))
    extra["analytical"] =
        json::Object{{"compute_cycles", r->computeCycles},
                     {"compute_utilization", r->computeUtilization},
                     {"pipelined_compute_cycles", r->pipelinedCycles}};
  // The result is checked after the run against a float64 product of the
  // rounded operands.
  for (float &v : a)
    v = roundTo(*format, v);
  for (float &v : b)
    v = roundTo(*format, v);
  auto check = [&](const Program &ran, json::Object &out) {
    std::vector<float> c = readOutput(ran, "C");
    std::vector<double> exact(size_t(shape.n));
    double worst = 0, largest = 0;
    for (int64_t i = 0; i < shape.m; ++i) {
      std::fill(exact.begin(), exact.end(), 0.0);
      for (int64_t k = 0; k < shape.k; ++k) {
        double aik = a[i * shape.k + k];
        for (int64_t j = 0; j < shape.n; ++j)
          exact[j] += aik * b[k * shape.n + j];
      }
      for (int64_t j = 0; j < shape.n; ++j) {
        worst = std::max(worst, std::fabs(exact[j] - c[i * shape.n + j]));
        largest = std::max(largest, std::fabs(exact[j]));
      }
    }
    out["max_abs_error_vs_f64"] = worst;
    out["max_abs_reference"] = largest;
  };
  tessera::systolic::SimulatedRun ran;
  ran.program = std::move(program);
  auto start = std::chrono::steady_clock::now();
  Result<SimStats> stats = simulate(ran.program, *config, keepTrace());
  ran.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (auto *error = std::get_if<std::string>(&stats))
    return fail(*error);
  ran.stats = std::move(std::get<SimStats>(stats));
  return reportRun(ran, *config, std::move(extra), check);
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Tessera's systolic accelerator model\n\n"
      "  tessera-sim analyze --array=32x32 --dataflow=ws --gemm=256,128,256\n"
      "  tessera-sim gemm --accel=small --gemm=64,64,64 -o gemm.tsp\n"
      "  tessera-sim run gemm.tsp --accel=small --trace=trace.json\n"
      "  tessera-sim run model.tsp --input=x.pb --expected=y.pb\n");
  if (analyzeCommand)
    return analyze();
  if (runCommand)
    return run();
  if (gemmCommand)
    return gemm();
  return fail("give a command: analyze, gemm or run (see tessera-sim "
              "--help)");
}
