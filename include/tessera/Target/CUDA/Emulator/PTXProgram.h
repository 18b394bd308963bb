//===- PTXProgram.h - Decoded PTX kernels for the emulator ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The parser turns PTX text into these structures once; the executor then
// runs them without looking at strings again. Every opcode and modifier the
// emulator accepts has a field here, so anything unlisted is rejected by the
// decoder with its line number instead of being guessed at.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CUDA_EMULATOR_PTXPROGRAM_H
#define TESSERA_TARGET_CUDA_EMULATOR_PTXPROGRAM_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::ptx {

enum class Op : uint8_t {
  // Integer and floating-point arithmetic.
  Add,
  Sub,
  Mul,
  Mad,
  Fma,
  Div,
  Rem,
  Abs,
  Neg,
  Min,
  Max,
  Copysign,
  // Bit manipulation.
  And,
  Or,
  Xor,
  Not,
  Shl,
  Shr,
  Shf,
  Bfe,
  Bfi,
  Prmt,
  Popc,
  Clz,
  Brev,
  Lop3,
  // Transcendentals and friends.
  Rcp,
  Sqrt,
  Rsqrt,
  Ex2,
  Lg2,
  Sin,
  Cos,
  Tanh,
  // Comparison, selection, data movement.
  Setp,
  Selp,
  Mov,
  Cvt,
  Cvta,
  Ld,
  St,
  Atom,
  Red,
  // Control flow.
  Bra,
  Ret,
  Exit,
  // Synchronisation and warp collectives.
  BarSync,
  BarWarpSync,
  Membar,
  Shfl,
  Vote,
  Activemask,
  Ldmatrix,
  Mma,
  // Asynchronous copies.
  CpAsync,
  CpAsyncCommit,
  CpAsyncWait,
  CpAsyncWaitAll,
  // sm_90 asynchronous barriers and bulk copies.
  MbarInit,
  MbarArrive,
  MbarExpectTx,
  MbarTestWait,
  MbarInval,
  CpAsyncBulk,
  CpAsyncBulkTensor, ///< TMA: a box of a tensor map into shared memory.
  Prefetch,          ///< prefetch.tensormap: no effect.
  // sm_90a warpgroup MMA.
  Wgmma,
  WgmmaFence,
  WgmmaCommit,
  WgmmaWait,
};

/// The scalar types PTX names in opcodes. Registers are typeless 64-bit
/// slots; the type says how an instruction reads and writes their bits.
enum class Ty : uint8_t {
  None,
  Pred,
  B8,
  B16,
  B32,
  B64,
  U8,
  U16,
  U32,
  U64,
  S8,
  S16,
  S32,
  S64,
  F16,
  F16x2,
  BF16,
  BF16x2,
  TF32,
  F32,
  F64,
  E4M3x2,
  E5M2x2,
  /// One fp8 element: wgmma's operand types only.
  E4M3,
  E5M2,
};

enum class Rnd : uint8_t { None, RN, RZ, RM, RP, RNA, RNI, RZI, RMI, RPI };
enum class Space : uint8_t { Generic, Global, Shared, Param, Local, Const };
enum class Cmp : uint8_t {
  None,
  EQ,
  NE,
  LT,
  LE,
  GT,
  GE,
  LO,
  LS,
  HI,
  HS,
  EQU,
  NEU,
  LTU,
  LEU,
  GTU,
  GEU,
  NUM,
  NAN_,
};
enum class BoolOp : uint8_t { None, And, Or, Xor };
enum class ShflMode : uint8_t { None, Up, Down, Bfly, Idx };
enum class VoteMode : uint8_t { None, All, Any, Uni, Ballot };
enum class AtomOp : uint8_t {
  None,
  Add,
  Min,
  Max,
  Inc,
  Dec,
  And,
  Or,
  Xor,
  Exch,
  Cas,
};

/// Single-bit modifiers; which ones an opcode may carry is checked by the
/// decoder (InstructionDecoder.cpp).
enum Flag : uint32_t {
  FTZ = 1u << 0,
  SAT = 1u << 1,
  APPROX = 1u << 2,
  FULL = 1u << 3,
  SATFINITE = 1u << 4,
  RELU = 1u << 5,
  NANMOD = 1u << 6,
  WIDE = 1u << 7,
  LO = 1u << 8,
  HI = 1u << 9,
  TRANS = 1u << 10,
  TO = 1u << 11,
  SHF_LEFT = 1u << 12,
  SHF_CLAMP = 1u << 13,
  UNI = 1u << 14,
  SYNC = 1u << 15,
  ALIGNED = 1u << 16,
  CACHE_HINT = 1u << 17,
  ROW_A = 1u << 18,
  COL_B = 1u << 19,
  PARITY = 1u << 20,
  EXPECT_TX = 1u << 21,
  COMPLETE_TX = 1u << 22,
  TENSORMAP = 1u << 23, ///< prefetch.tensormap
};

