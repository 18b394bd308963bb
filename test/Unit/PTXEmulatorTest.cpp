//===- PTXEmulatorTest.cpp - Tests of the functional PTX emulator ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Per-instruction semantics (rounding, ftz, sat, NaN, integer wrap, cvt to
// f16/bf16/tf32/fp8), fragment-layout probes checked against entries of the
// PTX ISA's fragment figures, the corpus kernels under
// test/Target/CUDA/Emulator/Inputs (nvcc sm_80/sm_90/sm_90a and MLIR PTX)
// against C++ references, and hazard/deadlock cases that must be reported.
//
// TESSERA_PTX_EMULATOR_INPUTS names that Inputs directory (set by CMake).
//===----------------------------------------------------------------------===//
#include "tessera/Target/CUDA/Emulator/Emulator.h"
#include "tessera/Target/CUDA/Emulator/FloatFormats.h"
#include "tessera/Target/CUDA/Emulator/PTXParser.h"

#include "llvm/Support/MemoryBuffer.h"
#include <algorithm>
#include <array>
#include <cmath>
#include <gtest/gtest.h>
#include <random>

#ifndef TESSERA_PTX_EMULATOR_INPUTS
#error "define TESSERA_PTX_EMULATOR_INPUTS to test/Target/CUDA/Emulator/Inputs"
#endif

using namespace tessera::ptx;

namespace {

const char *kHeader = ".version 8.0\n.target sm_80\n.address_size 64\n";

std::string readInput(const std::string &name) {
  auto mb = llvm::MemoryBuffer::getFile(
      std::string(TESSERA_PTX_EMULATOR_INPUTS) + "/" + name);
  EXPECT_TRUE(bool(mb)) << "cannot read " << name;
  return mb ? (*mb)->getBuffer().str() : std::string();
}

/// Parses \p text; fails the test on an error.
Module parseOrDie(const std::string &text) {
  llvm::Expected<Module> m = parsePTX(text, "test.ptx");
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return Module();
  }
  return std::move(*m);
}

std::string parseError(const std::string &text) {
  llvm::Expected<Module> m = parsePTX(text, "test.ptx");
  if (m)
    return "";
  return llvm::toString(m.takeError());
}

/// Launches \p kernel with the given arguments; returns the error text or "".
std::string launch(Emulator &emu, const Module &m, const std::string &kernel,
                   Dim3 grid, Dim3 block, std::vector<uint64_t> args,
                   bool hazards = true) {
  const Kernel *k = m.findKernel(kernel);
  if (!k)
    return "no kernel " + kernel;
  auto params = packParams(*k, args);
  if (!params)
    return llvm::toString(params.takeError());
  LaunchConfig cfg;
  cfg.grid = grid;
  cfg.block = block;
  EmulatorOptions opts;
  opts.checkHazards = hazards;
  auto st = emu.launch(kernel, cfg, *params, opts);
  if (!st)
    return llvm::toString(st.takeError());
  return "";
}

/// One thread computes %r4 from %r1..%r3 (loaded from `in`) with \p body.
struct Scalar {
  std::string error;
  uint32_t value = 0;
};
Scalar runScalar(const std::string &body, uint32_t a, uint32_t b = 0,
                 uint32_t c = 0) {
  std::string text =
      std::string(kHeader) +
      ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
      ".reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .pred %p<4>;\n.reg .b16 "
      "%h<4>;\n"
      "ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [in];\n"
      "ld.global.b32 %r1, [%rd2];\nld.global.b32 %r2, [%rd2+4];\n"
      "ld.global.b32 %r3, [%rd2+8];\n" +
      body + "\nst.global.b32 [%rd1], %r4;\nret;\n}\n";
  Scalar s;
  llvm::Expected<Module> m = parsePTX(text, "scalar.ptx");
  if (!m) {
    s.error = llvm::toString(m.takeError());
    return s;
  }
  Emulator emu(*m);
  uint32_t in[3] = {a, b, c}, out = 0xDEADBEEF;
  uint64_t pin = emu.memory().map(in, sizeof(in)),
           pout = emu.memory().map(&out, 4);
  s.error = launch(emu, *m, "k", {1, 1, 1}, {1, 1, 1}, {pout, pin});
  s.value = out;
  return s;
}
uint32_t f(float x) { return f32ToBits(x); }
uint32_t scalar(const std::string &body, uint32_t a, uint32_t b = 0,
                uint32_t c = 0) {
  Scalar s = runScalar(body, a, b, c);
  EXPECT_EQ(s.error, "") << body;
  return s.value;
}

// ---------------------------------------------------------------------------
// Parser and decoder: fail loud with a line number.

TEST(PTXEmulatorParser, UnknownOpcodeNamesItsLine) {
  std::string err = parseError(std::string(kHeader) +
                               ".visible .entry k()\n{\n.reg .b32 "
                               "%r<2>;\nfrobnicate.b32 %r1, %r0;\n}\n");
  EXPECT_NE(err.find("test.ptx:7:"), std::string::npos) << err;
  EXPECT_NE(err.find("unsupported instruction 'frobnicate.b32'"),
            std::string::npos)
      << err;
}

TEST(PTXEmulatorParser, UnknownModifierIsRejected) {
  std::string err = parseError(std::string(kHeader) +
                               ".visible .entry k()\n{\n.reg .b32 "
                               "%r<3>;\nadd.rx.f32 %r1, %r0, %r2;\n}\n");
  EXPECT_NE(err.find(":7:"), std::string::npos) << err;
  EXPECT_NE(err.find("'.rx'"), std::string::npos) << err;
  err = parseError(
      std::string(kHeader) +
      ".visible .entry k()\n{\n.reg .b32 %r<9>;\n"
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%r1,%r2,%r3,%r4}, "
      "{%r1,%r2,%r3,%r4}, {%r1,%r2}, {%r1,%r2,%r3,%r4};\n}\n");
  EXPECT_NE(err.find("unsupported"), std::string::npos) << err;
  err = parseError(std::string(kHeader) +
                   ".visible .entry k()\n{\n.reg .b32 %r<3>;\n"
                   "add.f32 %r1, %r9, %r2;\n}\n");
  EXPECT_NE(err.find("unknown register or unsupported special register '%r9'"),
            std::string::npos)
      << err;
  err = parseError(std::string(kHeader) +
                   ".visible .entry k()\n{\nbra.uni nowhere;\n}\n");
  EXPECT_NE(err.find("unknown label 'nowhere'"), std::string::npos) << err;
}

TEST(PTXEmulatorParser, CorpusParses) {
  for (const char *f : {"warp_reduce.ptx", "cp_async_pipeline.ptx",
                        "mma_gemm.ptx", "mma_cpasync.ptx"}) {
    llvm::Expected<Module> m = parsePTX(readInput(f), f);
    ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
    EXPECT_FALSE(m->kernels.empty());
  }
}

// ---------------------------------------------------------------------------
// Per-instruction semantics.

TEST(PTXEmulatorScalar, FloatRoundingModes) {
  uint32_t one = f(1.0f), tiny = f(std::ldexp(1.0f, -30));
  EXPECT_EQ(scalar("add.rn.f32 %r4, %r1, %r2;", one, tiny), one);
  EXPECT_EQ(scalar("add.rz.f32 %r4, %r1, %r2;", one, tiny), one);
  EXPECT_EQ(scalar("add.rp.f32 %r4, %r1, %r2;", one, tiny), one + 1);
  EXPECT_EQ(scalar("add.rm.f32 %r4, %r1, %r2;", one, tiny), one);
  // 1 - 2^-30 rounds down in .rz/.rm: the largest float below 1.
  EXPECT_EQ(scalar("sub.rz.f32 %r4, %r1, %r2;", one, tiny), one - 1);
  EXPECT_EQ(scalar("sub.rn.f32 %r4, %r1, %r2;", one, tiny), one);
  // fma rounds once: (1+2^-12)^2 - 1 keeps the 2^-24 that mul+sub loses.
  uint32_t a = f(1.0f + std::ldexp(1.0f, -12));
  EXPECT_EQ(scalar("fma.rn.f32 %r4, %r1, %r1, %r2;", a, f(-1.0f)),
            f(std::ldexp(1.0f, -11) + std::ldexp(1.0f, -24)));
  EXPECT_EQ(scalar("mul.rn.f32 %r5, %r1, %r1;\nsub.rn.f32 %r4, %r5, %r2;", a,
                   f(1.0f)),
            f(std::ldexp(1.0f, -11)));
  // (1+2^-23)^2 = 1 + 2^-22 + 2^-46: .rz drops the tail, .rp rounds up.
  uint32_t b = f(1.0f + std::ldexp(1.0f, -23)), zero = f(0.0f);
  EXPECT_EQ(scalar("fma.rz.f32 %r4, %r1, %r1, %r2;", b, zero),
            f(1.0f + std::ldexp(1.0f, -22)));
  EXPECT_EQ(scalar("fma.rp.f32 %r4, %r1, %r1, %r2;", b, zero),
            f(1.0f + std::ldexp(1.0f, -22)) + 1);
  EXPECT_EQ(scalar("div.rn.f32 %r4, %r1, %r2;", f(1.0f), f(3.0f)),
            f(1.0f / 3.0f));
  // 1/3 rounds up to nearest, so .rz is one ulp lower.
  EXPECT_EQ(scalar("div.rz.f32 %r4, %r1, %r2;", f(1.0f), f(3.0f)),
            f(1.0f / 3.0f) - 1);
}

TEST(PTXEmulatorScalar, DenormalsWithAndWithoutFtz) {
  uint32_t den = 0x00000100u; // a positive subnormal
  EXPECT_EQ(scalar("mul.rn.f32 %r4, %r1, %r2;", den, f(1.0f)), den);
  EXPECT_EQ(scalar("mul.rn.ftz.f32 %r4, %r1, %r2;", den, f(1.0f)), 0u);
  EXPECT_EQ(scalar("mul.rn.ftz.f32 %r4, %r1, %r2;", den | 0x80000000u, f(1.0f)),
            0x80000000u);
  // A normal result that becomes subnormal: kept, or flushed with .ftz.
  uint32_t minNormal = 0x00800000u;
  EXPECT_EQ(scalar("mul.rn.f32 %r4, %r1, %r2;", minNormal, f(0.5f)),
            0x00400000u);
  EXPECT_EQ(scalar("mul.rn.ftz.f32 %r4, %r1, %r2;", minNormal, f(0.5f)), 0u);
  EXPECT_EQ(scalar("add.ftz.f32 %r4, %r1, %r2;", den, den), 0u);
  EXPECT_EQ(scalar("add.f32 %r4, %r1, %r2;", den, den), 2 * den);
}

TEST(PTXEmulatorScalar, SaturationAndNaN) {
  EXPECT_EQ(scalar("add.sat.f32 %r4, %r1, %r2;", f(2.0f), f(3.0f)), f(1.0f));
  EXPECT_EQ(scalar("add.sat.f32 %r4, %r1, %r2;", f(-2.0f), f(1.0f)), f(0.0f));
  EXPECT_EQ(scalar("add.sat.f32 %r4, %r1, %r2;", 0x7FC00001u, f(1.0f)),
            f(0.0f));
  // NaN results are canonical.
  EXPECT_EQ(scalar("add.f32 %r4, %r1, %r2;", 0x7FC00001u, f(1.0f)),
            0x7FFFFFFFu);
  EXPECT_EQ(scalar("mul.rn.f32 %r4, %r1, %r2;", f(INFINITY), f(0.0f)),
            0x7FFFFFFFu);
  // min/max: a single NaN yields the other operand unless .NaN.
  EXPECT_EQ(scalar("min.f32 %r4, %r1, %r2;", 0x7FC00000u, f(1.0f)), f(1.0f));
  EXPECT_EQ(scalar("max.f32 %r4, %r1, %r2;", f(-3.0f), 0x7FC00000u), f(-3.0f));
  EXPECT_EQ(scalar("max.NaN.f32 %r4, %r1, %r2;", f(-3.0f), 0x7FC00000u),
            0x7FFFFFFFu);
  EXPECT_EQ(scalar("min.f32 %r4, %r1, %r2;", f(0.0f), f(-0.0f)), f(-0.0f));
  // setp: ordered comparisons are false on NaN, unordered ones true.
  const char *lt = "setp.lt.f32 %p1, %r1, %r2;\nselp.b32 %r4, 1, 0, %p1;";
  const char *ltu = "setp.ltu.f32 %p1, %r1, %r2;\nselp.b32 %r4, 1, 0, %p1;";
  EXPECT_EQ(scalar(lt, 0x7FC00000u, f(1.0f)), 0u);
  EXPECT_EQ(scalar(ltu, 0x7FC00000u, f(1.0f)), 1u);
  EXPECT_EQ(scalar(lt, f(-1.0f), f(1.0f)), 1u);
  EXPECT_EQ(scalar("setp.nan.f32 %p1, %r1, %r2;\nselp.b32 %r4, 1, 0, %p1;",
                   f(1.0f), 0x7FC00000u),
            1u);
}

TEST(PTXEmulatorScalar, Copysign) {
  // copysign d, a, b: a's sign on b's magnitude, NaN payloads kept.
  EXPECT_EQ(scalar("copysign.f32 %r4, %r1, %r2;", f(-1.0f), f(2.5f)), f(-2.5f));
  EXPECT_EQ(scalar("copysign.f32 %r4, %r1, %r2;", f(3.0f), f(-2.5f)), f(2.5f));
  EXPECT_EQ(scalar("copysign.f32 %r4, %r1, %r2;", f(-0.0f), 0x7FC00001u),
            0xFFC00001u);
  EXPECT_EQ(scalar("copysign.f32 %r4, %r1, %r2;", 0xFFC00000u, f(0.0f)),
            f(-0.0f));
  // f64: -1.0 from 1.0's bits with the sign of -2.0.
  EXPECT_EQ(scalar("{\n.reg .f64 %fd<4>;\nmov.b64 %fd1, 0xC000000000000000;\n"
                   "mov.b64 %fd2, 0x3FF0000000000000;\n"
                   "copysign.f64 %fd3, %fd1, %fd2;\n"
                   "mov.b64 {%r5, %r4}, %fd3;\n}",
                   0),
            0xBFF00000u);
  Scalar bad = runScalar("copysign.b32 %r4, %r1, %r2;", 0, 0);
  EXPECT_NE(bad.error.find("copysign needs .f32 or .f64"), std::string::npos)
      << bad.error;
}

