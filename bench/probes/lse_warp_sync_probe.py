"""logcumsumexp's float32 (``--f64``: float64) single pass: the warp-synchronous Gluon kernel (``_logcumsumexp_warp_sync_kernel``)
at several tile shapes, vector widths and look-back windows, against the portable ``tl.associative_scan``
kernel (``WARP_SYNC 0``) and torch, in one run. Each variant is checked against a float64 scan first
(largest absolute error printed; the Gluon kernel is also checked to repeat bit for bit), then timed:
do_bench medians (GPU us per call, L2 flushed, as ``python -m bench``)."""
import contextlib
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import torch  # noqa: E402
import triton  # noqa: E402
from _timing import bench_ms  # noqa: E402
from tritoncub import policy  # noqa: E402
from tritoncub.device import scan as S  # noqa: E402

print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)

# (each merged over the lse32 bucket's built-in values; "portable": WARP_SYNC 0 at 8B_costly's window)
VARIANTS = {"shipped": {}, "portable": {"WARP_SYNC": 0, "LOOKBACK_WINDOW": 128},
            "ws T2048w4 v4 win128": {"VEC": 4, "LOOKBACK_WINDOW": 128, "LOOKBACK_SLEEP": 1},
            "ws T2048w4 v8 win128": {"VEC": 8, "LOOKBACK_WINDOW": 128, "LOOKBACK_SLEEP": 1},
            "ws T2048w4 v8 win256": {"VEC": 8, "LOOKBACK_WINDOW": 256, "LOOKBACK_SLEEP": 1},
            "ws T2048w4 v8 win512": {"VEC": 8, "LOOKBACK_WINDOW": 512, "LOOKBACK_SLEEP": 1},
            "ws T2048w4 v8 win256 nosleep": {"VEC": 8, "LOOKBACK_WINDOW": 256, "LOOKBACK_SLEEP": 0},
            "ws T2048w4 v16 win256": {"VEC": 16, "LOOKBACK_WINDOW": 256, "LOOKBACK_SLEEP": 1},
            "ws T4096w4 v8 win256": {"TILE_ITEMS": 4096, "VEC": 8, "LOOKBACK_WINDOW": 256, "LOOKBACK_SLEEP": 1},
            "ws T1024w2 v8 win256": {"TILE_ITEMS": 1024, "num_warps": 2, "VEC": 8, "LOOKBACK_WINDOW": 256,
                                     "LOOKBACK_SLEEP": 1}}
BUCKET = "lse32"
# --f64: float64 items (bucket lse64; "portable": 16B_costly's window)
F64 = "--f64" in sys.argv
if F64:
    BUCKET = "lse64"
    VARIANTS = {"shipped": {}, "portable": {"WARP_SYNC": 0, "LOOKBACK_WINDOW": 128},
                "ws T1024w4 v2 win256": {"VEC": 2}, "ws T1024w4 v8 win256": {"VEC": 8},
                "ws T1024w4 v4 win128": {"LOOKBACK_WINDOW": 128}, "ws T1024w4 v4 win512": {"LOOKBACK_WINDOW": 512},
                "ws T512w4 v4 win256": {"TILE_ITEMS": 512}, "ws T2048w4 v4 win256": {"TILE_ITEMS": 2048},
                "ws T2048w8 v4 win256": {"TILE_ITEMS": 2048, "num_warps": 8},
                "ws T1024w2 v4 win256": {"num_warps": 2}}
args = [a for a in sys.argv[1:] if not a.startswith("--")]
if args:
    VARIANTS = {k: v for k, v in VARIANTS.items() if any(a in k for a in args)}
CASES = [((1 << 20,), 0, False, torch.float32, 4), ((1 << 24,), 0, False, torch.float32, 4),
         ((1 << 26,), 0, False, torch.float32, 4), ((1 << 26,), 0, False, torch.float32, 3000),
         ((1 << 24,), 0, True, torch.float32, 4), ((1 << 24,), 0, False, torch.bfloat16, 4),
         ((16, 1 << 20), 1, False, torch.float32, 4), ((1024, 4096), 1, False, torch.float32, 4)]
if F64:
    CASES = [((1 << 20,), 0, False, torch.float64, 4), ((1 << 24,), 0, False, torch.float64, 4),
             ((1 << 26,), 0, False, torch.float64, 4), ((1 << 24,), 0, True, torch.float64, 4),
             ((16, 1 << 20), 1, False, torch.float64, 4)]
for shape, dim, reverse, dtype, scale in CASES:
    torch.manual_seed(0)
    x = (torch.randn(shape, device="cuda", dtype=torch.float32) * scale).to(dtype)
    xd = x.double().flip(dim) if reverse else x.double()
    ref = torch.logcumsumexp(xd, dim)
    ref = ref.flip(dim) if reverse else ref
    errs, times = {}, {}
    for name, over in VARIANTS.items():
        with policy.override("scan", over, bucket=BUCKET) if over else contextlib.nullcontext():
            out = S.logcumsumexp(x, dim, reverse=reverse)
            if name != "portable":   # (the warp-synchronous kernel repeats in the fast mode too)
                assert torch.equal(out, S.logcumsumexp(x, dim, reverse=reverse)), f"{name}: not reproducible"
            errs[name] = (out.double() - ref).abs().max().item()
            times[name] = bench_ms(lambda: S.logcumsumexp(x, dim, reverse=reverse)) * 1e3
    xt = x.flip(dim) if reverse else x
    errs["torch"] = ((torch.logcumsumexp(xt, dim).flip(dim) if reverse else torch.logcumsumexp(x, dim)).double()
                     - ref).abs().max().item()
    times["torch"] = bench_ms(lambda: torch.logcumsumexp(xt, dim)) * 1e3
    tag = f"{tuple(shape)} dim={dim} {'reverse ' if reverse else ''}{str(dtype)[6:]} x{scale}"
    print(tag, "max abs error:", " | ".join(f"{k} {v:.1e}" for k, v in errs.items()), flush=True)
    print(tag, "us:", " | ".join(f"{k} {v:.1f}" for k, v in times.items()), flush=True)
