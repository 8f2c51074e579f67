"""Top-k of long rows: the running k-best candidates (``CAND_K_MAX`` >= next_pow2(k)) against the
radix select (``CAND_K_MAX = 0``), on the benchmark's long-row cases and a few more k. do_bench
medians (L2 flushed, as ``python -m bench``) and the GPU time of the kernels (torch.profiler), torch
in the same run; every result checked against torch.topk first.

    PYTHONPATH=. python bench/probes/topk_path_probe.py
"""
import torch
import tritoncub  # noqa: F401
from tritoncub import policy
from _timing import bench_ms, gpu_us, kernel_breakdown

ops = torch.ops.tritoncub


t = bench_ms


g = torch.Generator(device="cuda").manual_seed(0)
cases = [((16, 1 << 20), 8), ((16, 1 << 20), 32), ((16, 1 << 20), 64), ((1 << 26,), 8), ((1 << 26,), 64),
         ((1 << 26,), 100), ((1 << 26,), 10000), ((16, 1 << 20), 1000)]
for shape, k in cases:
    x = torch.randn(*shape, device="cuda", generator=g)
    ref = torch.topk(x, k).values
    row = [f"torch {t(lambda: torch.topk(x, k)):.4f} ms"]
    shipped = policy.select("topk", x.device, "long")   # the shipped 'long' entry, CAND_K_MAX changed only
    base = {**shipped.values, "num_warps": shipped.num_warps, "num_stages": shipped.num_stages}
    for name, cmax in (("candidates", 64), ("radix", 0)):
        with policy.override("topk", {**base, "CAND_K_MAX": cmax}, bucket="long"):
            v, i = ops.topk(x, k, -1, True, True)
            assert torch.equal(v, ref) and torch.equal(torch.gather(x, -1, i), v), (shape, k, name)
            row.append(f"{name} {t(lambda: ops.topk(x, k, -1, True, True)):.4f} ms "
                       f"(kernels {gpu_us(lambda: ops.topk(x, k, -1, True, True)):.0f} us)")
    print(f"{'x'.join(map(str, shape))} k={k}: " + ", ".join(row), flush=True)

# where the GPU time of the radix path goes (per kernel, 5 calls averaged)
for shape, k in (((1 << 26,), 10000), ((16, 1 << 20), 1000)):
    x = torch.randn(*shape, device="cuda", generator=g)
    ks = kernel_breakdown(lambda: ops.topk(x, k, -1, True, True))
    print(f"{'x'.join(map(str, shape))} k={k} kernels: " + ", ".join(f"{n[:30]} x{c} {us:.1f}us" for n, us, c in ks),
          flush=True)
