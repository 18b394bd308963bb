//===- Artifact.cpp - the CPU backend's shared-library artifact -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Artifact.h"
#include "tessera/Target/CPU/Pipeline.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <algorithm>
#include <dlfcn.h>
#include <optional>

using namespace mlir;
using tessera::cpu::CodegenOptions;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

LogicalResult
tessera::cpu::addArtifactInterface(ModuleOp module,
                                   const runtime::ModelSignature &sig) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  std::string entryName = "_mlir_ciface_" + sig.entry;
  auto entry = module.lookupSymbol<LLVM::LLVMFuncOp>(entryName);
  if (!entry)
    return emitError(loc) << "the lowered module has no " << entryName;
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);

  // The signature, a NUL-terminated JSON string behind a getter.
  std::string json = runtime::signatureToJSON(sig);
  json.push_back('\0');
  auto arrayType = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8),
                                            json.size());
  auto global = LLVM::GlobalOp::create(
      b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Internal,
      "tessera_signature_json", b.getStringAttr(json));
  auto getter = LLVM::LLVMFuncOp::create(
      b, loc, "tessera_model_signature", LLVM::LLVMFunctionType::get(ptr, {}));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(getter.addEntryBlock(b));
    Value address = LLVM::AddressOfOp::create(b, loc, global);
    LLVM::ReturnOp::create(b, loc, address);
  }

  // An exported function of one pointer argument that calls the runtime
  // function `callee` (declared here when the module does not call it) and
  // returns what it returns.
  auto forward = [&](StringRef name, StringRef callee,
                     LLVM::LLVMFunctionType type) {
    auto target = module.lookupSymbol<LLVM::LLVMFuncOp>(callee);
    if (!target)
      target = LLVM::LLVMFuncOp::create(b, loc, callee, type);
    auto exported = LLVM::LLVMFuncOp::create(b, loc, name, type);
    OpBuilder::InsertionGuard guard(b);
    Block *body = exported.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    auto call = LLVM::CallOp::create(b, loc, target, body->getArgument(0));
    LLVM::ReturnOp::create(b, loc, call.getResults());
  };
  auto voidType = LLVM::LLVMVoidType::get(ctx);
  // Frees a result buffer the model allocated (through its block cache).
  forward("tessera_model_free_buffer", "_mlir_memref_to_llvm_free",
          LLVM::LLVMFunctionType::get(voidType, {ptr}));
  // The count of allocations the block cache refused (the runtime compares
  // it around a run; see tessera-cpu-check-allocations).
  forward("tessera_model_allocation_failures", "tesseraAllocationFailures",
          LLVM::LLVMFunctionType::get(IntegerType::get(ctx, 64), {ptr}));

  // The packed entry: args[i] points to the i-th argument of the C
  // interface function (all of them pointers to descriptors).
  auto run = LLVM::LLVMFuncOp::create(
      b, loc, "tessera_model_run",
      LLVM::LLVMFunctionType::get(voidType, {ptr}));
  OpBuilder::InsertionGuard guard(b);
  Block *body = run.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value argPointer = LLVM::LoadOp::create(b, loc, ptr, slot);
    args.push_back(LLVM::LoadOp::create(b, loc, ptr, argPointer));
  }
  LLVM::CallOp::create(b, loc, entry, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return success();
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
tessera::cpu::createTargetMachine(const CodegenOptions &options) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return fail("no LLVM target for " + triple.str() + ": " + error);
  std::string cpu = options.cpu.empty() ? llvm::sys::getHostCPUName().str()
                                        : options.cpu;
  std::string features;
  if (options.cpu.empty()) {
    llvm::SubtargetFeatures host;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      host.AddFeature(feature.first(), feature.second);
    features = host.getString();
  }
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_,
      std::nullopt,
      options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                            : llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return fail("cannot create a target machine for CPU '" + cpu + "'");
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpu))
    return fail("'" + cpu + "' is not a CPU this LLVM knows (see llc "
                "-mcpu=help)");
  return machine;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
tessera::cpu::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                                llvm::TargetMachine &machine) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  llvmModule->setTargetTriple(machine.getTargetTriple());
  llvmModule->setDataLayout(machine.createDataLayout());
  return llvmModule;
}

