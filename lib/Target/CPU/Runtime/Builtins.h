//===- Builtins.h - compiler runtime functions compiled code calls --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// LLVM lowers some conversions to calls into the compiler's runtime
// library when the CPU has no instruction for them: f32 to bf16 without
// AVX-512 BF16 becomes `__truncsfbf2`. Debian's libgcc 12 has no such
// function, so CPU artifacts carry their own and the in-process compile
// binds it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_RUNTIME_BUILTINS_H
#define TESSERA_LIB_TARGET_CPU_RUNTIME_BUILTINS_H

/// f32 to bf16, rounding to nearest even; NaNs stay NaNs (quiet).
extern "C" __bf16 __truncsfbf2(float value);

#endif // TESSERA_LIB_TARGET_CPU_RUNTIME_BUILTINS_H
