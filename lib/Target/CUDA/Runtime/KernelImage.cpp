//===- KernelImage.cpp - the kernels of a CUDA artifact, for every GPU ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/KernelImage.h"

#include "llvm/Support/Endian.h"

#include <cstring>

using namespace tessera::cuda;

static constexpr char kMagic[8] = {'T', 'S', 'R', 'K', 'I', 'M', 'G', '1'};
static constexpr size_t kArchBytes = 16;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "bad kernel image: " + message);
}

std::string
tessera::cuda::writeKernelImage(llvm::ArrayRef<KernelImageEntry> entries) {
  std::string out(kMagic, sizeof(kMagic));
  auto put32 = [&](uint32_t v) {
    char b[4];
    llvm::support::endian::write32le(b, v);
    out.append(b, 4);
  };
  auto put64 = [&](uint64_t v) {
    char b[8];
    llvm::support::endian::write64le(b, v);
    out.append(b, 8);
  };
  put32(entries.size());
  for (const KernelImageEntry &e : entries) {
    put32(e.kind);
    std::string arch = e.arch.substr(0, kArchBytes - 1);
    arch.resize(kArchBytes, '\0');
    out += arch;
    bool nul = e.kind == KernelImageEntry::PTX;
    put64(e.data.size() + nul);
    out += e.data;
    if (nul)
      out.push_back('\0');
  }
  return out;
}

llvm::Expected<std::vector<KernelImageEntry>>
tessera::cuda::readKernelImage(llvm::StringRef bytes) {
  if (bytes.size() < 12 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    return fail("no TSRKIMG1 header");
  uint32_t count = llvm::support::endian::read32le(bytes.data() + 8);
  size_t at = 12;
  std::vector<KernelImageEntry> entries;
  for (uint32_t i = 0; i < count; ++i) {
    if (bytes.size() - at < 4 + kArchBytes + 8)
      return fail("entry " + llvm::Twine(i) + " is cut short");
    KernelImageEntry e;
    uint32_t kind = llvm::support::endian::read32le(bytes.data() + at);
    if (kind > KernelImageEntry::PTX)
      return fail("entry " + llvm::Twine(i) + " has unknown kind " +
                  llvm::Twine(kind));
    e.kind = static_cast<KernelImageEntry::Kind>(kind);
    llvm::StringRef arch(bytes.data() + at + 4, kArchBytes);
    e.arch = arch.take_until([](char c) { return c == '\0'; }).str();
    uint64_t size =
        llvm::support::endian::read64le(bytes.data() + at + 4 + kArchBytes);
    at += 4 + kArchBytes + 8;
    if (size > bytes.size() - at)
      return fail("entry " + llvm::Twine(i) + " claims " + llvm::Twine(size) +
                  " bytes past the image's end");
    e.data = bytes.substr(at, size);
    if (e.kind == KernelImageEntry::PTX) {
      if (e.data.empty() || e.data.back() != '\0')
        return fail("PTX entry " + llvm::Twine(i) + " does not end in NUL");
      e.data = e.data.drop_back();
    }
    at += size;
    entries.push_back(std::move(e));
  }
  return entries;
}

unsigned tessera::cuda::computeCapability(llvm::StringRef arch) {
  if (!arch.consume_front("sm_"))
    return 0;
  arch.consume_back("a");
  unsigned cc = 0;
  if (arch.empty() || arch.getAsInteger(10, cc))
    return 0;
  return cc;
}

const KernelImageEntry *tessera::cuda::selectKernelImage(
    llvm::ArrayRef<KernelImageEntry> entries, unsigned major, unsigned minor) {
  unsigned device = major * 10 + minor;
  const KernelImageEntry *best = nullptr;
  for (const KernelImageEntry &e : entries) {
    unsigned cc = computeCapability(e.arch);
    if (e.kind != KernelImageEntry::Cubin || cc == 0 || cc > device ||
        cc / 10 != major)
      continue;
    if (llvm::StringRef(e.arch).ends_with("a") && cc != device)
      continue;
    if (!best || cc > computeCapability(best->arch))
      best = &e;
  }
  return best ? best : selectKernelPTX(entries, device);
}

const KernelImageEntry *
tessera::cuda::selectKernelPTX(llvm::ArrayRef<KernelImageEntry> entries,
                               unsigned device) {
  const KernelImageEntry *best = nullptr;
  for (const KernelImageEntry &e : entries) {
    unsigned cc = computeCapability(e.arch);
    // `a` features exist only on their own architecture.
    if (e.kind != KernelImageEntry::PTX || cc == 0 || cc > device ||
        (llvm::StringRef(e.arch).ends_with("a") && cc != device))
      continue;
    if (!best || cc > computeCapability(best->arch))
      best = &e;
  }
  return best;
}