TEST(PTXEmulatorScalar, IntegerWrapAndShifts) {
  EXPECT_EQ(scalar("add.s32 %r4, %r1, %r2;", 0x7FFFFFFFu, 1), 0x80000000u);
  EXPECT_EQ(scalar("add.sat.s32 %r4, %r1, %r2;", 0x7FFFFFFFu, 1), 0x7FFFFFFFu);
  EXPECT_EQ(scalar("sub.sat.s32 %r4, %r1, %r2;", 0x80000000u, 1), 0x80000000u);
  EXPECT_EQ(scalar("mul.lo.u32 %r4, %r1, %r2;", 0x10001u, 0x10001u), 0x20001u);
  EXPECT_EQ(scalar("mul.hi.u32 %r4, %r1, %r2;", 0xFFFFFFFFu, 0xFFFFFFFFu),
            0xFFFFFFFEu);
  EXPECT_EQ(scalar("mul.hi.s32 %r4, %r1, %r2;", 0xFFFFFFFFu, 0xFFFFFFFFu), 0u);
  EXPECT_EQ(scalar("mad.lo.s32 %r4, %r1, %r2, %r3;", 7, 6, 0xFFFFFFFFu), 41u);
  EXPECT_EQ(scalar("shl.b32 %r4, %r1, %r2;", 1, 33), 0u);
  EXPECT_EQ(scalar("shr.s32 %r4, %r1, %r2;", 0x80000000u, 40), 0xFFFFFFFFu);
  EXPECT_EQ(scalar("shr.u32 %r4, %r1, %r2;", 0x80000000u, 31), 1u);
  EXPECT_EQ(scalar("div.s32 %r4, %r1, %r2;", uint32_t(-7), 2), uint32_t(-3));
  EXPECT_EQ(scalar("rem.s32 %r4, %r1, %r2;", uint32_t(-7), 2), uint32_t(-1));
  EXPECT_EQ(scalar("bfe.u32 %r4, %r1, 4, 8;", 0xABCD1234u), 0x23u);
  EXPECT_EQ(scalar("bfe.s32 %r4, %r1, 4, 8;", 0x00000F80u), 0xFFFFFFF8u);
  EXPECT_EQ(scalar("prmt.b32 %r4, %r1, %r2, 0x5410;", 0x11223344u, 0xAABBCCDDu),
            0xCCDD3344u);
  EXPECT_EQ(scalar("lop3.b32 %r4, %r1, %r2, %r3, 0x96;", 0xF0F0F0F0u,
                   0xFF00FF00u, 0x0F0F0F0Fu),
            0xF0F0F0F0u ^ 0xFF00FF00u ^ 0x0F0F0F0Fu);
  EXPECT_EQ(
      scalar("shf.l.wrap.b32 %r4, %r1, %r2, 4;", 0xF0000000u, 0x0000000Fu),
      0x000000FFu);
  EXPECT_EQ(scalar("popc.b32 %r4, %r1;", 0xF0F0F0F1u), 17u);
  EXPECT_EQ(scalar("clz.b32 %r4, %r1;", 0x00010000u), 15u);
  Scalar z = runScalar("div.u32 %r4, %r1, %r2;", 1, 0);
  EXPECT_NE(z.error.find("integer division by zero"), std::string::npos)
      << z.error;
}

TEST(PTXEmulatorScalar, FloatToIntegerConversions) {
  const char *rni = "cvt.rni.s32.f32 %r4, %r1;";
  EXPECT_EQ(scalar(rni, f(2.5f)), 2u);
  EXPECT_EQ(scalar(rni, f(3.5f)), 4u);
  EXPECT_EQ(scalar(rni, f(-2.5f)), uint32_t(-2));
  EXPECT_EQ(scalar(rni, 0x7FC00000u), 0u);
  EXPECT_EQ(scalar(rni, f(1e10f)), 0x7FFFFFFFu);
  EXPECT_EQ(scalar(rni, f(-1e10f)), 0x80000000u);
  EXPECT_EQ(scalar("cvt.rzi.u32.f32 %r4, %r1;", f(-5.0f)), 0u);
  EXPECT_EQ(scalar("cvt.rmi.s32.f32 %r4, %r1;", f(-1.5f)), uint32_t(-2));
  EXPECT_EQ(scalar("cvt.rn.f32.s32 %r4, %r1;", 16777217u), f(16777216.0f));
  EXPECT_EQ(scalar("cvt.rp.f32.s32 %r4, %r1;", 16777217u), f(16777218.0f));
  EXPECT_EQ(scalar("cvt.sat.f32.f32 %r4, %r1;", f(1.5f)), f(1.0f));
  Scalar bad = runScalar("cvt.s32.f32 %r4, %r1;", f(1.0f));
  EXPECT_NE(bad.error.find("needs .rni"), std::string::npos) << bad.error;
}

TEST(PTXEmulatorScalar, HalfAndBFloatConversions) {
  const char *toH = "cvt.rn.f16.f32 %h1, %r1;\ncvt.u32.u16 %r4, %h1;";
  const char *toHz = "cvt.rz.f16.f32 %h1, %r1;\ncvt.u32.u16 %r4, %h1;";
  EXPECT_EQ(scalar(toH, f(1.0f)), 0x3C00u);
  EXPECT_EQ(scalar(toH, f(65504.0f)), 0x7BFFu);
  EXPECT_EQ(scalar(toH, f(65519.0f)), 0x7BFFu);
  EXPECT_EQ(scalar(toH, f(65520.0f)), 0x7C00u); // rounds to infinity
  EXPECT_EQ(scalar(toHz, f(65520.0f)), 0x7BFFu);
  EXPECT_EQ(scalar(toH, f(std::ldexp(1.0f, -24))),
            0x0001u); // smallest subnormal
  EXPECT_EQ(scalar(toH, f(std::ldexp(1.0f, -25))), 0x0000u); // tie to even
  EXPECT_EQ(scalar(toH, f(3 * std::ldexp(1.0f, -26))), 0x0001u);
  EXPECT_EQ(scalar(toH, 0x7FC00001u), 0x7FFFu);
  EXPECT_EQ(scalar(toH, f(-0.0f)), 0x8000u);
  EXPECT_EQ(
      scalar("cvt.rn.relu.f16.f32 %h1, %r1;\ncvt.u32.u16 %r4, %h1;", f(-3.0f)),
      0u);
  const char *toB = "cvt.rn.bf16.f32 %h1, %r1;\ncvt.u32.u16 %r4, %h1;";
  EXPECT_EQ(scalar(toB, f(1.0f + std::ldexp(1.0f, -8))),
            0x3F80u); // tie to even
  EXPECT_EQ(scalar(toB, f(1.0f + 3 * std::ldexp(1.0f, -8))), 0x3F82u);
  // Widening is exact; f16 subnormals survive.
  EXPECT_EQ(scalar("cvt.u16.u32 %h1, %r1;\ncvt.f32.f16 %r4, %h1;", 0x0001u),
            f(std::ldexp(1.0f, -24)));
  // Packed: the first source goes to the upper half.
  EXPECT_EQ(scalar("cvt.rn.f16x2.f32 %r4, %r1, %r2;", f(1.0f), f(-2.0f)),
            0x3C00C000u);
  EXPECT_EQ(scalar("cvt.rn.bf16x2.f32 %r4, %r1, %r2;", f(1.0f), f(-2.0f)),
            0x3F80C000u);
  // tf32 keeps 10 mantissa bits; .rna breaks ties away from zero.
  EXPECT_EQ(
      scalar("cvt.rna.tf32.f32 %r4, %r1;", f(1.0f + std::ldexp(1.0f, -11))),
      0x3F802000u);
  // f16x2 arithmetic works per half.
  EXPECT_EQ(scalar("add.rn.f16x2 %r4, %r1, %r2;", 0x3C004000u, 0x3C00C000u),
            0x40000000u);
  EXPECT_EQ(scalar("fma.rn.f16x2 %r4, %r1, %r2, %r3;", 0x40004000u, 0x40004000u,
                   0xBC00BC00u),
            0x42004200u);
}

TEST(PTXEmulatorScalar, Fp8Conversions) {
  const char *e4 =
      "cvt.rn.satfinite.e4m3x2.f32 %h1, %r1, %r2;\ncvt.u32.u16 %r4, %h1;";
  const char *e5 =
      "cvt.rn.satfinite.e5m2x2.f32 %h1, %r1, %r2;\ncvt.u32.u16 %r4, %h1;";
  EXPECT_EQ(scalar(e4, f(448.0f), f(1000.0f)),
            0x7E7Eu); // max finite, saturated
  EXPECT_EQ(scalar(e4, f(1.0f), f(-0.5f)), 0x38B0u);
  EXPECT_EQ(scalar(e4, 0x7FC00000u, f(INFINITY)), 0x7F7Eu);
  EXPECT_EQ(scalar(e4, f(std::ldexp(1.0f, -9)), f(std::ldexp(1.0f, -10))),
            0x0100u); // subnormal; tie to 0
  EXPECT_EQ(scalar(e5, f(1.0f), f(57344.0f)), 0x3C7Bu);
  EXPECT_EQ(scalar(e5, f(1e6f), f(-1e6f)), 0x7BFBu);
  EXPECT_EQ(
      scalar("cvt.u16.u32 %h1, %r1;\ncvt.rn.f16x2.e4m3x2 %r4, %h1;", 0x38B0u),
      0x3C00B800u);
  Scalar bad = runScalar(
      "cvt.rn.e4m3x2.f32 %h1, %r1, %r2;\ncvt.u32.u16 %r4, %h1;", 0, 0);
  EXPECT_NE(bad.error.find("satfinite"), std::string::npos) << bad.error;
}

TEST(PTXEmulatorScalar, ApproxWithinDocumentedError) {
  float e = bitsToF32(scalar("ex2.approx.f32 %r4, %r1;", f(3.0f)));
  EXPECT_NEAR(e, 8.0f, 2 * std::ldexp(1.0f, -20));
  float r = bitsToF32(scalar("rcp.approx.f32 %r4, %r1;", f(3.0f)));
  EXPECT_NEAR(r, 1.0f / 3.0f, std::ldexp(1.0f, -24));
  EXPECT_EQ(scalar("ex2.approx.ftz.f32 %r4, %r1;", f(-130.0f)),
            0u); // subnormal result flushed
  EXPECT_NE(scalar("ex2.approx.f32 %r4, %r1;", f(-130.0f)), 0u);
}

TEST(PTXEmulatorMemory, LocalFramesArePerThreadAndGeneric) {
  // Each thread stores tid and tid*3 in its .local frame through a generic
  // pointer, reads them back with ld.local, and writes their sum.
  std::string text =
      std::string(kHeader) +
      ".visible .entry k(.param .u64 out)\n{\n.local .align 8 .b8 depot[16];\n"
      ".reg .b32 %r<8>;\n.reg .b64 %rd<8>;\nld.param.u64 %rd1, [out];\n"
      "mov.u64 %rd2, depot;\ncvta.local.u64 %rd3, %rd2;\nmov.u32 %r1, %tid.x;\n"
      "mul.lo.s32 %r2, %r1, 3;\nst.v2.u32 [%rd3+8], {%r1, %r2};\n"
      "ld.local.v2.u32 {%r3, %r4}, [%rd2+8];\nadd.s32 %r5, %r3, %r4;\n"
      "mul.wide.u32 %rd4, %r1, 4;\nadd.s64 %rd5, %rd1, %rd4;\nst.global.u32 "
      "[%rd5], %r5;\nret;\n}\n";
  Module m = parseOrDie(text);
  Emulator emu(m);
  std::vector<uint32_t> out(64, 0);
  uint64_t po = emu.memory().map(out.data(), out.size() * 4);
  ASSERT_EQ(launch(emu, m, "k", {1, 1, 1}, {64, 1, 1}, {po}), "");
  for (uint32_t t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], 4 * t);
}

TEST(PTXEmulatorMemory, AtomicsAcrossCTAs) {
  // Every thread of 3 CTAs x 96 threads adds 1 to a counter in shared memory
  // and its tid to a global sum; thread 0 of each CTA then adds the shared
  // count to a global counter with atom and records the old value with cas.
  std::string text =
      std::string(kHeader) +
      ".visible .entry k(.param .u64 out)\n{\n.shared .align 4 .b8 cnt[4];\n"
      ".reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<2>;\nld.param.u64 "
      "%rd1, [out];\n"
      "mov.u32 %r1, %tid.x;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 bra wait;\n"
      "st.shared.u32 [cnt], 0;\nwait:\nbar.sync 0;\n"
      "atom.shared.add.u32 %r2, [cnt], 1;\nred.global.add.u32 [%rd1+4], "
      "%r1;\nbar.sync 0;\n"
      "@%p1 bra done;\nld.shared.u32 %r3, [cnt];\natom.global.add.u32 %r4, "
      "[%rd1], %r3;\n"
      "atom.global.max.u32 %r5, [%rd1+8], %r4;\ndone:\nret;\n}\n";
  Module m = parseOrDie(text);
  Emulator emu(m);
  uint32_t out[3] = {0, 0, 0};
  uint64_t po = emu.memory().map(out, sizeof(out));
  ASSERT_EQ(launch(emu, m, "k", {3, 1, 1}, {96, 1, 1}, {po}), "");
  EXPECT_EQ(out[0], 3u * 96u);
  EXPECT_EQ(out[1], 3u * (95u * 96u / 2));
  EXPECT_EQ(out[2], 2u * 96u); // the last CTA saw the counter at 192
}

