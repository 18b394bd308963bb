//===- WeightsObjectTest.cpp - a shared library's weights object ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// externalizeWeights takes the large constant globals of an LLVM-dialect
// module out of it (declarations left), and writeWeightsObject writes them
// as an ELF object, read back here with LLVM's object library.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CPU/Artifact.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

namespace {

using namespace mlir;

/// A temporary file, removed when this goes.
struct TemporaryFile {
  llvm::SmallString<128> path;
  TemporaryFile() {
    EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("weights", "o", path));
  }
  ~TemporaryFile() { llvm::sys::fs::remove(path); }
};

TEST(WeightsObject, SymbolsAndBytesReadBack) {
  std::vector<char> first(5000), second(4100);
  for (size_t i = 0; i < first.size(); ++i)
    first[i] = static_cast<char>(i * 7);
  for (size_t i = 0; i < second.size(); ++i)
    second[i] = static_cast<char>(255 - i);
  std::vector<tessera::cpu::ModuleWeight> weights = {
      {"first_weight", first, 64}, {"second.weight", second, 128}};
  TemporaryFile file;
  ASSERT_FALSE(
      static_cast<bool>(tessera::cpu::writeWeightsObject(weights, file.path)));

  auto buffer = llvm::MemoryBuffer::getFile(file.path);
  ASSERT_TRUE(static_cast<bool>(buffer));
  auto object = llvm::object::ObjectFile::createObjectFile(**buffer);
  ASSERT_TRUE(static_cast<bool>(object)) << llvm::toString(object.takeError());
  auto *elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(object->get());
  ASSERT_NE(elf, nullptr);
  EXPECT_TRUE(elf->isRelocatableObject());
  EXPECT_EQ(elf->getArch(), llvm::Triple::x86_64);

  // One read-only allocated section holds both, each at its alignment;
  // the stack is not executable.
  llvm::StringRef contents;
  bool stackNote = false;
  for (const llvm::object::SectionRef &section : elf->sections()) {
    auto name = section.getName();
    ASSERT_TRUE(static_cast<bool>(name));
    if (*name == ".note.GNU-stack")
      stackNote = true;
    if (*name != ".rodata.tessera_weights")
      continue;
    auto data = section.getContents();
    ASSERT_TRUE(static_cast<bool>(data));
    contents = *data;
    EXPECT_EQ(section.getAlignment().value(), 128u);
    EXPECT_FALSE(section.isText());
    uint64_t flags = llvm::object::ELFSectionRef(section).getFlags();
    EXPECT_EQ(flags, static_cast<uint64_t>(llvm::ELF::SHF_ALLOC));
  }
  EXPECT_TRUE(stackNote);
  ASSERT_FALSE(contents.empty());

  std::map<std::string, std::pair<uint64_t, uint64_t>> found;
  for (const llvm::object::ELFSymbolRef &symbol : elf->symbols()) {
    auto name = symbol.getName();
    ASSERT_TRUE(static_cast<bool>(name));
    if (name->empty())
      continue;
    EXPECT_EQ(symbol.getBinding(), llvm::ELF::STB_GLOBAL) << name->str();
    EXPECT_EQ(symbol.getOther(), llvm::ELF::STV_HIDDEN) << name->str();
    EXPECT_EQ(symbol.getELFType(), llvm::ELF::STT_OBJECT) << name->str();
    auto value = symbol.getValue();
    ASSERT_TRUE(static_cast<bool>(value));
    found[name->str()] = {*value, symbol.getSize()};
  }
  ASSERT_EQ(found.size(), 2u);
  auto [firstAt, firstSize] = found.at("first_weight");
  auto [secondAt, secondSize] = found.at("second.weight");
  EXPECT_EQ(firstSize, first.size());
  EXPECT_EQ(secondSize, second.size());
  EXPECT_EQ(firstAt % 64, 0u);
  EXPECT_EQ(secondAt % 128, 0u);
  EXPECT_GE(secondAt, firstAt + first.size());
  EXPECT_EQ(contents.substr(firstAt, firstSize),
            llvm::StringRef(first.data(), first.size()));
  EXPECT_EQ(contents.substr(secondAt, secondSize),
            llvm::StringRef(second.data(), second.size()));
}

TEST(WeightsObject, ExternalizesLargeUsedResourceConstants) {
  // @big (4096 bytes of a resource) is used: it becomes a hidden
  // declaration; @small (16 bytes), @unused and @mutable stay.
  std::string hex = "0x04000000";
  for (int i = 0; i < 1024; ++i)
    hex += "0000803F"; // 1.0f
  std::string source = R"mlir(
module {
  llvm.mlir.global internal constant @big(dense_resource<big> : tensor<1024xf32>) {addr_space = 0 : i32} : !llvm.array<1024 x f32>
  llvm.mlir.global internal constant @small(dense<1.0> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
  llvm.mlir.global internal constant @unused(dense_resource<big> : tensor<1024xf32>) {addr_space = 0 : i32} : !llvm.array<1024 x f32>
  llvm.mlir.global internal @mutable(dense_resource<big> : tensor<1024xf32>) {addr_space = 0 : i32} : !llvm.array<1024 x f32>
  llvm.func @use() -> !llvm.ptr {
    %0 = llvm.mlir.addressof @big : !llvm.ptr
    %1 = llvm.mlir.addressof @small : !llvm.ptr
    %2 = llvm.mlir.addressof @mutable : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
}
{-#
  dialect_resources: {
    builtin: {
      big: ")mlir" + hex +
                       R"mlir("
    }
  }
#-}
)mlir";
  MLIRContext context;
  context.loadDialect<LLVM::LLVMDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);

  // Not for other formats than x86-64 ELF.
  EXPECT_TRUE(tessera::cpu::externalizeWeights(
                  *module, llvm::Triple("aarch64-unknown-linux-gnu"))
                  .empty());
  std::vector<tessera::cpu::ModuleWeight> weights =
      tessera::cpu::externalizeWeights(
          *module, llvm::Triple("x86_64-unknown-linux-gnu"));
  ASSERT_EQ(weights.size(), 1u);
  EXPECT_EQ(weights[0].name, "big");
  ASSERT_EQ(weights[0].bytes.size(), 4096u);
  float value;
  std::memcpy(&value, weights[0].bytes.data() + 4092, sizeof(float));
  EXPECT_EQ(value, 1.0f);
  EXPECT_EQ(weights[0].align, 64u);

  auto big = module->lookupSymbol<LLVM::GlobalOp>("big");
  EXPECT_FALSE(big.getValueOrNull());
  EXPECT_EQ(big.getLinkage(), LLVM::Linkage::External);
  EXPECT_EQ(big.getVisibility_(), LLVM::Visibility::Hidden);
  EXPECT_TRUE(big.getDsoLocal());
  EXPECT_EQ(big.getAlignment(), 64u);
  for (StringRef kept : {"small", "unused", "mutable"})
    EXPECT_TRUE(module->lookupSymbol<LLVM::GlobalOp>(kept).getValueOrNull())
        << kept.str();
}

} // namespace
