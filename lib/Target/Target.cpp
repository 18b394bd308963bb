//===- Target.cpp - the registry of backends ------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Target.h"

#include <mutex>

using namespace tessera;

TargetCompilation::~TargetCompilation() = default;
Target::~Target() = default;

namespace {
struct TargetRegistry {
  std::mutex mutex;
  std::vector<std::unique_ptr<Target>> targets;
};
TargetRegistry &registry() {
  static TargetRegistry instance;
  return instance;
}
} // namespace

void tessera::registerTarget(std::unique_ptr<Target> target) {
  TargetRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto &existing : r.targets)
    if (existing->name() == target->name()) {
      existing = std::move(target);
      return;
    }
  r.targets.push_back(std::move(target));
}

const Target *tessera::lookupTarget(llvm::StringRef name) {
  for (const Target *target : registeredTargets())
    if (target->name() == name)
      return target;
  return nullptr;
}

std::vector<const Target *> tessera::registeredTargets() {
  TargetRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const Target *> all;
  for (auto &target : r.targets)
    all.push_back(target.get());
  return all;
}

std::string Target::optionValue(const TargetOptionValues &values,
                                llvm::StringRef name) const {
  if (auto it = values.find(name.str()); it != values.end())
    return it->second;
  for (const TargetOption &option : options())
    if (option.name == name)
      return option.defaultValue;
  return "";
}

llvm::StringRef tessera::defaultTargetName() {
  std::vector<const Target *> targets = registeredTargets();
  return targets.empty() ? llvm::StringRef() : targets.front()->name();
}

std::string tessera::targetNames() {
  std::string names;
  for (const Target *target : registeredTargets())
    names += (names.empty() ? "" : "|") + target->name().str();
  return names;
}