// ---------------------------------------------------------------------------
// Layout probes. The expected positions are entries read off the PTX ISA's
// figures ("Matrix fragment for ... m16n8k16", "ldmatrix"), written out as
// literals rather than recomputed from the formula the executor uses.

/// A warp kernel: copies 512 bytes of `in` to shared memory, then runs
/// \p body, which reads %rd3 (this lane's shared row address) and leaves
/// its results in %r10..%r13, stored to out[lane*4 + j].
std::vector<uint32_t> runWarpProbe(const std::string &body,
                                   const std::vector<uint32_t> &in,
                                   std::string *error = nullptr) {
  std::string text =
      std::string(kHeader) +
      ".visible .entry probe(.param .u64 out, .param .u64 in)\n{\n"
      ".reg .b32 %r<32>;\n.reg .b64 %rd<16>;\n.shared .align 16 .b8 sm[512];\n"
      "ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [in];\nmov.u32 %r1, "
      "%tid.x;\n"
      "mul.wide.u32 %rd4, %r1, 16;\nadd.s64 %rd5, %rd2, "
      "%rd4;\nld.global.v4.b32 {%r2,%r3,%r4,%r5}, [%rd5];\n"
      "mov.u64 %rd6, sm;\nadd.s64 %rd3, %rd6, %rd4;\nst.shared.v4.b32 [%rd3], "
      "{%r2,%r3,%r4,%r5};\n"
      "bar.sync 0;\nmov.b32 %r10, 0;\nmov.b32 %r11, 0;\nmov.b32 %r12, "
      "0;\nmov.b32 %r13, 0;\n" +
      body +
      "\nmul.wide.u32 %rd7, %r1, 16;\nadd.s64 %rd8, %rd1, %rd7;\n"
      "st.global.v4.b32 [%rd8], {%r10,%r11,%r12,%r13};\nret;\n}\n";
  Module m = parseOrDie(text);
  Emulator emu(m);
  std::vector<uint32_t> input = in, out(128, 0);
  input.resize(256, 0);
  uint64_t pin = emu.memory().map(input.data(), 1024),
           pout = emu.memory().map(out.data(), 512);
  std::string err = launch(emu, m, "probe", {1, 1, 1}, {32, 1, 1}, {pout, pin});
  if (error)
    *error = err;
  else
    EXPECT_EQ(err, "");
  return out;
}

/// Shared memory holds four 8x8 b16 matrices, element (j, r, c) = j*64+r*8+c.
std::vector<uint32_t> ldmatrixInput() {
  std::vector<uint32_t> in(128);
  for (unsigned e = 0; e < 256; e += 2)
    in[e / 2] = e | ((e + 1) << 16);
  return in;
}

TEST(PTXEmulatorLayout, LdmatrixX4) {
  auto out = runWarpProbe(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r10,%r11,%r12,%r13}, [%rd3];",
      ldmatrixInput());
  // Lane 0: row 0, columns 0-1 of each matrix; lane 5: row 1, columns 2-3;
  // lane 31: row 7, columns 6-7.
  EXPECT_EQ(out[0 * 4 + 0], 0x00010000u);
  EXPECT_EQ(out[0 * 4 + 3], (193u << 16) | 192u);
  EXPECT_EQ(out[5 * 4 + 0], (11u << 16) | 10u);
  EXPECT_EQ(out[5 * 4 + 2], (139u << 16) | 138u);
  EXPECT_EQ(out[31 * 4 + 1], (127u << 16) | 126u);
}

TEST(PTXEmulatorLayout, LdmatrixTransAndX2X1) {
  auto t = runWarpProbe("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
                        "{%r10,%r11,%r12,%r13}, [%rd3];",
                        ldmatrixInput());
  // Transposed: lane 5 holds rows 2-3 of column 1.
  EXPECT_EQ(t[5 * 4 + 0], (25u << 16) | 17u);
  EXPECT_EQ(t[31 * 4 + 3], (255u << 16) | 247u);
  EXPECT_EQ(t[0 * 4 + 1], (72u << 16) | 64u);
  auto x2 = runWarpProbe(
      "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r10,%r11}, [%rd3];",
      ldmatrixInput());
  EXPECT_EQ(x2[9 * 4 + 1], (83u << 16) | 82u);
  EXPECT_EQ(x2[9 * 4 + 2], 0u);
  auto x1 =
      runWarpProbe("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r10}, [%rd3];",
                   ldmatrixInput());
  EXPECT_EQ(x1[30 * 4 + 0], (61u << 16) | 60u);
}

/// mma with A and B register images taken from `in`: lane l's A registers
/// are in[l*4..], its B registers in[128 + l*2 ..]; C is zero.
const char *kMmaBody =
    "mul.wide.u32 %rd9, %r1, 16;\nadd.s64 %rd10, %rd2, %rd9;\n"
    "ld.global.v4.b32 {%r20,%r21,%r22,%r23}, [%rd10];\n"
    "mul.wide.u32 %rd11, %r1, 8;\nadd.s64 %rd12, %rd2, %rd11;\n"
    "ld.global.v2.b32 {%r24,%r25}, [%rd12+512];\nmov.b32 %r26, 0f00000000;\n";

std::vector<uint32_t> oneHotMma(const char *opcode, unsigned aLane,
                                unsigned aReg, unsigned aHalf, unsigned bLane,
                                unsigned bReg, unsigned bHalf, uint32_t oneBits,
                                unsigned halfBits) {
  std::vector<uint32_t> in(256, 0);
  in[aLane * 4 + aReg] = oneBits << (aHalf * halfBits);
  in[128 + bLane * 2 + bReg] = oneBits << (bHalf * halfBits);
  return runWarpProbe(
      std::string(kMmaBody) + opcode +
          " {%r10,%r11,%r12,%r13}, {%r20,%r21,%r22,%r23}, {%r24,%r25}, "
          "{%r26,%r26,%r26,%r26};",
      in);
}

/// Where the single 1.0 of D landed, as lane*4+reg, or -1 if not exactly one.
int oneHotPosition(const std::vector<uint32_t> &out) {
  int pos = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0)
      continue;
    if (out[i] != f32ToBits(1.0f) || pos >= 0)
      return -2;
    pos = int(i);
  }
  return pos;
}

TEST(PTXEmulatorLayout, MmaM16N8K16OneHot) {
  const char *f16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
  const char *bf16 = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
  struct Case {
    // A(i,k): lane, register, half; B(k,j): lane, register, half; D(i,j):
    // lane*4+reg.
    unsigned al, ar, ah, bl, br, bh;
    int d;
  };
  // From the ISA figures: A a0 of lane 0 is (0,0), a2 is (8,0), a4 is (0,8),
  // a7 of lane 5 is (9,11); B b0 of lane 0 is (0,0), b1 is (1,0), b2 (8,0),
  // lane 4's b0 is (0,1), lane 31's b3 is (15,7); C c0 of lane 0 is (0,0),
  // c1 (0,1), c2 (8,0), lane 5's c0 is (1,2), lane 31's c3 is (15,7).
  const Case cases[] = {
      {0, 0, 0, 0, 0, 0, 0 * 4 + 0}, // A(0,0) B(0,0) -> D(0,0)
      {0, 2, 0, 0, 1, 0, 0 * 4 + 0}, // A(0,8) B(8,0) -> D(0,0)
      {0, 0, 0, 4, 0, 0, 0 * 4 + 1}, // A(0,0) B(0,1) -> D(0,1)
      {5, 3, 1, 31, 1, 1, -1},       // A(9,11) B(15,7): k differs -> zero
      {0, 1, 0, 0, 0, 0, 0 * 4 + 2}, // A(8,0) B(0,0) -> D(8,0)
      {0, 0, 1, 0, 0, 1, 0 * 4 + 0}, // A(0,1) B(1,0) -> D(0,0)
  };
  for (const char *op : {f16, bf16}) {
    uint32_t one = op == f16 ? 0x3C00u : 0x3F80u;
    for (size_t i = 0; i < std::size(cases); ++i) {
      const Case &c = cases[i];
      auto out = oneHotMma(op, c.al, c.ar, c.ah, c.bl, c.br, c.bh, one, 16);
      EXPECT_EQ(oneHotPosition(out), c.d) << op << " case " << i;
    }
  }
  // A(1,2) is lane 5's a0; B(2,1) is lane 5's b0 (row 2*tig, col groupID);
  // D(1,1) is lane 4's c1.
  EXPECT_EQ(oneHotPosition(oneHotMma(f16, 5, 0, 0, 5, 0, 0, 0x3C00u, 16)),
            4 * 4 + 1);
  // A(15,15) is lane 31's a7; B(15,7) is lane 31's b3; D(15,7) is lane 31's c3.
  EXPECT_EQ(oneHotPosition(oneHotMma(f16, 31, 3, 1, 31, 1, 1, 0x3C00u, 16)),
            31 * 4 + 3);
}

TEST(PTXEmulatorLayout, MmaS8OneHot) {
  // m16n8k32 s8 -> s32 (the ISA's 8-bit figures): a_i byte j of lane
  // (g, t) = (lane/4, lane%4) is A(g + 8*(i%2), 4t + j + 16*(i/2)); b_i
  // byte j is B(4t + j + 16*i, g); c_i is D(g + 8*(i/2), 2t + i%2). A holds
  // 3 and B -2 at one place each: D is -6 at one place or zero everywhere.
  const char *s8 = "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32";
  struct Case {
    unsigned al, ar, ab, bl, br, bb;
    int d; // lane*4 + register, or -1
  };
  const Case cases[] = {
      {0, 0, 0, 0, 0, 0, 0},         // A(0,0) B(0,0) -> D(0,0)
      {5, 3, 2, 5, 1, 2, 4 * 4 + 3}, // A(9,22) B(22,1) -> D(9,1)
      {5, 3, 2, 5, 1, 1, -1},        // A(9,22) B(21,1): k differs
      {0, 2, 3, 31, 0, 3, -1},       // A(0,19) B(15,7): k differs
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    const Case &c = cases[i];
    std::vector<uint32_t> in(256, 0);
    in[c.al * 4 + c.ar] = 3u << (8 * c.ab);
    in[128 + c.bl * 2 + c.br] = 0xFEu << (8 * c.bb);
    std::vector<uint32_t> out = runWarpProbe(
        std::string(kMmaBody) + s8 +
            " {%r10,%r11,%r12,%r13}, {%r20,%r21,%r22,%r23}, {%r24,%r25}, "
            "{%r26,%r26,%r26,%r26};",
        in);
    int pos = -1;
    for (size_t k = 0; k < out.size(); ++k)
      if (out[k] != 0)
        pos = out[k] == uint32_t(-6) && pos < 0 ? int(k) : -2;
    EXPECT_EQ(pos, c.d) << "case " << i;
  }
  // Sums wrap in 32 bits (no .satfinite): C = INT32_MAX plus 1 * 1.
  std::vector<uint32_t> in(256, 0);
  in[0] = 1;
  in[128] = 1;
  std::vector<uint32_t> out = runWarpProbe(
      std::string(kMmaBody) + "mov.b32 %r27, 2147483647;\n" + s8 +
          " {%r10,%r11,%r12,%r13}, {%r20,%r21,%r22,%r23}, {%r24,%r25}, "
          "{%r27,%r26,%r26,%r26};",
      in);
  EXPECT_EQ(out[0], 0x80000000u);
  EXPECT_NE(parseError(std::string(kHeader) +
                       ".visible .entry k()\n{\n.reg .b32 %r<8>;\n"
                       "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 "
                       "{%r1,%r2,%r3,%r4}, {%r1,%r2}, {%r1}, "
                       "{%r1,%r2,%r3,%r4};\n}\n")
                .find("m16n8k32 s8 -> s32"),
            std::string::npos);
}

TEST(PTXEmulatorLayout, MmaF16AccumulatorAndK8OneHot) {
  // f16 accumulators pack c0,c1 (row g) and c2,c3 (row g+8), low half first.
  const char *acc16 = "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16";
  std::string body = std::string(kMmaBody) + acc16 +
                     " {%r10,%r11}, {%r20,%r21,%r22,%r23}, {%r24,%r25}, "
                     "{%r26,%r26};";
  std::vector<uint32_t> in(256, 0);
  in[0 * 4 + 1] = 0x3C00u;       // A(8,0): lane 0's a2
  in[128 + 4 * 2 + 0] = 0x3C00u; // B(0,1): lane 4's b0
  std::vector<uint32_t> out = runWarpProbe(body, in);
  for (size_t i = 0; i < out.size(); ++i) // D(8,1): lane 0's c3, upper half
    EXPECT_EQ(out[i], i == 1 ? 0x3C000000u : 0u) << i;
  // m16n8k8 f16 -> f32: A(1,2) is lane 5's a0, B(2,1) lane 5's b0, D(1,1)
  // lane 4's c1.
  std::string k8 = std::string(kMmaBody) +
                   "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
                   "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%r24}, "
                   "{%r26,%r26,%r26,%r26};";
  std::vector<uint32_t> in8(256, 0);
  in8[5 * 4 + 0] = 0x3C00u;
  in8[128 + 5 * 2 + 0] = 0x3C00u;
  EXPECT_EQ(oneHotPosition(runWarpProbe(k8, in8)), 4 * 4 + 1);
  // A(9,7) is lane 7's a3 (upper half of register 1) and B(7,3) is lane
  // 15's b1: D(9,3) is lane 5's c3.
  in8.assign(256, 0);
  in8[7 * 4 + 1] = 0x3C000000u;
  in8[128 + 15 * 2 + 0] = 0x3C000000u;
  EXPECT_EQ(oneHotPosition(runWarpProbe(k8, in8)), 5 * 4 + 3);
}

