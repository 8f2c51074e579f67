"""Run the test suite on a GPU machine: test files in parallel, each under a time limit, the slowest
files split into shards (their tests compile many kernels, which is CPU-bound), the longest jobs
first. Each job's result line is appended to the log as soon as it ends, so a run cut short still
says what passed. Each job's own output (``-v``: one line per test as it ends, so a failure is named
even when its job or the whole run is killed before pytest's summary) is kept in the folder LOG's
name without ``.log`` (e.g. ``gpu_tests/``), next to LOG.

    python bench/gpu_tests.py LOG [--jobs 16] [--timeout 300] [--shards 3] [FILE ...]
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: files whose tests compile the most kernels: split into shards and started first
SLOW = ("tests/device/test_segmented_sort.py", "tests/device/test_topk.py", "tests/device/test_radix_sort_gpu.py",
        "tests/device/test_reduce.py", "tests/device/test_radix_sort.py", "tests/device/test_scan.py",
        "tests/device/test_histogram.py", "tests/device/test_select.py", "tests/device/test_segmented_reduce.py",
        "tests/device/test_reduce_by_key.py", "tests/device/test_unique.py")


def _node_ids(path: str) -> list[str]:
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", path],
                       capture_output=True, text=True)
    return [ln for ln in r.stdout.splitlines() if ln.startswith(path + "::")]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("log", type=Path)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("files", nargs="*", help="test files to run (default: all of tests/)")
    a = ap.parse_intermixed_args()
    files = sorted(a.files or (str(p) for p in Path("tests").rglob("test_*.py")))
    jobs = []
    for f in SLOW:
        if f in files:
            ids = _node_ids(f) if a.shards > 1 else []
            if len(ids) >= 2 * a.shards:
                jobs += [(f"{f}[shard {i + 1}/{a.shards}]", ids[i::a.shards]) for i in range(a.shards)]
            else:
                jobs.append((f, [f]))
    jobs += [(f, [f]) for f in files if f not in SLOW]
    tmp = a.log.with_suffix("")
    tmp.mkdir(parents=True, exist_ok=True)
    a.log.write_text("")

    def run(job):
        name, args = job
        out = tmp / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") + ".log")   # (plain characters only)
        try:
            with open(out, "w") as fh:
                rc = subprocess.run([sys.executable, "-m", "pytest", "-v", "-rfE", "-p", "no:cacheprovider", *args],
                                    stdout=fh, stderr=subprocess.STDOUT, timeout=a.timeout).returncode
        except subprocess.TimeoutExpired:
            rc = 124
        lines = out.read_text().splitlines()
        summary = lines[-1] if lines else ""
        text = f"== {name} rc={rc} {summary}\n"
        if rc != 0:   # (the -v lines of failed tests, the summary's reasons, assertion lines)
            text += "".join(ln + "\n" for ln in lines if ln.startswith(("FAILED", "ERROR", "E  "))
                            or (ln.startswith("tests/") and (" FAILED" in ln or " ERROR" in ln)))[:6000]
            if rc == 124:   # (the test running when the limit hit: the last one started, not ended)
                started = [ln for ln in lines if ln.startswith("tests/")]
                text += f"   last test line: {started[-1] if started else '(none)'}\n"
        with open(a.log, "a") as fh:
            fh.write(text)
        return rc

    with ThreadPoolExecutor(a.jobs) as pool:
        rcs = list(pool.map(run, jobs))
    print(a.log.read_text())
    return 0 if all(rc == 0 for rc in rcs) else 1


if __name__ == "__main__":
    sys.exit(main())
