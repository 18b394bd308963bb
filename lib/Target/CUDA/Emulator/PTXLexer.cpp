//===- PTXLexer.cpp - Tokens of PTX text ----------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "PTXLexer.h"
#include "llvm/ADT/StringExtras.h"

using llvm::StringRef;

namespace {
bool isIdentStart(char c) {
  return llvm::isAlpha(c) || c == '_' || c == '$' || c == '%' || c == '.';
}
bool isIdentChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '%' || c == '.';
}

} // namespace

/// Splits PTX text into tokens, dropping comments. `::` inside identifiers
/// (`.shared::cta`, `.L2::128B`) stays part of the identifier; a single `:`
/// ends a label.
std::vector<tessera::ptx::Token> tessera::ptx::lex(StringRef s) {
  std::vector<Token> toks;
  unsigned line = 1;
  size_t i = 0, n = s.size();
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (llvm::isSpace(c)) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n')
        ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) {
        if (s[i] == '\n')
          ++line;
        ++i;
      }
      i += 2;
      continue;
    }
    Token t;
    t.line = line;
    size_t b = i;
    if (isIdentStart(c)) {
      ++i;
      while (i < n) {
        if (isIdentChar(s[i])) {
          ++i;
          continue;
        }
        if (s[i] == ':' && i + 2 < n && s[i + 1] == ':' &&
            isIdentChar(s[i + 2])) {
          i += 2;
          continue;
        }
        break;
      }
      t.kind = Token::Ident;
    } else if (llvm::isDigit(c)) {
      ++i;
      while (i < n && (llvm::isAlnum(s[i]) || s[i] == '.'))
        ++i;
      t.kind = Token::Number;
    } else if (c == '"') {
      ++i;
      while (i < n && s[i] != '"')
        ++i;
      ++i;
      t.kind = Token::String;
    } else {
      ++i;
      t.kind = Token::Punct;
    }
    t.text = s.slice(b, std::min(i, n));
    toks.push_back(t);
  }
  Token end;
  end.line = line;
  toks.push_back(end);
  return toks;
}
