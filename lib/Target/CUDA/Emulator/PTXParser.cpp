//===- PTXParser.cpp - Lexer and parser for the emulated PTX subset -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A hand-written lexer and recursive-descent parser for module directives,
// .entry signatures, declarations, labels, guards and operands. Opcode
// strings are handed to the decoder (InstructionDecoder.cpp).
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CUDA/Emulator/PTXParser.h"
#include "Decoder.h"
#include "PTXLexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include <map>

using namespace tessera::ptx;
using llvm::StringRef;

namespace {

struct Symbol {
  Space space;
  unsigned offset;
  bool externShared;
};

struct Fixup {
  size_t inst, operand;
  std::string name;
  unsigned line;
  /// The `{ }` blocks around the use, outermost first: a label resolves to
  /// the one defined in the innermost of them (PTX labels are local to
  /// their block, so inline asm can repeat its labels).
  std::vector<unsigned> blocks;
};

class Parser {
public:
  Parser(StringRef text, StringRef buf) : toks(lex(text)), buf(buf) {}

  llvm::Expected<Module> run() {
    Module m;
    while (peek().kind != Token::End) {
      if (llvm::Error e = parseTopLevel(m))
        return std::move(e);
    }
    for (Kernel &k : m.kernels)
      k.source = buf.str();
    return std::move(m);
  }

private:
  std::vector<Token> toks;
  size_t pos = 0;
  StringRef buf;
  // Per-function state.
  Kernel *k = nullptr;
  std::vector<std::map<std::string, uint32_t, std::less<>>> scopes;
  std::map<std::string, Symbol, std::less<>> symbols;
  /// (block, label) -> instruction index.
  std::map<std::pair<unsigned, std::string>, size_t> labels;
  std::vector<unsigned> blocks;
  unsigned blockCount = 0;
  std::vector<Fixup> fixups;
  std::vector<std::pair<std::string, unsigned>> moduleShared; // name, size
  unsigned moduleSharedAlign = 1;

