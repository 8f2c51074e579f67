#!/usr/bin/env bash
# The GPU test run: install, the whole pytest suite with compiled kernels (gpu-marked tests
# included), then the benchmark. Logs and results are copied to $OUT when it is set.
#   bash bench/gpu_check.sh [bench families...]
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-bench/results}"
mkdir -p "$out"
unset TRITON_INTERPRET
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
python3 -m pytest -q tests -p no:cacheprovider 2>&1 | tee "$out/gpu_tests.log"
test_rc=${PIPESTATUS[0]}
python3 -m bench "$@" 2>&1 | tee "$out/bench.log"
bench_rc=${PIPESTATUS[0]}
[ "$out" != "bench/results" ] && cp bench/results/*.json bench/results/*.md "$out"/ 2>/dev/null
echo "tests rc=$test_rc bench rc=$bench_rc"
exit $(( test_rc != 0 || bench_rc != 0 ))
