//===- OperandChecks.cpp - Operand counts, kinds and literal types --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs after an instruction's operands are parsed: checks their number and
// kinds for the opcode and re-encodes float literals (0f, 0d, 1.5) as the
// bits of the operand's type.
//
//===----------------------------------------------------------------------===//
#include "Decoder.h"
#include "tessera/Target/CUDA/Emulator/FloatFormats.h"

using namespace tessera::ptx;

namespace {
llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Re-encodes a literal for an operand of float type \p t.
uint64_t floatLiteral(const Operand &o, Ty t) {
  double d;
  switch (o.immKind) {
  case Operand::F32Bits: {
    float f;
    uint32_t b = o.imm;
    std::memcpy(&f, &b, 4);
    d = f;
    break;
  }
  case Operand::F64Bits:
    std::memcpy(&d, &o.imm, 8);
    break;
  case Operand::FloatLit:
    std::memcpy(&d, &o.imm, 8);
    break;
  case Operand::IntLit:
    d = double(int64_t(o.imm));
    break;
  }
  if (t == Ty::F64) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
  }
  float f = float(d);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

struct Arity {
  unsigned min, max;
};
Arity arity(const Instruction &i) {
  switch (i.op) {
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Div:
  case Op::Rem:
  case Op::Min:
  case Op::Max:
  case Op::Copysign:
  case Op::And:
  case Op::Or:
  case Op::Xor:
  case Op::Shl:
  case Op::Shr:
    return {3, 3};
  case Op::Mad:
  case Op::Fma:
  case Op::Bfe:
  case Op::Prmt:
    return {4, 4};
  case Op::Shf:
  case Op::Selp:
    return {4, 4};
  case Op::Bfi:
    return {5, 5};
  case Op::Lop3:
    return {5, 5};
  case Op::Abs:
  case Op::Neg:
  case Op::Not:
  case Op::Popc:
  case Op::Clz:
  case Op::Brev:
  case Op::Rcp:
  case Op::Sqrt:
  case Op::Rsqrt:
  case Op::Ex2:
  case Op::Lg2:
  case Op::Sin:
  case Op::Cos:
  case Op::Tanh:
  case Op::Mov:
  case Op::Cvta:
  case Op::Ld:
  case Op::St:
    return {2, 2};
  case Op::Cvt:
    return {2, 3};
  case Op::Setp:
    return {3, 4};
  case Op::Atom:
    return {3, 4};
  case Op::Red:
    return {2, 2};
  case Op::Bra:
    return {1, 1};
  case Op::MbarInit:
  case Op::MbarExpectTx:
    return {2, 2};
  case Op::MbarArrive:
    return {2, 3};
  case Op::MbarTestWait:
    return {3, 4};
  case Op::MbarInval:
    return {1, 1};
  case Op::CpAsyncBulk:
    return {4, 5};
  case Op::CpAsyncBulkTensor:
    return {3, 4};
  case Op::Prefetch:
    return {1, 1};
  case Op::Wgmma:
    // fp8 operands are K-major only: their form has no transpose operands.
    if (i.srcType == Ty::E4M3 || i.srcType == Ty::E5M2)
      return {6, 6};
    // Integer forms have neither scale nor transpose operands.
    if (i.srcType == Ty::S8)
      return {4, 4};
    return {8, 8};
  case Op::WgmmaFence:
  case Op::WgmmaCommit:
    return {0, 0};
  case Op::WgmmaWait:
    return {1, 1};
  case Op::Ret:
  case Op::Exit:
  case Op::CpAsyncCommit:
  case Op::CpAsyncWaitAll:
    return {0, 0};
  case Op::Membar:
    return {0, 2}; // fence.proxy.tensormap::generic.acquire [addr], 128
  case Op::BarSync:
    return {1, 2};
  case Op::BarWarpSync:
  case Op::CpAsyncWait:
  case Op::Activemask:
    return {1, 1};
  case Op::Shfl:
    return {5, 5};
  case Op::Vote:
    return {3, 3};
  case Op::Ldmatrix:
    return {2, 2};
  case Op::Mma:
    return {4, 4};
  case Op::CpAsync:
    return {3, 5};
  }
  return {0, 0};
}
} // namespace

