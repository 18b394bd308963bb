# lit.cfg.py - runs the GoogleTest binaries under build/test/Unit as a lit suite.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os

import lit.formats

config.name = "Tessera-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.tessera_obj_root, "test", "Unit")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