llvm::Error tessera::cpu::optimizeModule(llvm::Module &module,
                                         llvm::TargetMachine &machine,
                                         const CodegenOptions &options) {
  auto optimize = makeOptimizingTransformer(options.optLevel,
                                            /*sizeLevel=*/0, &machine);
  return optimize(&module);
}

/// Appends the bytes of `c`, an array (of arrays) of numbers, to `out`;
/// false for any other constant.
static bool appendRawBytes(llvm::Constant *c, std::string &out) {
  if (auto *data = llvm::dyn_cast<llvm::ConstantDataSequential>(c)) {
    out += data->getRawDataValues();
    return true;
  }
  if (auto *array = llvm::dyn_cast<llvm::ConstantArray>(c)) {
    for (llvm::Value *element : array->operands())
      if (!appendRawBytes(llvm::cast<llvm::Constant>(element), out))
        return false;
    return true;
  }
  return false;
}

/// The value of `global`, a constant array of 4 KiB or more (a model's
/// weights) whose bytes are its whole layout (no padded elements), as an i8
/// array of its context (which the object writer emits as a block of bytes,
/// not element by element); null for any other global.
static llvm::Constant *asBytes(llvm::GlobalVariable &global) {
  if (!global.hasInitializer() || !global.isConstant() ||
      !global.getValueType()->isArrayTy())
    return nullptr;
  llvm::Constant *value = global.getInitializer();
  uint64_t size =
      global.getParent()->getDataLayout().getTypeAllocSize(value->getType());
  if (size < 4096)
    return nullptr;
  std::string copied;
  llvm::StringRef bytes;
  if (auto *data = llvm::dyn_cast<llvm::ConstantDataSequential>(value))
    bytes = data->getRawDataValues();
  else if (appendRawBytes(value, copied))
    bytes = copied;
  if (bytes.size() != size)
    return nullptr;
  return llvm::ConstantDataArray::getRaw(
      bytes, bytes.size(), llvm::Type::getInt8Ty(value->getContext()));
}

void tessera::cpu::weightsAsBytes(llvm::Module &module) {
  llvm::SmallVector<std::pair<llvm::GlobalVariable *, llvm::Constant *>>
      weights;
  for (llvm::GlobalVariable &global : module.globals())
    if (global.getValueType()->isArrayTy() &&
        !global.getValueType()->getArrayElementType()->isIntegerTy(8))
      if (llvm::Constant *bytes = asBytes(global))
        weights.push_back({&global, bytes});
  for (auto &[global, raw] : weights) {
    auto *replacement = new llvm::GlobalVariable(
        module, raw->getType(), /*isConstant=*/true, global->getLinkage(),
        raw, "", global, global->getThreadLocalMode(),
        global->getAddressSpace());
    replacement->setAlignment(global->getAlign());
    replacement->setUnnamedAddr(global->getUnnamedAddr());
    replacement->takeName(global);
    global->replaceAllUsesWith(replacement);
    global->eraseFromParent();
  }
}

/// Writes `module` as an object file or assembly to `os`.
static llvm::Error emitTo(llvm::Module &module, llvm::TargetMachine &machine,
                          llvm::raw_pwrite_stream &os, bool assembly) {
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  assembly ? llvm::CodeGenFileType::AssemblyFile
                                           : llvm::CodeGenFileType::ObjectFile))
    return fail("this target cannot emit that file type");
  pm.run(module);
  return llvm::Error::success();
}

llvm::Error tessera::cpu::emitCode(llvm::Module &module,
                                   llvm::TargetMachine &machine,
                                   llvm::StringRef path, bool assembly) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec,
                           assembly ? llvm::sys::fs::OF_Text
                                    : llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message());
  if (llvm::Error error = emitTo(module, machine, out.os(), assembly))
    return error;
  out.keep();
  return llvm::Error::success();
}

/// Writes `module` as the object `path`, a temporary file its caller
/// removes. Unlike emitCode it registers no signal handler
/// (ToolOutputFile's removal on a signal): on a worker thread, LLVM's first
/// registration replaces that thread's alternate signal stack with one of
/// its own, which AddressSanitizer then fails to unmap when the thread
/// ends (a program that embeds the compiler registers none before).
static llvm::Error emitObject(llvm::Module &module,
                              llvm::TargetMachine &machine,
                              llvm::StringRef path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message());
  return emitTo(module, machine, os, /*assembly=*/false);
}

