"""The warp-synchronous single-pass sum (``_scan_warp_sync_kernel``) against the portable single pass
it replaces, torch.cumsum and a copy: fp32 inclusive sums of 2^28 items (and 2^26), fast and
reproducible modes, over tile shapes, look-back windows and the sleeping spin. Every config's result
is checked against a float64 cumsum first (the reproducible mode also bitwise against a second run).
``PROBE 1`` (no look-back: wrong output, timing only) gives the ceiling of the tile work alone.

    PYTHONPATH=. python bench/probes/scan_warp_sync_probe.py [--quick | --wide]

``--wide``: instead, int32 -> int64 sums (64-bit accumulators) over tile shapes, against the portable
kernel and torch.cumsum (exact results checked).

Prints ms (``do_bench`` median, L2 flushed, as ``python -m bench``) and GB/s (read + write).
"""
import contextlib
import sys

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import scan as S
from _timing import bench_ms

quick = "--quick" in sys.argv
print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
g = torch.Generator(device="cuda").manual_seed(0)


def check(x, ref, det, ref_err):
    """(ok, err): the largest error relative to ``|ref| + 1`` within 4x torch.cumsum's own (float32
    rounding over 2^28 items is far above any fixed tolerance), and bitwise repeatable when ``det``."""
    out = S.inclusive_sum(x, deterministic=det)
    err = ((out.double() - ref).abs() / (ref.abs() + 1)).max().item()
    ok = err <= 4 * ref_err + 1e-6
    if det:
        ok = ok and torch.equal(out, S.inclusive_sum(x, deterministic=True))
    return ok, err


def row(label, n, ms, note=""):
    print(f"n=2^{n.bit_length() - 1} {label:<66} {ms:8.4f} ms {8 * n / ms / 1e6:8.0f} GB/s {note}", flush=True)


def timed(label, n, x, ref, det, ref_err, cfg=None):
    # (no override for the shipped policy: an override is merged over the built-in fallback, not the tuned file)
    with policy.override("scan", cfg) if cfg else contextlib.nullcontext():
        ok, err = check(x, ref, det, ref_err)
        row(label, n, bench_ms(lambda: S.inclusive_sum(x, deterministic=det)),
            f"{'ok' if ok else 'WRONG'} err={err:.1e}")


if "--wide" in sys.argv:   # 64-bit accumulators: int32 -> int64 (torch's promotion), exact
    n = 1 << 28
    xi = torch.randint(-1000, 1000, (n,), device="cuda", generator=g, dtype=torch.int32)
    ref = torch.cumsum(xi, 0)
    yi = torch.empty_like(xi)

    def row64(label, ms, note=""):
        print(f"int32->int64 n=2^28 {label:<52} {ms:8.4f} ms {12 * n / ms / 1e6:8.0f} GB/s {note}", flush=True)

    row64("copy of the int32 input", bench_ms(lambda: yi.copy_(xi)))
    row64("torch.cumsum", bench_ms(lambda: torch.cumsum(xi, 0)))
    cfgs = [("portable T2048 w4 win128", {"WARP_SYNC": 0, "TILE_ITEMS": 2048, "num_warps": 4, "LOOKBACK_WINDOW": 128})]
    cfgs += [(f"warp-sync T{t} w{w} win{win}", {"WARP_SYNC": 1, "TILE_ITEMS": t, "num_warps": w, "VEC": 4,
                                                 "LOOKBACK_WINDOW": win, "LOOKBACK_SLEEP": 1})
             for t, w, win in ((1024, 4, 128), (2048, 4, 128), (2048, 4, 256), (4096, 4, 128), (2048, 8, 128),
                               (4096, 8, 128), (8192, 8, 256))]
    for label, cfg in cfgs:
        with policy.override("scan", cfg):
            ok = torch.equal(S.inclusive_sum(xi), ref) and torch.equal(S.inclusive_sum(xi, deterministic=True), ref)
            row64(label, bench_ms(lambda: S.inclusive_sum(xi)), "ok" if ok else "WRONG")
    sys.exit(0)

for n in ((1 << 28,) if quick else (1 << 24, 1 << 26, 1 << 28)):
    x = torch.randn(n, device="cuda", generator=g) / 16
    ref = torch.cumsum(x.double(), 0)
    ref_err = ((torch.cumsum(x, 0).double() - ref).abs() / (ref.abs() + 1)).max().item()
    y = torch.empty_like(x)
    row("copy", n, bench_ms(lambda: y.copy_(x)))
    row("torch.cumsum", n, bench_ms(lambda: torch.cumsum(x, 0)), f"err={ref_err:.1e}")
    for det in (False, True):
        mode = "reproducible" if det else "fast"
        timed(f"{mode} shipped policy", n, x, ref, det, ref_err)
        base = {"TILE_ITEMS": 8192, "num_warps": 4, "LOOKBACK_WINDOW": 32} if not det else \
            {"TILE_ITEMS": 4096, "num_warps": 8, "LOOKBACK_WINDOW": 512}
        timed(f"{mode} portable {base}", n, x, ref, det, ref_err, {**base, "WARP_SYNC": 0})
        shapes = ((2048, 2), (2048, 4), (4096, 4), (4096, 8), (8192, 8))
        looks = ((0, 32, 1), (1, 64, 1), (1, 128, 1), (1, 128, 0), (1, 256, 1)) if not det else \
            ((1, 64, 1), (1, 128, 1), (1, 128, 0), (1, 256, 1))
        if quick:
            shapes, looks = shapes[2:3], looks[:3]
        for tile, warps in shapes:
            for anchored, win, sleep in looks:
                cfg = {"WARP_SYNC": 1, "TILE_ITEMS": tile, "num_warps": warps, "VEC": 4, "LOOKBACK_WINDOW": win,
                       "LOOKBACK_SLEEP": sleep, "ANCHORED": anchored}
                timed(f"{mode} warp-sync T{tile} w{warps} anchored{anchored} win{win} sleep{sleep}", n, x, ref, det,
                      ref_err, cfg)
        if not det:
            for tile, warps in shapes:
                S._PROBE = 1
                with policy.override("scan", {"WARP_SYNC": 1, "TILE_ITEMS": tile, "num_warps": warps, "VEC": 4}):
                    row(f"no look-back (PROBE 1) T{tile} w{warps}", n,
                        bench_ms(lambda: S.inclusive_sum(x, deterministic=False)))
                S._PROBE = 0
