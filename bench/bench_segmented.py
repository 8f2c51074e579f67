"""Segmented and batched sort: ``tritoncub.device.segmented_sort`` against torch.

* sort rows (values + int64 indices, dim=-1): tritoncub ``sort_rows`` vs ``torch.sort(dim=-1)``.
* ragged segmented sort (keys only and pairs): 100k segments, power-law lengths, 2^26 keys in all.
  torch has no segmented sort; its baseline is two stable sorts (by key, then by segment id), the
  usual way to sort segments with torch. CUB's DeviceSegmentedSort is not exposed by CuPy.
"""
from __future__ import annotations

import numpy as np
import torch

from bench.harness import Case, rotating
from tritoncub.device import segmented_sort as ss


def _rows_cases(ctx, rows, L, dtype):
    n = rows * L
    nbytes = n * dtype.itemsize
    gen = torch.Generator(device=ctx.device).manual_seed(0)
    if dtype.is_floating_point:
        make = lambda: torch.randn(rows, L, device=ctx.device, generator=gen, dtype=torch.float32).to(dtype)  # noqa
    else:
        make = lambda: torch.randint(-2**30, 2**30, (rows, L), device=ctx.device, generator=gen).to(dtype)  # noqa
    xs = [make() for _ in range(ctx.copies_for(nbytes))]
    moved = 2 * nbytes + n * 8   # read keys, write values + int64 indices

    def check():
        v, i = ss.sort_rows(xs[0])
        rv, ri = torch.sort(xs[0], dim=-1, stable=True)
        assert torch.equal(v, rv) and torch.equal(i, ri), "sort_rows differs from torch.sort"

    name = str(dtype).replace("torch.", "")
    yield Case("sort_rows", "tritoncub", name, n, rotating(xs, lambda x: ss.sort_rows(x)), moved,
               shape=(rows, L), check=check)
    yield Case("sort_rows", "torch", name, n, rotating(xs, lambda x: torch.sort(x, dim=-1)), moved,
               shape=(rows, L))


def _power_law_offsets(num_segments: int, total: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = rng.pareto(1.2, num_segments) + 0.05
    lens = np.floor(w / w.sum() * total).astype(np.int64)
    lens[np.argmax(lens)] += total - lens.sum()
    return np.concatenate([[0], np.cumsum(lens)])


def cases(ctx):
    quick = ctx.quick
    # (32 x 32000: a batch of vocabulary-sized rows, as sorting logits for top-p sampling)
    shapes = [(65536, 128), (4096, 1024), (32, 32000), (16, 1 << 20), (512, 8192)] if not quick else [(4096, 128), (64, 1024)]
    for rows, L in shapes:
        yield from _rows_cases(ctx, rows, L, torch.float32)
    for dt in (torch.int32, torch.float16, torch.int64):
        yield from _rows_cases(ctx, 65536 if not quick else 4096, 128, dt)
    # 64-bit keys in rows of a few thousand (the block radix sort's two-word keys)
    for rows, L, dt in ((4096, 1024, torch.int64), (1024, 4096, torch.float64)):
        yield from _rows_cases(ctx, rows if not quick else 64, L, dt)

    total = (1 << 26) if not quick else (1 << 20)
    nseg = 100_000 if not quick else 2000
    offs_np = _power_law_offsets(nseg, total)
    offs = torch.as_tensor(offs_np, device=ctx.device)
    seg_id = torch.repeat_interleave(torch.arange(nseg, device=ctx.device), torch.as_tensor(np.diff(offs_np),
                                                                                               device=ctx.device))
    gen = torch.Generator(device=ctx.device).manual_seed(1)
    keys = torch.randn(total, device=ctx.device, generator=gen)
    vals = torch.arange(total, device=ctx.device, dtype=torch.int32)
    variant = f"{nseg} segs, power law, max {int(np.diff(offs_np).max())}"

    def torch_seg_sort(k):
        v, p = torch.sort(k, stable=True)
        s, q = torch.sort(seg_id[p], stable=True)
        return v[q]

    def torch_seg_pairs(k, v):
        sk, p = torch.sort(k, stable=True)
        s, q = torch.sort(seg_id[p], stable=True)
        return sk[q], v[p[q]]

    def check():
        out = ss.segmented_sort(keys, offs)
        assert torch.equal(out, torch_seg_sort(keys)), "segmented_sort differs from torch"

    yield Case("segmented_sort_keys", "tritoncub", "float32", total, lambda: ss.segmented_sort(keys, offs),
               2 * total * 4, variant=variant, check=check)
    yield Case("segmented_sort_keys", "torch", "float32", total, lambda: torch_seg_sort(keys), 2 * total * 4,
               variant=variant)
    def check_pairs():
        k, v = ss.segmented_sort_pairs(keys, vals, offs)
        rk, rv = torch_seg_pairs(keys, vals)
        assert torch.equal(k, rk) and torch.equal(v, rv), "segmented_sort_pairs differs from torch"

    yield Case("segmented_sort_pairs", "tritoncub", "float32", total,
               lambda: ss.segmented_sort_pairs(keys, vals, offs), 4 * total * 4, variant=variant, check=check_pairs)
    yield Case("segmented_sort_pairs", "torch", "float32", total, lambda: torch_seg_pairs(keys, vals),
               4 * total * 4, variant=variant)