TEST(PTXEmulatorLayout, MmaM16N8K8Tf32OneHot) {
  const char *op = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  uint32_t one = f32ToBits(1.0f);
  // tf32 A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); B: b0 (t, g),
  // b1 (t+4, g).
  EXPECT_EQ(oneHotPosition(oneHotMma(op, 0, 0, 0, 0, 0, 0, one, 0)),
            0); // D(0,0)
  EXPECT_EQ(oneHotPosition(oneHotMma(op, 0, 1, 0, 0, 0, 0, one, 0)),
            2); // D(8,0)
  EXPECT_EQ(oneHotPosition(oneHotMma(op, 0, 2, 0, 0, 1, 0, one, 0)), 0); // k=4
  EXPECT_EQ(oneHotPosition(oneHotMma(op, 7, 3, 0, 31, 1, 0, one, 0)),
            7 * 4 + 3); // A(9,7) B(7,7) -> D(9,7)
  EXPECT_EQ(oneHotPosition(oneHotMma(op, 1, 0, 0, 4, 0, 0, one, 0)),
            -1); // k 1 vs 0
}

// ---------------------------------------------------------------------------
// Corpus kernels.

/// Exactly representable inputs: multiples of 1/16 in [-4, 4].
std::vector<float> exactValues(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-64, 64);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(gen) / 16.0f;
  return v;
}

template <typename Enc>
std::vector<uint16_t> encode16(const std::vector<float> &v, Enc enc) {
  std::vector<uint16_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = enc(v[i]);
  return r;
}

void checkGemm(const std::string &kernel, bool bf16, bool tf32) {
  const unsigned M = 32, N = 32, K = 64;
  Module m = parseOrDie(readInput("mma_gemm.ptx"));
  auto A = exactValues(M * K, 1), B = exactValues(K * N, 2);
  Emulator emu(m);
  std::vector<uint16_t> a16 = encode16(A, bf16 ? f32ToBF16 : f32ToHalf),
                        b16 = encode16(B, bf16 ? f32ToBF16 : f32ToHalf);
  std::vector<float> C(M * N, -1.0f);
  uint64_t pa = tf32 ? emu.memory().map(A.data(), A.size() * 4)
                     : emu.memory().map(a16.data(), a16.size() * 2);
  uint64_t pb = tf32 ? emu.memory().map(B.data(), B.size() * 4)
                     : emu.memory().map(b16.data(), b16.size() * 2);
  uint64_t pc = emu.memory().map(C.data(), C.size() * 4);
  ASSERT_EQ(launch(emu, m, kernel, {N / 8, M / 16, 1}, {32, 1, 1},
                   {pa, pb, pc, M, N, K}),
            "");
  size_t bad = 0;
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) {
      double ref = 0;
      for (unsigned k = 0; k < K; ++k)
        ref += double(A[i * K + k]) * B[k * N + j];
      bad += C[i * N + j] != float(ref);
    }
  EXPECT_EQ(bad, 0u) << kernel;
}

TEST(PTXEmulatorCorpus, NvccMmaGemmF16) { checkGemm("gemm_f16", false, false); }
TEST(PTXEmulatorCorpus, NvccMmaGemmBF16) {
  checkGemm("gemm_bf16", true, false);
}
TEST(PTXEmulatorCorpus, NvccMmaGemmTF32) {
  checkGemm("gemm_tf32", false, true);
}

TEST(PTXEmulatorCorpus, MlirMmaCpAsyncGemm) {
  Module m = parseOrDie(readInput("mma_cpasync.ptx"));
  const unsigned S = 64;
  auto A = exactValues(S * S, 3), Bt = exactValues(S * S, 4); // Bt is N x K
  auto a16 = encode16(A, f32ToHalf), b16 = encode16(Bt, f32ToHalf);
  std::vector<float> C(S * S, -1.0f);
  Emulator emu(m);
  uint64_t pa = emu.memory().map(a16.data(), a16.size() * 2);
  uint64_t pb = emu.memory().map(b16.data(), b16.size() * 2);
  uint64_t pc = emu.memory().map(C.data(), C.size() * 4);
  // Memref descriptors: allocated, aligned, offset, sizes[2], strides[2].
  std::vector<uint64_t> args;
  for (uint64_t p : {pa, pb, pc})
    for (uint64_t v : {p, p, uint64_t(0), uint64_t(S), uint64_t(S), uint64_t(S),
                       uint64_t(1)})
      args.push_back(v);
  ASSERT_EQ(launch(emu, m, "mma_cpasync", {S / 8, S / 16, 1}, {32, 1, 1}, args),
            "");
  size_t bad = 0;
  for (unsigned i = 0; i < S; ++i)
    for (unsigned j = 0; j < S; ++j) {
      double ref = 0;
      for (unsigned k = 0; k < S; ++k)
        ref += double(A[i * S + k]) * Bt[j * S + k];
      bad += C[i * S + j] != float(ref);
    }
  EXPECT_EQ(bad, 0u);
}

struct BlockSum {
  std::string error;
  std::vector<float> out;
};
BlockSum runBlockSum(const std::string &kernel, unsigned n, unsigned blocks,
                     unsigned threads) {
  Module m = parseOrDie(readInput("warp_reduce.ptx"));
  std::vector<float> in(n);
  for (unsigned i = 0; i < n; ++i)
    in[i] = float(i % 97) - 40.0f;
  BlockSum r;
  r.out.assign(blocks, 0);
  Emulator emu(m);
  uint64_t pi = emu.memory().map(in.data(), n * 4),
           po = emu.memory().map(r.out.data(), blocks * 4);
  r.error =
      launch(emu, m, kernel, {blocks, 1, 1}, {threads, 1, 1}, {pi, po, n});
  return r;
}

TEST(PTXEmulatorCorpus, ShuffleReduction) {
  const unsigned n = 5000, blocks = 3, threads = 256;
  BlockSum r = runBlockSum("block_sum", n, blocks, threads);
  ASSERT_EQ(r.error, "");
  for (unsigned b = 0; b < blocks; ++b) {
    double ref = 0;
    for (unsigned i = b * threads; i < n; i += blocks * threads)
      for (unsigned t = 0; t < threads && i + t < n; ++t)
        ref += float((i + t) % 97) - 40.0f;
    EXPECT_EQ(r.out[b], float(ref)) << "block " << b;
  }
}

TEST(PTXEmulatorCorpus, VoteAndDivergence) {
  Module m = parseOrDie(readInput("warp_reduce.ptx"));
  Emulator emu(m);
  std::vector<int32_t> in(64);
  for (int i = 0; i < 64; ++i)
    in[i] = (i < 32) ? (i % 3 == 0 ? -1 : 1) : 5;
  std::vector<uint32_t> out(6, 7);
  uint64_t pi = emu.memory().map(in.data(), 256),
           po = emu.memory().map(out.data(), 24);
  ASSERT_EQ(launch(emu, m, "vote_probe", {1, 1, 1}, {64, 1, 1}, {pi, po}), "");
  uint32_t ballot = 0;
  for (int i = 0; i < 32; ++i)
    ballot |= uint32_t(i % 3 != 0) << i;
  EXPECT_EQ(out, (std::vector<uint32_t>{ballot, 0, 1, 0xFFFFFFFFu, 1, 1}));

  std::vector<float> vin(32), vout(32, 0);
  for (int i = 0; i < 32; ++i)
    vin[i] = float(i + 1);
  uint64_t a = emu.memory().map(vin.data(), 128),
           b = emu.memory().map(vout.data(), 128);
  ASSERT_EQ(
      launch(emu, m, "diverge_then_shuffle", {1, 1, 1}, {32, 1, 1}, {a, b}),
      "");
  for (int l = 0; l < 32; ++l) {
    auto partial = [&](int lane) {
      float s = 0;
      for (int i = 0; i <= lane; ++i)
        s += vin[i];
      return (lane & 1) ? -s : s;
    };
    EXPECT_EQ(vout[l], partial(l) + partial(l ^ 1)) << "lane " << l;
  }
}

struct Pipeline {
  std::string error;
  size_t wrong = 0;
};
Pipeline runPipeline(const std::string &kernel, bool hazards) {
  Module m = parseOrDie(readInput("cp_async_pipeline.ptx"));
  const unsigned tiles = 5;
  std::vector<float> in(tiles * 512), out(tiles * 512, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i) * 0.5f;
  Emulator emu(m);
  uint64_t pi = emu.memory().map(in.data(), in.size() * 4),
           po = emu.memory().map(out.data(), out.size() * 4);
  Pipeline p;
  p.error =
      launch(emu, m, kernel, {1, 1, 1}, {128, 1, 1}, {pi, po, tiles}, hazards);
  for (unsigned t = 0; t < tiles; ++t)
    for (unsigned i = 0; i < 512; ++i)
      p.wrong += out[t * 512 + i] != 2.0f * in[t * 512 + 511 - i] + float(t);
  return p;
}

TEST(PTXEmulatorCorpus, CpAsyncPipeline) {
  Pipeline p = runPipeline("pipeline", true);
  EXPECT_EQ(p.error, "");
  EXPECT_EQ(p.wrong, 0u);
}

struct Bulk {
  std::string error;
  size_t wrong = 0;
};
Bulk runBulk(const std::string &kernel, unsigned threads) {
  Module m = parseOrDie(readInput("mbarrier_bulk.ptx"));
  const unsigned tiles = 4;
  std::vector<float> in(tiles * 256), out(tiles * 256, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i) - 300.0f;
  Emulator emu(m);
  uint64_t pi = emu.memory().map(in.data(), in.size() * 4),
           po = emu.memory().map(out.data(), out.size() * 4);
  Bulk b;
  b.error = launch(emu, m, kernel, {2, 1, 1}, {threads, 1, 1}, {pi, po, tiles});
  for (unsigned t = 0; t < tiles; ++t)
    for (unsigned i = 0; i < 256; ++i)
      b.wrong += out[t * 256 + i] != 3.0f * in[t * 256 + 255 - i] + float(t);
  return b;
}

TEST(PTXEmulatorCorpus, MbarrierBulkCopy) {
  // Four phases (parity 0, 1, 0, 1) on one mbarrier, 1 to 3 warps, 2 CTAs
  // writing the same output.
  for (unsigned threads : {32u, 64u, 96u}) {
    Bulk b = runBulk("bulk_copy", threads);
    EXPECT_EQ(b.error, "") << threads;
    EXPECT_EQ(b.wrong, 0u) << threads;
  }
}

/// C[64][N] = scaleA * A[64][K] * B[N][K]^T through wgmma
/// (Inputs/wgmma_gemm.cu).
struct WgmmaRun {
  std::string error;
  size_t wrong = 0;
};
WgmmaRun runWgmma(const std::string &kernel, bool bf16, unsigned N,
                  float scaleA) {
  Module m = parseOrDie(readInput("wgmma_gemm.ptx"));
  const unsigned M = 64, K = 128;
  auto A = exactValues(M * K, 7), B = exactValues(N * K, 8);
  auto a16 = encode16(A, bf16 ? f32ToBF16 : f32ToHalf);
  auto b16 = encode16(B, bf16 ? f32ToBF16 : f32ToHalf);
  std::vector<float> C(M * N, -1.0f);
  Emulator emu(m);
  uint64_t pa = emu.memory().map(a16.data(), a16.size() * 2),
           pb = emu.memory().map(b16.data(), b16.size() * 2),
           pc = emu.memory().map(C.data(), C.size() * 4);
  WgmmaRun r;
  r.error = launch(emu, m, kernel, {1, 1, 1}, {128, 1, 1}, {pa, pb, pc, K});
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) {
      double ref = 0;
      for (unsigned k = 0; k < K; ++k)
        ref += double(A[i * K + k]) * B[j * K + k];
      r.wrong += C[i * N + j] != float(scaleA * ref);
    }
  return r;
}

TEST(PTXEmulatorCorpus, WgmmaSwizzleModes) {
  for (const char *k : {"wg_bf16_sw128", "wg_bf16_sw64", "wg_bf16_sw32",
                        "wg_bf16_interleave"}) {
    WgmmaRun r = runWgmma(k, true, 64, 1.0f);
    EXPECT_EQ(r.error, "") << k;
    EXPECT_EQ(r.wrong, 0u) << k;
  }
  WgmmaRun neg = runWgmma("wg_f16_sw128_neg", false, 64, -1.0f);
  EXPECT_EQ(neg.error, "");
  EXPECT_EQ(neg.wrong, 0u);
  WgmmaRun n16 = runWgmma("wg_f16_sw64_n16", false, 16, 1.0f);
  EXPECT_EQ(n16.error, "");
  EXPECT_EQ(n16.wrong, 0u);
}

TEST(PTXEmulatorCorpus, FlashAttentionForward) {
  // nvcc's FA2 forward (Inputs/flash_attn.cu): cp.async double buffering,
  // swizzled shared memory, ldmatrix(.trans), mma.sync, quad shuffles and
  // ex2.approx, against attention in binary64. P and O are rounded to f16,
  // so the tolerance is about two f16 ulps at |O| <= 1.
  Module m = parseOrDie(readInput("flash_attn.ptx"));
  const unsigned S = 128, D = 64;
  std::vector<float> q = exactValues(S * D, 11), k = exactValues(S * D, 12),
                     v = exactValues(S * D, 13);
  for (unsigned i = 0; i < S * D; ++i) {
    q[i] /= 4;
    k[i] /= 4;
    v[i] /= 4;
  }
  auto q16 = encode16(q, f32ToHalf), k16 = encode16(k, f32ToHalf),
       v16 = encode16(v, f32ToHalf);
  std::vector<uint16_t> o16(S * D, 0xFFFF);
  Emulator emu(m);
  uint64_t pq = emu.memory().map(q16.data(), S * D * 2),
           pk = emu.memory().map(k16.data(), S * D * 2),
           pv = emu.memory().map(v16.data(), S * D * 2),
           po = emu.memory().map(o16.data(), S * D * 2);
  const double scale = 0.125;
  uint64_t scaleLog2 = f32ToBits(float(scale * 1.4426950408889634));
  ASSERT_EQ(launch(emu, m, "fa2_fwd", {S / 64, 1, 1}, {128, 1, 1},
                   {pq, pk, pv, po, S, scaleLog2}),
            "");
  double maxErr = 0;
  for (unsigned i = 0; i < S; ++i) {
    std::vector<double> p(S);
    double mx = -INFINITY, z = 0;
    for (unsigned j = 0; j < S; ++j) {
      double dot = 0;
      for (unsigned d = 0; d < D; ++d)
        dot += double(q[i * D + d]) * k[j * D + d];
      p[j] = dot * scale;
      mx = std::max(mx, p[j]);
    }
    for (unsigned j = 0; j < S; ++j)
      z += (p[j] = std::exp(p[j] - mx));
    for (unsigned d = 0; d < D; ++d) {
      double ref = 0;
      for (unsigned j = 0; j < S; ++j)
        ref += p[j] * v[j * D + d];
      double got = decodeFormat(o16[i * D + d], FloatFormat::F16);
      maxErr = std::max(maxErr, std::fabs(got - ref / z));
    }
  }
  EXPECT_LT(maxErr, 2e-3);
  EXPECT_GT(maxErr, 0.0); // f16 rounding: an exact match would be suspicious
}

