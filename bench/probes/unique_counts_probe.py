"""unique with counts of low-cardinality integers (the dense path's counting): GPU time per call and
do_bench of ops.unique(x, return_counts=True) against torch.unique, int32 values in [0, span), every
result checked against torch first. For A/B runs of two trees (GPU time does not move with the host).

    PYTHONPATH=TREE:. python bench/probes/unique_counts_probe.py [--hist-bins B] [--smem]

``--hist-bins``: the dense path's ``_MARK_HIST_BINS`` (counting by block histograms below it).
``--smem``: in one process, each case's GPU time with the shared-memory counting off
(``COUNT_SMEM_BINS = 0``: tile histograms, then an atomic per item) and on (as shipped).
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: E402
from _timing import bench_ms, gpu_us  # noqa: E402

from _timing import kernel_breakdown  # noqa: E402

ops = torch.ops.tritoncub
if "--hist-bins" in sys.argv:
    from tritoncub.device import unique as U
    U._MARK_HIST_BINS = int(sys.argv[sys.argv.index("--hist-bins") + 1])
    print("_MARK_HIST_BINS", U._MARK_HIST_BINS)
print(torch.cuda.get_device_name(), "tritoncub from", tritoncub.__file__, flush=True)
if "--smem" in sys.argv:
    from tritoncub.device import unique as U
    variants = {"off": 0, "on": U.COUNT_SMEM_BINS}
    for n in (1 << 20, 1 << 22, 1 << 26):
        for span in (2, 100, 256, 1000, 4096, 8192, 16384, 32768, 65536):
            x = torch.randint(0, span, (n,), device="cuda", dtype=torch.int32)
            rv, rc = torch.unique(x, return_counts=True)
            line = f"n=2^{n.bit_length() - 1} span={span:6d} "
            for name, bins in variants.items():
                U.COUNT_SMEM_BINS = bins
                v, _, c = ops.unique(x, True, False, True)
                assert torch.equal(v, rv) and torch.equal(c, rc), (name, n, span)
                line += f" | {name} {gpu_us(lambda: ops.unique(x, True, False, True)):8.1f}"
            tfn = lambda: torch.unique(x, return_counts=True)  # noqa: E731
            print(line + f" | torch.unique {gpu_us(tfn):8.1f} us of GPU time", flush=True)
    sys.exit(0)
for n in (1 << 20, 1 << 22, 1 << 26):
    for span in (2, 100, 1000, 1024, 4096, 65536):
        x = torch.randint(0, span, (n,), device="cuda", dtype=torch.int32)
        v, _, c = ops.unique(x, True, False, True)
        rv, rc = torch.unique(x, return_counts=True)
        assert torch.equal(v, rv) and torch.equal(c, rc)
        fn = lambda: ops.unique(x, True, False, True)  # noqa: E731
        tfn = lambda: torch.unique(x, return_counts=True)  # noqa: E731
        print(f"n=2^{n.bit_length() - 1} span={span:6d}  gpu {gpu_us(fn):8.1f} us  do_bench {bench_ms(fn) * 1e3:8.1f}"
              f"  | torch gpu {gpu_us(tfn):8.1f}  do_bench {bench_ms(tfn) * 1e3:8.1f}", flush=True)
        if n == 1 << 26 and span in (100, 4096):
            print("    kernels: " + ", ".join(f"{k[:28]} {us:.1f}" for k, us, _ in kernel_breakdown(fn)), flush=True)
