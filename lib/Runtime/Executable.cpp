//===- Executable.cpp - the registry of artifact loaders ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/Executable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

#include <mutex>

using namespace tessera::runtime;

Executable::~Executable() = default;

char OutputTooSmall::ID = 0;

static llvm::Error noDeviceMemory(const Executable &e) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "this model runs on the " + e.device() +
          ", which has no device memory: device tensors need a model that "
          "runs on a GPU (tessera-compile --target=cuda)");
}

llvm::Expected<uint64_t> Executable::allocateDevice(uint64_t) {
  return noDeviceMemory(*this);
}
llvm::Error Executable::copyToDevice(uint64_t, const void *, uint64_t) {
  return noDeviceMemory(*this);
}
llvm::Error Executable::copyToHost(void *, uint64_t, uint64_t) {
  return noDeviceMemory(*this);
}
llvm::Error Executable::runOnDevice(llvm::ArrayRef<DeviceTensor>,
                                    llvm::MutableArrayRef<DeviceTensor>,
                                    uint64_t) {
  return noDeviceMemory(*this);
}

namespace {
struct LoaderRegistry {
  std::mutex mutex;
  std::vector<std::unique_ptr<ExecutableLoader>> loaders;
};
LoaderRegistry &registry() {
  static LoaderRegistry instance;
  return instance;
}
} // namespace

void tessera::runtime::registerExecutableLoader(ExecutableLoader loader) {
  LoaderRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto &existing : r.loaders)
    if (existing->kind == loader.kind) {
      *existing = std::move(loader);
      return;
    }
  r.loaders.push_back(std::make_unique<ExecutableLoader>(std::move(loader)));
}

std::vector<const ExecutableLoader *> tessera::runtime::registeredLoaders() {
  LoaderRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const ExecutableLoader *> all;
  for (auto &loader : r.loaders)
    all.push_back(loader.get());
  return all;
}

const ExecutableLoader *
tessera::runtime::findLoaderForPath(llvm::StringRef path) {
  llvm::StringRef extension = llvm::sys::path::extension(path);
  if (extension.empty())
    return nullptr;
  // Loaders that recognize their files come first; then the first that
  // takes every file with the extension.
  const ExecutableLoader *fallback = nullptr;
  for (const ExecutableLoader *loader : registeredLoaders()) {
    if (extension != loader->extension)
      continue;
    if (!loader->accepts) {
      if (!fallback)
        fallback = loader;
      continue;
    }
    if (loader->accepts(path))
      return loader;
  }
  return fallback;
}

llvm::Expected<std::unique_ptr<Executable>>
tessera::runtime::loadExecutable(llvm::StringRef path,
                                 const LoadOptions &options) {
  if (const ExecutableLoader *loader = findLoaderForPath(path)) {
    for (const auto &option : options) {
      if (llvm::any_of(loader->options, [&](const LoaderOption &known) {
            return known.name == option.first;
          }))
        continue;
      std::string names;
      for (const LoaderOption &known : loader->options)
        names += (names.empty() ? "" : ", ") + known.name;
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "'" + option.first + "' is not an option of " + loader->kind +
              " artifacts (" +
              (names.empty() ? std::string("they take none")
                             : "they take " + names) +
              ")");
    }
    return loader->load(path, options);
  }
  std::string known;
  for (const ExecutableLoader *loader : registeredLoaders())
    known += (known.empty() ? "" : ", ") + loader->extension + " (" +
             loader->kind + ")";
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "cannot load '" + path + "': not an artifact Tessera can open (it opens " +
          (known.empty() ? std::string("none: no loader is registered")
                         : known) +
          ")");
}