llvm::Error tessera::ptx::checkOperands(Instruction &inst) {
  Arity a = arity(inst);
  if (inst.ops.size() < a.min || inst.ops.size() > a.max)
    return fail("'" + inst.opcode + "' takes " + llvm::Twine(a.min) +
                (a.min == a.max ? "" : ("-" + llvm::Twine(a.max)).str()) +
                " operands, got " + llvm::Twine(inst.ops.size()));
  if (inst.op == Op::CpAsyncBulkTensor &&
      (inst.ops.size() == 4) != inst.has(CACHE_HINT))
    return fail("'" + inst.opcode +
                "' takes a cache-policy operand exactly "
                "when it has .L2::cache_hint");
  bool memOp = inst.op == Op::Ld || inst.op == Op::St || inst.op == Op::Atom ||
               inst.op == Op::Red || inst.op == Op::Ldmatrix ||
               inst.op == Op::CpAsync || inst.op == Op::MbarArrive ||
               inst.op == Op::MbarTestWait;
  bool addrFirst = inst.op == Op::MbarInit || inst.op == Op::MbarExpectTx ||
                   inst.op == Op::MbarInval;
  for (size_t i = 0; i < inst.ops.size(); ++i) {
    Operand &o = inst.ops[i];
    bool wantAddr = memOp && ((inst.op == Op::St || inst.op == Op::Red) ? i == 0
                              : inst.op == Op::CpAsync                  ? i < 2
                                                       : i == 1);
    if (addrFirst)
      wantAddr = i == 0;
    if (inst.op == Op::CpAsyncBulk)
      wantAddr = i < 2 || i == 3;
    if (inst.op == Op::CpAsyncBulkTensor)
      wantAddr = i < 3;
    if (inst.op == Op::Prefetch || inst.op == Op::Membar)
      wantAddr = i == 0;
    if (o.kind == Operand::Addr && !o.elems.empty() &&
        !(inst.op == Op::CpAsyncBulkTensor && i == 1))
      return fail("operand " + llvm::Twine(i) + " of '" + inst.opcode +
                  "' cannot have tensor coordinates");
    if (inst.op == Op::CpAsyncBulkTensor && i == 1 &&
        o.elems.size() != inst.vec)
      return fail("'" + inst.opcode + "' needs [tensorMap, {" +
                  llvm::Twine(unsigned(inst.vec)) + " coordinates}]");
    if (wantAddr != (o.kind == Operand::Addr))
      return fail(
          "operand " + llvm::Twine(i) + " of '" + inst.opcode +
          (wantAddr ? "' must be an address" : "' cannot be an address"));
    if (inst.op == Op::Bra)
      continue;
    if (inst.op == Op::Wgmma && i >= 1)
      continue; // descriptors, predicate and immediate flags
    Ty t = inst.type;
    if (inst.op == Op::Cvt && i >= 1)
      t = inst.srcType;
    if (inst.op == Op::Setp && i == 3)
      t = Ty::Pred;
    if (inst.op == Op::Selp && i == 3)
      t = Ty::Pred;
    if (o.kind == Operand::Imm && (t == Ty::F32 || t == Ty::F64) &&
        !(inst.op == Op::Mov && o.immKind == Operand::IntLit))
      o.imm = floatLiteral(o, t);
    bool mmaAB = inst.op == Op::Mma && (i == 1 || i == 2);
    if (o.kind == Operand::Vec && (t == Ty::F32 || t == Ty::F64) && !mmaAB)
      for (size_t e = 0; e < o.vecImm.size(); ++e) {
        Operand tmp;
        tmp.imm = o.vecImm[e];
        tmp.immKind = o.vecImmKind[e];
        o.vecImm[e] = floatLiteral(tmp, t);
      }
  }
  if (inst.op != Op::St && inst.op != Op::Red && inst.op != Op::Bra &&
      inst.op != Op::BarSync && inst.op != Op::BarWarpSync &&
      inst.op != Op::CpAsync && inst.op != Op::CpAsyncWait && !addrFirst &&
      inst.op != Op::CpAsyncBulk && inst.op != Op::CpAsyncBulkTensor &&
      inst.op != Op::Prefetch && inst.op != Op::Membar &&
      inst.op != Op::WgmmaWait && !inst.ops.empty()) {
    Operand::Kind k = inst.ops[0].kind;
    if (k != Operand::Reg && k != Operand::Vec && k != Operand::PredPair &&
        k != Operand::Sink)
      return fail("the destination of '" + inst.opcode +
                  "' must be a register");
  }
  return llvm::Error::success();
}