namespace {
/// A weight moved out of the module it was in: its name, bytes (an i8
/// array of the module's context, which keeps its constants until it goes)
/// and alignment.
struct Weight {
  std::string name;
  llvm::Constant *value;
  llvm::Align align;
};

/// Temporary object files, removed when this goes.
struct TemporaryObjects {
  llvm::SmallVector<std::string> paths;
  ~TemporaryObjects() {
    for (const std::string &path : paths)
      llvm::sys::fs::remove(path);
  }
  llvm::Error add() {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("tessera-model", "o", path))
      return llvm::errorCodeToError(ec);
    paths.push_back(std::string(path));
    return llvm::Error::success();
  }
};
} // namespace

/// Moves the weights out of `module`: each becomes a declaration (hidden,
/// so that the shared library does not export it) of a global that
/// `emitWeights` defines with the same value.
static std::vector<Weight> takeWeights(llvm::Module &module) {
  std::vector<Weight> weights;
  const llvm::DataLayout &layout = module.getDataLayout();
  for (llvm::GlobalVariable &global : module.globals()) {
    // Unused ones stay, for the optimizer to drop; so do the ones whose
    // placement says more than an address (a comdat, a section, a
    // thread's own copy, another address space).
    if (global.use_empty() || global.hasComdat() || global.hasSection() ||
        global.isThreadLocal() || global.getAddressSpace() != 0)
      continue;
    llvm::Constant *bytes = asBytes(global);
    if (!bytes)
      continue;
    if (!global.hasName())
      global.setName("tessera_weight");
    weights.push_back(
        {global.getName().str(), bytes, layout.getPreferredAlign(&global)});
    global.setAlignment(weights.back().align);
    global.setInitializer(nullptr);
    global.setLinkage(llvm::GlobalValue::ExternalLinkage);
    global.setVisibility(llvm::GlobalValue::HiddenVisibility);
    global.setDSOLocal(true);
  }
  return weights;
}

