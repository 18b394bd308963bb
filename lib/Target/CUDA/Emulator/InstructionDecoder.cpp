//===- InstructionDecoder.cpp - Opcode strings to decoded instructions ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The allowlist of the emulator: each opcode names the modifier categories
// and flags it accepts, then a per-opcode check rejects type combinations
// the executor does not implement. Nothing is silently ignored except cache
// and memory-ordering hints, which do not change results in a sequentially
// consistent emulator.
//
//===----------------------------------------------------------------------===//
#include "Decoder.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include <cstring>

using namespace tessera::ptx;
using llvm::StringRef;

namespace {

enum Cat : uint32_t {
  C_TYPE = 1 << 0,
  C_RND = 1 << 1,
  C_CMP = 1 << 2,
  C_BOOL = 1 << 3,
  C_SPACE = 1 << 4,
  C_VEC = 1 << 5,
  C_HINT = 1 << 6,
  C_SHAPE = 1 << 7,
  C_X = 1 << 8,
  C_LAYOUT = 1 << 9,
  C_SHFL = 1 << 10,
  C_VOTE = 1 << 11,
  C_ATOM = 1 << 12,
  C_NUM = 1 << 13,
};

struct OpSpec {
  Op op;
  uint32_t cats;
  uint32_t flags;
  unsigned maxTypes;
};

constexpr uint32_t FLT = FTZ | SAT;

/// The decodable opcodes. Prefixes with dots ("cp.async") are matched
/// before single words; the remaining parts are modifiers.
struct Entry {
  const char *prefix;
  OpSpec spec;
};
const Entry kOps[] = {
    {"wgmma.mma_async", {Op::Wgmma, C_TYPE | C_SHAPE, SYNC | ALIGNED, 3}},
    {"wgmma.fence", {Op::WgmmaFence, 0, SYNC | ALIGNED, 0}},
    {"wgmma.commit_group", {Op::WgmmaCommit, 0, SYNC | ALIGNED, 0}},
    {"wgmma.wait_group", {Op::WgmmaWait, 0, SYNC | ALIGNED, 0}},
    {"cp.async.bulk.tensor",
     {Op::CpAsyncBulkTensor, C_SPACE | C_HINT, COMPLETE_TX, 0}},
    {"cp.async.bulk", {Op::CpAsyncBulk, C_SPACE | C_HINT, COMPLETE_TX, 0}},
    {"mbarrier.init", {Op::MbarInit, C_TYPE | C_SPACE | C_HINT, 0, 1}},
    {"mbarrier.arrive.expect_tx",
     {Op::MbarArrive, C_TYPE | C_SPACE | C_HINT, EXPECT_TX, 1}},
    {"mbarrier.arrive", {Op::MbarArrive, C_TYPE | C_SPACE | C_HINT, 0, 1}},
    {"mbarrier.expect_tx", {Op::MbarExpectTx, C_TYPE | C_SPACE | C_HINT, 0, 1}},
    {"mbarrier.try_wait",
     {Op::MbarTestWait, C_TYPE | C_SPACE | C_HINT, PARITY, 1}},
    {"mbarrier.test_wait",
     {Op::MbarTestWait, C_TYPE | C_SPACE | C_HINT, PARITY, 1}},
    {"mbarrier.inval", {Op::MbarInval, C_TYPE | C_SPACE | C_HINT, 0, 1}},
    {"cp.async.commit_group", {Op::CpAsyncCommit, 0, 0, 0}},
    {"cp.async.wait_group", {Op::CpAsyncWait, 0, 0, 0}},
    {"cp.async.wait_all", {Op::CpAsyncWaitAll, 0, 0, 0}},
    {"cp.async", {Op::CpAsync, C_SPACE | C_HINT, 0, 0}},
    {"bar.warp.sync", {Op::BarWarpSync, 0, 0, 0}},
    {"bar.sync", {Op::BarSync, 0, ALIGNED, 0}},
    {"barrier.sync", {Op::BarSync, 0, ALIGNED, 0}},
    {"activemask", {Op::Activemask, C_TYPE, 0, 1}},
    {"add", {Op::Add, C_TYPE | C_RND, FLT, 1}},
    {"sub", {Op::Sub, C_TYPE | C_RND, FLT, 1}},
    {"mul", {Op::Mul, C_TYPE | C_RND, FLT | LO | HI | WIDE, 1}},
    {"mad", {Op::Mad, C_TYPE | C_RND, FLT | LO | HI | WIDE, 1}},
    {"fma", {Op::Fma, C_TYPE | C_RND, FLT | RELU, 1}},
    {"div", {Op::Div, C_TYPE | C_RND, FTZ | APPROX | FULL, 1}},
    {"rem", {Op::Rem, C_TYPE, 0, 1}},
    {"abs", {Op::Abs, C_TYPE, FTZ, 1}},
    {"neg", {Op::Neg, C_TYPE, FTZ, 1}},
    {"min", {Op::Min, C_TYPE, FTZ | NANMOD, 1}},
    {"max", {Op::Max, C_TYPE, FTZ | NANMOD, 1}},
    {"copysign", {Op::Copysign, C_TYPE, 0, 1}},
    {"and", {Op::And, C_TYPE, 0, 1}},
    {"or", {Op::Or, C_TYPE, 0, 1}},
    {"xor", {Op::Xor, C_TYPE, 0, 1}},
    {"not", {Op::Not, C_TYPE, 0, 1}},
    {"shl", {Op::Shl, C_TYPE, 0, 1}},
    {"shr", {Op::Shr, C_TYPE, 0, 1}},
    {"shf", {Op::Shf, C_TYPE, SHF_LEFT | SHF_CLAMP, 1}},
    {"bfe", {Op::Bfe, C_TYPE, 0, 1}},
    {"bfi", {Op::Bfi, C_TYPE, 0, 1}},
    {"prmt", {Op::Prmt, C_TYPE, 0, 1}},
    {"popc", {Op::Popc, C_TYPE, 0, 1}},
    {"clz", {Op::Clz, C_TYPE, 0, 1}},
    {"brev", {Op::Brev, C_TYPE, 0, 1}},
    {"lop3", {Op::Lop3, C_TYPE, 0, 1}},
    {"rcp", {Op::Rcp, C_TYPE | C_RND, FTZ | APPROX, 1}},
    {"sqrt", {Op::Sqrt, C_TYPE | C_RND, FTZ | APPROX, 1}},
    {"rsqrt", {Op::Rsqrt, C_TYPE, FTZ | APPROX, 1}},
    {"ex2", {Op::Ex2, C_TYPE, FTZ | APPROX, 1}},
    {"lg2", {Op::Lg2, C_TYPE, FTZ | APPROX, 1}},
    {"sin", {Op::Sin, C_TYPE, FTZ | APPROX, 1}},
    {"cos", {Op::Cos, C_TYPE, FTZ | APPROX, 1}},
    {"tanh", {Op::Tanh, C_TYPE, APPROX, 1}},
    {"setp", {Op::Setp, C_TYPE | C_CMP | C_BOOL, FTZ, 1}},
    {"selp", {Op::Selp, C_TYPE, 0, 1}},
    {"mov", {Op::Mov, C_TYPE, 0, 1}},
    {"cvt", {Op::Cvt, C_TYPE | C_RND, FTZ | SAT | SATFINITE | RELU, 2}},
    {"cvta", {Op::Cvta, C_TYPE | C_SPACE, TO, 1}},
    {"ld", {Op::Ld, C_TYPE | C_SPACE | C_VEC | C_HINT, 0, 1}},
    {"st", {Op::St, C_TYPE | C_SPACE | C_VEC | C_HINT, 0, 1}},
    {"atom", {Op::Atom, C_TYPE | C_SPACE | C_HINT | C_ATOM, 0, 1}},
    {"red", {Op::Red, C_TYPE | C_SPACE | C_HINT | C_ATOM, 0, 1}},
    {"bra", {Op::Bra, 0, UNI, 0}},
    {"ret", {Op::Ret, 0, UNI, 0}},
    {"exit", {Op::Exit, 0, 0, 0}},
    {"membar", {Op::Membar, C_HINT, 0, 0}},
    {"fence", {Op::Membar, C_HINT, 0, 0}},
    {"prefetch", {Op::Prefetch, C_SPACE, TENSORMAP, 0}},
    {"shfl", {Op::Shfl, C_TYPE | C_SHFL, SYNC, 1}},
    {"vote", {Op::Vote, C_TYPE | C_VOTE, SYNC, 1}},
    {"ldmatrix",
     {Op::Ldmatrix, C_TYPE | C_SPACE | C_SHAPE | C_X, SYNC | ALIGNED | TRANS,
      1}},
    {"mma", {Op::Mma, C_TYPE | C_SHAPE | C_LAYOUT, SYNC | ALIGNED, 4}},
};

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

bool parseShape(StringRef s, uint16_t &m, uint16_t &n, uint16_t &k) {
  unsigned a = 0, b = 0, c = 0;
  if (!s.consume_front("m"))
    return false;
  auto [ms, rest] = s.split('n');
  if (ms.getAsInteger(10, a) || rest.empty())
    return false;
  auto [ns, ks] = rest.split('k');
  if (ns.getAsInteger(10, b))
    return false;
  if (!ks.empty() && ks.getAsInteger(10, c))
    return false;
  m = a;
  n = b;
  k = c;
  return true;
}

/// Applies one modifier; returns false when it is not one `spec` accepts.
bool applyModifier(StringRef mod, const OpSpec &spec, Instruction &inst,
                   llvm::SmallVectorImpl<Ty> &types) {
  auto flag = [&](uint32_t f) {
    if (!(spec.flags & f))
      return false;
    inst.flags |= f;
    return true;
  };
  if (Ty t = parseTypeName(mod); t != Ty::None) {
    if (!(spec.cats & C_TYPE) || types.size() >= spec.maxTypes)
      return false;
    types.push_back(t);
    return true;
  }
  Rnd r = llvm::StringSwitch<Rnd>(mod)
              .Case("rn", Rnd::RN)
              .Case("rz", Rnd::RZ)
              .Case("rm", Rnd::RM)
              .Case("rp", Rnd::RP)
              .Case("rna", Rnd::RNA)
              .Case("rni", Rnd::RNI)
              .Case("rzi", Rnd::RZI)
              .Case("rmi", Rnd::RMI)
              .Case("rpi", Rnd::RPI)
              .Default(Rnd::None);
  if (r != Rnd::None) {
    if (!(spec.cats & C_RND) || inst.rnd != Rnd::None)
      return false;
    inst.rnd = r;
    return true;
  }
  if (spec.cats & C_CMP) {
    Cmp c = llvm::StringSwitch<Cmp>(mod)
                .Case("eq", Cmp::EQ)
                .Case("ne", Cmp::NE)
                .Case("lt", Cmp::LT)
                .Case("le", Cmp::LE)
                .Case("gt", Cmp::GT)
                .Case("ge", Cmp::GE)
                .Case("lo", Cmp::LO)
                .Case("ls", Cmp::LS)
                .Case("hi", Cmp::HI)
                .Case("hs", Cmp::HS)
                .Case("equ", Cmp::EQU)
                .Case("neu", Cmp::NEU)
                .Case("ltu", Cmp::LTU)
                .Case("leu", Cmp::LEU)
                .Case("gtu", Cmp::GTU)
                .Case("geu", Cmp::GEU)
                .Case("num", Cmp::NUM)
                .Case("nan", Cmp::NAN_)
                .Default(Cmp::None);
    if (c != Cmp::None && inst.cmp == Cmp::None) {
      inst.cmp = c;
      return true;
    }
    BoolOp b = llvm::StringSwitch<BoolOp>(mod)
                   .Case("and", BoolOp::And)
                   .Case("or", BoolOp::Or)
                   .Case("xor", BoolOp::Xor)
                   .Default(BoolOp::None);
    if (b != BoolOp::None && (spec.cats & C_BOOL)) {
      inst.boolOp = b;
      return true;
    }
  }
  if (spec.cats & C_ATOM) {
    AtomOp a = llvm::StringSwitch<AtomOp>(mod)
                   .Case("add", AtomOp::Add)
                   .Case("min", AtomOp::Min)
                   .Case("max", AtomOp::Max)
                   .Case("inc", AtomOp::Inc)
                   .Case("dec", AtomOp::Dec)
                   .Case("and", AtomOp::And)
                   .Case("or", AtomOp::Or)
                   .Case("xor", AtomOp::Xor)
                   .Case("exch", AtomOp::Exch)
                   .Case("cas", AtomOp::Cas)
                   .Default(AtomOp::None);
    if (a != AtomOp::None && inst.atom == AtomOp::None) {
      inst.atom = a;
      return true;
    }
  }
  if (spec.cats & C_SPACE) {
    bool isSpace = mod == "global" || mod == "shared" || mod == "shared::cta" ||
                   // Every grid is a cluster of one CTA: its shared::cluster
                   // window is the CTA's own shared memory.
                   ((spec.op == Op::CpAsyncBulk ||
                     spec.op == Op::CpAsyncBulkTensor || spec.op == Op::Cvta) &&
                    mod == "shared::cluster") ||
                   mod == "param" || mod == "local" || mod == "const";
    if (isSpace) {
      Space v = mod == "global"             ? Space::Global
                : mod.starts_with("shared") ? Space::Shared
                : mod == "param"            ? Space::Param
                : mod == "local"            ? Space::Local
                                            : Space::Const;
      if (inst.op == Op::CpAsync || inst.op == Op::CpAsyncBulk ||
          inst.op == Op::CpAsyncBulkTensor) {
        // cp.async.<cache>.shared.global: destination then source.
        if (inst.space == Space::Generic)
          inst.space = v;
        else
          inst.space2 = v;
      } else {
        if (inst.space != Space::Generic)
          return false;
        inst.space = v;
      }
      return true;
    }
  }
  if ((spec.cats & C_VEC) && (mod == "v2" || mod == "v4")) {
    inst.vec = mod == "v2" ? 2 : 4;
    return true;
  }
  if ((spec.cats & C_X) && (mod == "x1" || mod == "x2" || mod == "x4")) {
    inst.vec = mod[1] - '0';
    return true;
  }
  if ((spec.cats & C_SHAPE) && parseShape(mod, inst.m, inst.n, inst.k))
    return true;
  if ((spec.cats & C_LAYOUT) && (mod == "row" || mod == "col")) {
    // Only .row.col exists for the shapes we accept.
    if (mod == "row" && !inst.has(ROW_A | COL_B))
      inst.flags |= ROW_A;
    else if (mod == "col" && inst.has(ROW_A) && !inst.has(COL_B))
      inst.flags |= COL_B;
    else
      return false;
    return true;
  }
  if (spec.cats & C_SHFL) {
    ShflMode s = llvm::StringSwitch<ShflMode>(mod)
                     .Case("up", ShflMode::Up)
                     .Case("down", ShflMode::Down)
                     .Case("bfly", ShflMode::Bfly)
                     .Case("idx", ShflMode::Idx)
                     .Default(ShflMode::None);
    if (s != ShflMode::None) {
      inst.shfl = s;
      return true;
    }
  }
  if (spec.cats & C_VOTE) {
    VoteMode v = llvm::StringSwitch<VoteMode>(mod)
                     .Case("all", VoteMode::All)
                     .Case("any", VoteMode::Any)
                     .Case("uni", VoteMode::Uni)
                     .Case("ballot", VoteMode::Ballot)
                     .Default(VoteMode::None);
    if (v != VoteMode::None) {
      inst.vote = v;
      return true;
    }
  }
  if (spec.op == Op::Membar &&
      (mod == "shared::cta" || mod == "shared::cluster" || mod == "global" ||
       mod == "tensormap::generic"))
    return true; // fence.proxy.async's state space, the tensormap proxy
  if (spec.op == Op::CpAsyncBulkTensor) {
    // .1d .. .5d; .tile is the only load mode (im2col, gather4 and
    // .multicast::cluster are rejected as unknown modifiers).
    if (mod.size() == 2 && mod[1] == 'd' && mod[0] >= '1' && mod[0] <= '5' &&
        inst.vec == 1 && !inst.has(TENSORMAP)) {
      inst.vec = mod[0] - '0';
      inst.flags |= TENSORMAP; // the rank was given
      return true;
    }
    if (mod == "tile")
      return true;
  }
  if (spec.cats & C_HINT) {
    // Cache operators, eviction priorities and memory-ordering qualifiers.
    static const char *hints[] = {"ca",
                                  "cg",
                                  "cs",
                                  "lu",
                                  "cv",
                                  "nc",
                                  "wb",
                                  "wt",
                                  "volatile",
                                  "relaxed",
                                  "acquire",
                                  "release",
                                  "acq_rel",
                                  "sc",
                                  "cta",
                                  "cluster",
                                  "proxy",
                                  "async",
                                  "mbarrier_init",
                                  "gpu",
                                  "sys",
                                  "gl",
                                  "L1::evict_last",
                                  "L1::evict_first",
                                  "L1::evict_normal",
                                  "L1::no_allocate",
                                  "L1::evict_unchanged",
                                  "L2::64B",
                                  "L2::128B",
                                  "L2::256B"};
    for (const char *h : hints)
      if (mod == h)
        return true;
    if (mod == "L2::cache_hint") {
      inst.flags |= CACHE_HINT;
      return true;
    }
  }
  static const std::pair<const char *, uint32_t> flagNames[] = {
      {"ftz", FTZ},
      {"sat", SAT},
      {"approx", APPROX},
      {"full", FULL},
      {"satfinite", SATFINITE},
      {"relu", RELU},
      {"NaN", NANMOD},
      {"wide", WIDE},
      {"lo", LO},
      {"hi", HI},
      {"trans", TRANS},
      {"to", TO},
      {"clamp", SHF_CLAMP},
      {"uni", UNI},
      {"sync", SYNC},
      {"aligned", ALIGNED},
      {"parity", PARITY},
      {"tensormap", TENSORMAP},
      {"mbarrier::complete_tx::bytes", COMPLETE_TX}};
  for (auto &[name, f] : flagNames)
    if (mod == name)
      return flag(f);
  if (spec.op == Op::Shf && (mod == "l" || mod == "r" || mod == "wrap")) {
    if (mod == "l")
      inst.flags |= SHF_LEFT;
    return true;
  }
  return false;
}

/// Per-opcode combinations the executor implements.
llvm::Error validate(Instruction &inst) {
  Ty t = inst.type;
  switch (inst.op) {
  case Op::Mma: {
    if (!inst.has(ROW_A) || !inst.has(COL_B))
      return fail("mma needs the .row.col layout");
    bool half = inst.srcType == Ty::F16 || inst.srcType == Ty::BF16;
    bool int8 = inst.srcType == Ty::S8 && inst.type == Ty::S32;
    bool shape = inst.m == 16 && inst.n == 8 &&
                 (int8 ? inst.k == 32 : inst.k == 16 || inst.k == 8);
    bool types =
        (half && inst.type == Ty::F32) ||
        (inst.srcType == Ty::F16 && inst.type == Ty::F16) ||
        (inst.srcType == Ty::TF32 && inst.type == Ty::F32 && inst.k == 8) ||
        (int8 && !inst.has(SAT));
    if (!shape || !types)
      return fail("unsupported mma shape/type '" + inst.opcode +
                  "' (supported: m16n8k16 and m16n8k8 with f16/bf16 -> f32, "
                  "f16 -> f16, m16n8k8 tf32 -> f32, and m16n8k32 s8 -> s32 "
                  "without .satfinite)");
    return llvm::Error::success();
  }
  case Op::Ldmatrix:
    if (inst.m != 8 || inst.n != 8 || inst.k != 0 || t != Ty::B16 ||
        inst.space != Space::Shared || !inst.has(SYNC) || !inst.has(ALIGNED))
      return fail("unsupported ldmatrix form '" + inst.opcode + "'");
    return llvm::Error::success();
  case Op::CpAsyncBulk:
    if (inst.space != Space::Shared || inst.space2 != Space::Global ||
        !inst.has(COMPLETE_TX))
      return fail("only cp.async.bulk.shared::cluster.global.mbarrier::"
                  "complete_tx::bytes is supported");
    return llvm::Error::success();
  case Op::CpAsyncBulkTensor:
    if (!inst.has(TENSORMAP) || inst.space != Space::Shared ||
        inst.space2 != Space::Global || !inst.has(COMPLETE_TX))
      return fail("only cp.async.bulk.tensor.{1d..5d}.shared::cluster.global"
                  "[.tile].mbarrier::complete_tx::bytes[.L2::cache_hint] is "
                  "supported");
    return llvm::Error::success();
  case Op::Prefetch:
    if (!inst.has(TENSORMAP) || inst.space == Space::Shared ||
        inst.space == Space::Local)
      return fail("only prefetch{.const,.param,.global}.tensormap is "
                  "supported");
    return llvm::Error::success();
  case Op::MbarInit:
  case Op::MbarArrive:
  case Op::MbarExpectTx:
  case Op::MbarTestWait:
  case Op::MbarInval:
    if (inst.space != Space::Shared || inst.type != Ty::B64)
      return fail("mbarrier must be .shared (::cta) .b64");
    return llvm::Error::success();
  case Op::CpAsync:
    if (inst.space != Space::Shared || inst.space2 != Space::Global)
      return fail("cp.async must copy .shared from .global");
    return llvm::Error::success();
  case Op::Shfl:
    if (!inst.has(SYNC) || inst.shfl == ShflMode::None || t != Ty::B32)
      return fail("only shfl.sync.{up,down,bfly,idx}.b32 is supported");
    return llvm::Error::success();
  case Op::Vote:
    if (!inst.has(SYNC) || inst.vote == VoteMode::None ||
        (inst.vote == VoteMode::Ballot) != (t == Ty::B32) ||
        (inst.vote != VoteMode::Ballot && t != Ty::Pred))
      return fail("unsupported vote form '" + inst.opcode + "'");
    return llvm::Error::success();
  case Op::Cvt:
    if (inst.srcType == Ty::None)
      return fail("cvt needs a destination and a source type");
    return llvm::Error::success();
  case Op::Cvta:
    if (inst.space == Space::Generic || inst.space == Space::Param ||
        (t != Ty::U64 && t != Ty::U32))
      return fail("unsupported cvta form '" + inst.opcode + "'");
    return llvm::Error::success();
  case Op::Atom:
  case Op::Red:
    if (inst.atom == AtomOp::None || t == Ty::None)
      return fail("atom/red needs an operation and a type");
    return llvm::Error::success();
  case Op::Membar:
    // fence.proxy.async and fence.proxy.tensormap::generic are accepted as
    // no-ops: the emulator has one proxy.
    if (inst.opcode.find("proxy") != std::string::npos &&
        inst.opcode.rfind("fence.proxy.async", 0) != 0 &&
        inst.opcode.rfind("fence.proxy.tensormap::generic", 0) != 0)
      return fail("only fence.proxy.async and fence.proxy.tensormap::generic "
                  "are supported");
    return llvm::Error::success();
  case Op::Wgmma: {
    bool half = inst.srcType == Ty::F16 || inst.srcType == Ty::BF16;
    bool fp8 = inst.srcType == Ty::E4M3 || inst.srcType == Ty::E5M2;
    bool int8 = inst.srcType == Ty::S8;
    if (inst.m != 64 || inst.n % 8 || inst.n < 8 || inst.n > 256 ||
        inst.type != (int8 ? Ty::S32 : Ty::F32) ||
        !(half ? inst.k == 16 : (fp8 || int8) && inst.k == 32) || inst.has(SAT))
      return fail("unsupported wgmma '" + inst.opcode +
                  "' (supported: m64nNk16.f32.{f16,bf16}, "
                  "m64nNk32.f32.{e4m3,e5m2}, m64nNk32.s32.s8.s8)");
    return llvm::Error::success();
  }
  case Op::WgmmaFence:
  case Op::WgmmaCommit:
  case Op::WgmmaWait:
    if (!inst.has(SYNC) || !inst.has(ALIGNED))
      return fail("wgmma fences and groups need .sync.aligned");
    return llvm::Error::success();
  case Op::Bra:
  case Op::Ret:
  case Op::Exit:
  case Op::BarSync:
  case Op::BarWarpSync:
  case Op::CpAsyncCommit:
  case Op::CpAsyncWait:
  case Op::CpAsyncWaitAll:
    return llvm::Error::success();
  default:
    break;
  }
  if (t == Ty::None)
    return fail("'" + inst.opcode + "' needs a type");
  if (t == Ty::E4M3x2 || t == Ty::E5M2x2 || t == Ty::E4M3 || t == Ty::E5M2 ||
      t == Ty::TF32)
    return fail("'" + inst.opcode +
                "': fp8/tf32 are only supported in cvt, mma and wgmma");
  if (isFloat(t) && inst.has(LO | HI | WIDE))
    return fail("'" + inst.opcode + "': .lo/.hi/.wide need an integer type");
  if (!isFloat(t) && inst.rnd != Rnd::None)
    return fail("'" + inst.opcode + "': rounding modifier on an integer type");
  if (!isFloat(t) && inst.has(FTZ | APPROX | FULL | NANMOD))
    return fail("'" + inst.opcode + "': float modifier on an integer type");
  if ((inst.op == Op::Mad) && !isFloat(t) && !inst.has(LO | HI | WIDE))
    return fail("mad on integers needs .lo, .hi or .wide");
  if (inst.op == Op::Fma && inst.rnd == Rnd::None)
    return fail("fma needs a rounding modifier");
  if (inst.op == Op::Copysign && t != Ty::F32 && t != Ty::F64)
    return fail("copysign needs .f32 or .f64");
  if (inst.op == Op::Div && t == Ty::F32 && inst.rnd == Rnd::None &&
      !inst.has(APPROX | FULL))
    return fail("div.f32 needs .rn/.rz/.rm/.rp, .approx or .full");
  if ((inst.op == Op::Rcp || inst.op == Op::Sqrt) && t == Ty::F32 &&
      inst.rnd == Rnd::None && !inst.has(APPROX))
    return fail("'" + inst.opcode + "' needs a rounding modifier or .approx");
  if ((inst.op == Op::Ex2 || inst.op == Op::Lg2 || inst.op == Op::Sin ||
       inst.op == Op::Cos || inst.op == Op::Tanh || inst.op == Op::Rsqrt) &&
      !inst.has(APPROX))
    return fail("'" + inst.opcode + "' needs .approx");
  bool half =
      t == Ty::F16 || t == Ty::F16x2 || t == Ty::BF16 || t == Ty::BF16x2;
  if (half) {
    switch (inst.op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Fma:
    case Op::Neg:
    case Op::Abs:
    case Op::Min:
    case Op::Max:
    case Op::Mov:
    case Op::Ld:
    case Op::St:
    case Op::Ex2:
    case Op::Tanh:
    case Op::Selp:
    case Op::Setp:
      break;
    default:
      return fail("'" + inst.opcode + "' is not supported on f16/bf16");
    }
    if (inst.rnd != Rnd::None && inst.rnd != Rnd::RN)
      return fail("'" + inst.opcode + "': only .rn is supported for f16/bf16");
  }
  if (inst.op == Op::Setp && inst.cmp == Cmp::None)
    return fail("setp needs a comparison");
  if (inst.op == Op::Setp && (t == Ty::F16x2 || t == Ty::BF16x2))
    return fail("setp on packed halves is not supported");
  if ((inst.op == Op::Shf || inst.op == Op::Lop3 || inst.op == Op::Prmt) &&
      t != Ty::B32)
    return fail("'" + inst.opcode + "' is only supported on .b32");
  return llvm::Error::success();
}

} // namespace

