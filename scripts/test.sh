#!/usr/bin/env bash
# scripts/test.sh - builds Tessera and runs every test suite; last line "N passed, M failed".
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/build.sh || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }

lit=/usr/lib/llvm-22/bin/lit
report="$root/build/test-results.xml"
# The lit suites (IR tests, importer, ...) and the GoogleTest unit suite.
"$lit" -sv --xunit-xml-output "$report" build/test build/test/Unit
lit_status=$?

/usr/bin/python3 - "$report" "$lit_status" <<'PY'
import sys
import xml.etree.ElementTree as ET

report, status = sys.argv[1], int(sys.argv[2])
try:
    cases = ET.parse(report).getroot().iter("testcase")
except (OSError, ET.ParseError) as err:
    print(f"no test report ({err})")
    print("0 passed, 1 failed")
    sys.exit(1)
passed = failed = skipped = 0
for case in cases:
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif case.find("skipped") is not None:
        skipped += 1
    else:
        passed += 1
if status != 0 and failed == 0:
    failed = 1  # lit failed without a failing test: count the run itself.
if skipped:
    print(f"{skipped} skipped (unsupported here)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
