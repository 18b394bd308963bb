//===- Target.h - the seam every backend plugs into -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A Target is one kind of hardware Tessera compiles for. It says what it is
// (name, description, options), what it fuses and which element types its
// ops take (its TargetInfo, asked by the graph passes), how it lowers the
// graph phase's tessera IR to its own IR (named phases that --compile-to
// accepts), which artifacts it writes, and how a model compiled in process
// runs. Backends register themselves (tessera/Target/Targets.def); the
// driver and the tools only ever ask the registry.
//
//   import -> graph -> target phases -> artifact -> runtime Executable
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_TARGET_H
#define TESSERA_TARGET_TARGET_H

#include "tessera/Runtime/Executable.h"
#include "tessera/Transforms/TargetInfo.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

/// An option of one target (`--accel=small`), as the tools show it.
struct TargetOption {
  std::string name;
  std::string valueDescription;
  std::string description;
  std::string defaultValue;
  /// Given as a prefix without `=` (`-O3`).
  bool prefix = false;
  /// Another spelling the tools accept (`num-threads`); empty for none.
  std::string alias;
};

/// The values of a target's options by name; options not given have their
/// default.
using TargetOptionValues = std::map<std::string, std::string>;

/// The key the driver sets (to "1") in a target's option values when the
/// user asks for verbose output (`tessera-compile -v`): a target may then
/// say more about what it compiled (the CPU target: each contraction left
/// on a generic loop nest, and why).
inline constexpr const char *kVerboseOptionKey = "verbose";
/// Set (to "1") when the user asks for the fusion report
/// (`--fusion-report`): a target says, as a remark at each op, what it
/// left on a slow path (the CPU: "contraction stays a generic loop nest
/// (...): why", "attention stays decomposed (...): why"), which the report
/// lists; without -v the remarks are not printed.
inline constexpr const char *kReportSlowPathsOptionKey = "report-slow-paths";
/// Set (to "1") in a target's option values when fp32 matmuls may run as
/// tf32 (`--allow-tf32`).
inline constexpr const char *kAllowTF32OptionKey = "allow-tf32";
/// Set to the precision policy (`--precision`: bf16, fp16, fp8, int8)
/// when it is not fp32: a target whose matmuls cannot be fp32 (an
/// accelerator's array) narrows what the policy leaves fp32 to match it.
inline constexpr const char *kPrecisionOptionKey = "precision";

/// A named step of a target's lowering, after the graph phase.
struct TargetPhase {
  std::string name;
  std::string description;
  /// Print constants of more than 16 elements elided (a program's DRAM
  /// image) when this phase's IR is printed without --print-weights.
  bool elideConstants = false;
};

/// A kind of file a target writes from its last phase.
struct ArtifactKind {
  /// The `--emit` name ("lib", "obj", "program").
  std::string name;
  /// The extension that selects it when --emit is not given (".so").
  std::string extension;
  std::string description;
  /// Text that may go to standard output (`-o -`).
  bool text = false;
  /// The kind of the runtime loader that opens it ("cuda-library"), when
  /// its extension alone does not say (several kinds of `.so`).
  std::string loaderKind = "";
};

/// One compilation for a target, with its options parsed and whatever they
/// name loaded once (an accelerator's configuration).
class TargetCompilation {
public:
  virtual ~TargetCompilation();

  /// What the graph phase fuses for this compilation's hardware (an
  /// accelerator's array width decides what its epilogues take); null for
  /// the target's own info().
  virtual std::shared_ptr<const TargetInfo> targetInfo() const {
    return nullptr;
  }

  /// Adds the passes from the graph phase's output up to and including
  /// the phase `phase` (one of Target::phases()).
  virtual void buildPipeline(mlir::OpPassManager &pm,
                             llvm::StringRef phase) = 0;

  /// Writes the module, lowered through every phase, as the artifact
  /// `kind` (one of Target::artifacts()) to `path` ("-" for standard
  /// output, for text artifacts). Steps are timed under `timing`.
  virtual llvm::Error writeArtifact(mlir::ModuleOp module,
                                    const ArtifactKind &kind,
                                    llvm::StringRef path,
                                    mlir::TimingScope &timing) = 0;

  /// The module, lowered through every phase, as an executable in this
  /// process; `options` are those of the loader of this target's artifacts
  /// (a simulator's trace file, ...).
  virtual llvm::Expected<std::unique_ptr<runtime::Executable>>
  load(mlir::ModuleOp module, const runtime::LoadOptions &options) = 0;
};

class Target {
public:
  virtual ~Target();

  /// The name --target selects ("cpu").
  virtual llvm::StringRef name() const = 0;
  /// One line for --help.
  virtual llvm::StringRef description() const = 0;
  /// The target's own options.
  virtual llvm::ArrayRef<TargetOption> options() const = 0;
  /// What the graph phase fuses for this target and which element types
  /// its ops take.
  virtual const TargetInfo &info() const = 0;
  /// The phases after the graph phase, in order; artifacts are written
  /// after the last.
  virtual llvm::ArrayRef<TargetPhase> phases() const = 0;
  /// The phase whose IR is printed when the user asks for IR without
  /// --compile-to.
  virtual llvm::StringRef defaultPrintPhase() const { return "graph"; }
  /// The artifacts this target writes.
  virtual llvm::ArrayRef<ArtifactKind> artifacts() const = 0;
  /// Whether programs are compiled for fixed sizes only, so that symbolic
  /// dims must be given a size (`--dim`).
  virtual bool needsStaticShapes() const { return false; }

  /// The value of the option `name` in `values`, or its default.
  std::string optionValue(const TargetOptionValues &values,
                          llvm::StringRef name) const;

  /// Checks `options` (names this target declares, values) and prepares a
  /// compilation; `fuse` says whether the graph phase formed fusion
  /// regions (--no-fusion turns them off). The error says which option is
  /// wrong.
  virtual llvm::Expected<std::unique_ptr<TargetCompilation>>
  configure(const TargetOptionValues &options, bool fuse) const = 0;
};

/// Adds `target` to the registry (replacing one of the same name).
void registerTarget(std::unique_ptr<Target> target);

/// The target named `name`, or null.
const Target *lookupTarget(llvm::StringRef name);

/// Every registered target, in registration order.
std::vector<const Target *> registeredTargets();

/// The target a tool compiles for when --target is not given: the first
/// one registered (tessera/Target/Targets.def lists it first).
llvm::StringRef defaultTargetName();

/// "cpu|systolic": the names for a --target value description.
std::string targetNames();

/// Registers every backend (tessera/Target/Targets.def) with the target
/// registry and its TargetInfo with the fusion pass; idempotent.
void registerAllTargets();

} // namespace tessera

#endif // TESSERA_TARGET_TARGET_H
