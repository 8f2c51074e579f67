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
  # test files run ${TEST_JOBS:-8} at a time (compilation is CPU-bound; the GPU work of a test is small)
  logs=$(mktemp -d)
  find tests -name 'test_*.py' | sort | xargs -P "${TEST_JOBS:-8}" -I{} sh -c \
    'f="{}"; l="'"$logs"'/$(echo "$f" | tr / _).log"; timeout "${TEST_FILE_TIMEOUT:-300}" python3 -m pytest -q -p no:cacheprovider "$f" > "$l" 2>&1; echo "rc=$?" >> "$l"'
  : > "$out/gpu_tests.log"
  for l in "$logs"/*.log; do
    rc=$(tail -n 1 "$l" | sed 's/rc=//')
    echo "== $(basename "$l" .log) rc=$rc $(tail -n 2 "$l" | head -n 1)" >> "$out/gpu_tests.log"
    if [ "$rc" != 0 ]; then
      test_rc=1
      grep -E "^(FAILED|ERROR)|^E  " "$l" | head -n 30 >> "$out/gpu_tests.log"
    fi
  done
  cat "$out/gpu_tests.log" | grep "^=="
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
