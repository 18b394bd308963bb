/*===- DriverABI.h - how a CUDA artifact reaches the GPU -----------------===*/
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/*
 * A CUDA artifact (`tessera-compile --target=cuda -o model.so`) links no
 * GPU library. Its host code calls the `mgpu*` functions that MLIR's
 * gpu-to-llvm lowering emits and allocates its buffers through
 * `_mlir_memref_to_llvm_alloc`; the artifact's support code forwards all of
 * them to a driver table that the runtime binds before the first run with
 * `tessera_cuda_bind_driver`. The runtime has two drivers: the CUDA driver
 * API (libcuda.so.1, opened with dlopen) and Tessera's PTX emulator.
 *
 * Device addresses are 64-bit integers that the host never dereferences.
 * Every function returns 0 on success; on failure `last_error` says why.
 */
#ifndef TESSERA_TARGET_CUDA_DRIVERABI_H
#define TESSERA_TARGET_CUDA_DRIVERABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_CUDA_DRIVER_ABI_VERSION 1

typedef struct tessera_cuda_driver {
  uint32_t abi_version;
  void *self;
  int (*alloc)(void *self, uint64_t bytes, uint64_t *device);
  void (*release)(void *self, uint64_t device);
  int (*copy_to_device)(void *self, uint64_t dst, const void *src,
                        uint64_t bytes);
  int (*copy_to_host)(void *self, void *dst, uint64_t src, uint64_t bytes);
  int (*copy_on_device)(void *self, uint64_t dst, uint64_t src,
                        uint64_t bytes);
  /* `image` is a kernel image (tessera/Target/CUDA/KernelImage.h). */
  int (*load_module)(void *self, const void *image, uint64_t bytes,
                     void **module);
  void (*unload_module)(void *self, void *module);
  int (*get_function)(void *self, void *module, const char *name,
                      void **function);
  /* `params[i]` points to the i-th kernel parameter's value. */
  int (*launch)(void *self, void *function, uint32_t grid_x, uint32_t grid_y,
                uint32_t grid_z, uint32_t block_x, uint32_t block_y,
                uint32_t block_z, uint32_t shared_bytes, void **params,
                uint64_t num_params);
  int (*synchronize)(void *self);
  const char *(*last_error)(void *self);
} tessera_cuda_driver;

/* Exported by every CUDA artifact. */
typedef void (*tessera_cuda_bind_driver_fn)(const tessera_cuda_driver *);
/* The first error since the last call, or NULL; clears it. */
typedef const char *(*tessera_cuda_take_error_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TARGET_CUDA_DRIVERABI_H */
