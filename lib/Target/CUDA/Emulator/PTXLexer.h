//===- PTXLexer.h - Tokens of PTX text --------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_TARGET_CUDA_EMULATOR_PTXLEXER_H
#define TESSERA_LIB_TARGET_CUDA_EMULATOR_PTXLEXER_H

#include "llvm/ADT/StringRef.h"
#include <vector>

namespace tessera::ptx {

struct Token {
  enum Kind { Ident, Number, String, Punct, End } kind = End;
  llvm::StringRef text;
  unsigned line = 0;
};

/// Splits PTX text into tokens, dropping comments; the last token is End.
std::vector<Token> lex(llvm::StringRef s);

} // namespace tessera::ptx

#endif // TESSERA_LIB_TARGET_CUDA_EMULATOR_PTXLEXER_H
