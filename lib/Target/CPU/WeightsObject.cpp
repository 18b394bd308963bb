//===- WeightsObject.cpp - a model's weights as an object of their own ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A shared library's weights go from the MLIR context's resource blobs
// straight into an ELF relocatable object of their own: their globals
// become hidden declarations before translation (so LLVM makes no
// constant of them, and its code generator no second copy), and the
// object is written from the blobs' bytes. Compiling ViT-B/16 (346 MB of
// weights) held them four times before (the import's blobs, the packed
// blobs, an LLVM constant and the object writer's buffer).
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CPU/Artifact.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace tessera::cpu {
namespace {

/// Weights are aligned to a cache line (and a 512-bit vector).
constexpr uint64_t kWeightAlign = 64;
/// Smaller constants stay in the code's modules (folded, merged).
constexpr size_t kMinWeightBytes = 4096;

/// The bytes of `value` when they are exactly its elements in order (a
/// resource blob of whole-byte elements); nullopt otherwise.
std::optional<ArrayRef<char>> blobBytes(Attribute value) {
  auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(value);
  if (!resource)
    return std::nullopt;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  ShapedType type = resource.getType();
  // Integers and floats of 8, 16, 32 or 64 bits: LLVM lays them out
  // exactly as the blob holds them.
  Type element = type.getElementType();
  if (!blob || !isa<IntegerType, FloatType>(element) || !type.hasStaticShape())
    return std::nullopt;
  unsigned bits = element.getIntOrFloatBitWidth();
  if (!llvm::is_contained({8u, 16u, 32u, 64u}, bits) ||
      blob->getData().size() !=
          static_cast<size_t>(type.getNumElements()) * (bits / 8))
    return std::nullopt;
  return blob->getData();
}

} // namespace

std::vector<ModuleWeight> externalizeWeights(ModuleOp module,
                                             const llvm::Triple &triple) {
  std::vector<ModuleWeight> weights;
  // (The object is written as this host lays out ELF's structures.)
  if (triple.getArch() != llvm::Triple::x86_64 || triple.isX32() ||
      !triple.isOSBinFormatELF() || !llvm::sys::IsLittleEndianHost)
    return weights;
  // The globals whose address something takes, in one walk.
  llvm::DenseSet<StringAttr> used;
  module.walk([&](LLVM::AddressOfOp address) {
    used.insert(address.getGlobalNameAttr().getAttr());
  });
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    // Unused ones stay, for the optimizer to drop; so do the ones whose
    // placement says more than an address.
    if (!global.getConstant() || global.getSection() || global.getComdat() ||
        global.getThreadLocal_() || global.getAddrSpace() != 0 ||
        !used.contains(global.getSymNameAttr()))
      continue;
    std::optional<ArrayRef<char>> bytes = blobBytes(global.getValueOrNull());
    if (!bytes || bytes->size() < kMinWeightBytes)
      continue;
    uint64_t align =
        std::max<uint64_t>(global.getAlignment().value_or(1), kWeightAlign);
    weights.push_back({global.getSymName().str(), *bytes, align});
    global.removeValueAttr();
    global.setLinkage(LLVM::Linkage::External);
    global.setVisibility_(LLVM::Visibility::Hidden);
    global.setDsoLocal(true);
    global.setAlignment(align);
  }
  return weights;
}

