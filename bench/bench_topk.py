"""Top-k: ``torch.ops.tritoncub.topk`` (values + int64 indices, sorted) against ``torch.topk``."""
from __future__ import annotations

import torch

from bench.harness import Case, rotating
from tritoncub.device import topk as tk


def _case(ctx, shape, k, largest=True, uniform=False, dtype=torch.float32, scale=1.0):
    """``uniform``: keys from torch.rand ([0, 1): a narrow range, many keys share their top bits with the
    k-th one), else torch.randn; times ``scale``, rounded to ``dtype``."""
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dtype.itemsize
    gen = torch.Generator(device=ctx.device).manual_seed(0)
    make = torch.rand if uniform else torch.randn
    xs = [(make(shape, device=ctx.device, generator=gen) * scale).to(dtype) for _ in range(ctx.copies_for(nbytes))]
    rows = n // shape[-1]
    moved = nbytes + rows * k * (dtype.itemsize + 8)
    variant = (f"k={k}" + ("" if largest else " smallest") + (" keys in [0,1)" if uniform else "")
               + (" logits" if scale != 1 else ""))

    def check():
        v, i = tk.topk(xs[0], k, largest=largest)
        rv, _ = torch.topk(xs[0], k, largest=largest)
        assert torch.equal(v, rv), "topk values differ from torch.topk"
        assert torch.equal(xs[0].gather(-1, i), v), "topk indices do not point at the values"
        si = i.sort(-1).values
        assert bool((si[..., 1:] != si[..., :-1]).all()), "topk indices repeat"

    name = str(dtype).removeprefix("torch.")
    yield Case("topk", "tritoncub", name, n, rotating(xs, lambda x: tk.topk(x, k, largest=largest)), moved,
               shape=tuple(shape), variant=variant, check=check)
    yield Case("topk", "torch", name, n, rotating(xs, lambda x: torch.topk(x, k, largest=largest)), moved,
               shape=tuple(shape), variant=variant)


def cases(ctx):
    if ctx.quick:
        yield from _case(ctx, (4096, 128), 8)
        yield from _case(ctx, (1 << 20,), 100)
        return
    yield from _case(ctx, (65536, 128), 8)
    yield from _case(ctx, (65536, 128), 32)
    yield from _case(ctx, (4096, 1024), 16)
    # 64-bit rows (sorted by the block radix sort, the first k kept)
    yield from _case(ctx, (4096, 1000), 16, dtype=torch.float64)
    yield from _case(ctx, (1024, 4096), 8, dtype=torch.float64)
    yield from _case(ctx, (16, 1 << 20), 8)
    yield from _case(ctx, (16, 1 << 20), 8, largest=False)
    yield from _case(ctx, (1 << 26,), 100)
    yield from _case(ctx, (1 << 26,), 10000)
    yield from _case(ctx, (1 << 26,), 10000, uniform=True)
    yield from _case(ctx, (16, 1 << 20), 1000)
    yield from _case(ctx, (16, 1 << 20), 1000, uniform=True)
    # a batch of vocabulary logits (top-k sampling)
    yield from _case(ctx, (64, 128256), 50, scale=3.0)
    yield from _case(ctx, (64, 128256), 50, dtype=torch.bfloat16, scale=3.0)