// ---------------------------------------------------------------------------
// Hazards and undefined behaviour that must be reported.

TEST(PTXEmulatorHazards, MissingBarrierBeforeCrossWarpRead) {
  BlockSum r = runBlockSum("block_sum_nosync", 1000, 1, 128);
  EXPECT_NE(r.error.find("hazard"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("no barrier in between"), std::string::npos)
      << r.error;
  r = runBlockSum("block_sum", 1000, 1, 128);
  EXPECT_EQ(r.error, "");
}

TEST(PTXEmulatorHazards, CpAsyncReadBeforeWaitGroup) {
  Pipeline p = runPipeline("pipeline_nowait", true);
  EXPECT_NE(p.error.find("async copy to it is in flight"), std::string::npos)
      << p.error;
  // Without the checker the delayed copies make the numbers wrong as well.
  p = runPipeline("pipeline_nowait", false);
  EXPECT_EQ(p.error, "");
  EXPECT_GT(p.wrong, 0u);
  p = runPipeline("pipeline_nosync", true);
  EXPECT_NE(p.error.find("no barrier in between"), std::string::npos)
      << p.error;
}

TEST(PTXEmulatorHazards, BulkCopyReadBeforeMbarrierWait) {
  Bulk b = runBulk("bulk_copy_early_read", 64);
  EXPECT_NE(
      b.error.find("ld.shared.f32: hazard: reads shared byte 0x0 while an "
                   "async copy to it is in flight"),
      std::string::npos)
      << b.error;
  // Announcing more transaction bytes than are copied: the phase never ends.
  b = runBulk("bulk_copy_short_tx", 64);
  EXPECT_NE(
      b.error.find("deadlock: the mbarrier phase this warp waits for never "
                   "completes (completed phases 0, pending arrivals 0, "
                   "transaction bytes outstanding 1024)"),
      std::string::npos)
      << b.error;
}

TEST(PTXEmulatorHazards, WgmmaAccumulatorReadBeforeWait) {
  // ptxas agrees: it injects a warpgroup.wait into this kernel (C7517).
  WgmmaRun r = runWgmma("wg_bf16_early_read", true, 64, 1.0f);
  EXPECT_NE(r.error.find("hazard: reads wgmma accumulator"), std::string::npos)
      << r.error;
  EXPECT_NE(r.error.find("before the wgmma.wait_group that completes it"),
            std::string::npos)
      << r.error;
}

TEST(PTXEmulatorHazards, DivergentShuffle) {
  Module m = parseOrDie(readInput("warp_reduce.ptx"));
  Emulator emu(m);
  std::vector<float> in(32, 1.0f), out(32);
  uint64_t a = emu.memory().map(in.data(), 128),
           b = emu.memory().map(out.data(), 128);
  std::string err =
      launch(emu, m, "divergent_shfl", {1, 1, 1}, {32, 1, 1}, {a, b});
  EXPECT_NE(err.find("shfl.sync"), std::string::npos) << err;
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
  // A shuffle whose mask names lanes that have exited.
  std::string text = std::string(kHeader) +
                     ".visible .entry k()\n{\n.reg .b32 %r<4>;\n.reg .pred "
                     "%p<2>;\nmov.u32 %r1, %laneid;\n"
                     "setp.ge.u32 %p1, %r1, 16;\n@%p1 ret;\nshfl.sync.bfly.b32 "
                     "%r2, %r1, 1, 31, -1;\nret;\n}\n";
  Module m2 = parseOrDie(text);
  Emulator emu2(m2);
  err = launch(emu2, m2, "k", {1, 1, 1}, {32, 1, 1}, {});
  EXPECT_NE(err.find("names inactive lanes 0xffff0000"), std::string::npos)
      << err;
}

TEST(PTXEmulatorHazards, OutOfBoundsAndDeadlock) {
  Module m = parseOrDie(readInput("warp_reduce.ptx"));
  Emulator emu(m);
  std::vector<float> in(16), out(32);
  uint64_t a = emu.memory().map(in.data(), 64),
           b = emu.memory().map(out.data(), 128);
  std::string err =
      launch(emu, m, "diverge_then_shuffle", {1, 1, 1}, {32, 1, 1}, {a, b});
  EXPECT_NE(err.find("outside every mapped buffer"), std::string::npos) << err;
  std::string text = std::string(kHeader) +
                     ".visible .entry k()\n{\n.reg .b32 %r<4>;\n.reg .pred "
                     "%p<2>;\nmov.u32 %r1, %tid.x;\n"
                     "setp.lt.u32 %p1, %r1, 40;\n@%p1 bra skip;\nbar.sync "
                     "0;\nskip:\nbar.sync 0;\nret;\n}\n";
  // Threads 40-63 wait at the first bar.sync, the others at the second:
  // allowed since sm_70 (barriers count threads), and the kernel finishes.
  Module m2 = parseOrDie(text);
  Emulator emu2(m2);
  EXPECT_EQ(launch(emu2, m2, "k", {1, 1, 1}, {64, 1, 1}, {}), "");
  // A loop that never ends hits the instruction limit.
  std::string loop = std::string(kHeader) +
                     ".visible .entry k()\n{\nspin:\nbra.uni spin;\n}\n";
  Module m3 = parseOrDie(loop);
  Emulator emu3(m3);
  auto params = packParams(*m3.findKernel("k"), {});
  ASSERT_TRUE(bool(params));
  EmulatorOptions opts;
  opts.maxWarpInstructions = 1000;
  LaunchConfig cfg;
  auto st = emu3.launch("k", cfg, *params, opts);
  ASSERT_FALSE(bool(st));
  EXPECT_NE(llvm::toString(st.takeError()).find("instruction limit"),
            std::string::npos);
}

TEST(PTXEmulatorHazards, MutatedLdmatrixTransposeIsCaught) {
  // The note's seeded bug: ldmatrix .x2.trans -> .x2 in the B load.
  std::string text = readInput("mma_gemm.ptx");
  size_t pos = text.find("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos,
               std::strlen("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"),
               "ldmatrix.sync.aligned.m8n8.x2.shared.b16");
  Module m = parseOrDie(text);
  Emulator emu(m);
  const unsigned M = 16, N = 8, K = 16;
  auto A = exactValues(M * K, 5), B = exactValues(K * N, 6);
  auto a16 = encode16(A, f32ToHalf), b16 = encode16(B, f32ToHalf);
  std::vector<float> C(M * N);
  uint64_t pa = emu.memory().map(a16.data(), a16.size() * 2),
           pb = emu.memory().map(b16.data(), b16.size() * 2),
           pc = emu.memory().map(C.data(), C.size() * 4);
  ASSERT_EQ(
      launch(emu, m, "gemm_f16", {1, 1, 1}, {32, 1, 1}, {pa, pb, pc, M, N, K}),
      "");
  size_t bad = 0;
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) {
      double ref = 0;
      for (unsigned k = 0; k < K; ++k)
        ref += double(A[i * K + k]) * B[k * N + j];
      bad += C[i * N + j] != float(ref);
    }
  EXPECT_GT(bad, M * N / 2);
}

// ---------------------------------------------------------------------------
// The hazard checker's must-fire cases on small hand-written kernels. Each
// error must name the file and the line of the offending instruction; each
// case also runs with the synchronisation in place and must then pass, so
// the checks cannot fire on everything.

/// 1-based line of the first line of \p text that contains \p needle.
unsigned lineOf(const std::string &text, const std::string &needle) {
  size_t pos = text.find(needle);
  EXPECT_NE(pos, std::string::npos) << needle;
  return 1 + unsigned(std::count(text.begin(), text.begin() + pos, '\n'));
}

/// Runs \p text's kernel `k(out)` with \p threads threads and a 64-word
/// output buffer; returns the error text or "".
std::string runSmall(const std::string &text, unsigned threads,
                     std::vector<uint32_t> *outCopy = nullptr) {
  Module m = parseOrDie(text);
  Emulator emu(m);
  std::vector<uint32_t> out(64, 0), in(64);
  for (unsigned i = 0; i < 64; ++i)
    in[i] = 100 + i;
  uint64_t po = emu.memory().map(out.data(), 256),
           pi = emu.memory().map(in.data(), 256);
  std::string err = launch(emu, m, "k", {1, 1, 1}, {threads, 1, 1}, {po, pi});
  if (outCopy)
    *outCopy = out;
  return err;
}

std::string smallKernel(const std::string &body) {
  return std::string(kHeader) +
         ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
         ".reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n"
         ".shared .align 16 .b8 sm[256];\n"
         "ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [in];\n"
         "mov.u32 %r1, %tid.x;\n" +
         body + "\nret;\n}\n";
}

TEST(PTXEmulatorHazards, SharedWriteThenReadByAnotherWarp) {
  // Thread 0 (warp 0) writes sm[0..3], thread 32 (warp 1) reads it.
  auto kernel = [](const char *sync) {
    return smallKernel(std::string("setp.eq.u32 %p1, %r1, 0;\n"
                                   "@%p1 st.shared.u32 [sm], %r1;\n") +
                       sync +
                       "setp.eq.u32 %p2, %r1, 32;\n"
                       "@%p2 ld.shared.u32 %r2, [sm];\n"
                       "@%p2 st.global.u32 [%rd1], %r2;");
  };
  std::string racy = kernel("");
  std::string err = runSmall(racy, 64);
  EXPECT_NE(
      err.find("test.ptx:" + std::to_string(lineOf(racy, "@%p2 ld.shared")) +
               ": ld.shared.u32: hazard: reads shared byte 0x0 written "
               "by warp 0 with no barrier in between (race) (cta "
               "(0,0,0), warp 1, lane 0)"),
      std::string::npos)
      << err;
  std::vector<uint32_t> out;
  EXPECT_EQ(runSmall(kernel("bar.sync 0;\n"), 64, &out), "");
  EXPECT_EQ(out[0], 0u);
  // Within one warp no barrier is needed (the lanes run in lockstep).
  EXPECT_EQ(runSmall(smallKernel("setp.eq.u32 %p1, %r1, 0;\n"
                                 "@%p1 st.shared.u32 [sm], %r1;\n"
                                 "setp.eq.u32 %p2, %r1, 5;\n"
                                 "@%p2 ld.shared.u32 %r2, [sm];"),
                     32),
            "");
  // The other order (warp 1 writes what warp 0 read) and two writers are
  // races too, reported at the second access.
  std::string war = smallKernel("setp.eq.u32 %p1, %r1, 0;\n"
                                "@%p1 ld.shared.u32 %r2, [sm+8];\n"
                                "setp.eq.u32 %p2, %r1, 33;\n"
                                "@%p2 st.shared.u32 [sm+8], %r1;");
  err = runSmall(war, 64);
  EXPECT_NE(
      err.find("test.ptx:" + std::to_string(lineOf(war, "@%p2 st.shared")) +
               ": st.shared.u32: hazard: writes shared byte 0x8 read "
               "by another warp"),
      std::string::npos)
      << err;
  std::string waw = smallKernel("st.shared.u32 [sm+4], %r1;");
  err = runSmall(waw, 64);
  EXPECT_NE(err.find("test.ptx:" + std::to_string(lineOf(waw, "st.shared")) +
                     ": st.shared.u32: hazard: writes shared byte 0x4 also "
                     "written by warp 0"),
            std::string::npos)
      << err;
}

TEST(PTXEmulatorHazards, CpAsyncGroupsAndWaitGroup) {
  // Two commit groups; thread 0 reads a word of each after WAIT.
  auto kernel = [](const char *wait) {
    return smallKernel(
        std::string("setp.ne.u32 %p1, %r1, 0;\n@%p1 bra done;\n"
                    "cp.async.ca.shared.global [sm], [%rd2], 16;\n"
                    "cp.async.commit_group;\n"
                    "cp.async.ca.shared.global [sm+16], [%rd2+16], 16;\n"
                    "cp.async.commit_group;\n") +
        wait +
        "ld.shared.u32 %r2, [sm+4];\nst.global.u32 [%rd1], %r2;\n"
        "ld.shared.u32 %r3, [sm+20];\nst.global.u32 [%rd1+4], %r3;\n"
        "done:");
  };
  std::vector<uint32_t> out;
  EXPECT_EQ(runSmall(kernel("cp.async.wait_group 0;\n"), 32, &out), "");
  EXPECT_EQ(out[0], 101u);
  EXPECT_EQ(out[1], 105u);
  EXPECT_EQ(runSmall(kernel("cp.async.wait_all;\n"), 32), "");
  // wait_group 1 completes the first group only.
  std::string one = kernel("cp.async.wait_group 1;\n");
  std::string err = runSmall(one, 32);
  EXPECT_NE(
      err.find("test.ptx:" + std::to_string(lineOf(one, "ld.shared.u32 %r3")) +
               ": ld.shared.u32: hazard: reads shared byte 0x14 while "
               "an async copy to it is in flight"),
      std::string::npos)
      << err;
  std::string none = kernel("");
  err = runSmall(none, 32);
  EXPECT_NE(
      err.find("test.ptx:" + std::to_string(lineOf(none, "ld.shared.u32 %r2")) +
               ": ld.shared.u32: hazard: reads shared byte 0x4 while "
               "an async copy"),
      std::string::npos)
      << err;
}

