"""The H200 file's scan buckets (tritoncub/policies/nvidia-h200/scan.json: 8B, sum64) against the sm_90 file's
(tuned on the H100) and neighbours, on every kind of scan those buckets serve: one 64-bit value (float64 and
int64 products), a pair of 32-bit values (cummax of float32 and int32: value and int32 index), 64-bit sums
(float64, int32 and int64 items into int64). 2^16 to 2^26 items; each result checked against torch first;
GPU time per call (profiler), torch's alongside.

    PYTHONPATH=. python bench/probes/scan_h200_buckets_probe.py
"""
import json
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
SM90 = json.load(open("tritoncub/policies/sm_90/scan.json"))["tuned"]

CASES = [   # (label, dtype, ours, torch's, rtol, variants)
    ("cumprod", torch.float64, lambda x: ops.cumprod(x, 0), lambda x: torch.cumprod(x, 0), 1e-9, "8B"),
    ("cumprod", torch.int64, lambda x: ops.cumprod(x, 0), lambda x: torch.cumprod(x, 0), 0, "8B"),
    ("cummax", torch.float32, lambda x: ops.cummax(x, 0)[0], lambda x: torch.cummax(x, 0)[0], 0, "8B"),
    ("cummax", torch.int32, lambda x: ops.cummax(x, 0)[1], lambda x: torch.cummax(x, 0)[1], 0, "8B"),
    ("cumsum", torch.float64, lambda x: ops.cumsum(x, 0), lambda x: torch.cumsum(x, 0), 1e-9, "sum64"),
    ("cumsum", torch.int32, lambda x: ops.cumsum(x, 0), lambda x: torch.cumsum(x, 0), 0, "sum64"),
    ("cumsum", torch.int64, lambda x: ops.cumsum(x, 0), lambda x: torch.cumsum(x, 0), 0, "sum64"),
]
VARIANTS = {"8B": [{"TILE_ITEMS": 2048}, {"TILE_ITEMS": 4096}, {"TILE_ITEMS": 8192}],
            "sum64": [{"TILE_ITEMS": 4096, "num_warps": 4}, {"TILE_ITEMS": 2048, "num_warps": 2},
                      {"TILE_ITEMS": 2048, "num_warps": 4}, {"TILE_ITEMS": 1024, "num_warps": 2}]}

for label, dtype, ours, theirs, rtol, kind in CASES:
    for n in (1 << 16, 1 << 20, 1 << 24, 1 << 26):
        if dtype.is_floating_point:
            x = (1 + (torch.rand(n, device=d, generator=g) - 0.5) * 1e-4).to(dtype)   # products stay finite
        elif label == "cumprod":
            x = torch.where(torch.rand(n, device=d, generator=g) < 1e-3, -1, 1).to(dtype)   # (no overflow)
        else:
            x = torch.randint(-1000, 1000, (n,), device=d, generator=g, dtype=dtype)
        with policy.trace() as calls:
            ours(x)
        bucket = [b for op, b in calls if op == "scan"][0]
        assert bucket == kind, (label, dtype, bucket)
        h200 = policy.select("scan", torch.device(d), bucket).as_dict()
        sm90 = {**h200, **SM90[bucket]}
        if n == 1 << 16:
            print(f"{label} {dtype} bucket {bucket} H200 file {h200}", flush=True)
        ref = theirs(x)
        line = f"{label:8s} {str(dtype)[6:]:8s} n 2^{n.bit_length() - 1}: shipped {gpu_us(lambda: ours(x)):7.1f}"
        for var in VARIANTS[bucket]:
            cfg = {**h200, **var}
            with policy.override("scan", cfg, bucket=bucket):
                got = ours(x)
                torch.cuda.synchronize()
                if rtol:
                    torch.testing.assert_close(got, ref, rtol=rtol, atol=rtol)
                else:
                    assert torch.equal(got, ref), (label, n, var)
                mark = "(sm_90)" if all(sm90[k] == v for k, v in var.items()) else ""
                line += f" | T{cfg['TILE_ITEMS']},w{cfg['num_warps']}{mark} {gpu_us(lambda: ours(x)):7.1f}"
        print(f"{line} | torch {gpu_us(lambda: theirs(x)):7.1f}", flush=True)
