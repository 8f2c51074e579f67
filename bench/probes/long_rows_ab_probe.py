"""Host and GPU time of sorts whose rows (or segments) go to the segmented onesweep sort, for two
trees of the package in separate processes, interleaved: do_bench median (L2 flushed, as the
benchmark), host time per call (calls queued back to back), GPU time per call (profiler); every
result checked against torch.sort.

    python bench/probes/long_rows_ab_probe.py OLD_TREE NEW_TREE [--rounds 2]
    python bench/probes/long_rows_ab_probe.py --one TREE      # (one tree, in this process)
    python bench/probes/long_rows_ab_probe.py OLD NEW --ragged  # the benchmark's ragged segmented sort instead

A tree is a directory holding a ``tritoncub`` package (e.g. ``git archive HEAD tritoncub | tar -x -C
DIR`` for the committed one, ``.`` for the working tree).
"""
from __future__ import annotations

import os
import subprocess
import sys

CASES = (("float32", 512, 8192), ("float32", 1024, 16384), ("float32", 4096, 4608), ("float32", 300, 65536),
         ("int64", 16, 1 << 20), ("float32", 2048, 8192))


def ragged(tree: str) -> None:
    """The benchmark's ragged case: 100k power-law segments over 2^26 fp32 keys, keys and pairs."""
    sys.path.insert(0, os.path.abspath(tree))
    import torch
    import triton.testing

    import tritoncub
    from tritoncub.device import segmented_sort as ss
    sys.path.insert(0, os.path.dirname(__file__))
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    from _timing import gpu_us, host_ms
    from bench.bench_segmented import _power_law_offsets
    assert os.path.abspath(tritoncub.__file__).startswith(os.path.abspath(tree)), tritoncub.__file__
    g = torch.Generator(device="cuda").manual_seed(0)
    offs = torch.as_tensor(_power_law_offsets(100_000, 1 << 26), device="cuda")
    keys = torch.randn(1 << 26, device="cuda", generator=g)
    vals = torch.arange(1 << 26, device="cuda", dtype=torch.int32)
    o = offs.tolist()
    for name, fn in (("keys", lambda: ss.segmented_sort(keys, offs)),
                     ("pairs", lambda: ss.segmented_sort_pairs(keys, vals, offs))):
        out = fn()
        k = out[0] if isinstance(out, tuple) else out
        for a, b in zip(o[:-1:997], o[1::997]):   # (every 997th segment checked)
            assert torch.equal(k[a:b], torch.sort(keys[a:b], stable=True).values), (tree, name, a, b)
        host = host_ms(fn, calls=10, warmup=3)
        ms = [triton.testing.do_bench(fn, warmup=5, rep=60, return_mode="median") for _ in range(2)]
        print(f"{tree}: ragged {name}: do_bench {ms[0]:.4f} {ms[1]:.4f} ms, host {host:.4f} ms/call, "
              f"gpu {gpu_us(fn) / 1e3:.4f} ms", flush=True)


def one(tree: str) -> None:
    sys.path.insert(0, os.path.abspath(tree))
    import torch
    import triton.testing

    import tritoncub
    sys.path.insert(0, os.path.dirname(__file__))
    from _timing import gpu_us, host_ms
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
        host = host_ms(fn)
        ms = triton.testing.do_bench(fn, warmup=10, rep=100, return_mode="median")
        tms = triton.testing.do_bench(lambda: torch.sort(x, dim=-1), warmup=10, rep=100, return_mode="median")
        print(f"{tree}: {dtype} {b}x{length}: do_bench {ms:.4f} ms, host {host:.4f} ms/call, gpu {gpu_us(fn) / 1e3:.4f} ms;"
              f" torch {tms:.4f} ms ({tms / ms:.2f}x)", flush=True)


def main(argv):
    if argv[:1] == ["--one"]:
        (ragged if "--ragged" in argv else one)(argv[1])
        return
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 2
    trees = [a for a in argv if not a.startswith("--") and not a.isdigit()]
    for r in range(rounds):
        for tree in trees:
            print(f"# round {r + 1}, {tree}", flush=True)
            subprocess.run([sys.executable, __file__, "--one", tree] + (["--ragged"] if "--ragged" in argv else []),
                           check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
