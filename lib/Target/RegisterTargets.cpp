//===- RegisterTargets.cpp - every backend in the target registry ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Target.h"

#define TESSERA_TARGET(ns)                                                     \
  namespace tessera::ns {                                                      \
  void registerTarget();                                                       \
  }
#include "tessera/Target/Targets.def"

void tessera::registerAllTargets() {
  static bool registered = [] {
#define TESSERA_TARGET(ns) ns::registerTarget();
#include "tessera/Target/Targets.def"
    return true;
  }();
  (void)registered;
}
