"""Scans of 1-D inputs of 4096 to 2^20 items (past the rows kernel's ROWS_MAX_LEN, before the memory
bound): fixed tiles of 512 to 8192 items (``MIN_TILES`` 0) against the rule that shrinks the policy's
``TILE_ITEMS`` below ``MIN_TILES`` tiles (32 / 64 / 128), every bucket's policy kept otherwise; each result
checked against torch first; GPU time per call (profiler, every kernel of the call: the zeroed status
buffer's memset too), torch's alongside; the kernel breakdown of the shipped policy at 16384 and 65536.

The sweep behind it (bench/results/logs/torch_sweep_probe-full-h200-20261202.log): cumsum of 16384 fp32
3.3 us against torch's 2.7, cumprod of 65536 6.9 against 5.1, of 2^20 11.6 against 9.8.

    PYTHONPATH=. python bench/probes/scan_small_tiles_probe.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us, kernel_breakdown  # noqa: E402
import tritoncub  # noqa: E402,F401
from tritoncub import policy  # noqa: E402
from tritoncub.device import scan as S  # noqa: E402

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(0)
print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)

CASES = [   # (label, dtype, ours, torch's, rtol)
    ("cumsum", torch.float32, lambda x: ops.cumsum(x, 0), lambda x: torch.cumsum(x, 0), 1e-4),
    ("cumsum-det", torch.float32, lambda x: S.inclusive_sum(x, deterministic=True), lambda x: torch.cumsum(x, 0), 1e-4),
    ("cumsum", torch.int32, lambda x: ops.cumsum(x, 0), lambda x: torch.cumsum(x, 0), 0),
    ("cumsum", torch.float64, lambda x: ops.cumsum(x, 0), lambda x: torch.cumsum(x, 0), 1e-9),
    ("cumprod", torch.float32, lambda x: ops.cumprod(x, 0), lambda x: torch.cumprod(x, 0), 2e-3),
    ("cumprod", torch.float64, lambda x: ops.cumprod(x, 0), lambda x: torch.cumprod(x, 0), 1e-9),
    ("cummax", torch.float32, lambda x: ops.cummax(x, 0)[0], lambda x: torch.cummax(x, 0)[0], 0),
    ("logcumsumexp", torch.float32, lambda x: ops.logcumsumexp(x, 0), lambda x: torch.logcumsumexp(x, 0), 1e-4),
    ("logcumsumexp", torch.float64, lambda x: ops.logcumsumexp(x, 0), lambda x: torch.logcumsumexp(x, 0), 1e-9),
]

for label, dtype, ours, theirs, rtol in CASES:
    for n in (4096, 16384, 65536, 262144, 1 << 20):
        if dtype.is_floating_point:
            x = (1 + (torch.rand(n, device=d, generator=g) - 0.5) * 1e-3).to(dtype)   # products stay finite
        else:
            x = torch.randint(-100, 100, (n,), device=d, generator=g, dtype=dtype)
        with policy.trace() as calls:
            ours(x)
        bucket = [b for op, b in calls if op == "scan"][0]
        base = policy.select("scan", torch.device(d), bucket).as_dict()
        if n == 4096:
            print(f"{label} {dtype} bucket {bucket} policy {base}", flush=True)
        ref = theirs(x)
        line = f"{label:12s} {str(dtype)[6:]:8s} n {n:8d}:"
        configs = [(f"{t:4d}", {"TILE_ITEMS": t, "MIN_TILES": 0}) for t in (512, 1024, 2048, 4096, 8192)
                   if t >= 32 * base["num_warps"]]
        configs += [(f"min{m}", {"MIN_TILES": m}) for m in (32, 64, 128)]
        for name, cfg in configs:
            with policy.override("scan", {**base, **cfg}, bucket=bucket):
                got = ours(x)
                torch.cuda.synchronize()
                assert policy.override_hits("scan", bucket), (label, bucket)
                if rtol:
                    torch.testing.assert_close(got, ref, rtol=rtol, atol=rtol)
                else:
                    assert torch.equal(got, ref), (label, n, name)
                mark = "*" if cfg.get("TILE_ITEMS") == base["TILE_ITEMS"] else " "
                line += f" | {name}{mark} {gpu_us(lambda: ours(x)):6.1f}"
        print(f"{line} | torch {gpu_us(lambda: theirs(x)):6.1f}", flush=True)
        if n in (16384, 65536) and label in ("cumsum", "cumprod") and dtype == torch.float32:
            print("   shipped:", [(k[:40], round(us, 2), c) for k, us, c in kernel_breakdown(lambda: ours(x))],
                  "torch:", [(k[:40], round(us, 2), c) for k, us, c in kernel_breakdown(lambda: theirs(x))],
                  flush=True)
