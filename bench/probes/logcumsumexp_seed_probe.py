"""logcumsumexp seeded with -inf (as torch: a leading -0.0 gives +0.0) against the unseeded scan it
replaced, and torch.logcumsumexp: every result checked first, then GPU time per call (do_bench)."""
import sys
import math
import torch
import triton
sys.path.insert(0, ".")   # run from the repository root: python bench/probes/logcumsumexp_seed_probe.py
import tritoncub  # noqa: F401
from tritoncub.device import scan as S


def unseeded(x, dim):
    acc = S._widen(x.dtype)
    return S.scan_rows_launch((x,), S.combine_logaddexp, acc_dtypes=(acc,), out_dtypes=(x.dtype,), dim=dim)[0][0]


print(torch.cuda.get_device_name(), torch.__version__, triton.__version__)
for shape, dim in (((1 << 24,), 0), ((4096, 1024), 1), ((65536, 128), 1), ((1024, 4096), 0)):
    x = torch.randn(shape, device="cuda")
    ref = torch.logcumsumexp(x, dim)
    for name, fn in (("seeded", lambda: S.logcumsumexp(x, dim)), ("unseeded", lambda: unseeded(x, dim))):
        torch.testing.assert_close(fn(), ref, rtol=1e-4, atol=1e-4)
    for rnd in range(2):
        t = {name: triton.testing.do_bench(fn, warmup=20, rep=200, return_mode="median") * 1e3
             for name, fn in (("seeded", lambda: S.logcumsumexp(x, dim)), ("unseeded", lambda: unseeded(x, dim)),
                              ("torch", lambda: torch.logcumsumexp(x, dim)))}
        print(f"{str(shape):>14} dim={dim} round {rnd}: " + "  ".join(f"{k} {v:.1f} us" for k, v in t.items()),
              flush=True)