llvm::Error tessera::ptx::decodeOpcode(Instruction &inst) {
  StringRef opc = inst.opcode;
  const Entry *found = nullptr;
  for (const Entry &e : kOps) {
    StringRef p = e.prefix;
    if (opc == p || (opc.starts_with(p) && opc[p.size()] == '.')) {
      found = &e;
      break;
    }
  }
  if (!found)
    return fail("unsupported instruction '" + opc + "'");
  inst.op = found->spec.op;
  if (StringRef(found->prefix) == "mbarrier.arrive.expect_tx")
    inst.flags |= EXPECT_TX;
  StringRef rest = opc.drop_front(std::strlen(found->prefix));
  llvm::SmallVector<Ty, 4> types;
  llvm::SmallVector<StringRef, 12> mods;
  rest.split(mods, '.', -1, false);
  for (StringRef mod : mods) {
    if (!applyModifier(mod, found->spec, inst, types))
      return fail("unsupported modifier '." + mod + "' in '" + opc + "'");
  }
  if (inst.op == Op::Wgmma) {
    if (types.size() != 3 || types[1] != types[2])
      return fail("wgmma needs D, A, B types with A = B: " + opc);
    inst.type = types[0];
    inst.srcType = types[1];
    return validate(inst);
  }
  if (inst.op == Op::Mma) {
    if (types.size() != 4)
      return fail("mma needs four types: " + opc);
    if (types[1] != types[2])
      return fail("mma with different A and B types");
    inst.type = types[0];
    inst.srcType = types[1];
    inst.cType = types[3];
    if (types[3] != types[0])
      return fail("mma with C type different from D type");
  } else if (inst.op == Op::Cvt) {
    if (types.size() != 2)
      return fail("cvt needs two types: " + opc);
    inst.type = types[0];
    inst.srcType = types[1];
  } else if (!types.empty()) {
    inst.type = types[0];
  }
  return validate(inst);
}
