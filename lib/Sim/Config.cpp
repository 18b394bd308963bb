//===- Config.cpp - the accelerator's configuration -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Config.h"
#include "tessera/Support/ResourceLimits.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace tessera::sim;

bool AcceleratorConfig::supports(NumberFormat format) const {
  return std::find(operandFormats.begin(), operandFormats.end(), format) !=
         operandFormats.end();
}

int64_t tessera::sim::formatBytes(NumberFormat format) {
  return static_cast<int64_t>(elementSize(format));
}

const char *tessera::sim::formatName(NumberFormat format) {
  return isNumberFormat(format) ? elementTypeName(format).data() : "?";
}

bool tessera::sim::isNumberFormat(NumberFormat format) {
  switch (format) {
  case NumberFormat::F32:
  case NumberFormat::BF16:
  case NumberFormat::F16:
  case NumberFormat::F8E4M3FN:
  case NumberFormat::F8E5M2:
  case NumberFormat::I8:
    return true;
  default:
    return false;
  }
}

std::optional<NumberFormat> tessera::sim::parseFormat(std::string_view name) {
  std::optional<ElementType> type =
      parseElementType(llvm::StringRef(name.data(), name.size()));
  if (!type || !isNumberFormat(*type) || name == "bool")
    return std::nullopt;
  return type;
}

Result<AcceleratorConfig> tessera::sim::presetConfig(std::string_view name) {
  AcceleratorConfig c;
  c.name = std::string(name);
  if (name == "tpu-v1") {
    // Jouppi et al., ISCA 2017: 256 x 256 int8 weight-stationary, 700 MHz,
    // 24 MiB unified buffer, 4 MiB of accumulators, DDR3 at 34 GB/s.
    c.array = {256, 256};
    c.clockGHz = 0.7;
    c.unifiedBufferBytes = int64_t(24) << 20;
    c.weightBufferBytes = 4 * 64 * 1024; // four 64 KiB tiles
    c.accumulatorBytes = int64_t(4) << 20;
    c.dramBytesPerCycle = 34.0 / 0.7;
    c.dramLatencyCycles = 100;
    c.vectorLanes = 256;
    c.operandFormats = {NumberFormat::I8};
  } else if (name == "default") {
    // A modern 128 x 128 array: bf16, fp16 and fp8 with fp32 accumulation,
    // int8 with int32, HBM-class bandwidth.
    c.array = {128, 128};
    c.clockGHz = 1.0;
    c.unifiedBufferBytes = int64_t(32) << 20;
    c.weightBufferBytes = int64_t(4) << 20;
    c.accumulatorBytes = int64_t(8) << 20;
    c.dramBytesPerCycle = 1200.0;
    c.dramLatencyCycles = 500;
    c.vectorLanes = 128;
    c.operandFormats = {NumberFormat::BF16, NumberFormat::F16,
                        NumberFormat::F8E4M3FN, NumberFormat::F8E5M2,
                        NumberFormat::I8};
  } else if (name == "small") {
    // A 16 x 16 array for fast tests.
    c.array = {16, 16};
    c.clockGHz = 1.0;
    c.unifiedBufferBytes = 256 * 1024;
    c.weightBufferBytes = 64 * 1024;
    c.accumulatorBytes = 64 * 1024;
    c.dramBytesPerCycle = 64.0;
    c.dramLatencyCycles = 50;
    c.vectorLanes = 16;
    c.operandFormats = {NumberFormat::BF16, NumberFormat::F16,
                        NumberFormat::F8E4M3FN, NumberFormat::F8E5M2,
                        NumberFormat::I8};
  } else {
    return "unknown accelerator preset '" + std::string(name) +
           "' (presets: tpu-v1, default, small)";
  }
  return c;
}

std::optional<std::string>
tessera::sim::validateConfig(const AcceleratorConfig &c) {
  auto positive = [](const char *key,
                     double value) -> std::optional<std::string> {
    if (!(value > 0))
      return std::string("'") + key + "' must be positive";
    return std::nullopt;
  };
  for (auto [key, value] :
       {std::pair("rows", double(c.array.rows)),
        std::pair("cols", double(c.array.cols)),
        std::pair("clock_ghz", c.clockGHz),
        std::pair("unified_buffer_bytes", double(c.unifiedBufferBytes)),
        std::pair("weight_buffer_bytes", double(c.weightBufferBytes)),
        std::pair("accumulator_bytes", double(c.accumulatorBytes)),
        std::pair("dram_bytes_per_cycle", c.dramBytesPerCycle),
        std::pair("vector_lanes", double(c.vectorLanes))})
    if (auto error = positive(key, value))
      return error;
  if (c.dramLatencyCycles < 0)
    return std::string("'dram_latency_cycles' must not be negative");
  if (c.array.rows > 4096 || c.array.cols > 4096)
    return std::string("the array is larger than 4096 x 4096");
  if (c.operandFormats.empty())
    return std::string("'formats' must list at least one operand format");
  int64_t widest = 0;
  for (NumberFormat f : c.operandFormats)
    widest = std::max(widest, formatBytes(f));
  if (c.weightBufferBytes < c.array.rows * c.array.cols * widest)
    return "the weight buffer (" + std::to_string(c.weightBufferBytes) +
           " bytes) cannot hold one " + std::to_string(c.array.rows) + " x " +
           std::to_string(c.array.cols) + " weight tile";
  if (c.accumulatorBytes < c.array.cols * 4)
    return std::string("the accumulators cannot hold one row of the array");
  // The simulator allocates the three memories before it runs anything.
  uint64_t limit = memoryLimitBytes();
  uint64_t total = 0;
  for (int64_t bytes :
       {c.unifiedBufferBytes, c.weightBufferBytes, c.accumulatorBytes})
    total = static_cast<uint64_t>(bytes) > UINT64_MAX - total
                ? UINT64_MAX
                : total + static_cast<uint64_t>(bytes);
  if (total > limit)
    return "the accelerator's memories (unified buffer, weight buffer and "
           "accumulators) take " +
           describeBytes(total) + ", more than the memory limit of " +
           describeBytes(limit) + " (TESSERA_MEMORY_LIMIT)";
  return std::nullopt;
}

