"""The sorts built on the warp ranking (block radix sort of rows, onesweep sorts), for two trees of
the package in separate processes, interleaved: do_bench median (L2 flushed, as the benchmark) and GPU
time per call (profiler); every result checked against torch.sort first.

    python bench/probes/rank_ab_probe.py OLD_TREE NEW_TREE [--rounds 2] [--rows-only]
    python bench/probes/rank_ab_probe.py --one TREE [--rows-only]     # (one tree, in this process)

A tree is a directory holding a ``tritoncub`` package (e.g. ``git archive HEAD tritoncub | tar -x -C
DIR`` for the committed one, ``.`` for the working tree).
"""
from __future__ import annotations

import os
import subprocess
import sys

ROWS = (("float32", 4096, 1024), ("float32", 16384, 256), ("float32", 1024, 4096), ("int32", 4096, 1024),
        ("float16", 4096, 1024), ("float32", 65536, 128))
FLAT = (("sort_keys", "uint32", 1 << 28), ("sort_keys", "float32", 1 << 28), ("sort", "float32", 1 << 24),
        ("sort", "float32", 1 << 28), ("sort_keys", "int64", 1 << 26))


def _data(torch, dtype: str, shape, g):
    if dtype.startswith("float"):
        x = torch.randn(shape, device="cuda", generator=g).to(getattr(torch, dtype))
        x.view(-1)[:5] = torch.tensor([float("nan"), -0.0, 0.0, float("inf"), -float("inf")])
        return x
    info = torch.iinfo(getattr(torch, dtype)) if dtype != "uint32" else None
    if dtype == "uint32":
        return torch.randint(0, 2**32, shape, device="cuda", generator=g, dtype=torch.int64).to(torch.uint32)
    return torch.randint(info.min, info.max, shape, device="cuda", generator=g, dtype=torch.int64).to(
        getattr(torch, dtype))


def one(tree: str, rows_only: bool) -> None:
    sys.path.insert(0, os.path.abspath(tree))
    import torch

    import tritoncub
    from tritoncub.device import radix_sort as rs
    from tritoncub.device.segmented_sort import sort_rows
    sys.path.insert(0, os.path.dirname(__file__))
    from _timing import bench_ms, gpu_us
    assert os.path.abspath(tritoncub.__file__).startswith(os.path.abspath(tree)), tritoncub.__file__
    g = torch.Generator(device="cuda").manual_seed(0)

    def bits(t):   # (float results compared bit for bit: NaN, -0.0)
        return t.view(torch.uint8)

    def report(label, fn):
        ms = [bench_ms(fn) for _ in range(2)]
        print(f"{tree}: {label}: do_bench {ms[0]:.4f} {ms[1]:.4f} ms, gpu {gpu_us(fn):.1f} us", flush=True)

    for dtype, b, n in ROWS:
        x = _data(torch, dtype, (b, n), g)
        v, i = sort_rows(x)
        tv, ti = torch.sort(x, dim=-1, stable=True)
        assert torch.equal(bits(v), bits(tv)) and torch.equal(i, ti), (tree, dtype, b, n)
        report(f"sort_rows {dtype} {b}x{n}", lambda: sort_rows(x))
    if rows_only:
        return
    for op, dtype, n in FLAT:
        x = _data(torch, dtype, (n,), g)
        if op == "sort_keys":
            fn = (lambda: rs.sort_keys(x))
            out = fn()
            # (torch sorts no uint32 on the GPU: compared as int64)
            ref = torch.sort(x.to(torch.int64)).values.to(torch.uint32) if dtype == "uint32" else torch.sort(x).values
            assert torch.equal(bits(out), bits(ref)), (tree, op, dtype)
        else:
            fn = (lambda: rs.sort(x))
            v, i = fn()
            ref = torch.sort(x, stable=True)
            assert torch.equal(bits(v), bits(ref.values)) and torch.equal(i, ref.indices), (tree, op, dtype)
        del ref
        report(f"{op} {dtype} 2^{n.bit_length() - 1}", fn)
        del x


def main(argv: list[str]) -> None:
    rows_only = "--rows-only" in argv
    argv = [a for a in argv if a != "--rows-only"]
    if argv[0] == "--one":
        one(argv[1], rows_only)
        return
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 2
    trees = [a for a in argv if not a.startswith("--") and not a.isdigit()]
    for r in range(rounds):
        for tree in trees:
            subprocess.run([sys.executable, __file__, "--one", tree] + (["--rows-only"] if rows_only else []),
                           check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
