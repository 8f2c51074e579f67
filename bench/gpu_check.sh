#!/usr/bin/env bash
# The GPU test run: install, the whole pytest suite with compiled kernels (gpu-marked tests
# included), test files in parallel, each under a time limit (a hung kernel fails its file instead
# of the whole run), then the benchmark. Logs and results go to $OUT when it is set.
#   bash bench/gpu_check.sh [--tests-only | --bench-only] [bench families...]
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-bench/results}"
mkdir -p "$out"
unset TRITON_INTERPRET
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || true
python3 -c "import tritoncub" 2>/dev/null || export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
mode=all
case "${1:-}" in --tests-only) mode=tests; shift ;; --bench-only) mode=bench; shift ;; esac
test_rc=0
if [ "$mode" != bench ]; then
  # test files in parallel, the slowest split into shards and started first (bench/gpu_tests.py)
  python3 bench/gpu_tests.py "$out/gpu_tests.log" --jobs "${TEST_JOBS:-8}" --timeout "${TEST_FILE_TIMEOUT:-300}" \
    > /dev/null || test_rc=1
  grep "^==" "$out/gpu_tests.log"
fi
bench_rc=0
if [ "$mode" != tests ]; then
  python3 -m bench "$@" 2>&1 | tee "$out/bench.log"
  bench_rc=${PIPESTATUS[0]}
  # only this GPU's results file and table come back (the other files there are older runs)
  slug=$(python3 -c "import torch; from tritoncub.policy import device_slug; print(device_slug(torch.cuda.get_device_name()))")
  [ "$out" != "bench/results" ] && cp "bench/results/$slug.json" "bench/results/$slug.md" "$out"/ 2>/dev/null
fi
echo "tests rc=$test_rc bench rc=$bench_rc"
exit $(( test_rc != 0 || bench_rc != 0 ))
