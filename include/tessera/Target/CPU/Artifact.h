//===- Artifact.h - the CPU backend's shared-library artifact -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A CPU artifact is a shared library with a C ABI:
//
//   const char *tessera_model_signature(void);  // JSON: inputs, outputs
//   void tessera_model_run(void **args);        // the packed entry point
//   void tessera_model_free_buffer(void *);     // frees a result buffer
//   uint64_t tessera_model_allocation_failures(uint64_t *last_bytes);
//
// The last counts the allocations the artifact's allocator refused (and
// gives the last one's size): a run during which it changed stopped early
// and its results are not valid.
//
// `tessera_model_run` follows runtime::invokePacked's convention: args[0]
// points to the results' memref descriptors (buffers the model allocates
// and the caller frees with tessera_model_free_buffer: they come from the
// artifact's block cache), args[1..] to one input descriptor each.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CPU_ARTIFACT_H
#define TESSERA_TARGET_CPU_ARTIFACT_H

#include "tessera/Runtime/Invoke.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace tessera::cpu {

struct CodegenOptions {
  /// 0 to 3, as -O0 .. -O3.
  unsigned optLevel = 3;
  /// LLVM CPU name; empty means this machine's.
  std::string cpu;
  /// The modules writeSharedLibrary splits the code into (at most one
  /// per function); 0: one per kInstructionsPerPartition instructions, at
  /// most kMaxPartitions.
  unsigned partitions = 0;
};

/// Adds the C ABI above to a module lowered to the LLVM dialect.
mlir::LogicalResult addArtifactInterface(mlir::ModuleOp module,
                                         const runtime::ModelSignature &sig);

/// A target machine for this host's triple and `options.cpu`.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CodegenOptions &options);

/// Translates an LLVM-dialect module to LLVM IR for `machine` (its triple
/// and data layout), not yet optimized.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                  llvm::TargetMachine &machine);

/// Runs LLVM's optimization pipeline at `options.optLevel` on `module`.
llvm::Error optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           const CodegenOptions &options);

/// Rewrites each constant array of 4 KiB or more (a model's weights) as
/// the same bytes typed i8, which code generation writes as one block
/// instead of element by element. Uses see only the address.
void weightsAsBytes(llvm::Module &module);

/// Writes `module` as an object file or assembly.
llvm::Error emitCode(llvm::Module &module, llvm::TargetMachine &machine,
                     llvm::StringRef path, bool assembly);

/// Links the objects and the archive `support` into the shared library
/// `output` (with libomp when `openmp`, with the C++ runtime when
/// `cxxRuntime`) via clang; the archive's symbols stay private. With
/// `lld`, through LLVM's linker when it is installed (large objects link
/// about 3x faster).
llvm::Error linkSharedLibrary(llvm::ArrayRef<std::string> objects,
                              llvm::StringRef output, llvm::StringRef support,
                              bool openmp = true, bool cxxRuntime = false,
                              bool lld = false);

/// How `writeSharedLibrary` divided the work.
struct ParallelCodegen {
  /// The modules the functions were split into.
  unsigned partitions = 0;
  /// The threads that optimized and compiled them.
  unsigned threads = 0;
};

/// A weight that externalizeWeights took out of a module: its global's
/// name, bytes (a resource blob of the MLIR context, alive as long as it
/// is) and alignment.
struct ModuleWeight {
  std::string name;
  llvm::ArrayRef<char> bytes;
  uint64_t align;
};

/// Turns each used constant global of `module` (LLVM dialect) of 4 KiB or
/// more whose value is a resource blob (a model's weights) into a hidden
/// declaration, and returns their bytes, for writeSharedLibrary to write
/// into an object of their own: translation then makes no LLVM constant
/// of them and the code generator no second copy. None unless `triple` is
/// x86-64 ELF and the host little-endian (the object writer's format, laid
/// out as the host lays out its structures).
std::vector<ModuleWeight> externalizeWeights(mlir::ModuleOp module,
                                             const llvm::Triple &triple);

/// Writes `weights` into the ELF relocatable object `path` for x86-64: one
/// read-only section of them, each at its alignment under a hidden global
/// symbol of its name, written from their bytes without copying them.
llvm::Error writeWeightsObject(llvm::ArrayRef<ModuleWeight> weights,
                               llvm::StringRef path);

/// Optimizes the unoptimized `module` (from translateToLLVMIR) and
/// links it with the archive `support` into the shared library `path`
/// (with libomp when `openmp`). Its large constant arrays (weights) are
/// written as bytes into an object of their own, and `moduleWeights` (those
/// externalizeWeights took out before translation) into another; its
/// functions are
/// split into `options.partitions` partitions (the
/// count depends on the module and the options only, so the artifact does
/// not depend on the machine), each optimized and compiled on a thread of
/// its own. The functions go round robin by size; symbols that only one
/// partition uses stay local to it, but functions in different
/// partitions are not inlined into each other and a small constant defined
/// in another partition is not folded into loads.
llvm::Expected<ParallelCodegen>
writeSharedLibrary(std::unique_ptr<llvm::Module> module,
                   const CodegenOptions &options, llvm::StringRef path,
                   llvm::StringRef support, bool openmp, bool lld = false,
                   llvm::ArrayRef<ModuleWeight> moduleWeights = {});

/// Instructions per partition in writeSharedLibrary, and at most how many.
constexpr unsigned kInstructionsPerPartition = 20000;
constexpr unsigned kMaxPartitions = 8;

/// The path of `fileName` in the lib/ folder beside the running tool's bin/
/// (where the support archives artifacts link are installed).
std::string installedLibrary(llvm::StringRef fileName);

} // namespace tessera::cpu

#endif // TESSERA_TARGET_CPU_ARTIFACT_H
