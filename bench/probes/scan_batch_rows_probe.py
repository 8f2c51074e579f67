"""Batches of long rows under scan's ``MIN_TILES`` rule: the rule counts every row's items, so a batch
of rows past the rows kernel (``ROWS_MAX_LEN``, 2048) may take tiles smaller than the policy's
``TILE_ITEMS``; this times the shipped rule against fixed tiles (``MIN_TILES`` 0) of 512-8192 items.
Each config's result is checked against torch first; GPU time per call (profiler, every kernel of the
call, the status buffer's memset included), torch's alongside.

    PYTHONPATH=. python bench/probes/scan_batch_rows_probe.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us  # noqa: E402
import tritoncub  # noqa: E402,F401
from tritoncub import policy  # noqa: E402

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(0)
print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)

CASES = [   # (label, dtype, ours, torch's, rtol)
    ("cumsum", torch.float32, lambda x: ops.cumsum(x, -1), lambda x: torch.cumsum(x, -1), 1e-4),
    ("cumsum", torch.int32, lambda x: ops.cumsum(x, -1), lambda x: torch.cumsum(x, -1), 0),
    ("cumsum", torch.float64, lambda x: ops.cumsum(x, -1), lambda x: torch.cumsum(x, -1), 1e-9),
    ("cumprod", torch.float32, lambda x: ops.cumprod(x, -1), lambda x: torch.cumprod(x, -1), 2e-3),
    ("logcumsumexp", torch.float32, lambda x: ops.logcumsumexp(x, -1), lambda x: torch.logcumsumexp(x, -1), 1e-4),
]
SHAPES = [(2, 4096), (4, 4096), (16, 4096), (64, 4096), (4, 16384), (16, 16384), (4, 65536), (16, 65536)]

for label, dtype, ours, theirs, rtol in CASES:
    for shape in SHAPES:
        if dtype.is_floating_point:
            x = (1 + (torch.rand(shape, device=d, generator=g) - 0.5) * 1e-3).to(dtype)   # products stay finite
        else:
            x = torch.randint(-100, 100, shape, device=d, generator=g, dtype=dtype)
        with policy.trace() as calls:
            ours(x)
        bucket = [b for op, b in calls if op == "scan"][0]
        base = policy.select("scan", torch.device(d), bucket).as_dict()
        if shape == SHAPES[0]:
            print(f"{label} {dtype} bucket {bucket} policy {base}", flush=True)
        ref = theirs(x)
        line = f"{label:12s} {str(dtype)[6:]:8s} {str(shape):12s}:"
        configs = [(f"{t:4d}", {"TILE_ITEMS": t, "MIN_TILES": 0}) for t in (512, 1024, 2048, 4096, 8192)
                   if t >= 64 * base["num_warps"]]
        configs += [("rule", {})]
        for name, cfg in configs:
            with policy.override("scan", {**base, **cfg}, bucket=bucket):
                got = ours(x)
                torch.cuda.synchronize()
                assert policy.override_hits("scan", bucket), (label, bucket)
                if rtol:
                    torch.testing.assert_close(got, ref, rtol=rtol, atol=rtol)
                else:
                    assert torch.equal(got, ref), (label, shape, name)
                mark = "*" if cfg.get("TILE_ITEMS") == base["TILE_ITEMS"] else " "
                line += f" | {name}{mark} {gpu_us(lambda: ours(x)):6.1f}"
        print(f"{line} | torch {gpu_us(lambda: theirs(x)):6.1f}", flush=True)