/// Special registers readable with mov.
enum class Special : uint8_t {
  TidX,
  TidY,
  TidZ,
  NtidX,
  NtidY,
  NtidZ,
  CtaidX,
  CtaidY,
  CtaidZ,
  NctaidX,
  NctaidY,
  NctaidZ,
  LaneId,
  WarpId,
};

struct Operand {
  enum Kind : uint8_t { Reg, Imm, Vec, Addr, Label, Special, PredPair, Sink };
  enum ImmKind : uint8_t { IntLit, F32Bits, F64Bits, FloatLit };
  Kind kind = Imm;
  ImmKind immKind = IntLit; ///< How the literal was written (0f, 0d, 1.5).
  bool negate = false;      ///< `!%p` as a predicate source.
  uint32_t reg = 0;  ///< Reg, PredPair (first), Addr base when baseIsReg.
  uint32_t reg2 = 0; ///< PredPair's second register.
  uint64_t imm = 0;  ///< Imm bits, Addr offset, Label target index.
  bool baseIsReg = false;
  tessera::ptx::Special special = tessera::ptx::Special::TidX;
  /// Vec elements; a negative entry -1-k means immediate k of vecImm. An
  /// Addr with elements is a tensor map and its coordinates,
  /// `[tmap, {c0, c1}]`.
  llvm::SmallVector<int32_t, 4> elems;
  llvm::SmallVector<uint64_t, 1> vecImm;
  llvm::SmallVector<ImmKind, 1> vecImmKind;
};

struct Instruction {
  Op op = Op::Mov;
  Ty type = Ty::None;    ///< The (destination) type.
  Ty srcType = Ty::None; ///< cvt source, mma A/B element type.
  Ty cType = Ty::None;   ///< mma C type.
  Rnd rnd = Rnd::None;
  Cmp cmp = Cmp::None;
  BoolOp boolOp = BoolOp::None;
  Space space = Space::Generic;
  Space space2 = Space::Generic; ///< cvta's other side, cp.async source.
  ShflMode shfl = ShflMode::None;
  VoteMode vote = VoteMode::None;
  AtomOp atom = AtomOp::None;
  uint8_t vec = 1; ///< ld/st .v2/.v4; ldmatrix .x1/.x2/.x4; tensor rank.
  uint16_t m = 0, n = 0, k = 0; ///< mma/ldmatrix/wgmma shape.
  uint32_t flags = 0;
  int32_t guard = -1; ///< Predicate register, or -1.
  bool guardNegated = false;
  llvm::SmallVector<Operand, 4> ops;
  unsigned line = 0;
  std::string opcode; ///< The opcode as written, for messages.
  bool has(uint32_t f) const { return (flags & f) != 0; }
};

struct ParamInfo {
  std::string name;
  unsigned size = 0, align = 1, offset = 0;
};

struct Kernel {
  std::string name;
  std::string source; ///< Buffer (file) name it was parsed from, for messages.
  std::vector<ParamInfo> params;
  unsigned paramBytes = 0;
  unsigned staticSharedBytes = 0; ///< Dynamic shared memory starts here.
  unsigned dynamicSharedAlign = 16;
  unsigned localBytes = 0; ///< Per-thread .local frame.
  unsigned numRegs = 0;
  unsigned maxNtid[3] = {0, 0, 0}; ///< .maxntid/.reqntid if given.
  std::vector<Instruction> body;
  std::vector<std::string> regNames; ///< For diagnostics.
  std::vector<Ty> regTypes;          ///< As declared by .reg.
};

struct Module {
  unsigned version = 0; ///< .version major*10+minor.
  std::string target;
  std::vector<Kernel> kernels;
  const Kernel *findKernel(llvm::StringRef name) const {
    for (const Kernel &k : kernels)
      if (k.name == name)
        return &k;
    return nullptr;
  }
};

/// Size in bytes of a value of \p t (0 for Ty::None, 1 for .pred).
unsigned byteSize(Ty t);
bool isFloat(Ty t);
bool isSigned(Ty t);
const char *opName(Op op);
/// Maps a type modifier without its dot ("u32", "f16x2") to a Ty, or
/// Ty::None.
Ty parseTypeName(llvm::StringRef s);

} // namespace tessera::ptx

#endif // TESSERA_TARGET_CUDA_EMULATOR_PTXPROGRAM_H
