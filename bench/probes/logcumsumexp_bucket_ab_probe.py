"""logcumsumexp on the plain 4B policy bucket against the costly operators' bucket, interleaved (GPU
us per call, do_bench medians, two calls of each per round; kernels and their times from
torch.profiler): the rows shapes run the rows kernel either way (the bucket changes only the
single-pass tile), one long row the single-pass kernel; torch alongside."""
import sys
import torch
import triton
sys.path.insert(0, ".")   # run from the repository root: python bench/probes/logcumsumexp_bucket_ab_probe.py
sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: F401
from tritoncub.device import scan as S
from _timing import kernel_breakdown
print(torch.cuda.get_device_name(), flush=True)
for shape in ((4096, 1024), (65536, 128), (1 << 24,)):
    x = torch.randn(shape, device="cuda") * 4
    dim = x.dim() - 1
    f = {c: (lambda c=c: S.scan_rows_launch((x,), S.combine_logaddexp, acc_dtypes=(torch.float32,), out_dtypes=(torch.float32,), dim=dim, plus_zero=True, costly=c)[0][0]) for c in (False, True)}
    for c in (False, True):
        print(shape, "costly", c, [(n[:40], round(us, 1), k) for n, us, k in kernel_breakdown(f[c])], flush=True)
    for r in range(3):
        print(shape, "round", r, [(c, round(triton.testing.do_bench(f[c], warmup=20, rep=200, return_mode="median") * 1e3, 1)) for c in (False, True, False, True)], "torch", round(triton.testing.do_bench(lambda: torch.logcumsumexp(x, dim), warmup=20, rep=200, return_mode="median") * 1e3, 1), flush=True)
