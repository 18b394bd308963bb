//===- CUDARuntimeTest.cpp - kernel images and the emulator's driver ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/Driver.h"
#include "tessera/Target/CUDA/KernelImage.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace tessera::cuda;

namespace {

std::string image(std::initializer_list<KernelImageEntry> entries) {
  return writeKernelImage(std::vector<KernelImageEntry>(entries));
}

TEST(KernelImage, RoundTrip) {
  std::string bytes = image({{KernelImageEntry::Cubin, "sm_90a", "CUBIN\0x"},
                             {KernelImageEntry::PTX, "sm_80", ".version 8.0"}});
  auto entries = readKernelImage(bytes);
  ASSERT_TRUE(bool(entries)) << llvm::toString(entries.takeError());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].kind, KernelImageEntry::Cubin);
  EXPECT_EQ((*entries)[0].arch, "sm_90a");
  EXPECT_EQ((*entries)[1].data, ".version 8.0");
  // The PTX keeps its NUL in the image, for the driver's JIT.
  EXPECT_EQ((*entries)[1].data.data()[(*entries)[1].data.size()], '\0');
}

TEST(KernelImage, RejectsDamage) {
  std::string bytes = image({{KernelImageEntry::PTX, "sm_80", "abc"}});
  EXPECT_FALSE(bool(readKernelImage("not an image")));
  llvm::consumeError(readKernelImage("not an image").takeError());
  auto cut = readKernelImage(llvm::StringRef(bytes).drop_back(2));
  ASSERT_FALSE(bool(cut));
  EXPECT_NE(llvm::toString(cut.takeError()).find("past the image's end"),
            std::string::npos);
}

TEST(KernelImage, SelectsPerDevice) {
  std::vector<KernelImageEntry> entries = {
      {KernelImageEntry::Cubin, "sm_80", "a"},
      {KernelImageEntry::Cubin, "sm_90a", "b"},
      {KernelImageEntry::PTX, "sm_80", "c"},
      {KernelImageEntry::PTX, "sm_90a", "d"}};
  // Exact and same-major cubins.
  EXPECT_EQ(selectKernelImage(entries, 9, 0)->data, "b");
  EXPECT_EQ(selectKernelImage(entries, 8, 0)->data, "a");
  EXPECT_EQ(selectKernelImage(entries, 8, 6)->data, "a");
  // A newer major runs the newest PTX it may (not the sm_90a one).
  EXPECT_EQ(selectKernelImage(entries, 10, 0)->data, "c");
  // Older than every entry: nothing.
  EXPECT_EQ(selectKernelImage(entries, 7, 5), nullptr);
  EXPECT_EQ(computeCapability("sm_90a"), 90u);
  EXPECT_EQ(computeCapability("compute_90"), 0u);
}

/// A kernel that adds 1 to each of n floats, run through the emulator
/// driver's C table as an artifact's host code would.
TEST(EmulatorDriver, RunsAKernelThroughTheTable) {
  const char *ptx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry inc(.param .u64 p, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  add.f32 %f2, %f1, 0f3F800000;
  st.global.f32 [%rd3], %f2;
DONE:
  ret;
}
)";
  std::string bytes = image({{KernelImageEntry::PTX, "sm_80", ptx}});
  auto driver = createEmulatorDriver();
  const tessera_cuda_driver *t = driver->table();
  uint64_t buffer = 0;
  ASSERT_EQ(t->alloc(t->self, 5 * sizeof(float), &buffer), 0);
  float host[5] = {1, 2, 3, 4, 5};
  ASSERT_EQ(t->copy_to_device(t->self, buffer, host, sizeof(host)), 0);
  void *module = nullptr, *function = nullptr;
  ASSERT_EQ(t->load_module(t->self, bytes.data(), bytes.size(), &module), 0)
      << t->last_error(t->self);
  ASSERT_EQ(t->get_function(t->self, module, "inc", &function), 0);
  uint32_t n = 5;
  void *params[] = {&buffer, &n};
  ASSERT_EQ(t->launch(t->self, function, 1, 1, 1, 32, 1, 1, 0, params, 2), 0)
      << t->last_error(t->self);
  float back[5];
  ASSERT_EQ(t->copy_to_host(t->self, back, buffer, sizeof(back)), 0);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(back[i], host[i] + 1);
  // Reading past the allocation is an error, not a host crash.
  float extra[70];
  EXPECT_NE(t->copy_to_host(t->self, extra, buffer, sizeof(extra)), 0);
  EXPECT_NE(
      std::string(t->last_error(t->self)).find("outside every allocation"),
      std::string::npos);
  // A freed block serves the next request of its size.
  t->release(t->self, buffer);
  uint64_t again = 0;
  ASSERT_EQ(t->alloc(t->self, 5 * sizeof(float), &again), 0);
  EXPECT_EQ(again, buffer);
  EXPECT_EQ(t->get_function(t->self, module, "missing", &function), 1);
}

