"""Row sums of fp32 rows (the issue's 4096 x 1024 and 65536 x 128): the shipped policy against other
configs of the ``medium`` / ``short`` buckets and against a minimal kernel (one row per program, one
``tl.sum`` of the whole row: the least work a row sum can be), torch.sum(dim=-1) in the same run.
Every result checked against a float64 sum first; do_bench medians (L2 flushed, inputs rotated as in
``python -m bench``) and GPU time per call, two interleaved rounds.

    PYTHONPATH=. python bench/probes/row_sum_probe.py [--grid] [--rounds R] [--quick]

``--grid``: a sweep of ROWS, BLOCK, warps and stages (else a few picks around the shipped configs).
The first run (``logs/row_sum_probe-h200-20261130.log``, the sweep) was taken before the ``ONE_STEP``
form; with ``PYTHONPATH`` pointing at another tree it times that tree's kernels (an A/B in two processes).
"""
import sys

import torch
import triton
import triton.language as tl

import tritoncub  # noqa: F401
from bench.harness import rotating
from tritoncub import policy
from tritoncub.device import segmented_reduce as S
from _timing import bench_ms, gpu_us


@triton.jit
def _minimal_row_sum(x_ptr, out_ptr, K: tl.constexpr, ROWS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    x = tl.load(x_ptr + r.to(tl.int64)[:, None] * K + tl.arange(0, K)[None, :])
    tl.store(out_ptr + r, tl.sum(x, 1))


def minimal(x, rows, warps):
    m, k = x.shape
    out = torch.empty(m, device=x.device, dtype=x.dtype)
    _minimal_row_sum[(m // rows,)](x, out, K=k, ROWS=rows, num_warps=warps)
    return out


def main():
    quick = "--quick" in sys.argv
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, "tritoncub from",
          tritoncub.__file__, flush=True)
    dev = torch.device("cuda")
    g = torch.Generator(device="cuda").manual_seed(3)
    shapes = {(4096, 1024): "medium", (65536, 128): "short"}
    for (m, k), bucket in shapes.items():
        xs = [torch.randn(m, k, device=dev, generator=g) for _ in range(4)]
        ref = xs[0].double().sum(-1)
        pol = policy.select("segmented_reduce", dev, bucket)
        base = {**pol.values, "num_warps": pol.num_warps, "num_stages": pol.num_stages}
        print(f"{m}x{k} bucket {bucket} policy {pol.source}: {base}", flush=True)
        variants = [("shipped", None)]
        if "--grid" in sys.argv:
            grid = []
            for rows in (1, 2, 4) if bucket == "medium" else (8, 16, 32):
                for block in (512, 1024) if bucket == "medium" else (64, 128):
                    for warps in (1, 2, 4, 8) if bucket == "medium" else (2, 4, 8):
                        for stages in (1, 2):
                            if rows * block <= 8192 and rows * block >= 32 * warps:
                                grid.append({**base, "ROWS": rows, "BLOCK": block, "num_warps": warps,
                                             "num_stages": stages})
        else:
            picks = ((1, 1024, 2), (1, 1024, 8), (2, 1024, 4), (2, 1024, 8)) if bucket == "medium" else \
                ((8, 128, 4), (16, 128, 4), (16, 128, 8), (32, 128, 8), (16, 64, 8))
            grid = [{**base, "ROWS": r, "BLOCK": b, "num_warps": w} for r, b, w in picks]
        if quick:
            grid = grid[:4]
        variants += [(f"{c['ROWS']}x{c['BLOCK']} w{c['num_warps']} s{c['num_stages']}", c) for c in grid]
        mins = [(f"minimal rows {r} w{w}", r, w) for r in ((1, 2, 4) if k >= 1024 else (8, 16, 32))
                for w in (1, 2, 4, 8) if r * k >= 32 * w * 4]
        results = {}
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 2
        for rnd in range(rounds):
            for name, c in variants:
                if c is None:
                    fn = rotating(xs, lambda x: S.reduce_rows(x, "sum"))
                    got = S.reduce_rows(xs[0], "sum")
                else:
                    with policy.override("segmented_reduce", c, bucket=bucket):
                        got = S.reduce_rows(xs[0], "sum")
                        ms = bench_ms(rotating(xs, lambda x: S.reduce_rows(x, "sum")))
                        us = gpu_us(lambda: S.reduce_rows(xs[0], "sum"))
                torch.testing.assert_close(got.double(), ref, rtol=1e-4, atol=1e-3)
                if c is None:
                    ms = bench_ms(fn)
                    us = gpu_us(lambda: S.reduce_rows(xs[0], "sum"))
                results.setdefault(name, []).append((ms, us))
            for name, r, w in mins:
                got = minimal(xs[0], r, w)
                torch.testing.assert_close(got.double(), ref, rtol=1e-4, atol=1e-3)
                results.setdefault(name, []).append((bench_ms(rotating(xs, lambda x: minimal(x, r, w))),
                                                     gpu_us(lambda: minimal(xs[0], r, w))))
            results.setdefault("torch", []).append((bench_ms(rotating(xs, lambda x: x.sum(-1))),
                                                    gpu_us(lambda: xs[0].sum(-1))))
        best = sorted(results.items(), key=lambda kv: min(t[0] for t in kv[1]))
        for name, rs in best:
            print(f"  {m}x{k} {name:34s} do_bench " + " ".join(f"{a:.4f}" for a, _ in rs)
                  + " ms  gpu " + " ".join(f"{b:.1f}" for _, b in rs) + " us", flush=True)
        del xs


if __name__ == "__main__":
    main()
