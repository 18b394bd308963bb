//===- TargetInfo.cpp - the registry of backends' fusion capabilities -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Transforms/TargetInfo.h"

#include "llvm/ADT/StringMap.h"

#include <mutex>

namespace {
struct Registry {
  std::mutex mutex;
  llvm::StringMap<std::function<std::unique_ptr<tessera::TargetInfo>()>>
      targets;
};
Registry &registry() {
  static Registry *instance = new Registry;
  return *instance;
}
} // namespace

void tessera::registerTargetInfo(
    llvm::StringRef name, std::function<std::unique_ptr<TargetInfo>()> create) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().targets[name] = std::move(create);
}

std::unique_ptr<tessera::TargetInfo>
tessera::lookupTargetInfo(llvm::StringRef name) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  auto it = registry().targets.find(name);
  return it == registry().targets.end() ? nullptr : it->second();
}
