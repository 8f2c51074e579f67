"""The scans of ``python -m bench scan`` whose op time is the host's (cumprod, cummax, logcumsumexp
rows, sums of short rows), timed as the benchmark times them (do_bench of calls rotating over a few
inputs), with their host time per call (calls queued back to back), GPU time and how many calls
replayed remembered launches; for two trees of the package in separate processes, and a cProfile of
the slowest in each.

    python bench/probes/scan_replay_ab_probe.py OLD_TREE NEW_TREE
    python bench/probes/scan_replay_ab_probe.py --one TREE
"""
from __future__ import annotations

import cProfile
import os
import pstats
import subprocess
import sys


def one(tree: str) -> None:
    sys.path.insert(0, os.path.abspath(tree))
    import torch
    import tritoncub
    from tritoncub.device import scan as S
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _timing import bench_ms, gpu_us, host_ms
    assert os.path.abspath(tritoncub.__file__).startswith(os.path.abspath(tree)), tritoncub.__file__
    hits = []
    if hasattr(S, "replay"):
        real = S.replay
        S.replay = lambda *a, **k: hits.append(1) or real(*a, **k)
    g = torch.Generator(device="cuda").manual_seed(0)
    one_d = [torch.randn(1 << 24, device="cuda", generator=g) for _ in range(3)]
    rows = [torch.randn(4096, 1024, device="cuda", generator=g) for _ in range(3)]
    short = [torch.randn(65536, 128, device="cuda", generator=g) for _ in range(3)]
    cases = {"cummax 2^24": (one_d, lambda x: S.cummax(x, 0), lambda x: torch.cummax(x, 0)),
             "cumprod 2^24": (one_d, lambda x: S.cumprod(x, 0), lambda x: torch.cumprod(x, 0)),
             "logcumsumexp 4096x1024": (rows, lambda x: S.logcumsumexp(x, -1), lambda x: torch.logcumsumexp(x, -1)),
             "cumsum 65536x128": (short, lambda x: S.inclusive_sum(x, 1), lambda x: torch.cumsum(x, 1))}
    for name, (xs, ours, theirs) in cases.items():
        got, ref = ours(xs[0]), theirs(xs[0])
        for a, b in zip(got if isinstance(got, tuple) else (got,), ref if isinstance(ref, tuple) else (ref,)):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
        state = {"i": 0}

        def rot(xs=xs, ours=ours):
            state["i"] = (state["i"] + 1) % len(xs)
            return ours(xs[state["i"]])
        del hits[:]
        b = [bench_ms(rot) * 1e3 for _ in range(2)]
        calls = len(hits)
        h = host_ms(rot, calls=100) * 1e3
        print(f"  {name:24s} do_bench {b[0]:7.1f} {b[1]:7.1f} us  host {h:6.1f} us/call  gpu {gpu_us(rot):6.1f} us"
              f"  replays {len(hits)} (in do_bench {calls})", flush=True)
    x = one_d[0]
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(100):
        S.cummax(x, 0)
    prof.disable()
    torch.cuda.synchronize()
    print("  --- cummax 2^24, 100 calls, by own time", flush=True)
    pstats.Stats(prof).sort_stats("tottime").print_stats(14)


def main() -> None:
    if sys.argv[1] == "--one":
        one(sys.argv[2])
        return
    for tree in sys.argv[1:3]:
        print(f"== {tree}", flush=True)
        subprocess.run([sys.executable, __file__, "--one", tree], check=False)


if __name__ == "__main__":
    main()
