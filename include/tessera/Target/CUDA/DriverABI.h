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

#define TESSERA_CUDA_DRIVER_ABI_VERSION 3

/* A TMA tensor map, as cuTensorMapEncodeTiled takes it: dim 0 is the
 * innermost (contiguous) one; strides are in bytes, of dims 1 .. rank-1
 * (strides[0] is unused); swizzle is CUtensorMapSwizzle's value (0 none,
 * 1 32B, 2 64B, 3 128B). Elements outside the tensor read as zero. */
typedef struct tessera_cuda_tensor_map_fields {
  uint64_t global_address;
  uint32_t element_bytes;
  uint32_t rank;
  uint64_t dims[5];
  uint64_t strides[5];
  uint32_t box[5];
  uint32_t swizzle;
} tessera_cuda_tensor_map_fields;

typedef struct tessera_cuda_driver {
  uint32_t abi_version;
  void *self;
  int (*alloc)(void *self, uint64_t bytes, uint64_t *device);
  void (*release)(void *self, uint64_t device);
  int (*copy_to_device)(void *self, uint64_t dst, const void *src,
                        uint64_t bytes);
  int (*copy_to_host)(void *self, void *dst, uint64_t src, uint64_t bytes);
  int (*copy_on_device)(void *self, uint64_t dst, uint64_t src, uint64_t bytes);
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
  /* Waits for the work the calling thread issued (its stream). */
  int (*synchronize)(void *self);
  const char *(*last_error)(void *self);
  /* The device's compute capability as 10 * major + minor (90: sm_90). */
  int (*compute_capability)(void *self, uint32_t *capability);
  /* A tensor map (128 bytes, 64-byte aligned) built in device memory, for
   * kernels' cp.async.bulk.tensor copies. */
  int (*tensor_map)(void *self, const tessera_cuda_tensor_map_fields *fields,
                    uint64_t *device);
  /* Version 3: waits for all the device's work, on every stream (runs on
   * other threads included). */
  int (*synchronize_device)(void *self);
} tessera_cuda_driver;

/* Exported by every CUDA artifact. */
typedef void (*tessera_cuda_bind_driver_fn)(const tessera_cuda_driver *);
/* The first error since the last call, or NULL; clears it. */
typedef const char *(*tessera_cuda_take_error_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TARGET_CUDA_DRIVERABI_H */