/// `module` split into `count` partitions of its functions (round robin by
/// size), each as bitcode. The split makes every local symbol external
/// (and hidden) so that partitions can reference each other's; those that
/// no other partition references are local again, so that the optimizer
/// still inlines, specializes and drops them as it would have.
static std::vector<std::string> splitIntoBitcode(llvm::Module &module,
                                                 unsigned count) {
  llvm::StringSet<> local;
  for (llvm::GlobalValue &value : module.global_values())
    if (value.hasLocalLinkage() && value.hasName())
      local.insert(value.getName());
  std::vector<std::unique_ptr<llvm::Module>> parts;
  llvm::SplitModule(
      module, count,
      [&](std::unique_ptr<llvm::Module> part) {
        parts.push_back(std::move(part));
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  llvm::StringSet<> shared;
  for (const std::unique_ptr<llvm::Module> &part : parts)
    for (llvm::GlobalValue &value : part->global_values())
      if (value.isDeclaration() && !value.use_empty() &&
          local.contains(value.getName()))
        shared.insert(value.getName());
  std::vector<std::string> bitcode;
  for (std::unique_ptr<llvm::Module> &part : parts) {
    for (llvm::GlobalValue &value : part->global_values())
      if (!value.isDeclaration() && local.contains(value.getName()) &&
          !shared.contains(value.getName())) {
        value.setVisibility(llvm::GlobalValue::DefaultVisibility);
        value.setLinkage(llvm::GlobalValue::InternalLinkage);
      }
    llvm::raw_string_ostream os(bitcode.emplace_back());
    llvm::WriteBitcodeToFile(*part, os);
    part.reset();
  }
  return bitcode;
}

/// Writes the weights into the object `path`, as a module of the context
/// their bytes are in (not copied; nothing else may use that context
/// meanwhile).
static llvm::Error emitWeights(const std::vector<Weight> &weights,
                               const CodegenOptions &options,
                               const llvm::Triple &triple,
                               llvm::StringRef path) {
  llvm::Module module("tessera_weights", weights.front().value->getContext());
  auto machine = tessera::cpu::createTargetMachine(options);
  if (!machine)
    return machine.takeError();
  module.setTargetTriple(triple);
  module.setDataLayout((*machine)->createDataLayout());
  for (const Weight &weight : weights) {
    auto *global = new llvm::GlobalVariable(
        module, weight.value->getType(), /*isConstant=*/true,
        llvm::GlobalValue::ExternalLinkage, weight.value, weight.name);
    global->setAlignment(weight.align);
    global->setVisibility(llvm::GlobalValue::HiddenVisibility);
    global->setDSOLocal(true);
  }
  return emitObject(module, **machine, path);
}

/// Optimizes `module` and writes it as the object `path`.
static llvm::Error compilePartition(llvm::Module &module,
                                    const CodegenOptions &options,
                                    llvm::StringRef path) {
  auto machine = tessera::cpu::createTargetMachine(options);
  if (!machine)
    return machine.takeError();
  if (llvm::Error error =
          tessera::cpu::optimizeModule(module, **machine, options))
    return error;
  return emitObject(module, **machine, path);
}

/// How many partitions writeSharedLibrary splits `module` into.
static unsigned partitionCount(const llvm::Module &module,
                               const CodegenOptions &options) {
  size_t instructions = 0;
  unsigned functions = 0;
  for (const llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    instructions += function.getInstructionCount();
    ++functions;
  }
  unsigned most = std::max(functions, 1u);
  if (options.partitions)
    return std::clamp<unsigned>(options.partitions, 1, most);
  size_t count = instructions / tessera::cpu::kInstructionsPerPartition;
  return std::clamp<size_t>(
      count, 1, std::min<size_t>(tessera::cpu::kMaxPartitions, most));
}

llvm::Expected<tessera::cpu::ParallelCodegen> tessera::cpu::writeSharedLibrary(
    std::unique_ptr<llvm::Module> module, const CodegenOptions &options,
    llvm::StringRef path, llvm::StringRef support, bool openmp, bool lld,
    llvm::ArrayRef<ModuleWeight> moduleWeights) {
  std::vector<Weight> weights = takeWeights(*module);
  llvm::Triple triple = module->getTargetTriple();
  ParallelCodegen plan;
  plan.partitions = partitionCount(*module, options);

  // LLVM contexts are not shared between threads: each partition but a
  // lone one travels to its thread as bitcode.
  std::vector<std::string> bitcode;
  if (plan.partitions > 1) {
    bitcode = splitIntoBitcode(*module, plan.partitions);
    module.reset();
  }

  TemporaryObjects objects;
  // Jobs: the partitions, then the weights left in the module (in its
  // context), then those taken out before translation.
  unsigned weightsJob = plan.partitions + (weights.empty() ? 0 : 1);
  unsigned jobs = weightsJob + (moduleWeights.empty() ? 0 : 1);
  for (unsigned i = 0; i < jobs; ++i)
    if (llvm::Error error = objects.add())
      return std::move(error);
  auto compile = [&](unsigned job) -> llvm::Error {
    if (job == weightsJob)
      return tessera::cpu::writeWeightsObject(moduleWeights,
                                              objects.paths[job]);
    if (job == plan.partitions)
      return emitWeights(weights, options, triple, objects.paths[job]);
    if (module)
      return compilePartition(*module, options, objects.paths[job]);
    llvm::LLVMContext context;
    auto part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(bitcode[job], "partition"), context);
    if (!part)
      return part.takeError();
    return compilePartition(**part, options, objects.paths[job]);
  };
  std::vector<std::string> errors(jobs);
  auto run = [&](unsigned job) {
    if (llvm::Error error = compile(job))
      errors[job] = llvm::toString(std::move(error));
  };
  // The weights are written from the module's own context: beside a lone
  // partition compiled in that context, first and on this thread.
  SmallVector<unsigned> pending;
  for (unsigned job = 0; job < jobs; ++job) {
    if (module && job == plan.partitions && !weights.empty())
      run(job);
    else
      pending.push_back(job);
  }
  unsigned cores =
      llvm::heavyweight_hardware_concurrency().compute_thread_count();
  unsigned threads = std::min<unsigned>(pending.size(), cores);
  // (Writing the weights' object is no compiling.)
  plan.threads = std::min<unsigned>(
      pending.size() - (moduleWeights.empty() ? 0 : 1), cores);
  if (threads <= 1) {
    for (unsigned job : pending)
      run(job);
  } else {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
    for (unsigned job : pending)
      pool.async(run, job);
    pool.wait();
  }
  for (const std::string &error : errors)
    if (!error.empty())
      return fail(error);
  // What the objects hold is no longer needed while they link.
  module.reset();
  bitcode = {};
  weights = {};
  // The support archives are C++: the artifact names the C++ runtime it
  // uses rather than relying on the process to have it.
  if (llvm::Error error = linkSharedLibrary(objects.paths, path, support,
                                            openmp, /*cxxRuntime=*/true, lld))
    return std::move(error);
  return plan;
}

std::string tessera::cpu::installedLibrary(llvm::StringRef fileName) {
  auto besides = [&](llvm::StringRef file) {
    llvm::SmallString<256> path(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(file)));
    llvm::sys::path::append(path, "lib", fileName);
    return std::string(path);
  };
  std::string fromExecutable = besides(llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&installedLibrary)));
  if (llvm::sys::fs::exists(fromExecutable))
    return fromExecutable;
  // Beside the shared library this code is in (a program installed
  // elsewhere, such as Python, loaded the compiler library).
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&installedLibrary), &info) &&
      info.dli_fname) {
    llvm::SmallString<256> library;
    if (!llvm::sys::fs::real_path(info.dli_fname, library)) {
      std::string fromLibrary = besides(library);
      if (llvm::sys::fs::exists(fromLibrary))
        return fromLibrary;
    }
  }
  return fromExecutable;
}