/// An empty kernel named `name` in PTX for `target`.
std::string emptyKernel(const char *target, const char *name) {
  return std::string(".version 8.0\n.target ") + target +
         "\n.address_size 64\n.visible .entry " + name + "()\n{\n  ret;\n}\n";
}

TEST(EmulatorDriver, StandsForOneArchitecture) {
  std::string both = image(
      {{KernelImageEntry::PTX, "sm_80", emptyKernel("sm_80", "ampere")},
       {KernelImageEntry::PTX, "sm_90a", emptyKernel("sm_90a", "hopper")}});
  std::string hopperOnly = image(
      {{KernelImageEntry::PTX, "sm_90a", emptyKernel("sm_90a", "hopper")}});
  for (const char *arch : {"sm_80", "sm_90", "sm_90a"}) {
    auto driver = createEmulatorDriver(true, arch);
    const tessera_cuda_driver *t = driver->table();
    uint32_t capability = 0;
    ASSERT_EQ(t->compute_capability(t->self, &capability), 0);
    EXPECT_EQ(capability, llvm::StringRef(arch) == "sm_80" ? 80u : 90u);
    // Each architecture's own PTX, or the newest portable one below it;
    // sm_90a PTX on the 9.0 devices (sm_90 and sm_90a are the same GPU).
    bool hopper = llvm::StringRef(arch) != "sm_80";
    void *module = nullptr, *function = nullptr;
    ASSERT_EQ(t->load_module(t->self, both.data(), both.size(), &module), 0)
        << t->last_error(t->self);
    EXPECT_EQ(t->get_function(t->self, module, "hopper", &function),
              hopper ? 0 : 1)
        << arch;
    EXPECT_EQ(t->get_function(t->self, module, "ampere", &function),
              hopper ? 1 : 0)
        << arch;
    int loaded =
        t->load_module(t->self, hopperOnly.data(), hopperOnly.size(), &module);
    EXPECT_EQ(loaded, hopper ? 0 : 1) << arch;
    if (!hopper)
      EXPECT_NE(std::string(t->last_error(t->self))
                    .find("holds no PTX that runs on " + std::string(arch)),
                std::string::npos);
  }
}

TEST(EmulatorDriver, BuildsTensorMapsInDeviceMemory) {
  auto driver = createEmulatorDriver();
  const tessera_cuda_driver *t = driver->table();
  uint64_t buffer = 0;
  ASSERT_EQ(t->alloc(t->self, 64 * 64 * 2, &buffer), 0);
  tessera_cuda_tensor_map_fields fields = {
      buffer, 2, 2, {64, 64, 1, 1, 1}, {0, 128, 0, 0, 0}, {64, 64, 1, 1, 1}, 3};
  uint64_t first = 0, second = 0;
  ASSERT_EQ(t->tensor_map(t->self, &fields, &first), 0)
      << t->last_error(t->self);
  ASSERT_EQ(t->tensor_map(t->self, &fields, &second), 0);
  // Each map is an object of its own in device memory, 64-byte aligned.
  EXPECT_NE(first, 0u);
  EXPECT_NE(first, second);
  EXPECT_EQ(first % 64, 0u);
  uint8_t bytes[128];
  EXPECT_EQ(t->copy_to_host(t->self, bytes, first, sizeof(bytes)), 0);
  fields.rank = 6;
  EXPECT_EQ(t->tensor_map(t->self, &fields, &first), 1);
  EXPECT_NE(std::string(t->last_error(t->self)).find("rank 6"),
            std::string::npos);
  // What the CUDA driver refuses: a misaligned address or stride, a box
  // row wider than the swizzle (64 bf16 = 128 bytes fit 128B, not 64B).
  fields.rank = 2;
  fields.global_address = buffer + 8;
  EXPECT_EQ(t->tensor_map(t->self, &fields, &first), 1);
  fields.global_address = buffer;
  fields.strides[1] = 100;
  EXPECT_EQ(t->tensor_map(t->self, &fields, &first), 1);
  EXPECT_NE(std::string(t->last_error(t->self)).find("multiple of 16"),
            std::string::npos);
  fields.strides[1] = 128;
  fields.swizzle = 2;
  EXPECT_EQ(t->tensor_map(t->self, &fields, &first), 1);
  EXPECT_NE(std::string(t->last_error(t->self)).find("over its swizzle"),
            std::string::npos);
}

TEST(CudaDriver, NoDriverIsAClearError) {
  auto opened = openCudaDriver(0);
  if (opened)
    GTEST_SKIP() << "this machine has a CUDA driver and a GPU";
  std::string message = llvm::toString(opened.takeError());
  EXPECT_TRUE(message.find("no CUDA driver") != std::string::npos ||
              message.find("no CUDA device") != std::string::npos)
      << message;
}

} // namespace
