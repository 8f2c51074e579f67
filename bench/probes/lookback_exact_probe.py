"""Is the portable single-pass scan exact with many tiles? A user's ``+`` on int32 and int64 (exact, and
not idempotent: a predecessor's aggregate taken twice or skipped would show, which a running max hides)
at 2^24 and 2^26 items, tiles of 2048-8192 items (up to 32768 tiles), both look-back modes, five runs
each, compared with torch.cumsum item by item. Then float32 cumprod at 2^26 (factors 1 + 1e-4 z)
against a float64 reference, ours and torch's: float32 products this long drift apart by tens of
percent in both, so a tolerance check between two float32 cumprods of different association fails
without a bug (it did in scan_tile_probe.py at tiles of 2048 and 4096)."""
import sys
import torch
import triton
sys.path.insert(0, ".")   # run from the repository root: python bench/probes/lookback_exact_probe.py
import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import scan as S


@triton.jit
def add(a, b):
    return a + b


print(torch.cuda.get_device_name(), flush=True)
for n in (1 << 24, 1 << 26):
    for dtype in (torch.int32, torch.int64):
        x = torch.randint(-3, 4, (n,), device="cuda", dtype=dtype)
        ref = torch.cumsum(x, 0).to(dtype)
        for det in (False, True):
            for cfg in ({"TILE_ITEMS": 2048, "num_warps": 4, "LOOKBACK_WINDOW": 32},
                        {"TILE_ITEMS": 2048, "num_warps": 4, "LOOKBACK_WINDOW": 128},
                        {"TILE_ITEMS": 4096, "num_warps": 8, "LOOKBACK_WINDOW": 128},
                        {"TILE_ITEMS": 8192, "num_warps": 4, "LOOKBACK_WINDOW": 32}):
                bucket = ("4B" if dtype == torch.int32 else "8B") + ("_det" if det else "")
                bad = []
                with policy.override("scan", cfg, bucket=bucket):
                    for rep in range(5):
                        got = S.inclusive_scan(x, add, dim=0, deterministic=det)
                        m = (got != ref).nonzero()
                        if m.numel():
                            bad.append((m.numel(), m[0].item(), (got[m[0]] - ref[m[0]]).item()))
                print(n.bit_length() - 1, dtype, "det" if det else "fast", cfg, "reps bad:", len(bad), bad[:3], flush=True)
# cumprod: where and how large the errors are
n = 1 << 26
g = torch.Generator(device="cuda").manual_seed(n)
torch.randn(n, device="cuda", generator=g)
p = 1 + torch.randn(n, device="cuda", generator=g) * 1e-4
ref = torch.cumprod(p.double(), 0)
for cfg in ({"TILE_ITEMS": 2048, "num_warps": 4, "LOOKBACK_WINDOW": 32}, {"TILE_ITEMS": 8192, "num_warps": 4, "LOOKBACK_WINDOW": 32}):
    with policy.override("scan", cfg, bucket="4B"):
        got = S.cumprod(p, 0).double()
    r = (got - ref).abs() / ref.abs()
    print("ours", cfg, "max rel", r.max().item(), "first >1e-4 at", (r > 1e-4).nonzero()[:1].tolist(), flush=True)
t = torch.cumprod(p, 0).double()
r = (t - ref).abs() / ref.abs()
print("torch max rel", r.max().item(), "first >1e-4 at", (r > 1e-4).nonzero()[:1].tolist(), flush=True)
