#!/usr/bin/env python3
# load_artifact.py - opens an artifact through libtessera_runtime.so loaded RTLD_LOCAL, as an interpreter loads it.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: load_artifact.py LIBTESSERA_RUNTIME ARTIFACT

The runtime library (and the C++ runtime it brings) is loaded RTLD_LOCAL,
so the artifact finds only the libraries it names itself. Prints the
model's device, or the runtime's error (and exits 1).
"""
import ctypes
import sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
runtime = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_LOCAL)
runtime.tessera_model_load.restype = ctypes.c_void_p
runtime.tessera_model_load.argtypes = [ctypes.c_char_p]
runtime.tessera_last_error.restype = ctypes.c_char_p
runtime.tessera_model_device.restype = ctypes.c_char_p
runtime.tessera_model_device.argtypes = [ctypes.c_void_p]
runtime.tessera_model_free.argtypes = [ctypes.c_void_p]
model = runtime.tessera_model_load(sys.argv[2].encode())
if not model:
    sys.exit("error: " + runtime.tessera_last_error().decode())
print("loaded: " + runtime.tessera_model_device(model).decode())
runtime.tessera_model_free(model)
