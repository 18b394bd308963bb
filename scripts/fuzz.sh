#!/usr/bin/env bash
# scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...] - builds the libFuzzer
# targets in build-sanitize/ (ASan + UBSan + libFuzzer's coverage, configured
# by scripts/sanitize-build.sh), makes the seed corpus (scripts/fuzz-seeds.sh)
# and fuzzes TARGET for SECONDS. Targets: importer (ONNX bytes through the
# graph phase), program (.tsp bytes through the loader and the simulator),
# runtime (a signature JSON and runs through the C API), tensor-io (.pb and
# .npy files), opt (textual IR through Tessera's passes). docs/Security.md
# describes them.
# The corpus grows in build-sanitize/corpus/TARGET (the seeds stay untouched
# in build-sanitize/seeds/TARGET); findings land in
# build-sanitize/findings/TARGET. TESSERA_FUZZ_BUILD names another build
# folder, TESSERA_FUZZ_BUILD_JOBS the build's parallelism (default 2).
# Extra arguments go to libFuzzer (e.g. -jobs=2, -max_len=65536); a file
# instead of SECONDS reruns that one input (a finding) and exits.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# An input file to rerun is named relative to where the script was run.
if [ $# -ge 2 ] && [ -f "$2" ]; then
  set -- "$1" "$(realpath "$2")" "${@:3}"
fi
cd "$root"

usage() {
  echo "usage: scripts/fuzz.sh importer|program|runtime|tensor-io|opt SECONDS|INPUT-FILE [libFuzzer flags...]" >&2
  exit 2
}
[ $# -ge 2 ] || usage
target="$1"; what="$2"; shift 2
case "$target" in importer|program|runtime|tensor-io|opt) ;; *) usage ;; esac

build="${TESSERA_FUZZ_BUILD:-build-sanitize}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
TESSERA_SANITIZE_JOBS="${TESSERA_FUZZ_BUILD_JOBS:-2}" \
  bash scripts/sanitize-build.sh "$build" "tessera-fuzz-$target" tessera-sim \
  tessera-compile

binary="$build/bin/tessera-fuzz-$target"
# Leaks are findings too; a single input may take 25 s at most (an
# ASan build of a model with large constants is slow, not hung).
flags=(-timeout=25 -rss_limit_mb=4096 -print_final_stats=1)
# The importer and tensor-io write each input to a private folder under
# TMPDIR.
export TMPDIR="$build/tmp"
mkdir -p "$TMPDIR"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Leaks in Debian's uninstrumented libraries are not findings (the file says which).
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/scripts/sanitize.supp}"

if [ -f "$what" ]; then
  exec nice -n 10 "$binary" "${flags[@]}" "$@" "$what"
fi
case "$what" in ''|*[!0-9]*) usage ;; esac

scripts/fuzz-seeds.sh "$build/seeds" "$build/bin"
corpus="$build/corpus/$target"
findings="$build/findings/$target"
mkdir -p "$corpus" "$findings"
dict=()
if [ -f "$build/seeds/$target.dict" ]; then
  dict=(-dict="$build/seeds/$target.dict")
fi
# With -jobs, libFuzzer writes each job's log (fuzz-N.log) where it runs.
cd "$build"
exec nice -n 10 "$binary" "${flags[@]}" "${dict[@]}" \
  -max_total_time="$what" -artifact_prefix="$findings/" "$@" \
  "$corpus" "$build/seeds/$target"
