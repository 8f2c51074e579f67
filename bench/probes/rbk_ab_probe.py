"""reduce_by_key for two (or more) trees of the package, in separate processes, interleaved: do_bench medians
(L2 flushed, as the benchmark) and the GPU time of each kernel per call, at 2^26 sorted int32 keys
with fp32 values in 2^20 runs (the benchmark's case; sparse tiles), 2^24 runs and 2^26 runs (dense
tiles: the item-wide branch); every result checked against torch.

    python bench/probes/rbk_ab_probe.py OLD_TREE NEW_TREE [MORE_TREES ...] [--rounds 2] [--runs 20,24,26]
    python bench/probes/rbk_ab_probe.py --one TREE

A tree is a directory holding a ``tritoncub`` package (e.g. ``git archive HEAD tritoncub | tar -x -C
DIR`` for the committed one, ``.`` for the working tree).
"""
from __future__ import annotations

import os
import subprocess
import sys


def one(tree: str, runs_log2=(20, 24, 26)) -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.abspath(tree))   # (first: the tree's package, not the checkout's)
    import tritoncub
    from tritoncub.device.reduce_by_key import reduce_by_key
    from bench.harness import rotating
    from _inputs import rbk_inputs, rbk_matches
    from _timing import timing_line
    assert os.path.abspath(tritoncub.__file__).startswith(os.path.abspath(tree)), tritoncub.__file__
    for runs in (1 << r for r in runs_log2):
        kv, uk, ref = rbk_inputs(1 << 26, runs=runs)
        ok = rbk_matches(reduce_by_key(kv[0][0], kv[0][1], "sum"), uk, ref)
        line = timing_line(rotating(kv, lambda p: reduce_by_key(p[0], p[1], "sum")))
        print(f"{tree}: runs 2^{runs.bit_length() - 1} {'ok' if ok else 'WRONG'} {line}", flush=True)


def main() -> None:
    args = sys.argv[1:]
    opts = {"--rounds": "2", "--runs": "20,24,26"}
    for name in opts:
        if name in args:
            i = args.index(name)
            opts[name] = args[i + 1]
            del args[i:i + 2]
    runs = tuple(int(r) for r in opts["--runs"].split(","))
    if args[0] == "--one":
        one(args[1], runs)
        return
    rounds = int(opts["--rounds"])
    import torch
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    for _ in range(rounds):
        for tree in args:
            subprocess.run([sys.executable, __file__, "--one", tree, "--runs", opts["--runs"]], check=True)


if __name__ == "__main__":
    main()