TEST(PTXEmulatorHazards, ShuffleWithInactiveLanesInMask) {
  // Lanes 0-15 and 16-31 reach two different shuffles whose membermask names
  // the whole warp.
  std::string split = smallKernel("setp.lt.u32 %p1, %r1, 16;\n@%p1 bra low;\n"
                                  "shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\n"
                                  "bra.uni done;\nlow:\n"
                                  "shfl.sync.bfly.b32 %r3, %r1, 1, 31, -1;\n"
                                  "done:");
  std::string err = runSmall(split, 32);
  EXPECT_NE(err.find("test.ptx:" +
                     std::to_string(lineOf(split, "shfl.sync.bfly.b32 %r3")) +
                     ": shfl.sync.bfly.b32: deadlock: lanes 0x0000ffff wait"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("membermask 0xffffffff names lanes 0xffff0000 that are "
                     "not active here"),
            std::string::npos)
      << err;
  // A predicated shuffle: the lanes whose guard is false skip it.
  std::string pred = smallKernel("setp.lt.u32 %p1, %r1, 8;\n"
                                 "@%p1 shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;");
  err = runSmall(pred, 32);
  EXPECT_NE(err.find("test.ptx:" + std::to_string(lineOf(pred, "@%p1 shfl")) +
                     ": shfl.sync.idx.b32: "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("names lanes 0xffffff00"), std::string::npos) << err;
  // A membermask naming only the active half is fine, and so is the full
  // mask when every lane arrives.
  EXPECT_EQ(runSmall(smallKernel("setp.lt.u32 %p1, %r1, 16;\n@%p1 bra low;\n"
                                 "shfl.sync.bfly.b32 %r2, %r1, 1, 31, "
                                 "0xffff0000;\nbra.uni done;\nlow:\n"
                                 "shfl.sync.bfly.b32 %r3, %r1, 1, 31, "
                                 "0x0000ffff;\ndone:"),
                     32),
            "");
  // The source lane is outside the membermask: undefined, reported.
  std::string src = smallKernel("setp.lt.u32 %p1, %r1, 16;\n@%p1 bra low;\n"
                                "bra.uni done;\nlow:\n"
                                "shfl.sync.idx.b32 %r3, %r1, 20, 31, "
                                "0x0000ffff;\ndone:");
  err = runSmall(src, 32);
  EXPECT_NE(err.find("source lane 20 is not in the membermask"),
            std::string::npos)
      << err;
}

TEST(PTXEmulatorHazards, OutOfBoundsAccesses) {
  std::string sh = smallKernel("ld.shared.u32 %r2, [sm+256];");
  std::string err = runSmall(sh, 32);
  EXPECT_NE(err.find("test.ptx:" + std::to_string(lineOf(sh, "ld.shared")) +
                     ": ld.shared.u32: shared access at 0x100 beyond the "
                     "CTA's 256 bytes (cta (0,0,0), warp 0, lane 0)"),
            std::string::npos)
      << err;
  EXPECT_EQ(runSmall(smallKernel("ld.shared.u32 %r2, [sm+252];"), 32), "");
  // One word past the 256-byte output buffer, from thread 1 only.
  std::string gl = smallKernel("mul.wide.u32 %rd3, %r1, 256;\n"
                               "add.s64 %rd4, %rd1, %rd3;\n"
                               "st.global.u32 [%rd4], %r1;");
  err = runSmall(gl, 2);
  EXPECT_NE(err.find("test.ptx:" + std::to_string(lineOf(gl, "st.global")) +
                     ": st.global.u32: global access of 4 bytes at "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("is outside every mapped buffer (cta (0,0,0), warp 0, "
                     "lane 1)"),
            std::string::npos)
      << err;
  // A cp.async source past the end of the input buffer.
  std::string cp =
      smallKernel("cp.async.ca.shared.global [sm], [%rd2+256], 4;\n"
                  "cp.async.wait_all;");
  err = runSmall(cp, 1);
  EXPECT_NE(err.find("test.ptx:" + std::to_string(lineOf(cp, "cp.async.ca")) +
                     ": cp.async.ca.shared.global: cp.async source "),
            std::string::npos)
      << err;
}

// ---------------------------------------------------------------------------
// wgmma layout probes: a single 1.0 in A and in B, placed at byte offsets
// worked out by hand from the PTX ISA's canonical K-major layouts (core
// matrices of 8 rows x 16 bytes; LBO between core matrices along K, SBO
// between 8-row groups; 128/64/32-byte swizzles XOR address bits [4,7) with
// bits [7,10), two bits of [7,9) and bit 7), and the position of the 1.0 in
// D from the wgmma D fragment figure (warp w owns rows 16w..16w+15; d[i] of
// lane l is row l/4 + 8*((i%4)/2), column 8*(i/4) + 2*(l%4) + i%2).

/// One warpgroup copies 16 KiB of `in` to shared memory, runs one
/// m64nNk16 f16 wgmma (N = 8 unless given; \p form replaces "k16.f32.f16.f16")
/// with the given descriptors, scale-d = 0 and imm-trans-a/b \p trans ("0, 0"
/// = both K-major; empty for the fp8 forms, which have none), and stores
/// d[0..N/2) of thread t to out[t*N/2 ..]. \p between goes between
/// commit_group and wait_group.
std::string wgmmaProbeText(const std::string &between,
                           const std::string &trans = "0, 0", unsigned n = 8,
                           const std::string &form = "k16.f32.f16.f16") {
  std::string copy;
  for (int i = 0; i < 8; ++i) {
    std::string off = std::to_string(16 * i);
    copy += "ld.global.v4.b32 {%r2,%r3,%r4,%r5}, [%rd6+" + off +
            "];\nst.shared.v4.b32 [%rd8+" + off + "], {%r2,%r3,%r4,%r5};\n";
  }
  std::string acc, store;
  for (unsigned i = 1; i <= n / 2; ++i)
    acc += (i > 1 ? ",%f" : "%f") + std::to_string(i);
  for (unsigned j = 0; j < n / 8; ++j) {
    std::string f =
        "%f" + std::to_string(4 * j + 1) + ",%f" + std::to_string(4 * j + 2) +
        ",%f" + std::to_string(4 * j + 3) + ",%f" + std::to_string(4 * j + 4);
    store += "st.global.v4.f32 [%rd10+" + std::to_string(16 * j) + "], {" + f +
             "};\n";
  }
  return ".version 8.0\n.target sm_90a\n.address_size 64\n"
         ".visible .entry wg(.param .u64 out, .param .u64 in, .param .u64 da, "
         ".param .u64 db)\n{\n.reg .b32 %r<16>;\n.reg .f32 %f<" +
         std::to_string(n / 2 + 4) +
         ">;\n"
         ".reg .b64 %rd<16>;\n.reg .pred %p<4>;\n"
         ".shared .align 1024 .b8 sm[16384];\n"
         "ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [in];\n"
         "ld.param.u64 %rd3, [da];\nld.param.u64 %rd4, [db];\n"
         "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd5, %r1, 128;\n"
         "add.s64 %rd6, %rd2, %rd5;\nmov.u64 %rd7, sm;\n"
         "add.s64 %rd8, %rd7, %rd5;\n" +
         copy +
         "bar.sync 0;\nsetp.ne.u32 %p1, %r1, %r1;\n"
         "wgmma.fence.sync.aligned;\n"
         "wgmma.mma_async.sync.aligned.m64n" +
         std::to_string(n) + form + " {" + acc + "}, %rd3, %rd4, %p1" +
         // Integer forms take no scale immediates.
         (form.find(".s8") == std::string::npos ? ", 1, 1" : "") +
         (trans.empty() ? "" : ", " + trans) +
         ";\n"
         "wgmma.commit_group.sync.aligned;\n" +
         between +
         "wgmma.wait_group.sync.aligned 0;\n"
         "mul.wide.u32 %rd9, %r1, " +
         std::to_string(2 * n) + ";\nadd.s64 %rd10, %rd1, %rd9;\n" + store +
         "ret;\n}\n";
}

uint64_t wgmmaDesc(unsigned start, unsigned lbo, unsigned sbo,
                   unsigned swizzle) {
  return uint64_t(start >> 4) | (uint64_t(lbo >> 4) << 16) |
         (uint64_t(sbo >> 4) << 32) | (uint64_t(swizzle) << 62);
}

/// Returns out (64*N floats as bits) or sets \p error.
std::vector<uint32_t> runWgmmaProbe(const std::string &text, unsigned aByte,
                                    unsigned bByte, uint64_t da, uint64_t db,
                                    std::string *error = nullptr,
                                    unsigned n = 8) {
  Module m = parseOrDie(text);
  Emulator emu(m);
  std::vector<uint16_t> in(8192, 0);
  in[aByte / 2] = 0x3C00;
  in[bByte / 2] = 0x3C00;
  std::vector<uint32_t> out(64 * n, 0);
  uint64_t pi = emu.memory().map(in.data(), in.size() * 2),
           po = emu.memory().map(out.data(), out.size() * 4);
  std::string err =
      launch(emu, m, "wg", {1, 1, 1}, {128, 1, 1}, {po, pi, da, db});
  if (error)
    *error = err;
  else
    EXPECT_EQ(err, "");
  return out;
}

TEST(PTXEmulatorLayout, WgmmaDescriptorOneHot) {
  std::string text = wgmmaProbeText("");
  struct Case {
    const char *what;
    unsigned aByte, bByte; // shared byte offsets of the two ones
    uint64_t da, db;
    int d; // expected position in out: thread*4 + i, or -1 for all zero
  };
  const uint64_t iA = wgmmaDesc(0, 128, 256, 0),
                 iB = wgmmaDesc(2048, 128, 256, 0);
  const uint64_t s128A = wgmmaDesc(0, 16, 1024, 1),
                 s128B = wgmmaDesc(8192, 16, 1024, 1);
  const uint64_t s64A = wgmmaDesc(0, 16, 512, 2),
                 s64B = wgmmaDesc(8192, 16, 512, 2);
  const uint64_t s32A = wgmmaDesc(0, 16, 256, 3),
                 s32B = wgmmaDesc(8192, 16, 256, 3);
  const Case cases[] = {
      // No swizzle, LBO 128, SBO 256: A(17,3) at 2*256 + 1*16 + 3*2 = 534,
      // B(n5,k3) at 2048 + 5*16 + 6; D(17,5) is thread 32+6's d1.
      {"interleave", 534, 2134, iA, iB, (32 + 6) * 4 + 1},
      // A(40,12) at 5*256 + 128 + 8 = 1416, B(n7,k12) at 2048 + 128 + 7*16 +
      // 8; D(40,7) is thread 64+3's d3.
      {"interleave k>=8", 1416, 2296, iA, iB, (64 + 3) * 4 + 3},
      // k differs (A(17,3), B(n5,k4)): the product is zero everywhere.
      {"interleave k mismatch", 534, 2136, iA, iB, -1},
      // 128B: A(9,10) linear 1024 + 128 + 20 = 1172, bits[4,7) 1 ^ 1 -> 1156;
      // B(n3,k10) linear 8192 + 384 + 20 = 8596, 1 ^ 3 = 2 -> 8612.
      // D(9,3) is thread 5's d3.
      {"swizzle 128B", 1156, 8612, s128A, s128B, 5 * 4 + 3},
      // The unswizzled addresses must not match under 128B.
      {"swizzle 128B, linear addresses", 1172, 8596, s128A, s128B, -1},
      // 64B: A(22,14) linear 1024 + 384 + 28 = 1436, bits[4,6) 1 ^ 3 = 2 ->
      // 1452; B(n1,k14) linear 8284, bits[7,9) = 0 -> unchanged. D(22,1) is
      // thread 32+24's d1.
      {"swizzle 64B", 1452, 8284, s64A, s64B, (32 + 24) * 4 + 1},
      // 32B: A(13,9) linear 256 + 160 + 18 = 434, bit 4 1 ^ 1 -> 418;
      // B(n6,k9) linear 8402 -> 8386. D(13,6) is thread 23's d2.
      {"swizzle 32B", 418, 8386, s32A, s32B, 23 * 4 + 2},
  };
  for (const Case &c : cases) {
    std::vector<uint32_t> out =
        runWgmmaProbe(text, c.aByte, c.bByte, c.da, c.db);
    EXPECT_EQ(oneHotPosition(out), c.d) << c.what;
  }
}

TEST(PTXEmulatorLayout, WgmmaFp8OneHot) {
  // m64n8k32 with e4m3 / e5m2 operands, K-major: core matrices of 8 rows x
  // 16 bytes hold 16 elements a row, so (mn, k) lies at (mn/8)*SBO +
  // (k/16)*LBO + (mn%8)*16 + k%16 without swizzle, and at (mn/8)*SBO +
  // (mn%8)*128 + k before the 128-byte swizzle's XOR. A holds 2.0 and B 1.5
  // at one place each: D is 3.0 at one place or zero everywhere.
  struct Case {
    const char *what;
    unsigned aByte, bByte;
    uint64_t da, db;
    int d; // thread*4 + i, or -1 for all zero
  };
  const uint64_t iA = wgmmaDesc(0, 128, 256, 0),
                 iB = wgmmaDesc(2048, 128, 256, 0);
  const uint64_t s128A = wgmmaDesc(0, 16, 1024, 1),
                 s128B = wgmmaDesc(8192, 16, 1024, 1);
  const Case cases[] = {
      // A(17,19) at 2*256 + 1*128 + 1*16 + 3 = 659, B(n5,k19) at 2048 +
      // 128 + 5*16 + 3 = 2259; D(17,5) is thread 32+6's d1.
      {"interleave", 659, 2259, iA, iB, (32 + 6) * 4 + 1},
      // A(40,30) at 5*256 + 128 + 14 = 1422, B(n7,k30) at 2048 + 128 +
      // 7*16 + 14 = 2302; D(40,7) is thread 64+3's d3.
      {"interleave, k >= 16", 1422, 2302, iA, iB, (64 + 3) * 4 + 3},
      // The 16-bit layout's place for k = 19 (a core matrix row of 8).
      {"interleave, 16-bit addresses", 659, 2048 + 2 * 128 + 5 * 16 + 6, iA, iB,
       -1},
      // 128B: A(9,20) linear 1024 + 128 + 20 = 1172, bits [4,7) 1 ^ 1 ->
      // 1156; B(n3,k20) linear 8596, 1 ^ 3 = 2 -> 8612. D(9,3) is thread
      // 5's d3.
      {"swizzle 128B", 1156, 8612, s128A, s128B, 5 * 4 + 3},
      {"swizzle 128B, linear addresses", 1172, 8596, s128A, s128B, -1},
  };
  struct Format {
    const char *form;
    uint8_t two, oneAndHalf;
    uint32_t product;
  };
  // s8: 2 and -3 (0xFD), whose product is -6 in the s32 accumulator.
  for (Format f : {Format{"k32.f32.e4m3.e4m3", 0x40, 0x3C, f32ToBits(3.0f)},
                   Format{"k32.f32.e5m2.e5m2", 0x40, 0x3E, f32ToBits(3.0f)},
                   Format{"k32.s32.s8.s8", 0x02, 0xFD, uint32_t(-6)}}) {
    Module m = parseOrDie(wgmmaProbeText("", "", 8, f.form));
    for (const Case &c : cases) {
      Emulator emu(m);
      std::vector<uint8_t> in(16384, 0);
      in[c.aByte] = f.two;
      in[c.bByte] = f.oneAndHalf;
      std::vector<uint32_t> out(64 * 8, 0);
      uint64_t pi = emu.memory().map(in.data(), in.size()),
               po = emu.memory().map(out.data(), out.size() * 4);
      EXPECT_EQ(
          launch(emu, m, "wg", {1, 1, 1}, {128, 1, 1}, {po, pi, c.da, c.db}),
          "")
          << f.form << ", " << c.what;
      int pos = -1;
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == 0)
          continue;
        pos = out[i] == f.product && pos < 0 ? int(i) : -2;
      }
      EXPECT_EQ(pos, c.d) << f.form << ", " << c.what;
    }
  }
  // The fp8 forms take no transpose operands, and K is 32.
  std::string error =
      parseError(wgmmaProbeText("", "0, 0", 8, "k32.f32.e4m3.e4m3"));
  EXPECT_NE(error.find("takes 6 operands"), std::string::npos) << error;
  error = parseError(wgmmaProbeText("", "", 8, "k16.f32.e4m3.e4m3"));
  EXPECT_NE(error.find("m64nNk32.f32.{e4m3,e5m2}"), std::string::npos) << error;
  // Nor do the integer forms take scale operands.
  std::string scaled = wgmmaProbeText("", "", 8, "k32.s32.s8.s8");
  scaled.replace(scaled.find("%p1;"), 4, "%p1, 1, 1;");
  EXPECT_NE(parseError(scaled).find("takes 4 operands"), std::string::npos);
}

/// Where D(row, col) of an m64nN wgmma lands in the probe's out: the
/// PTX ISA's wgmma D fragment figure gives warp row/16, lane
/// 4*(row%8) + (col%8)/2 and register 4*(col/8) + 2*((row%16)/8) + col%2.
int wgmmaD(unsigned row, unsigned col, unsigned n) {
  unsigned w = row / 16, r = row % 16;
  unsigned lane = 4 * (r % 8) + (col % 8) / 2;
  unsigned reg = 4 * (col / 8) + 2 * (r / 8) + col % 2;
  return int((32 * w + lane) * (n / 2) + reg);
}

TEST(PTXEmulatorLayout, WgmmaMNMajorOneHot) {
  // MN-major (imm-trans 1) canonical layouts from the PTX ISA, elements of
  // 2 bytes: without swizzle ((8,1,m),(8,k)):((1,8,SBO),(8,LBO)), i.e.
  // (mn, k) at (mn%8)*2 + (mn/8)*SBO + (k%8)*16 + (k/8)*LBO; with a
  // swizzle of W bytes ((8,W/16,m),(8,k)):((1,8,LBO),(W/2,SBO)), i.e. at
  // (mn%(W/2))*2 + (mn/(W/2))*LBO + (k%8)*W + (k/8)*SBO, then address bits
  // [4,7) ^= bits [7,10) masked to 1, 2 or 3 bits (32B, 64B, 128B). Every
  // offset below is worked out by hand from those.
  struct Case {
    const char *what;
    const char *trans;
    unsigned n;
    unsigned aByte, bByte;
    uint64_t da, db;
    int d;
  };
  const Case cases[] = {
      // A M-major, no swizzle, LBO 1024 (k groups), SBO 128 (m groups):
      // A(17,11) at 1*2 + 2*128 + 3*16 + 1*1024 = 1330. B K-major no swizzle
      // (LBO 128, SBO 256) at 2048: B(n5,k11) at 2048 + 128 + 5*16 + 6.
      {"A M-major interleave", "1, 0", 8, 1330, 2262,
       wgmmaDesc(0, 1024, 128, 0), wgmmaDesc(2048, 128, 256, 0),
       wgmmaD(17, 5, 8)},
      // The K-major address of A(17,11) (2*256 + 128 + 16 + 6 = 662) read
      // M-major is A(43,1): no product.
      {"A M-major interleave, K-major address", "1, 0", 8, 662, 2262,
       wgmmaDesc(0, 1024, 128, 0), wgmmaDesc(2048, 128, 256, 0), -1},
      // B N-major, no swizzle, LBO 128, SBO 256 at 2048: B(n5,k11) at 2048 +
      // 5*2 + 3*16 + 128 = 2234; A K-major A(17,11) at 662.
      {"B N-major interleave", "0, 1", 8, 662, 2234, wgmmaDesc(0, 128, 256, 0),
       wgmmaDesc(2048, 128, 256, 0), wgmmaD(17, 5, 8)},
      // B N-major 128B at 8192, N = 128: two 64-column blocks LBO = 2048
      // apart, k groups SBO = 1024 apart. B(n77,k2): 8192 + 13*2 + 2*128 +
      // 2048 = 10522 = 0x291a, bits[7,10) = 2, bits[4,7) = 1 -> 1^2 = 3:
      // 10554. A K-major 128B: A(9,2) linear 1024 + 128 + 4 = 1156, bits
      // [7,10) = 1, [4,7) = 0 -> 1172.
      {"B N-major 128B, second block (LBO)", "0, 1", 128, 1172, 10554,
       wgmmaDesc(0, 16, 1024, 1), wgmmaDesc(8192, 2048, 1024, 1),
       wgmmaD(9, 77, 128)},
      // Same with LBO and SBO read the other way round (the K-major and the
      // no-swizzle meaning): B(n77,k2) would be at 8192 + 26 + 256 + 1024 =
      // 9498 -> 9530; must give nothing.
      {"B N-major 128B, LBO/SBO swapped", "0, 1", 128, 1172, 9530,
       wgmmaDesc(0, 16, 1024, 1), wgmmaDesc(8192, 2048, 1024, 1), -1},
      // B(n13,k10): 8192 + 26 + 2*128 + 1024 (SBO) = 9498 = 0x251a, bits
      // [7,10) = 2, [4,7) = 1 -> 3: 9530. A(9,10): linear 1024 + 128 + 20 =
      // 1172 -> 1156.
      {"B N-major 128B, second k group (SBO)", "0, 1", 128, 1156, 9530,
       wgmmaDesc(0, 16, 1024, 1), wgmmaDesc(8192, 2048, 1024, 1),
       wgmmaD(9, 13, 128)},
      // A M-major 64B: 32 m per 64-byte row, LBO 1024 between the two m
      // blocks, SBO 512 between k groups. A(45,11): 13*2 + 3*64 + 1024 +
      // 512 = 1754 = 0x6da, bits [7,9) = 1, [4,6) = 1 -> 0: 1738. B K-major
      // 64B at 8192 (SBO 512): B(n6,k11) 8192 + 6*64 + 22 = 8598, bits
      // [7,9) = 3, [4,6) = 1 -> 2: 8614.
      {"A M-major 64B", "1, 0", 8, 1738, 8614, wgmmaDesc(0, 1024, 512, 2),
       wgmmaDesc(8192, 16, 512, 2), wgmmaD(45, 6, 8)},
      // Both MN-major 32B: 16 mn per 32-byte row, LBO 512 (mn blocks), SBO
      // 256 (k groups). A(50,13): 2*2 + 5*32 + 3*512 + 256 = 1956, bit 7 =
      // 1, bit 4 = 0 -> 1972. B(n7,k13) at 8192: 14 + 160 + 256 = 8622, bit
      // 7 = 1, bit 4 = 0 -> 8638.
      {"A and B MN-major 32B", "1, 1", 8, 1972, 8638, wgmmaDesc(0, 512, 256, 3),
       wgmmaDesc(8192, 512, 256, 3), wgmmaD(50, 7, 8)},
  };
  for (const Case &c : cases) {
    std::vector<uint32_t> out =
        runWgmmaProbe(wgmmaProbeText("", c.trans, c.n), c.aByte, c.bByte, c.da,
                      c.db, nullptr, c.n);
    EXPECT_EQ(oneHotPosition(out), c.d) << c.what;
  }
}

// ---------------------------------------------------------------------------
// TMA: cp.async.bulk.tensor from a tensor map into shared memory.

/// Thread 0 announces \p txBytes on an mbarrier and copies the box at
/// coordinates c0..c2 of `map` (rank \p rank) to sm + dst; every thread
/// waits for the phase, then the CTA copies all 16 KiB of sm to out.
/// \p between goes between the copy and the wait (thread 0 only).
std::string tmaText(unsigned rank, const std::string &between = "") {
  std::string coords = rank == 1   ? "%r1"
                       : rank == 2 ? "%r1, %r2"
                                   : "%r1, %r2, %r3";
  return ".version 8.0\n.target sm_90a\n.address_size 64\n"
         ".visible .entry tma(.param .u64 map, .param .u64 out, .param .u32 "
         "c0, .param .u32 c1, .param .u32 c2, .param .u32 tx, .param .u32 "
         "dst)\n{\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n"
         ".shared .align 1024 .b8 sm[16384];\n.shared .align 8 .b64 bar;\n"
         "ld.param.u64 %rd1, [map];\nld.param.u64 %rd2, [out];\n"
         "ld.param.u32 %r1, [c0];\nld.param.u32 %r2, [c1];\n"
         "ld.param.u32 %r3, [c2];\nld.param.u32 %r4, [tx];\n"
         "ld.param.u32 %r5, [dst];\nmov.u32 %r6, %tid.x;\n"
         "mov.u32 %r7, sm;\nadd.u32 %r7, %r7, %r5;\nmov.u32 %r8, bar;\n"
         "setp.ne.u32 %p1, %r6, 0;\n"
         "@!%p1 mbarrier.init.shared::cta.b64 [%r8], 1;\nbar.sync 0;\n"
         "@%p1 bra WAIT;\n"
         "prefetch.tensormap [%rd1];\n"
         "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r8], %r4;\n"
         "cp.async.bulk.tensor." +
         std::to_string(rank) +
         "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r7], "
         "[%rd1, {" +
         coords + "}], [%r8];\n" + between +
         "WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r8], 0;\n"
         "@!%p2 bra WAIT;\n"
         "shl.b32 %r9, %r6, 4;\n"
         "LOOP:\nsetp.ge.u32 %p3, %r9, 16384;\n@%p3 bra DONE;\n"
         "mov.u32 %r10, sm;\nadd.u32 %r10, %r10, %r9;\n"
         "ld.shared.v4.b32 {%r11,%r12,%r13,%r14}, [%r10];\n"
         "cvt.u64.u32 %rd3, %r9;\nadd.s64 %rd4, %rd2, %rd3;\n"
         "st.global.v4.b32 [%rd4], {%r11,%r12,%r13,%r14};\n"
         "add.u32 %r9, %r9, 512;\nbra LOOP;\nDONE:\nret;\n}\n";
}

/// Runs tmaText over \p global with tensor map \p tm (its globalAddress is
/// set here); returns the 16 KiB of shared memory, or sets \p error.
std::vector<uint8_t> runTma(TensorMap tm, std::vector<uint8_t> &global,
                            std::array<int32_t, 3> coords, unsigned dst,
                            unsigned txBytes, std::string *error = nullptr,
                            bool defineMap = true,
                            const std::string &between = "") {
  std::string text = tmaText(tm.rank, between);
  Module m = parseOrDie(text);
  Emulator emu(m);
  std::vector<uint8_t> out(16384, 0), mapObject(128, 0);
  tm.globalAddress = emu.memory().map(global.data(), global.size());
  uint64_t po = emu.memory().map(out.data(), out.size()),
           pm = emu.memory().map(mapObject.data(), mapObject.size());
  if (defineMap)
    emu.memory().defineTensorMap(pm, tm);
  std::string err = launch(emu, m, "tma", {1, 1, 1}, {32, 1, 1},
                           {pm, po, uint64_t(uint32_t(coords[0])),
                            uint64_t(uint32_t(coords[1])),
                            uint64_t(uint32_t(coords[2])), txBytes, dst});
  if (error)
    *error = err;
  else
    EXPECT_EQ(err, "");
  return out;
}

uint16_t u16At(const std::vector<uint8_t> &v, size_t byte) {
  return uint16_t(v[byte] | (v[byte + 1] << 8));
}

/// 2-byte elements numbered by their index: element i holds i.
std::vector<uint8_t> ramp16(size_t count) {
  std::vector<uint8_t> v(count * 2);
  for (size_t i = 0; i < count; ++i) {
    v[2 * i] = uint8_t(i);
    v[2 * i + 1] = uint8_t(i >> 8);
  }
  return v;
}

TEST(PTXEmulatorTma, SwizzleModes2D) {
  // A 64 x 256 tensor of 2-byte elements (value = index), a box of one
  // swizzle row (W bytes = W/2 elements) by 16 rows at (24, 5). In shared
  // memory box byte b = 2*(W/2*r + c) is written, per the CUDA programming
  // guide's TMA swizzle, to b with its 16-byte chunk index within its W-byte
  // segment XORed with the 128-byte row's index modulo W/16.
  std::vector<uint8_t> global = ramp16(64 * 256);
  struct Mode {
    TensorMap::Swizzle swizzle;
    unsigned width;   // bytes of one box row
    unsigned segment; // swizzle span in bytes (16 = none)
  };
  const Mode modes[] = {{TensorMap::Swizzle::None, 64, 16},
                        {TensorMap::Swizzle::B32, 32, 32},
                        {TensorMap::Swizzle::B64, 64, 64},
                        {TensorMap::Swizzle::B128, 128, 128}};
  for (const Mode &mode : modes) {
    TensorMap tm;
    tm.elementBytes = 2;
    tm.rank = 2;
    tm.globalDims = {256, 64};
    tm.globalStrides = {0, 512};
    tm.boxDims = {mode.width / 2, 16};
    tm.swizzle = mode.swizzle;
    unsigned boxBytes = mode.width * 16;
    std::vector<uint8_t> sm = runTma(tm, global, {24, 5, 0}, 0, boxBytes);
    unsigned chunks = mode.segment / 16;
    unsigned bad = 0;
    for (unsigned r = 0; r < 16; ++r)
      for (unsigned c = 0; c < mode.width / 2; ++c) {
        unsigned b = 2 * (mode.width / 2 * r + c);
        unsigned chunk = (b / 16) % chunks, row128 = (b / 128) % chunks;
        unsigned at = b - 16 * chunk + 16 * (chunk ^ row128);
        uint16_t want = uint16_t((5 + r) * 256 + 24 + c);
        if (u16At(sm, at) != want && bad++ < 4)
          ADD_FAILURE() << "swizzle span " << mode.segment << ": box (" << r
                        << ", " << c << ") at byte " << at << " holds "
                        << u16At(sm, at) << ", expected " << want;
      }
    // Nothing past the box was written (shared memory starts as 0xff).
    EXPECT_EQ(sm[boxBytes], 0xff);
    EXPECT_EQ(sm[16383], 0xff);
  }
  // 128B: the first 16-byte chunk of box row 1 moved to chunk 1 of its row:
  // element (6, 24) is at byte 128 + 16.
  TensorMap tm;
  tm.rank = 2;
  tm.globalDims = {256, 64};
  tm.globalStrides = {0, 512};
  tm.boxDims = {64, 8};
  tm.swizzle = TensorMap::Swizzle::B128;
  std::vector<uint8_t> sm = runTma(tm, global, {24, 5, 0}, 1024, 1024);
  EXPECT_EQ(u16At(sm, 1024 + 144), 6 * 256 + 24);
  EXPECT_EQ(u16At(sm, 1024 + 7 * 128 + 7 * 16), 12 * 256 + 24);
}

TEST(PTXEmulatorTma, OutOfBoundsFill) {
  // A 40 x 16 tensor; a 32 x 4 box at (-8, 14): columns -8..-1 and rows 16,
  // 17 are outside and read as zero, or as NaN (0x7fff) with oobNaN.
  std::vector<uint8_t> global = ramp16(40 * 16);
  for (bool nan : {false, true}) {
    TensorMap tm;
    tm.rank = 2;
    tm.globalDims = {40, 16};
    tm.globalStrides = {0, 80};
    tm.boxDims = {32, 4};
    tm.oobNaN = nan;
    // Complete-tx counts the whole box, filled elements included.
    std::vector<uint8_t> sm = runTma(tm, global, {-8, 14, 0}, 128, 256);
    for (unsigned r = 0; r < 4; ++r)
      for (unsigned c = 0; c < 32; ++c) {
        int x = int(c) - 8, y = 14 + int(r);
        bool inside = x >= 0 && y < 16;
        uint16_t want = inside ? uint16_t(40 * y + x) : nan ? 0x7fff : 0;
        EXPECT_EQ(u16At(sm, 128 + 2 * (32 * r + c)), want)
            << (nan ? "NaN fill" : "zero fill") << " at box (" << r << ", " << c
            << ")";
      }
  }
  // 4-byte elements: NaN is 0x7fffffff.
  std::vector<uint8_t> words(4 * 8, 0x11);
  TensorMap tm;
  tm.elementBytes = 4;
  tm.rank = 1;
  tm.globalDims = {8};
  tm.boxDims = {8};
  tm.oobNaN = true;
  std::vector<uint8_t> sm = runTma(tm, words, {4, 0, 0}, 0, 32);
  EXPECT_EQ(sm[12], 0x11);
  EXPECT_EQ(sm[16], 0xff);
  EXPECT_EQ(sm[19], 0x7f);
}

TEST(PTXEmulatorTma, Ranks1To3) {
  // 1-D: 100 elements, a box of 32 at 80 (20 inside, 12 zero).
  std::vector<uint8_t> global = ramp16(100);
  TensorMap tm;
  tm.rank = 1;
  tm.globalDims = {100};
  tm.boxDims = {32};
  std::vector<uint8_t> sm = runTma(tm, global, {80, 0, 0}, 0, 64);
  for (unsigned i = 0; i < 32; ++i)
    EXPECT_EQ(u16At(sm, 2 * i), 80 + i < 100 ? 80 + i : 0) << i;
  // 3-D, 4-byte elements, 8 x 4 x 3 with padded strides (32 and 160 bytes):
  // element (x, y, z) is word 8y + 40z + x of the buffer, which holds its
  // word index. Box 4 x 2 x 2 at (4, 1, 1), then at (6, 3, 2) (partly out).
  std::vector<uint8_t> words(160 * 3);
  for (size_t i = 0; i < words.size() / 4; ++i)
    words[4 * i] = uint8_t(i),
              words[4 * i + 1] = words[4 * i + 2] = words[4 * i + 3] = 0;
  TensorMap t3;
  t3.elementBytes = 4;
  t3.rank = 3;
  t3.globalDims = {8, 4, 3};
  t3.globalStrides = {0, 32, 160};
  t3.boxDims = {4, 2, 2};
  for (auto [x0, y0, z0] : {std::array<int, 3>{4, 1, 1}, {6, 3, 2}}) {
    sm = runTma(t3, words, {x0, y0, z0}, 0, 64);
    for (unsigned z = 0; z < 2; ++z)
      for (unsigned y = 0; y < 2; ++y)
        for (unsigned x = 0; x < 4; ++x) {
          int gx = x0 + int(x), gy = y0 + int(y), gz = z0 + int(z);
          bool inside = gx < 8 && gy < 4 && gz < 3;
          unsigned want = inside ? unsigned(8 * gy + 40 * gz + gx) : 0;
          unsigned at = 4 * (x + 4 * y + 8 * z);
          uint32_t got = sm[at] | sm[at + 1] << 8 | sm[at + 2] << 16 |
                         uint32_t(sm[at + 3]) << 24;
          EXPECT_EQ(got, want)
              << "box at (" << x0 << "," << y0 << "," << z0 << "), element ("
              << x << "," << y << "," << z << ")";
        }
  }
}

TEST(PTXEmulatorTma, Errors) {
  std::vector<uint8_t> global = ramp16(64 * 64);
  TensorMap tm;
  tm.rank = 2;
  tm.globalDims = {64, 64};
  tm.globalStrides = {0, 128};
  tm.boxDims = {64, 8};
  tm.swizzle = TensorMap::Swizzle::B128;
  std::string text = tmaText(2), err;
  std::string at =
      "test.ptx:" + std::to_string(lineOf(text, "cp.async.bulk.tensor")) +
      ": cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
      "complete_tx::bytes: ";
  runTma(tm, global, {0, 0, 0}, 0, 1024, &err, /*defineMap=*/false);
  EXPECT_NE(err.find(at + "no tensor map at address 0x"), std::string::npos)
      << err;
  // 128B swizzle needs the destination aligned to 1024 bytes.
  runTma(tm, global, {0, 0, 0}, 512, 1024, &err);
  EXPECT_NE(err.find(at + "tensor copy destination 0x200 is not aligned to "
                          "1024 bytes (the swizzle pattern's repeat)"),
            std::string::npos)
      << err;
  // The box's last rows would pass the end of the 16 KiB (+ bar) of shared
  // memory.
  tm.boxDims = {64, 128};
  runTma(tm, global, {0, 0, 0}, 8192, 16384, &err);
  EXPECT_NE(err.find(at + "tensor copy destination [0x2000, 0x6000) is "
                          "beyond shared memory"),
            std::string::npos)
      << err;
  tm.boxDims = {12, 8};
  tm.swizzle = TensorMap::Swizzle::None;
  runTma(tm, global, {0, 0, 0}, 0, 192, &err);
  EXPECT_NE(err.find(at + "tensor box inner dim is 24 bytes, not a multiple "
                          "of 16"),
            std::string::npos)
      << err;
  // Announcing 16 bytes more than the box: the phase never completes.
  tm.rank = 2;
  tm.boxDims = {64, 8};
  tm.swizzle = TensorMap::Swizzle::B128;
  runTma(tm, global, {0, 0, 0}, 0, 1024 + 16, &err);
  EXPECT_NE(err.find("transaction bytes outstanding 16"), std::string::npos)
      << err;
  // Reading the box before the mbarrier wait is a hazard.
  runTma(tm, global, {0, 0, 0}, 0, 1024, &err, true,
         "ld.shared.u32 %r12, [%r7+132];\n");
  EXPECT_NE(err.find("ld.shared.u32: hazard: reads shared byte 0x84 while an "
                     "async copy to it is in flight"),
            std::string::npos)
      << err;
}

TEST(PTXEmulatorParser, TensorCopyForms) {
  // LLVM 22's NVPTX form (.tile, 64-bit shared address, .L2::cache_hint
  // with its policy operand) and nvcc inline asm's (no .tile) both parse;
  // the cache policy is required exactly with .L2::cache_hint.
  std::string head =
      ".version 8.0\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k()\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n";
  EXPECT_EQ(parseError(head +
                       "cp.async.bulk.tensor.1d.shared::cluster.global.tile."
                       "mbarrier::complete_tx::bytes.L2::cache_hint [%rd2], "
                       "[%rd1, {%r1}], [%rd3], %rd3;\n"
                       "cp.async.bulk.tensor.5d.shared::cluster.global."
                       "mbarrier::complete_tx::bytes [%r2], [%rd1, {%r1, 0, "
                       "%r1, -1, %r1}], [%r3];\n"
                       "prefetch.tensormap [%rd1];\n"
                       "fence.proxy.tensormap::generic.acquire.gpu [%rd1], "
                       "128;\nret;\n}\n"),
            "");
  EXPECT_NE(parseError(head +
                       "cp.async.bulk.tensor.2d.shared::cluster.global.tile."
                       "mbarrier::complete_tx::bytes [%rd2], [%rd1, {%r1}], "
                       "[%rd3];\nret;\n}\n")
                .find("needs [tensorMap, {2 coordinates}]"),
            std::string::npos);
  EXPECT_NE(parseError(head +
                       "cp.async.bulk.tensor.2d.shared::cluster.global."
                       "im2col.mbarrier::complete_tx::bytes [%rd2], [%rd1, "
                       "{%r1, %r2}], [%rd3];\nret;\n}\n")
                .find("unsupported modifier '.im2col'"),
            std::string::npos);
  EXPECT_NE(parseError(head +
                       "cp.async.bulk.tensor.2d.shared::cluster.global.tile."
                       "mbarrier::complete_tx::bytes.L2::cache_hint [%rd2], "
                       "[%rd1, {%r1, %r2}], [%rd3];\nret;\n}\n")
                .find("cache-policy operand"),
            std::string::npos);
}

TEST(PTXEmulatorHazards, WgmmaAccumulatorBeforeWaitGroup) {
  const uint64_t da = wgmmaDesc(0, 128, 256, 0),
                 db = wgmmaDesc(2048, 128, 256, 0);
  struct Case {
    const char *between, *needle, *message;
  };
  const Case cases[] = {
      {"mov.b32 %r10, %f2;\n", "mov.b32 %r10",
       ": mov.b32: hazard: reads wgmma accumulator %f2 before the "
       "wgmma.wait_group that completes it (cta (0,0,0), warp 0, lane 0)"},
      // A vector store reads the accumulators element by element.
      {"st.global.v4.f32 [%rd1], {%f1,%f2,%f3,%f4};\n",
       "st.global.v4.f32 [%rd1]",
       ": st.global.v4.f32: hazard: reads wgmma accumulator %f1"},
      {"mov.f32 %f3, 0f3F800000;\n", "mov.f32 %f3",
       ": mov.f32: hazard: overwrites wgmma accumulator %f3"},
  };
  for (const Case &c : cases) {
    std::string text = wgmmaProbeText(c.between), err;
    runWgmmaProbe(text, 534, 2134, da, db, &err);
    EXPECT_NE(err.find("test.ptx:" + std::to_string(lineOf(text, c.needle)) +
                       c.message),
              std::string::npos)
        << err;
  }
  // Without the checker the read sees the in-flight value: a NaN.
  std::string text = wgmmaProbeText("mov.b32 %r10, %f1;\n"
                                    "st.global.u32 [%rd1+2048], %r10;\n");
  Module m = parseOrDie(text);
  Emulator emu(m);
  std::vector<uint16_t> in(8192, 0);
  std::vector<uint32_t> out(513, 0); // out[512]: the early read
  uint64_t pi = emu.memory().map(in.data(), in.size() * 2),
           po = emu.memory().map(out.data(), out.size() * 4);
  ASSERT_EQ(launch(emu, m, "wg", {1, 1, 1}, {128, 1, 1}, {po, pi, da, db},
                   /*hazards=*/false),
            "");
  EXPECT_TRUE(std::isnan(bitsToF32(out[512])));
}

} // namespace
