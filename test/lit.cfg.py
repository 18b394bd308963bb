# lit.cfg.py - configuration of Tessera's lit test suites.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Tessera"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "Unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tessera_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Tessera's tools come first, then FileCheck, not, split-file from LLVM.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.tessera_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["tessera-opt", "tessera-compile", "tessera-run", "tessera-sim", "tessera-ptx-emu"], tool_dirs)

config.substitutions.append(("%tessera_src_root", config.tessera_src_root))

# ONNX test models are written in ONNX's textual format and converted at test
# time with Debian's python3-onnx (always /usr/bin/python3).
onnx_scripts = os.path.join(config.tessera_src_root, "test", "Import", "ONNX")
config.substitutions.append(
    ("%make-onnx", "/usr/bin/python3 " + os.path.join(onnx_scripts, "make_onnx.py")))
config.substitutions.append(
    ("%bad-onnx", "/usr/bin/python3 " + os.path.join(onnx_scripts, "bad_onnx.py")))
config.substitutions.append(
    ("%tessera_compile", os.path.join(config.tessera_tools_dir, "tessera-compile")))
config.substitutions.append(
    ("%tessera_run", os.path.join(config.tessera_tools_dir, "tessera-run")))
config.substitutions.append(("%tessera_obj_root", config.tessera_obj_root))
config.substitutions.append(("%tessera_tools_dir", config.tessera_tools_dir))

# The Python package, when pybind11 and DLPack were found (python/).
import glob
if glob.glob(os.path.join(config.tessera_obj_root, "python", "tessera", "_tessera*.so")):
    config.available_features.add("tessera-python")

# What a machine that only runs models needs: checks the dynamic
# dependencies of a library, program or artifact against an allow-list
# (test/e2e/runtime-deps.test).
config.substitutions.append(
    ("%check-deps", "/usr/bin/python3 " + os.path.join(
        config.tessera_src_root, "test", "e2e", "Inputs", "check_deps.py")))

# The libFuzzer targets (test/Fuzz), where clang's fuzzer runtime was found,
# and whether this build is instrumented with ASan and UBSan
# (scripts/test.sh --sanitize).
if os.path.exists(os.path.join(config.tessera_tools_dir, "tessera-fuzz-importer")):
    config.available_features.add("libfuzzer")
if config.tessera_sanitize:
    config.available_features.add("sanitize")
    # Leaks in Debian's uninstrumented libraries are not Tessera's; the
    # suppressions name each (scripts/sanitize.supp).
    supp = os.path.join(config.tessera_src_root, "scripts", "sanitize.supp")
    config.environment["LSAN_OPTIONS"] = "suppressions=" + supp
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1"
    # An uninstrumented Python loads the instrumented package with the
    # sanitizer runtime preloaded; Python's own allocations are not checked
    # for leaks.
    import subprocess
    asan = subprocess.run(["clang++-22", "-print-file-name=libclang_rt.asan-x86_64.so"],
                          capture_output=True, text=True).stdout.strip()
    config.substitutions.append(
        ("%tessera_python_env", "LD_PRELOAD=" + asan + " ASAN_OPTIONS=detect_leaks=0"))
    # Programs built against the install tree link its instrumented
    # libraries, so they are instrumented too.
    flags = "-fsanitize=address,undefined -fno-sanitize=vptr"
    config.substitutions.append(
        ("%embed_cmake_flags",
         f"'-DCMAKE_C_FLAGS={flags}' '-DCMAKE_CXX_FLAGS={flags}' "
         f"'-DCMAKE_EXE_LINKER_FLAGS={flags}'"))
    config.substitutions.append(("%embed_cflags", flags))
else:
    config.substitutions.append(("%tessera_python_env", ""))
    config.substitutions.append(("%embed_cmake_flags", ""))
    config.substitutions.append(("%embed_cflags", ""))

# This CPU computes bf16 products with vdpbf16ps by default: AVX-512 BF16
# on an AMD core (Zen 4 and newer; lib/Target/CPU/Target.cpp), so tests
# can run what the bf16 dot-product kernel computes.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        _cpuinfo = cpuinfo.read()
except OSError:
    _cpuinfo = ""
if "avx512_bf16" in _cpuinfo and "AuthenticAMD" in _cpuinfo:
    config.available_features.add("cpu-bf16-dot")
# ... and int8 products with vpdpbusd: AVX-512 VNNI.
if "avx512_vnni" in _cpuinfo:
    config.available_features.add("cpu-vnni")

# The CUDA target, where the build registers it (Targets.def).
import re
with open(os.path.join(config.tessera_src_root, "include", "tessera",
                       "Target", "Targets.def")) as targets:
    if re.search(r"^TESSERA_TARGET\(cuda\)", targets.read(), re.M):
        config.available_features.add("tessera-cuda-target")

# The CUDA toolkit's ptxas checks the PTX the CUDA target writes.
config.substitutions.append(("%ptxas", "/usr/local/cuda/bin/ptxas"))