  const Token &peek(size_t ahead = 0) const {
    return toks[std::min(pos + ahead, toks.size() - 1)];
  }
  const Token &next() {
    const Token &t = toks[pos];
    if (pos + 1 < toks.size())
      ++pos;
    return t;
  }
  bool consumeIf(StringRef text) {
    if (peek().kind != Token::End && peek().text == text) {
      next();
      return true;
    }
    return false;
  }
  llvm::Error err(unsigned line, const llvm::Twine &msg) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   buf + ":" + llvm::Twine(line) + ": " + msg);
  }
  llvm::Error expect(StringRef text) {
    const Token &t = peek();
    if (t.kind == Token::End || t.text != text)
      return err(t.line, "expected '" + text + "' but found '" + t.text + "'");
    next();
    return llvm::Error::success();
  }
  llvm::Expected<uint64_t> parseUInt() {
    const Token &t = next();
    uint64_t v;
    if (t.kind != Token::Number || t.text.getAsInteger(0, v))
      return err(t.line, "expected an integer but found '" + t.text + "'");
    return v;
  }
  /// Skips the rest of the tokens on the current token's line.
  void skipLine() {
    unsigned line = peek().line;
    while (peek().kind != Token::End && peek().line == line)
      next();
  }

  llvm::Error parseTopLevel(Module &m) {
    const Token &t = next();
    if (t.text == ".version") {
      const Token &v = next();
      auto [maj, min] = v.text.split('.');
      unsigned a = 0, b = 0;
      if (maj.getAsInteger(10, a) || min.getAsInteger(10, b))
        return err(v.line, "bad .version '" + v.text + "'");
      m.version = a * 10 + b;
      return llvm::Error::success();
    }
    if (t.text == ".target") {
      m.target = next().text.str();
      while (consumeIf(","))
        next();
      return llvm::Error::success();
    }
    if (t.text == ".address_size") {
      auto v = parseUInt();
      if (!v)
        return v.takeError();
      if (*v != 64)
        return err(t.line, ".address_size must be 64");
      return llvm::Error::success();
    }
    if (t.text == ".visible" || t.text == ".weak")
      return llvm::Error::success();
    if (t.text == ".entry")
      return parseEntry(m);
    if (t.text == ".func")
      return skipFunction(t.line);
    bool isExtern = t.text == ".extern";
    StringRef space = isExtern ? next().text : t.text;
    if (space == ".shared") {
      unsigned align = 1, size = 0;
      std::string name;
      bool unsized = false;
      if (llvm::Error e = parseVarTail(align, size, name, unsized))
        return e;
      if (unsized)
        return err(t.line,
                   "module-scope dynamic shared memory is not supported");
      moduleShared.push_back({name, size});
      moduleSharedAlign = std::max(moduleSharedAlign, align);
      return llvm::Error::success();
    }
    if (space == ".global" || space == ".const")
      return err(t.line,
                 "module-scope " + space + " variables are not supported");
    if (isExtern && space == ".func")
      return skipFunction(t.line);
    return err(t.line, "unsupported top-level directive '" + t.text + "'");
  }

  /// `.func` bodies are skipped: `call` is rejected where it is used.
  llvm::Error skipFunction(unsigned line) {
    int depth = 0;
    while (peek().kind != Token::End) {
      const Token &t = next();
      if (t.text == ";" && depth == 0)
        return llvm::Error::success();
      if (t.text == "{")
        ++depth;
      if (t.text == "}" && --depth == 0)
        return llvm::Error::success();
    }
    return err(line, "unterminated .func");
  }

  /// After `.shared`/`.local`: `[.align N] .type name[dim]...;`.
  llvm::Error parseVarTail(unsigned &align, unsigned &size, std::string &name,
                           bool &unsized) {
    unsigned elem = 0;
    align = 0;
    while (peek().kind == Token::Ident && peek().text.starts_with(".")) {
      const Token &t = next();
      if (t.text == ".align") {
        auto v = parseUInt();
        if (!v)
          return v.takeError();
        align = *v;
        continue;
      }
      Ty ty = parseTypeName(t.text.drop_front());
      if (ty == Ty::None || ty == Ty::Pred)
        return err(t.line, "unsupported variable modifier '" + t.text + "'");
      elem = byteSize(ty);
    }
    const Token &nt = next();
    if (nt.kind != Token::Ident || elem == 0)
      return err(nt.line, "malformed variable declaration");
    name = nt.text.str();
    size = elem;
    unsized = false;
    while (consumeIf("[")) {
      if (consumeIf("]")) {
        unsized = true;
        size = 0;
        continue;
      }
      auto v = parseUInt();
      if (!v)
        return v.takeError();
      size *= *v;
      if (llvm::Error e = expect("]"))
        return e;
    }
    if (peek().text == "=")
      return err(nt.line, "variable initialisers are not supported");
    if (align == 0)
      align = elem;
    return expect(";");
  }

  llvm::Error parseEntry(Module &m) {
    m.kernels.emplace_back();
    k = &m.kernels.back();
    scopes.clear();
    symbols.clear();
    labels.clear();
    blocks.clear();
    blockCount = 0;
    fixups.clear();
    const Token &nt = next();
    k->name = nt.text.str();
    if (llvm::Error e = expect("("))
      return e;
    unsigned off = 0;
    while (!consumeIf(")")) {
      if (llvm::Error e = expect(".param"))
        return e;
      ParamInfo p;
      unsigned elem = 0, align = 0;
      while (peek().text.starts_with(".")) {
        const Token &t = next();
        if (t.text == ".align") {
          auto v = parseUInt();
          if (!v)
            return v.takeError();
          align = *v;
        } else if (t.text == ".ptr" || t.text == ".global" ||
                   t.text == ".shared" || t.text == ".const" ||
                   t.text == ".local") {
          continue;
        } else {
          Ty ty = parseTypeName(t.text.drop_front());
          if (ty == Ty::None || ty == Ty::Pred)
            return err(t.line,
                       "unsupported parameter modifier '" + t.text + "'");
          elem = byteSize(ty);
        }
      }
      const Token &pn = next();
      if (pn.kind != Token::Ident || elem == 0)
        return err(pn.line, "malformed kernel parameter");
      p.name = pn.text.str();
      p.size = elem;
      while (consumeIf("[")) {
        auto v = parseUInt();
        if (!v)
          return v.takeError();
        p.size *= *v;
        if (llvm::Error e = expect("]"))
          return e;
      }
      // A pointer's `.align` describes its pointee, not the parameter slot.
      p.align = (p.size == elem) ? elem : std::max(align, elem);
      off = (off + p.align - 1) / p.align * p.align;
      p.offset = off;
      off += p.size;
      symbols[p.name] = {Space::Param, p.offset, false};
      k->params.push_back(p);
      consumeIf(",");
    }
    k->paramBytes = off;
    // Performance-tuning directives before the body.
    while (peek().text != "{") {
      const Token &t = next();
      if (t.kind == Token::End)
        return err(t.line, "missing kernel body");
      if (t.text == ".maxntid" || t.text == ".reqntid") {
        for (int i = 0; i < 3; ++i) {
          if (peek().kind != Token::Number)
            break;
          auto v = parseUInt();
          if (!v)
            return v.takeError();
          k->maxNtid[i] = *v;
          if (!consumeIf(","))
            break;
        }
      } else if (t.text == ".minnctapersm" || t.text == ".maxnreg" ||
                 t.text == ".maxnctapersm" || t.text == ".maxclusterrank") {
        next();
      } else if (t.text == ".reqnctapercluster") {
        next();
        while (consumeIf(","))
          next();
      } else if (t.text == ".noreturn" || t.text == ".explicitcluster") {
      } else if (t.text == ".pragma") {
        next();
        if (llvm::Error e = expect(";"))
          return e;
      } else {
        return err(t.line, "unsupported kernel directive '" + t.text + "'");
      }
    }
    // Module-scope shared variables are visible in every kernel.
    unsigned shared = 0;
    for (auto &[name, size] : moduleShared) {
      symbols[name] = {Space::Shared, shared, false};
      shared += size;
    }
    k->staticSharedBytes = shared;
    next(); // '{'
    if (llvm::Error e = parseBlock())
      return e;
    return resolve();
  }

  uint32_t declareReg(const std::string &name, Ty ty) {
    uint32_t id = k->numRegs++;
    k->regNames.push_back(name);
    k->regTypes.push_back(ty);
    scopes.back()[name] = id;
    return id;
  }
  int64_t lookupReg(StringRef name) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return f->second;
    }
    return -1;
  }

  llvm::Error parseBlock() {
    scopes.emplace_back();
    blocks.push_back(blockCount++);
    while (true) {
      const Token &t = peek();
      if (t.kind == Token::End)
        return err(t.line, "unterminated block");
      if (t.text == "}") {
        next();
        break;
      }
      if (t.text == "{") {
        next();
        if (llvm::Error e = parseBlock())
          return e;
        continue;
      }
      if (llvm::Error e = parseStatement())
        return e;
    }
    scopes.pop_back();
    blocks.pop_back();
    return llvm::Error::success();
  }

  llvm::Error parseStatement() {
    const Token &t = peek();
    if (t.kind == Token::Ident && peek(1).text == ":") {
      next();
      next();
      if (!labels.try_emplace({blocks.back(), t.text.str()}, k->body.size())
               .second)
        return err(t.line, "label '" + t.text + "' defined twice in a block");
      return llvm::Error::success();
    }
    if (t.text == ".reg")
      return parseRegDecl();
    if (t.text == ".shared" || t.text == ".local" || t.text == ".extern") {
      next();
      bool isExtern = t.text == ".extern";
      StringRef space = isExtern ? next().text : t.text;
      if (space != ".shared" && space != ".local")
        return err(t.line, "unsupported declaration '" + space + "'");
      unsigned align, size;
      std::string name;
      bool unsized;
      if (llvm::Error e = parseVarTail(align, size, name, unsized))
        return e;
      if (space == ".local") {
        if (unsized)
          return err(t.line, "unsized .local variable");
        k->localBytes = (k->localBytes + align - 1) / align * align;
        symbols[name] = {Space::Local, k->localBytes, false};
        k->localBytes += size;
        return llvm::Error::success();
      }
      if (unsized) {
        symbols[name] = {Space::Shared, 0, true};
        k->dynamicSharedAlign = std::max(k->dynamicSharedAlign, align);
        return llvm::Error::success();
      }
      k->staticSharedBytes = (k->staticSharedBytes + align - 1) / align * align;
      symbols[name] = {Space::Shared, k->staticSharedBytes, false};
      k->staticSharedBytes += size;
      return llvm::Error::success();
    }
    if (t.text == ".pragma") {
      next();
      next();
      return expect(";");
    }
    if (t.text == ".loc" || t.text == ".file") {
      skipLine();
      return llvm::Error::success();
    }
    return parseInstruction();
  }

  llvm::Error parseRegDecl() {
    unsigned line = next().line;
    const Token &ty = next();
    if (ty.text.starts_with(".v"))
      return err(line, "vector register declarations are not supported");
    Ty regTy = parseTypeName(ty.text.drop_front());
    if (regTy == Ty::None)
      return err(line, "unknown register type '" + ty.text + "'");
    do {
      const Token &nt = next();
      if (nt.kind != Token::Ident)
        return err(nt.line, "expected a register name");
      if (consumeIf("<")) {
        auto cnt = parseUInt();
        if (!cnt)
          return cnt.takeError();
        if (llvm::Error e = expect(">"))
          return e;
        for (uint64_t i = 0; i < *cnt; ++i)
          declareReg((nt.text + llvm::Twine(i)).str(), regTy);
      } else {
        declareReg(nt.text.str(), regTy);
      }
    } while (consumeIf(","));
    return expect(";");
  }

  llvm::Error parseInstruction() {
    Instruction inst;
    inst.line = peek().line;
    if (consumeIf("@")) {
      bool neg = consumeIf("!");
      const Token &p = next();
      int64_t r = lookupReg(p.text);
      if (r < 0)
        return err(p.line, "unknown guard predicate '" + p.text + "'");
      inst.guard = r;
      inst.guardNegated = neg;
    }
    const Token &opTok = next();
    if (opTok.kind != Token::Ident)
      return err(opTok.line,
                 "expected an instruction but found '" + opTok.text + "'");
    inst.opcode = opTok.text.str();
    if (llvm::Error e = decodeOpcode(inst))
      return err(inst.line, llvm::toString(std::move(e)));
    if (!consumeIf(";")) {
      do {
        Operand o;
        if (llvm::Error e = parseOperand(o, inst.ops.size()))
          return e;
        inst.ops.push_back(std::move(o));
      } while (consumeIf(","));
      if (llvm::Error e = expect(";"))
        return e;
    }
    if (llvm::Error e = checkOperands(inst))
      return err(inst.line, llvm::toString(std::move(e)));
    k->body.push_back(std::move(inst));
    return llvm::Error::success();
  }

  llvm::Error parseImmediate(Operand &o, bool negative) {
    const Token &t = next();
    StringRef s = t.text;
    o.kind = Operand::Imm;
    if ((s.starts_with("0f") || s.starts_with("0F")) && s.size() == 10) {
      if (s.drop_front(2).getAsInteger(16, o.imm))
        return err(t.line, "bad float literal '" + s + "'");
      o.immKind = Operand::F32Bits;
      if (negative)
        o.imm ^= 0x80000000u;
      return llvm::Error::success();
    }
    if ((s.starts_with("0d") || s.starts_with("0D")) && s.size() == 18) {
      if (s.drop_front(2).getAsInteger(16, o.imm))
        return err(t.line, "bad double literal '" + s + "'");
      o.immKind = Operand::F64Bits;
      if (negative)
        o.imm ^= 0x8000000000000000ull;
      return llvm::Error::success();
    }
    if (s.contains('.')) {
      double d;
      if (s.getAsDouble(d))
        return err(t.line, "bad literal '" + s + "'");
      o.immKind = Operand::FloatLit;
      if (negative)
        d = -d;
      std::memcpy(&o.imm, &d, 8);
      return llvm::Error::success();
    }
    StringRef digits = s;
    if (digits.ends_with("U") || digits.ends_with("u"))
      digits = digits.drop_back();
    if (digits.size() > 1 && digits[0] == '0' && llvm::isDigit(digits[1]))
      return err(t.line, "octal literals are not supported: '" + s + "'");
    uint64_t v;
    if (digits.getAsInteger(0, v))
      return err(t.line, "bad integer '" + s + "'");
    o.imm = negative ? uint64_t(0) - v : v;
    return llvm::Error::success();
  }

  llvm::Error parseOperand(Operand &o, size_t index) {
    const Token &t = peek();
    if (t.text == "{") {
      next();
      o.kind = Operand::Vec;
      do {
        const Token &e = peek();
        if (e.kind == Token::Number || e.text == "-") {
          Operand imm;
          bool neg = consumeIf("-");
          if (llvm::Error er = parseImmediate(imm, neg))
            return er;
          o.elems.push_back(-1 - int32_t(o.vecImm.size()));
          o.vecImm.push_back(imm.imm);
          o.vecImmKind.push_back(imm.immKind);
          continue;
        }
        next();
        if (e.text == "_") {
          o.elems.push_back(INT32_MIN);
          continue;
        }
        int64_t r = lookupReg(e.text);
        if (r < 0)
          return err(e.line, "unknown register '" + e.text + "'");
        o.elems.push_back(r);
      } while (consumeIf(","));
      return expect("}");
    }
    if (t.text == "[") {
      next();
      o.kind = Operand::Addr;
      const Token &b = next();
      if (b.kind == Token::Number) {
        if (b.text.getAsInteger(0, o.imm))
          return err(b.line, "bad address");
      } else {
        int64_t r = lookupReg(b.text);
        if (r >= 0) {
          o.baseIsReg = true;
          o.reg = r;
        } else {
          fixups.push_back(
              {k->body.size(), index, b.text.str(), b.line, blocks});
        }
        if (peek().text == "+" || peek().text == "-") {
          bool neg = next().text == "-";
          if (consumeIf("-"))
            neg = !neg;
          auto v = parseUInt();
          if (!v)
            return v.takeError();
          o.imm = neg ? uint64_t(0) - *v : *v;
        }
      }
      if (consumeIf(",")) {
        // [tensorMap, {c0, c1, ...}]: the coordinates of a tensor copy.
        if (peek().text != "{")
          return err(peek().line, "expected '{' with tensor coordinates");
        Operand coords;
        if (llvm::Error e = parseOperand(coords, index))
          return e;
        o.elems = std::move(coords.elems);
        o.vecImm = std::move(coords.vecImm);
        o.vecImmKind = std::move(coords.vecImmKind);
        for (int32_t e : o.elems)
          if (e == INT32_MIN)
            return err(peek().line, "'_' is not a tensor coordinate");
      }
      return expect("]");
    }
    if (t.text == "-" || t.kind == Token::Number) {
      bool neg = consumeIf("-");
      return parseImmediate(o, neg);
    }
    if (t.text == "!") {
      next();
      o.negate = true;
    }
    const Token &id = next();
    if (id.kind != Token::Ident)
      return err(id.line, "unexpected '" + id.text + "'");
    if (id.text == "_") {
      o.kind = Operand::Sink;
      return llvm::Error::success();
    }
    int64_t r = lookupReg(id.text);
    if (r >= 0) {
      o.kind = Operand::Reg;
      o.reg = r;
      if (consumeIf("|")) {
        const Token &q = next();
        int64_t r2 = lookupReg(q.text);
        if (r2 < 0)
          return err(q.line, "unknown register '" + q.text + "'");
        o.kind = Operand::PredPair;
        o.reg2 = r2;
      }
      return llvm::Error::success();
    }
    if (id.text.starts_with("%")) {
      auto sp = llvm::StringSwitch<int>(id.text)
                    .Case("%tid.x", 0)
                    .Case("%tid.y", 1)
                    .Case("%tid.z", 2)
                    .Case("%ntid.x", 3)
                    .Case("%ntid.y", 4)
                    .Case("%ntid.z", 5)
                    .Case("%ctaid.x", 6)
                    .Case("%ctaid.y", 7)
                    .Case("%ctaid.z", 8)
                    .Case("%nctaid.x", 9)
                    .Case("%nctaid.y", 10)
                    .Case("%nctaid.z", 11)
                    .Case("%laneid", 12)
                    .Case("%warpid", 13)
                    .Default(-1);
      if (sp < 0)
        return err(id.line,
                   "unknown register or unsupported special register '" +
                       id.text + "'");
      o.kind = Operand::Special;
      o.special = static_cast<Special>(sp);
      return llvm::Error::success();
    }
    // A label or a variable's address, resolved when the body is complete.
    o.kind = Operand::Imm;
    fixups.push_back({k->body.size(), index, id.text.str(), id.line, blocks});
    return llvm::Error::success();
  }

  llvm::Error resolve() {
    unsigned dynBase = (k->staticSharedBytes + k->dynamicSharedAlign - 1) /
                       k->dynamicSharedAlign * k->dynamicSharedAlign;
    for (const Fixup &f : fixups) {
      Instruction &inst = k->body[f.inst];
      Operand &o = inst.ops[f.operand];
      if (inst.op == Op::Bra) {
        auto l = labels.end();
        for (auto b = f.blocks.rbegin();
             b != f.blocks.rend() && l == labels.end(); ++b)
          l = labels.find({*b, f.name});
        if (l == labels.end())
          return err(f.line, "unknown label '" + f.name + "'");
        o.kind = Operand::Label;
        o.imm = l->second;
        continue;
      }
      auto s = symbols.find(f.name);
      if (s == symbols.end())
        return err(f.line, "unknown symbol '" + f.name + "'");
      uint64_t base = s->second.externShared ? dynBase : s->second.offset;
      if (o.kind == Operand::Addr) {
        if (s->second.space == Space::Param && inst.space != Space::Param)
          return err(f.line,
                     "parameter '" + f.name + "' used outside ld.param");
        o.imm += base;
      } else {
        if (s->second.space == Space::Param)
          return err(f.line, "taking the address of parameter '" + f.name +
                                 "' is not supported");
        o.imm = base;
      }
    }
    if (!k->body.empty() || true) {
      // Falling off the end of a kernel behaves like ret.
      Instruction r;
      r.op = Op::Ret;
      r.opcode = "ret";
      r.line = k->body.empty() ? 0 : k->body.back().line;
      k->body.push_back(r);
    }
    k->staticSharedBytes = dynBase;
    return llvm::Error::success();
  }
};

} // namespace

llvm::Expected<Module> tessera::ptx::parsePTX(StringRef text,
                                              StringRef bufferName) {
  Parser p(text, bufferName);
  return p.run();
}
