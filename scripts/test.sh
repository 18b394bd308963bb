#!/usr/bin/env bash
# scripts/test.sh [--sanitize] - builds Tessera and runs every test suite;
# last line "N passed, M failed".
# --sanitize: the same suites on the ASan + UBSan build in build-sanitize/
# (scripts/sanitize-build.sh; docs/Security.md): any sanitizer report fails
# its test. Leak reports from Debian's uninstrumented libraries are
# suppressed by scripts/sanitize.supp, nothing of Tessera's.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

build=build
if [ "${1:-}" = "--sanitize" ]; then
  build=build-sanitize
  { bash scripts/install-deps.sh && bash scripts/sanitize-build.sh "$build"; } ||
    { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
elif [ $# -gt 0 ]; then
  echo "usage: scripts/test.sh [--sanitize]" >&2
  exit 2
else
  bash scripts/build.sh || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
fi

lit=/usr/lib/llvm-22/bin/lit
report="$root/$build/test-results.xml"
# The lit suites (IR tests, importer, ...) and the GoogleTest unit suite.
# The Python package's pytest cases run inside one lit test
# (test/python/pytest.test), which leaves their JUnit report here; each case
# counts on its own in place of that test.
pytest_report="$root/$build/test/python/pytest-results.xml"
rm -f "$pytest_report"
"$lit" -sv --xunit-xml-output "$report" "$build/test" "$build/test/Unit"
lit_status=$?

/usr/bin/python3 - "$report" "$lit_status" "$pytest_report" <<'PY'
import sys
import xml.etree.ElementTree as ET

report, status, pytest_report = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    cases = list(ET.parse(report).getroot().iter("testcase"))
except (OSError, ET.ParseError) as err:
    print(f"no test report ({err})")
    print("0 passed, 1 failed")
    sys.exit(1)
try:
    pytest_cases = list(ET.parse(pytest_report).getroot().iter("testcase"))
except (OSError, ET.ParseError):
    pytest_cases = None
passed = failed = skipped = 0
def count(case):
    global passed, failed, skipped
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif case.find("skipped") is not None:
        skipped += 1
    else:
        passed += 1
for case in cases:
    wrapper = case.get("name") == "pytest.test"
    if wrapper and pytest_cases:
        pytest_failed = failed
        for inner in pytest_cases:
            count(inner)
        # pytest failed without a failing case (a crash): count the run.
        if case.find("failure") is not None and failed == pytest_failed:
            failed += 1
        continue
    count(case)
if status != 0 and failed == 0:
    failed = 1  # lit failed without a failing test: count the run itself.
if skipped:
    print(f"{skipped} skipped (unsupported here)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
