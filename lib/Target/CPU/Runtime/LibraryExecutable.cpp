//===- LibraryExecutable.cpp - a CPU artifact (.so) as an Executable ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/LibraryExecutable.h"

#include <dlfcn.h>

using namespace tessera::runtime;
using tessera::cpu::LibraryExecutable;

llvm::Expected<std::unique_ptr<LibraryExecutable>>
LibraryExecutable::load(llvm::StringRef path) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot load '" + path + "': " + why);
  };
  std::string file = path.str();
  // dlopen searches the library path for bare names; artifacts are files.
  if (file.find('/') == std::string::npos)
    file = "./" + file;
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail(dlerror());
  auto getSignature = reinterpret_cast<const char *(*)()>(
      dlsym(handle, "tessera_model_signature"));
  auto entry =
      reinterpret_cast<PackedFunction>(dlsym(handle, "tessera_model_run"));
  auto release = reinterpret_cast<FreeFunction>(
      dlsym(handle, "tessera_model_free_buffer"));
  auto failures = reinterpret_cast<AllocationFailuresFunction>(
      dlsym(handle, "tessera_model_allocation_failures"));
  if (!getSignature || !entry || !release) {
    dlclose(handle);
    return fail("not a Tessera CPU artifact (no tessera_model_signature, "
                "tessera_model_run or tessera_model_free_buffer)");
  }
  auto sig = signatureFromJSON(getSignature());
  if (!sig) {
    dlclose(handle);
    return fail(llvm::toString(sig.takeError()));
  }
  return std::unique_ptr<LibraryExecutable>(
      new LibraryExecutable(std::shared_ptr<void>(handle, [](void *h) { dlclose(h); }),
                   entry, release, failures, std::move(*sig)));
}

void tessera::cpu::registerLoaders() {
  registerExecutableLoader(
      {"cpu-library",
       ".so",
       "a shared library for this CPU (tessera-compile -o model.so)",
       {},
       [](llvm::StringRef path, const LoadOptions &)
           -> llvm::Expected<std::unique_ptr<Executable>> {
         auto loaded = LibraryExecutable::load(path);
         if (!loaded)
           return loaded.takeError();
         return std::unique_ptr<Executable>(std::move(*loaded));
       }});
}
