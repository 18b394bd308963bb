# lit.cfg.py - runs the GoogleTest binaries under build/test/Unit as a lit suite.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os

import lit.formats

config.name = "Tessera-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.tessera_obj_root, "test", "Unit")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")

# An ASan + UBSan build (scripts/test.sh --sanitize): the same options as
# the lit suites (test/lit.cfg.py).
if config.tessera_sanitize:
    config.environment["LSAN_OPTIONS"] = "suppressions=" + os.path.join(
        config.tessera_src_root, "scripts", "sanitize.supp")
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1"
