#!/usr/bin/env bash
# scripts/test.sh [--sanitize | --no-sanitize] - builds Tessera and runs
# every test suite; last line "N passed, M failed".
# By default (the README's test command, and CI's) the suites run in
# build/, then again in build-sanitize/ (ASan + UBSan,
# scripts/sanitize-build.sh) except the few whole-model tests that
# test/sanitize-skip.txt names (docs/Security.md says why: they take three
# quarters of the instrumented suite's time, and every library of
# Tessera's still runs instrumented), and both runs count.
# --sanitize: every suite in build-sanitize/ instead.
# --no-sanitize: the suites in build/ only.
# Any sanitizer report fails its test. Leak reports from Debian's
# uninstrumented libraries would be suppressed by scripts/sanitize.supp
# (nothing is today).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

mode=default
case "${1:-}" in
  "") ;;
  --sanitize) mode=sanitize ;;
  --no-sanitize) mode=plain ;;
  *) echo "usage: scripts/test.sh [--sanitize | --no-sanitize]" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: scripts/test.sh [--sanitize | --no-sanitize]" >&2; exit 2; }

build=build
if [ "$mode" = sanitize ]; then
  build=build-sanitize
  { bash scripts/install-deps.sh && bash scripts/sanitize-build.sh "$build"; } ||
    { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
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

# Again under the sanitizers, without test/sanitize-skip.txt's tests: its
# own build folder and report.
subset_report=""
if [ "$mode" = default ]; then
  echo "--- again under ASan and UBSan (build-sanitize/), without test/sanitize-skip.txt"
  if bash scripts/sanitize-build.sh build-sanitize; then
    subset_report="$root/build-sanitize/test-results-subset.xml"
    rm -f "$subset_report"
    skip="$(sed 's/[[:space:]]*#.*//' test/sanitize-skip.txt | grep . |
            paste -sd'|')"
    "$lit" -sv ${skip:+--filter-out "$skip"} --xunit-xml-output "$subset_report" \
      build-sanitize/test build-sanitize/test/Unit || lit_status=1
  else
    echo "the sanitizer build (build-sanitize/) failed: counted as one failure"
    lit_status=1
  fi
fi

/usr/bin/python3 - "$report" "$lit_status" "$pytest_report" "$subset_report" <<'PY'
import sys
import xml.etree.ElementTree as ET

report, status, pytest_report, subset_report = sys.argv[1:5]
status = int(status)
try:
    cases = list(ET.parse(report).getroot().iter("testcase"))
except (OSError, ET.ParseError) as err:
    print(f"no test report ({err})")
    print("0 passed, 1 failed")
    sys.exit(1)
# The run under the sanitizers counts its tests as they are (its
# pytest.test as one test).
subset_cases = []
if subset_report:
    try:
        subset_cases = list(ET.parse(subset_report).getroot().iter("testcase"))
    except (OSError, ET.ParseError) as err:
        print(f"no report of the run under the sanitizers ({err})")
        subset_cases = [None]
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
for case in subset_cases:
    if case is None:
        failed += 1
    else:
        count(case)
if status != 0 and failed == 0:
    failed = 1  # lit failed without a failing test: count the run itself.
if skipped:
    print(f"{skipped} skipped (unsupported here)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
