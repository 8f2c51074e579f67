"""Every operator against its torch counterpart over a grid of sizes and shapes (not only the benchmark's):
GPU time per call (profiler) and do_bench of each, and the ratio ours / torch, to find sizes where
tritoncub is slower than torch on the GPU. Results are compared with torch's first (values; sorts and
top-k by value). Lines print as they are measured, then a summary sorted by the GPU-time ratio.

    PYTHONPATH=. python bench/probes/torch_sweep_probe.py [substring ...]

The dtype, cummax/cumprod/logcumsumexp, top-k, argsort and masked_select cases along dims were added after
the first runs logged on 2026-12-01; their first run is ``torch_sweep_probe-dtypes-h200-20261201.log``.
The sorts of rows called torch.sort with a positional dim beside ``stable=True``, which torch refuses,
and a top-8 ran along a dim of 4: those cases printed ERROR in the runs of 2026-12-01 (fixed since; all
cases ran in ``torch_sweep_probe-full-h200-20261202.log``).
"""
import sys
import time

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us  # noqa: E402
import triton.testing  # noqa: E402
import tritoncub  # noqa: E402,F401

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(0)


def rnd(*shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(shape, device=d, generator=g).to(dtype)
    return torch.randint(0, 1 << 30, shape, device=d, generator=g, dtype=dtype)


def small_ints(n, top):
    return torch.randint(0, top, (n,), device=d, generator=g, dtype=torch.int32)


def cases():
    for n in (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26):
        x = rnd(n)
        yield f"sum n={n}", (lambda x=x: torch.sum(x)), (lambda x=x: ops.sum(x)), "close"
        yield f"amax n={n}", (lambda x=x: torch.amax(x)), (lambda x=x: ops.amax(x)), "equal"
        yield f"argmax n={n}", (lambda x=x: torch.argmax(x)), (lambda x=x: ops.argmax(x)), "equal"
        yield f"cumsum n={n}", (lambda x=x: torch.cumsum(x, 0)), (lambda x=x: ops.cumsum(x, 0)), "close"
    for shape, dim in (((4096, 1024), 1), ((4096, 1024), 0), ((1 << 20, 4), 1), ((4, 1 << 20), 1), ((4, 1 << 20), 0),
                       ((64, 128, 256), 1), ((256, 64, 64), 2), ((16, 1 << 20), 1)):
        x = rnd(*shape)
        yield f"sum {shape} dim={dim}", (lambda x=x, dim=dim: torch.sum(x, dim)), \
            (lambda x=x, dim=dim: ops.sum(x, [dim])), "close"
        yield f"amax {shape} dim={dim}", (lambda x=x, dim=dim: torch.amax(x, dim)), \
            (lambda x=x, dim=dim: ops.amax(x, [dim])), "equal"
        yield f"argmax {shape} dim={dim}", (lambda x=x, dim=dim: torch.argmax(x, dim)), \
            (lambda x=x, dim=dim: ops.argmax(x, dim)), "equal"
        yield f"cumsum {shape} dim={dim}", (lambda x=x, dim=dim: torch.cumsum(x, dim)), \
            (lambda x=x, dim=dim: ops.cumsum(x, dim)), "close"
    for shape, dim in (((4096, 1024), 0), ((4096, 1024), 1), ((4, 1 << 20), 0)):
        for dtype in (torch.bfloat16, torch.int32):
            x = rnd(*shape, dtype=dtype)
            yield f"sum {dtype} {shape} dim={dim}", (lambda x=x, dim=dim: torch.sum(x, dim)), \
                (lambda x=x, dim=dim: ops.sum(x, [dim])), "close"
            yield f"argmin {dtype} {shape} dim={dim}", (lambda x=x, dim=dim: torch.argmin(x, dim)), \
                (lambda x=x, dim=dim: ops.argmin(x, dim)), "equal"
        x = rnd(*shape)
        yield f"cummax {shape} dim={dim}", (lambda x=x, dim=dim: torch.cummax(x, dim)[0]), \
            (lambda x=x, dim=dim: ops.cummax(x, dim)[0]), "equal"
        yield f"cumprod {shape} dim={dim}", (lambda x=x, dim=dim: torch.cumprod(1 + x * 1e-3, dim)), \
            (lambda x=x, dim=dim: ops.cumprod(1 + x * 1e-3, dim)), "close"
        yield f"logcumsumexp {shape} dim={dim}", (lambda x=x, dim=dim: torch.logcumsumexp(x, dim)), \
            (lambda x=x, dim=dim: ops.logcumsumexp(x, dim)), "close"
        if shape[dim] >= 8:
            yield f"topk {shape} k=8 dim={dim}", (lambda x=x, dim=dim: torch.topk(x, 8, dim)[0]), \
                (lambda x=x, dim=dim: ops.topk(x, 8, dim)[0]), "equal"
        yield f"argsort {shape} dim={dim}", (lambda x=x, dim=dim: torch.argsort(x, dim=dim, stable=True)), \
            (lambda x=x, dim=dim: ops.argsort(x, dim)), "equal"
        m = x > 0
        yield f"masked_select {shape}", (lambda x=x, m=m: torch.masked_select(x, m)), \
            (lambda x=x, m=m: ops.masked_select(x, m)), "equal"
    for n in (1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 22, 1 << 24):
        x = rnd(n)
        yield f"sort n={n}", (lambda x=x: torch.sort(x, stable=True)[0]), (lambda x=x: ops.sort(x)[0]), "equal"
        xi = rnd(n, dtype=torch.int64)
        yield f"sort int64 n={n}", (lambda x=xi: torch.sort(x, stable=True)[0]), (lambda x=xi: ops.sort(x)[0]), "equal"
    for shape, dim in (((8192, 64), 1), ((256, 4096), 1), ((4, 1 << 20), 1), ((32, 128256), 1), ((1024, 1024), 0),
                       ((2048, 16), 1), ((100, 3000), 1)):
        x = rnd(*shape)
        yield f"sort {shape} dim={dim}", (lambda x=x, dim=dim: torch.sort(x, dim=dim, stable=True)[0]), \
            (lambda x=x, dim=dim: ops.sort(x, dim)[0]), "equal"
    for shape, k in (((1 << 20,), 1), ((1 << 20,), 10), ((1 << 20,), 1000), ((1 << 24,), 10), ((4096, 1024), 10),
                     ((64, 32000), 50), ((65536, 128), 8), ((8, 1 << 18), 100), ((1000, 100), 5)):
        x = rnd(*shape)
        yield f"topk {shape} k={k}", (lambda x=x, k=k: torch.topk(x, k)[0]), (lambda x=x, k=k: ops.topk(x, k)[0]), "equal"
    for n, top in ((1 << 12, 100), (1 << 16, 1000), (1 << 20, 1 << 20), (1 << 24, 1000), (1 << 20, 1 << 30)):
        x = small_ints(n, top)
        yield f"unique int32 n={n} <{top}", (lambda x=x: torch.unique(x)), (lambda x=x: ops.unique(x)[0]), "equal"
    for n in (1 << 16, 1 << 20):
        x = rnd(n).round()
        yield f"unique fp32 n={n}", (lambda x=x: torch.unique(x)), (lambda x=x: ops.unique(x)[0]), "equal"
        xs = torch.sort(small_ints(n, n // 16))[0]
        yield f"unique_consecutive n={n}", (lambda x=xs: torch.unique_consecutive(x)), \
            (lambda x=xs: ops.unique_consecutive(x)[0]), "equal"
    for n in (1 << 16, 1 << 20, 1 << 24):
        x = torch.rand(n, device=d, generator=g)
        for bins in (16, 1000, 65536):
            yield f"histc n={n} bins={bins}", (lambda x=x, b=bins: torch.histc(x, b, 0, 1)), \
                (lambda x=x, b=bins: ops.histc(x, b, 0, 1)), "equal"
        xi = small_ints(n, 1000).long()
        yield f"bincount n={n} <1000", (lambda x=xi: torch.bincount(x)), (lambda x=xi: ops.bincount(x)), "equal"
        m = torch.rand(n, device=d, generator=g) < 0.5
        yield f"masked_select n={n}", (lambda x=x, m=m: torch.masked_select(x, m)), \
            (lambda x=x, m=m: ops.masked_select(x, m)), "equal"
        yield f"nonzero n={n}", (lambda m=m: torch.nonzero(m)), (lambda m=m: ops.nonzero(m)), "equal"
        yield f"cummax n={n}", (lambda x=x: torch.cummax(x, 0)[0]), (lambda x=x: ops.cummax(x, 0)[0]), "equal"
        yield f"logcumsumexp n={n}", (lambda x=x: torch.logcumsumexp(x, 0)), (lambda x=x: ops.logcumsumexp(x, 0)), \
            "close"
        yield f"cumprod n={n}", (lambda x=x: torch.cumprod(1 + x * 1e-6, 0)), \
            (lambda x=x: ops.cumprod(1 + x * 1e-6, 0)), "close"
        yield f"diff n={n}", (lambda x=x: torch.diff(x)), (lambda x=x: ops.diff(x)), "equal"
        lens = torch.full((n // 1024,), 1024, device=d)
        offs = torch.cat([lens.new_zeros(1), lens.cumsum(0)])
        yield f"segment_reduce sum n={n} segs={n // 1024}", \
            (lambda x=x, lens=lens: torch.segment_reduce(x, "sum", lengths=lens)), \
            (lambda x=x, o=offs: ops.segment_reduce(x, o, "sum")), "close"


def agree(a, b, how):
    if how == "equal":
        return a.shape == b.shape and torch.equal(a, b)
    return a.shape == b.shape and torch.allclose(a.double(), b.double(), rtol=1e-3, atol=1e-2 * (1 + a.double().abs().max()))


def main():
    want = sys.argv[1:]
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    rows = []
    t0 = time.time()
    for name, tf, of, how in cases():
        if want and not any(w in name for w in want):
            continue
        try:
            ok = agree(tf(), of(), how)
            tg, og = gpu_us(tf), gpu_us(of)
            tb = triton.testing.do_bench(tf, warmup=5, rep=25, return_mode="median") * 1e3
            ob = triton.testing.do_bench(of, warmup=5, rep=25, return_mode="median") * 1e3
        except Exception as e:   # (a refusal or a failure: reported, the sweep goes on)
            print(f"{name:42s} ERROR {type(e).__name__}: {str(e)[:100]}", flush=True)
            continue
        rows.append((og / max(tg, 1e-3), name, og, tg, ob, tb, ok))
        print(f"{name:42s} {'ok ' if ok else 'DIFF'} GPU ours {og:9.1f} torch {tg:9.1f} us ({og / max(tg, 1e-3):5.2f}x) | "
              f"do_bench ours {ob:9.1f} torch {tb:9.1f} ({ob / tb:5.2f}x)  [{time.time() - t0:5.0f}s]", flush=True)
    print("\n== by GPU-time ratio, ours / torch (above 1: slower than torch)")
    for r, name, og, tg, ob, tb, ok in sorted(rows, reverse=True)[:40]:
        print(f"{r:5.2f}x  {name:42s} GPU {og:9.1f} / {tg:9.1f} us  do_bench {ob:9.1f} / {tb:9.1f}{'' if ok else '  DIFF'}")


if __name__ == "__main__":
    main()
