//===- MemoryArtifact.cpp - opens an artifact held in memory --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/MemoryArtifact.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace tessera::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {
/// The anonymous file holding the bytes and a link to it named with the
/// kind's extension (which is how the registry picks a loader); both go
/// when this does, the file itself once nothing maps it.
struct MemoryFile {
  int fd = -1;
  llvm::SmallString<128> folder, link;
  ~MemoryFile() {
    if (!link.empty())
      llvm::sys::fs::remove(link);
    if (!folder.empty())
      llvm::sys::fs::remove(folder);
    if (fd >= 0)
      ::close(fd);
  }
};
} // namespace

llvm::Expected<std::unique_ptr<Executable>>
tessera::runtime::loadExecutableFromMemory(llvm::ArrayRef<uint8_t> bytes,
                                           llvm::StringRef kindOrExtension,
                                           const LoadOptions &options,
                                           const ExecutableLoader **used) {
  registerAllExecutableLoaders();
  std::string extension;
  std::string known;
  for (const ExecutableLoader *loader : registeredLoaders()) {
    if (loader->kind == kindOrExtension || loader->extension == kindOrExtension)
      extension = loader->extension;
    known += (known.empty() ? "" : ", ") + loader->kind + " (" +
             loader->extension + ")";
  }
  if (extension.empty())
    return fail("no loader opens '" + kindOrExtension +
                "' artifacts (known: " +
                (known.empty() ? std::string("none") : known) + ")");
  if (bytes.empty())
    return fail("cannot load <memory>: the artifact is empty");

  MemoryFile file;
  file.fd = memfd_create(("tessera" + extension).c_str(), MFD_CLOEXEC);
  if (file.fd < 0)
    return fail(llvm::Twine("cannot load <memory>: memfd_create: ") +
                std::strerror(errno));
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return fail(llvm::Twine("cannot load <memory>: ") +
                  std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("tessera-artifact", file.folder))
    return fail("cannot load <memory>: " + ec.message());
  file.link = file.folder;
  llvm::sys::path::append(file.link, "model" + extension);
  std::string target = "/proc/self/fd/" + std::to_string(file.fd);
  if (::symlink(target.c_str(), file.link.c_str()) != 0)
    return fail(llvm::Twine("cannot load <memory>: ") + std::strerror(errno));
  if (used)
    *used = findLoaderForPath(file.link);
  auto executable = loadExecutable(file.link, options);
  if (!executable) {
    // The link is an implementation detail; the caller passed bytes.
    std::string message = llvm::toString(executable.takeError());
    for (llvm::StringRef path : {llvm::StringRef(file.link),
                                 llvm::StringRef(target)})
      for (size_t at; (at = message.find(path.str())) != std::string::npos;)
        message.replace(at, path.size(), "<memory>");
    return fail(message);
  }
  return executable;
}
