"""Top-k of long rows: the running k-best with bitonic rounds (``FILTER=0``, the shipped sm_90 policy)
against its group-maxima filter rounds (``FILTER=1``, each ``FILTER_CHUNK``), and the radix select,
on the benchmark's long-row cases and the k in between. do_bench medians (L2 flushed, as
``python -m bench``) and the kernels' GPU time (torch.profiler), torch in the same run; every result
is checked against torch.topk (values; indices point at them) before it is timed.

    PYTHONPATH=. python bench/probes/topk_filter_probe.py
"""
import torch
import tritoncub  # noqa: F401
from tritoncub import policy
from _timing import bench_ms, gpu_us

ops = torch.ops.tritoncub
g = torch.Generator(device="cuda").manual_seed(0)
cases = [((16, 1 << 20), 8), ((16, 1 << 20), 64), ((1 << 26,), 8), ((1 << 26,), 100), ((1 << 26,), 256)]
shipped = policy.select("topk", torch.device("cuda"), "long")
base = {**shipped.values, "num_warps": shipped.num_warps, "num_stages": shipped.num_stages}
variants = [("bitonic", {"FILTER": 0, "CAND_K_MAX": 256})]
variants += [(f"filter {c}", {"FILTER": 1, "FILTER_CHUNK": c, "CAND_K_MAX": 256}) for c in (4096, 8192, 16384)]
variants += [("radix", {"CAND_K_MAX": 0})]
for shape, k in cases:
    x = torch.randn(*shape, device="cuda", generator=g)
    ref = torch.topk(x, k).values
    row = [f"torch {bench_ms(lambda: torch.topk(x, k)):.4f} ms"]
    for name, cfg in variants:
        with policy.override("topk", {**base, **cfg}, bucket="long"):
            v, i = ops.topk(x, k, -1, True, True)
            assert torch.equal(v, ref) and torch.equal(torch.gather(x, -1, i), v), (shape, k, name)
            row.append(f"{name} {bench_ms(lambda: ops.topk(x, k, -1, True, True)):.4f} ms "
                       f"(kernels {gpu_us(lambda: ops.topk(x, k, -1, True, True)):.0f} us)")
    print(f"{'x'.join(map(str, shape))} k={k}: " + ", ".join(row), flush=True)