Result<AcceleratorConfig> tessera::sim::parseConfig(std::string_view text) {
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!parsed)
    return "malformed configuration JSON: " +
           llvm::toString(parsed.takeError());
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return std::string("the configuration must be a JSON object");
  std::string base = "default";
  if (const llvm::json::Value *value = object->get("base")) {
    auto name = value->getAsString();
    if (!name)
      return std::string("'base' must be a preset name");
    base = name->str();
  }
  Result<AcceleratorConfig> start = presetConfig(base);
  if (auto *error = std::get_if<std::string>(&start))
    return *error;
  AcceleratorConfig c = std::get<AcceleratorConfig>(start);
  c.name = "custom";
  for (const auto &[key, value] : *object) {
    std::string k = key.str();
    auto number = value.getAsNumber();
    auto integer = value.getAsInteger();
    auto needInteger = [&](int64_t &field) -> std::optional<std::string> {
      if (!integer)
        return "'" + k + "' must be an integer";
      field = *integer;
      return std::nullopt;
    };
    auto needNumber = [&](double &field) -> std::optional<std::string> {
      if (!number)
        return "'" + k + "' must be a number";
      field = *number;
      return std::nullopt;
    };
    std::optional<std::string> error;
    if (k == "base") {
      continue;
    } else if (k == "name") {
      auto s = value.getAsString();
      if (!s)
        return std::string("'name' must be a string");
      c.name = s->str();
    } else if (k == "rows") {
      error = needInteger(c.array.rows);
    } else if (k == "cols") {
      error = needInteger(c.array.cols);
    } else if (k == "dataflow") {
      auto s = value.getAsString();
      std::optional<Dataflow> d =
          s ? parseDataflow(std::string_view(s->data(), s->size()))
            : std::nullopt;
      if (!d)
        return std::string("'dataflow' must be \"os\", \"ws\" or \"is\"");
      c.dataflow = *d;
    } else if (k == "clock_ghz") {
      error = needNumber(c.clockGHz);
    } else if (k == "unified_buffer_bytes") {
      error = needInteger(c.unifiedBufferBytes);
    } else if (k == "weight_buffer_bytes") {
      error = needInteger(c.weightBufferBytes);
    } else if (k == "accumulator_bytes") {
      error = needInteger(c.accumulatorBytes);
    } else if (k == "dram_bytes_per_cycle") {
      error = needNumber(c.dramBytesPerCycle);
    } else if (k == "dram_latency_cycles") {
      error = needInteger(c.dramLatencyCycles);
    } else if (k == "vector_lanes") {
      error = needInteger(c.vectorLanes);
    } else if (k == "pipelined_folds") {
      auto flag = value.getAsBoolean();
      if (!flag)
        return std::string("'pipelined_folds' must be true or false");
      c.pipelinedFolds = *flag;
    } else if (k == "formats") {
      const llvm::json::Array *list = value.getAsArray();
      if (!list)
        return std::string("'formats' must be a list of format names");
      c.operandFormats.clear();
      for (const llvm::json::Value &entry : *list) {
        auto s = entry.getAsString();
        std::optional<NumberFormat> f =
            s ? parseFormat(std::string_view(s->data(), s->size()))
              : std::nullopt;
        if (!f)
          return std::string("'formats' entries must be one of bf16, f16, "
                             "f8E4M3FN, f8E5M2, i8");
        c.operandFormats.push_back(*f);
      }
    } else if (k == "energy") {
      const llvm::json::Object *table = value.getAsObject();
      if (!table)
        return std::string("'energy' must be an object");
      for (const auto &[ek, ev] : *table) {
        auto n = ev.getAsNumber();
        double *field = ek == "mac_pj"         ? &c.energy.macPJ
                        : ek == "sram_byte_pj" ? &c.energy.sramBytePJ
                        : ek == "dram_byte_pj" ? &c.energy.dramBytePJ
                        : ek == "vector_op_pj" ? &c.energy.vectorOpPJ
                                               : nullptr;
        if (!field)
          return "unknown key 'energy." + ek.str() + "'";
        if (!n || *n < 0)
          return "'energy." + ek.str() + "' must be a non-negative number";
        *field = *n;
      }
    } else {
      return "unknown configuration key '" + k + "'";
    }
    if (error)
      return *error;
  }
  if (auto error = validateConfig(c))
    return *error;
  return c;
}

Result<AcceleratorConfig>
tessera::sim::loadConfig(std::string_view presetOrPath) {
  std::string name(presetOrPath);
  if (name.size() < 5 || name.compare(name.size() - 5, 5, ".json") != 0)
    return presetConfig(name);
  std::ifstream file(name);
  if (!file)
    return "cannot read the configuration '" + name + "'";
  std::stringstream text;
  text << file.rdbuf();
  Result<AcceleratorConfig> config = parseConfig(text.str());
  if (auto *error = std::get_if<std::string>(&config))
    return name + ": " + *error;
  return config;
}
