"""Host and GPU time of sorts whose rows (or segments) go to the segmented onesweep sort, for two
trees of the package in separate processes, interleaved: do_bench median (L2 flushed, as the
benchmark), host time per call (calls queued back to back), GPU time per call (profiler); every
result checked against torch.sort.

    python bench/probes/long_rows_ab_probe.py OLD_TREE NEW_TREE [--rounds 2]
    python bench/probes/long_rows_ab_probe.py --one TREE      # (one tree, in this process)

A tree is a directory holding a ``tritoncub`` package (e.g. ``git archive HEAD tritoncub | tar -x -C
DIR`` for the committed one, ``.`` for the working tree).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

CASES = (("float32", 512, 8192), ("float32", 1024, 16384), ("float32", 4096, 4608), ("float32", 300, 65536),
         ("int64", 16, 1 << 20), ("float32", 2048, 8192))


def one(tree: str) -> None:
    sys.path.insert(0, os.path.abspath(tree))
    import torch
    import triton.testing

    import tritoncub
    sys.path.insert(0, os.path.dirname(__file__))
    from _timing import gpu_us
    assert os.path.abspath(tritoncub.__file__).startswith(os.path.abspath(tree)), tritoncub.__file__
    g = torch.Generator(device="cuda").manual_seed(0)
    for dtype, b, length in CASES:
        if dtype == "int64":
            x = torch.randint(-2**62, 2**62, (b, length), device="cuda", generator=g)
        else:
            x = torch.randn(b, length, device="cuda", generator=g)
        fn = lambda: torch.ops.tritoncub.sort(x)   # noqa: E731
        v, i = fn()
        want_v, want_i = torch.sort(x, dim=-1, stable=True)
        assert torch.equal(v, want_v) and torch.equal(i, want_i), (tree, dtype, b, length)
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            fn()
        host = (time.perf_counter() - t0) / 20 * 1e3
        torch.cuda.synchronize()
        ms = triton.testing.do_bench(fn, warmup=10, rep=100, return_mode="median")
        tms = triton.testing.do_bench(lambda: torch.sort(x, dim=-1), warmup=10, rep=100, return_mode="median")
        print(f"{tree}: {dtype} {b}x{length}: do_bench {ms:.4f} ms, host {host:.4f} ms/call, gpu {gpu_us(fn) / 1e3:.4f} ms;"
              f" torch {tms:.4f} ms ({tms / ms:.2f}x)", flush=True)


def main(argv):
    if argv[:1] == ["--one"]:
        one(argv[1])
        return
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 2
    trees = [a for a in argv if not a.startswith("--") and not a.isdigit()]
    for r in range(rounds):
        for tree in trees:
            print(f"# round {r + 1}, {tree}", flush=True)
            subprocess.run([sys.executable, __file__, "--one", tree], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