llvm::Error writeWeightsObject(llvm::ArrayRef<ModuleWeight> weights,
                               llvm::StringRef path) {
  namespace elf = llvm::ELF;
  // (The structures are written as this host lays them out.)
  if (!llvm::sys::IsLittleEndianHost)
    return llvm::createStringError(
        "the weights object is written on little-endian hosts only");
  // Sections: null, .rodata (the weights), .note.GNU-stack (no executable
  // stack), .symtab, .strtab, .shstrtab.
  enum { Data = 1, Stack, Symbols, Names, SectionNames, Count };
  std::string names(1, '\0'), sectionNames(1, '\0');
  auto addName = [](std::string &table, llvm::StringRef name) {
    auto offset = static_cast<elf::Elf64_Word>(table.size());
    table += name;
    table += '\0';
    return offset;
  };
  // The weights' offsets in .rodata and their symbols (after the null
  // one), all global.
  std::vector<elf::Elf64_Sym> symbols(1, elf::Elf64_Sym{});
  uint64_t dataSize = 0, dataAlign = 1;
  std::vector<uint64_t> offsets;
  for (const ModuleWeight &weight : weights) {
    dataSize = llvm::alignTo(dataSize, weight.align);
    dataAlign = std::max(dataAlign, weight.align);
    offsets.push_back(dataSize);
    elf::Elf64_Sym symbol{};
    symbol.st_name = addName(names, weight.name);
    symbol.setBindingAndType(elf::STB_GLOBAL, elf::STT_OBJECT);
    symbol.st_other = elf::STV_HIDDEN;
    symbol.st_shndx = Data;
    symbol.st_value = dataSize;
    symbol.st_size = weight.bytes.size();
    symbols.push_back(symbol);
    dataSize += weight.bytes.size();
  }
  std::vector<elf::Elf64_Shdr> sections(Count, elf::Elf64_Shdr{});
  auto section = [&](unsigned index, llvm::StringRef name, unsigned type,
                     uint64_t flags, uint64_t size, uint64_t align) {
    elf::Elf64_Shdr &header = sections[index];
    header.sh_name = addName(sectionNames, name);
    header.sh_type = type;
    header.sh_flags = flags;
    header.sh_size = size;
    header.sh_addralign = align;
  };
  section(Data, ".rodata.tessera_weights", elf::SHT_PROGBITS, elf::SHF_ALLOC,
          dataSize, dataAlign);
  section(Stack, ".note.GNU-stack", elf::SHT_PROGBITS, 0, 0, 1);
  section(Symbols, ".symtab", elf::SHT_SYMTAB, 0,
          symbols.size() * sizeof(elf::Elf64_Sym), 8);
  sections[Symbols].sh_entsize = sizeof(elf::Elf64_Sym);
  sections[Symbols].sh_link = Names;
  sections[Symbols].sh_info = 1; // the first global symbol
  section(Names, ".strtab", elf::SHT_STRTAB, 0, names.size(), 1);
  section(SectionNames, ".shstrtab", elf::SHT_STRTAB, 0, 0, 1);
  sections[SectionNames].sh_size = sectionNames.size();

  // The file: header, .rodata, .symtab, .strtab, .shstrtab, then the
  // section headers; each part at its alignment.
  uint64_t offset = sizeof(elf::Elf64_Ehdr);
  for (unsigned index : {Data, Stack, Symbols, Names, SectionNames}) {
    offset = llvm::alignTo(offset, sections[index].sh_addralign);
    sections[index].sh_offset = offset;
    offset += sections[index].sh_size;
  }
  uint64_t sectionHeaders = llvm::alignTo(offset, 8);

  elf::Elf64_Ehdr header{};
  std::copy(std::begin(elf::ElfMagic), std::end(elf::ElfMagic) - 1,
            header.e_ident);
  header.e_ident[elf::EI_CLASS] = elf::ELFCLASS64;
  header.e_ident[elf::EI_DATA] = elf::ELFDATA2LSB;
  header.e_ident[elf::EI_VERSION] = elf::EV_CURRENT;
  header.e_ident[elf::EI_OSABI] = elf::ELFOSABI_NONE;
  header.e_type = elf::ET_REL;
  header.e_machine = elf::EM_X86_64;
  header.e_version = elf::EV_CURRENT;
  header.e_shoff = sectionHeaders;
  header.e_ehsize = sizeof(elf::Elf64_Ehdr);
  header.e_shentsize = sizeof(elf::Elf64_Shdr);
  header.e_shnum = Count;
  header.e_shstrndx = SectionNames;

  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return llvm::createStringError(error, "cannot write the weights object '" +
                                              path + "': " + error.message());
  auto bytesOf = [](const auto &value) {
    return llvm::StringRef(reinterpret_cast<const char *>(&value),
                           sizeof(value));
  };
  auto padTo = [&](uint64_t at) { os.write_zeros(at - os.tell()); };
  os << bytesOf(header);
  for (auto [weight, at] : llvm::zip_equal(weights, offsets)) {
    padTo(sections[Data].sh_offset + at);
    os.write(weight.bytes.data(), weight.bytes.size());
  }
  padTo(sections[Symbols].sh_offset);
  for (const elf::Elf64_Sym &symbol : symbols)
    os << bytesOf(symbol);
  padTo(sections[Names].sh_offset);
  os << names;
  padTo(sections[SectionNames].sh_offset);
  os << sectionNames;
  padTo(sectionHeaders);
  for (const elf::Elf64_Shdr &sectionHeader : sections)
    os << bytesOf(sectionHeader);
  os.close();
  if (os.has_error())
    return llvm::createStringError(os.error(),
                                   "cannot write the weights object '" + path +
                                       "': " + os.error().message());
  return llvm::Error::success();
}

} // namespace tessera::cpu
