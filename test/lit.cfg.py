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

# The CUDA target, where the build registers it (Targets.def).
import re
with open(os.path.join(config.tessera_src_root, "include", "tessera",
                       "Target", "Targets.def")) as targets:
    if re.search(r"^TESSERA_TARGET\(cuda\)", targets.read(), re.M):
        config.available_features.add("tessera-cuda-target")

# The CUDA toolkit's ptxas checks the PTX the CUDA target writes.
config.substitutions.append(("%ptxas", "/usr/local/cuda/bin/ptxas"))
