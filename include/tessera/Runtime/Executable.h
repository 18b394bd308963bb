//===- Executable.h - a compiled model, whatever runs it ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every compiled form of a model (a CPU shared library, a model JIT-compiled
// in process, a systolic program on the simulator, a CUDA artifact) is an
// Executable: a signature and `run(inputs) -> outputs` on host tensors.
// Artifacts on disk are opened through a loader registry keyed by artifact
// kind; each backend registers its loaders (tessera/Target/Targets.def), so
// this library names no target.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_EXECUTABLE_H
#define TESSERA_RUNTIME_EXECUTABLE_H

#include "tessera/Runtime/Invoke.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera::runtime {

class Executable {
public:
  virtual ~Executable();

  /// Names, element types and shapes (with symbolic dims) of the inputs
  /// and outputs, in order.
  virtual const ModelSignature &signature() const = 0;

  /// Runs the model on `inputs` (in signature order), checked against the
  /// signature; the outputs come back in host memory.
  virtual llvm::Expected<std::vector<HostTensor>>
  run(llvm::ArrayRef<HostTensor> inputs) = 0;

  /// Where the model runs and its tensors live while it does, in words
  /// ("host CPU", "systolic simulator 'default'").
  virtual std::string device() const = 0;

  /// Whether runs on several threads proceed in parallel; otherwise the
  /// runtime runs them one at a time.
  virtual bool concurrentRuns() const { return false; }

  /// What the last run measured, for people (a simulator's cycles and
  /// utilization); empty when there is nothing to say.
  virtual std::string lastRunSummary() const { return ""; }

  /// The time the last run's work took on the device's own clock (a GPU's
  /// events, from its first kernel to its last, without the copies of host
  /// inputs and outputs), in milliseconds; std::nullopt when nothing
  /// measured it (a CPU, the PTX emulator).
  virtual std::optional<double> lastRunDeviceMilliseconds() const {
    return std::nullopt;
  }

  //===--- Tensors in device memory -------------------------------------===//
  // A model whose tensors live in a device's memory (a CUDA artifact, on a
  // GPU or the PTX emulator) also runs on tensors already there: a
  // framework's device pointers, or buffers allocated here. Addresses are
  // the device's; the host never dereferences them. Other models refuse
  // these calls with an error that says so.

  /// Whether the calls below work.
  virtual bool hasDeviceMemory() const { return false; }
  /// `bytes` of the device's memory, until freeDevice.
  virtual llvm::Expected<uint64_t> allocateDevice(uint64_t bytes);
  /// Frees what allocateDevice or runOnDevice handed out; other addresses
  /// (a framework's) are left alone.
  virtual void freeDevice(uint64_t address) {}
  virtual llvm::Error copyToDevice(uint64_t dst, const void *src,
                                   uint64_t bytes);
  virtual llvm::Error copyToHost(void *dst, uint64_t src, uint64_t bytes);
  /// Runs the model on `inputs` in device memory (checked against the
  /// signature as run() checks host tensors), ordered after the work
  /// already issued on `stream` (a CUstream; 0: the default stream), and
  /// returns once the results are complete. An output with an address gets
  /// the result copied there, when its `bytes` hold it; one without (0)
  /// gets the address of device memory that holds the result, which the
  /// caller frees with freeDevice. Every output's shape is filled in; an
  /// output too small fails the run with OutputTooSmall.
  virtual llvm::Error runOnDevice(llvm::ArrayRef<DeviceTensor> inputs,
                                  llvm::MutableArrayRef<DeviceTensor> outputs,
                                  uint64_t stream);
};

/// The error runOnDevice returns when an output's buffer is too small for
/// its result (whose shape is then filled in).
class OutputTooSmall : public llvm::ErrorInfo<OutputTooSmall> {
public:
  static char ID;
  explicit OutputTooSmall(std::string message) : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string message;
};

/// Options of a loader by name (`accel` -> `small`); each loader reads the
/// ones it declares and ignores the others.
using LoadOptions = std::map<std::string, std::string>;

/// An option a loader reads, for the tools' --help.
struct LoaderOption {
  std::string name, valueDescription, description;
};

/// Opens one kind of artifact.
struct ExecutableLoader {
  /// The artifact kind ("cpu-library", "systolic-program").
  std::string kind;
  /// The file name extension of this kind (".so", ".tsp").
  std::string extension;
  /// What the artifact is and what runs it, in one line.
  std::string description;
  std::vector<LoaderOption> options;
  std::function<llvm::Expected<std::unique_ptr<Executable>>(
      llvm::StringRef path, const LoadOptions &options)>
      load;
  /// Whether the file at `path` is of this kind, for kinds that share an
  /// extension (a CPU and a CUDA `.so`); null when the extension decides.
  std::function<bool(llvm::StringRef path)> accepts;
};

/// Adds `loader` (replacing one of the same kind).
void registerExecutableLoader(ExecutableLoader loader);

/// Every registered loader, in registration order.
std::vector<const ExecutableLoader *> registeredLoaders();

/// The loader for `path`: among those of its extension, the first whose
/// `accepts` takes it, else the first without `accepts`; null for none.
const ExecutableLoader *findLoaderForPath(llvm::StringRef path);

/// Opens the artifact at `path` with the loader its extension selects;
/// an error names the extensions that can be opened.
llvm::Expected<std::unique_ptr<Executable>>
loadExecutable(llvm::StringRef path, const LoadOptions &options = {});

/// Registers the loaders of every backend (tessera/Target/Targets.def);
/// idempotent.
void registerAllExecutableLoaders();

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_EXECUTABLE_H