llvm::Error tessera::cpu::linkSharedLibrary(llvm::ArrayRef<std::string> objects,
                                            llvm::StringRef output,
                                            llvm::StringRef support,
                                            bool openmp, bool cxxRuntime,
                                            bool lld) {
  auto clang = llvm::sys::findProgramByName("clang-22");
  if (!clang)
    clang = llvm::sys::findProgramByName("clang");
  if (!clang)
    return fail("cannot find clang-22 to link the shared library");
  // The support archive's symbols stay private to the artifact.
  std::string libDir = std::string("-L") + kOpenMPLibraryDir;
  std::string rpath = std::string("-Wl,-rpath,") + kOpenMPLibraryDir;
  llvm::SmallVector<llvm::StringRef> args = {*clang, "-shared", "-o", output};
  for (const std::string &object : objects)
    args.push_back(object);
  args.append({support, "-Wl,--exclude-libs,ALL"});
  // LLVM's linker when it is there: a model's weights make objects of
  // hundreds of MB, which it links about 3x faster than the system's.
  std::string ldPath;
  if (lld) {
    auto linker = llvm::sys::findProgramByName("ld.lld-22");
    if (!linker)
      linker = llvm::sys::findProgramByName("ld.lld");
    if (linker) {
      ldPath = "--ld-path=" + *linker;
      args.push_back(ldPath);
    }
  }
  if (openmp)
    args.append({libDir, rpath, "-lomp"});
  if (cxxRuntime)
    args.push_back("-lstdc++");
  args.push_back("-lm");
  // The linker's own messages go into the error, not to this process's
  // stdout or stderr (a program that embeds the compiler owns those).
  llvm::SmallString<128> log;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tessera-link", "log", log))
    return fail("cannot create a file for the linker's messages: " +
                ec.message());
  llvm::FileRemover removeLog(log);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""),
                                                llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(*clang, args, std::nullopt,
                                         redirects, 0, 0, &error);
  if (status != 0) {
    std::string messages;
    if (auto text = llvm::MemoryBuffer::getFile(log, /*IsText=*/true))
      messages = llvm::StringRef((*text)->getBuffer()).trim().str();
    return fail("linking '" + output + "' failed" +
                (error.empty() ? "" : ": " + error) +
                (messages.empty() ? "" : ":\n" + messages));
  }
  return llvm::Error::success();
}
