//===- RegisterLoaders.cpp - every backend's artifact loaders -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The runtime side of tessera/Target/Targets.def: no MLIR, linked into the
// C API and the tools.
//
//===----------------------------------------------------------------------===//
#include "tessera/Runtime/Executable.h"

#define TESSERA_TARGET(ns)                                                     \
  namespace tessera::ns {                                                      \
  void registerLoaders();                                                      \
  }
#include "tessera/Target/Targets.def"

void tessera::runtime::registerAllExecutableLoaders() {
  static bool registered = [] {
#define TESSERA_TARGET(ns) ::tessera::ns::registerLoaders();
#include "tessera/Target/Targets.def"
    return true;
  }();
  (void)registered;
}
