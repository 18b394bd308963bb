//===- ProgramTypes.cpp - Properties of PTX types and opcodes -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/Emulator/PTXProgram.h"
#include "llvm/ADT/StringSwitch.h"

using namespace tessera::ptx;
using llvm::StringRef;

unsigned tessera::ptx::byteSize(Ty t) {
  switch (t) {
  case Ty::None:
    return 0;
  case Ty::Pred:
  case Ty::B8:
  case Ty::U8:
  case Ty::S8:
  case Ty::E4M3:
  case Ty::E5M2:
    return 1;
  case Ty::B16:
  case Ty::U16:
  case Ty::S16:
  case Ty::F16:
  case Ty::BF16:
  case Ty::E4M3x2:
  case Ty::E5M2x2:
    return 2;
  case Ty::B32:
  case Ty::U32:
  case Ty::S32:
  case Ty::F32:
  case Ty::TF32:
  case Ty::F16x2:
  case Ty::BF16x2:
    return 4;
  case Ty::B64:
  case Ty::U64:
  case Ty::S64:
  case Ty::F64:
    return 8;
  }
  return 0;
}

bool tessera::ptx::isFloat(Ty t) {
  switch (t) {
  case Ty::F16:
  case Ty::F16x2:
  case Ty::BF16:
  case Ty::BF16x2:
  case Ty::TF32:
  case Ty::F32:
  case Ty::F64:
  case Ty::E4M3x2:
  case Ty::E5M2x2:
  case Ty::E4M3:
  case Ty::E5M2:
    return true;
  default:
    return false;
  }
}

bool tessera::ptx::isSigned(Ty t) {
  return t == Ty::S8 || t == Ty::S16 || t == Ty::S32 || t == Ty::S64;
}

Ty tessera::ptx::parseTypeName(StringRef s) {
  return llvm::StringSwitch<Ty>(s)
      .Case("pred", Ty::Pred)
      .Case("b8", Ty::B8)
      .Case("b16", Ty::B16)
      .Case("b32", Ty::B32)
      .Case("b64", Ty::B64)
      .Case("u8", Ty::U8)
      .Case("u16", Ty::U16)
      .Case("u32", Ty::U32)
      .Case("u64", Ty::U64)
      .Case("s8", Ty::S8)
      .Case("s16", Ty::S16)
      .Case("s32", Ty::S32)
      .Case("s64", Ty::S64)
      .Case("f16", Ty::F16)
      .Case("f16x2", Ty::F16x2)
      .Case("bf16", Ty::BF16)
      .Case("bf16x2", Ty::BF16x2)
      .Case("tf32", Ty::TF32)
      .Case("f32", Ty::F32)
      .Case("f64", Ty::F64)
      .Case("e4m3x2", Ty::E4M3x2)
      .Case("e5m2x2", Ty::E5M2x2)
      .Case("e4m3", Ty::E4M3)
      .Case("e5m2", Ty::E5M2)
      .Default(Ty::None);
}

const char *tessera::ptx::opName(Op op) {
  static const char *names[] = {"add",
                                "sub",
                                "mul",
                                "mad",
                                "fma",
                                "div",
                                "rem",
                                "abs",
                                "neg",
                                "min",
                                "max",
                                "copysign",
                                "and",
                                "or",
                                "xor",
                                "not",
                                "shl",
                                "shr",
                                "shf",
                                "bfe",
                                "bfi",
                                "prmt",
                                "popc",
                                "clz",
                                "brev",
                                "lop3",
                                "rcp",
                                "sqrt",
                                "rsqrt",
                                "ex2",
                                "lg2",
                                "sin",
                                "cos",
                                "tanh",
                                "setp",
                                "selp",
                                "mov",
                                "cvt",
                                "cvta",
                                "ld",
                                "st",
                                "atom",
                                "red",
                                "bra",
                                "ret",
                                "exit",
                                "bar.sync",
                                "bar.warp.sync",
                                "membar",
                                "shfl",
                                "vote",
                                "activemask",
                                "ldmatrix",
                                "mma",
                                "cp.async",
                                "cp.async.commit_group",
                                "cp.async.wait_group",
                                "cp.async.wait_all",
                                "mbarrier.init",
                                "mbarrier.arrive",
                                "mbarrier.expect_tx",
                                "mbarrier.test_wait",
                                "mbarrier.inval",
                                "cp.async.bulk",
                                "cp.async.bulk.tensor",
                                "prefetch",
                                "wgmma.mma_async",
                                "wgmma.fence",
                                "wgmma.commit_group",
                                "wgmma.wait_group"};
  return names[unsigned(op)];
}
