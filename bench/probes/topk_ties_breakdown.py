"""Where a top-k of one long row with many keys equal to the k-th one spends its GPU time: kernel
breakdown (torch.profiler) of topk(1 x 2^26 fp32, k=10000) on integer-valued keys (0..999: ~67k items
tie with the k-th) against uniform random keys, torch.topk alongside; then 16 x 2^20 rows of keys in
[0, 1), k=1000 (rows that do not overflow the candidate buffer), wall against GPU and host time
(and normal keys, the same shape, alongside).

Module switches of ``tritoncub.device.topk`` may be given as ``NAME=0|1`` arguments; each argument
list runs after the defaults, in the same process (an A/B of a switch):

    PYTHONPATH=.:bench/probes python bench/probes/topk_ties_breakdown.py [_RS_SKIP_WHEN_DONE=1 ...]
"""
import sys

import torch

from _timing import bench_ms, gpu_us, host_ms, kernel_breakdown
from tritoncub.device import topk as tk

ops = torch.ops.tritoncub


def switches(args):
    """``{name: bool}`` from ``NAME=0|1`` arguments, each a module constant of topk."""
    out = {}
    for a in args:
        name, _, value = a.partition("=")
        if not hasattr(tk, name) or value not in ("0", "1"):
            raise SystemExit(f"unknown switch or value: {a!r} (NAME=0|1, NAME a constant of tritoncub.device.topk)")
        out[name] = value == "1"
    return out


def run(label):
    print(f"#### {label}", flush=True)
    for name, x, k in (("ties (0..999)", torch.randint(0, 1000, (1, 1 << 26), device="cuda").float(), 10000),
                       ("uniform", torch.rand(1, 1 << 26, device="cuda"), 10000),
                       ("16 rows uniform", torch.rand(16, 1 << 20, device="cuda"), 1000),
                       ("16 rows randn", torch.randn(16, 1 << 20, device="cuda"), 1000)):
        v, i = ops.topk(x, k, -1, True, True)
        assert torch.equal(v, torch.topk(x, k).values)
        assert torch.equal(x.gather(-1, i), v)
        f = lambda: ops.topk(x, k, -1, True, True)  # noqa: E731
        print(f"## {name}: ours {bench_ms(f):.4f} ms (GPU {gpu_us(f) / 1000:.4f}, host {host_ms(f):.4f}), torch "
              f"{bench_ms(lambda: torch.topk(x, k)):.4f} ms", flush=True)
        for kname, us, count in sorted(kernel_breakdown(f), key=lambda r: -r[1]):
            print(f"   {us:9.1f} us  x{count:<3} {kname[:90]}", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    chosen = switches(sys.argv[1:])
    run("defaults")
    if chosen:
        for name, value in chosen.items():
            setattr(tk, name, value)
        run(", ".join(f"{n}={int(v)}" for n, v in chosen.items()))
