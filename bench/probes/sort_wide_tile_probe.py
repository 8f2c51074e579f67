"""Tile shape of the onesweep passes that move more than 32-bit keys: int64 keys (8 places), int64
pairs, and torch's sort API (fp32 keys with int64 indices). The shipped policy uses one tile for
every pass (``WARPS`` x ``ITEMS`` x 32 keys) and a wider register cap (``MAXNREG_WIDE``) for these
passes; CUB scales its items per thread down for wider keys. Each config is checked against
torch.sort before it is timed (do_bench medians, L2 flushed, as ``python -m bench``), torch in the
same run.

    PYTHONPATH=. python bench/probes/sort_wide_tile_probe.py [small]

``small``: the sort API at 2^20 fp32/int32 (host-bound) timed three times, for an A/B against an
older tree run the same way.
"""
import sys
import time

import torch
import triton

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import radix_sort as RS
from _timing import bench_ms, timing_line


def small():
    g = torch.Generator(device="cuda").manual_seed(5)
    for dt in (torch.float32, torch.int32):
        x = (torch.randn(1 << 20, device="cuda", generator=g) * 1e6).to(dt)
        v, i = RS.sort(x)
        ok = torch.equal(v, torch.sort(x).values)
        print(f"sort {dt} 2^20 ok={ok}: {timing_line(lambda: RS.sort(x))}; torch {bench_ms(lambda: torch.sort(x)):.4f}",
              flush=True)
        for name, f in (("tritoncub", lambda: RS.sort(x)), ("torch", lambda: torch.sort(x))):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(200):
                f()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            print(f"  {name}: host {1e6 * (t1 - t0) / 200:.1f} us per call (200 calls queued)", flush=True)
        torch.cuda.set_sync_debug_mode("warn")
        RS.sort(x)
        torch.cuda.set_sync_debug_mode(0)


def wide():
    n = 1 << 28
    g = torch.Generator(device="cuda").manual_seed(7)
    xf = torch.randn(n, device="cuda", generator=g)
    xl = torch.randint(-2**62, 2**62, (n,), device="cuda", dtype=torch.int64, generator=g)
    vl = torch.arange(n, device="cuda")
    ref_f = torch.sort(xf).values
    ref_l = torch.sort(xl, stable=True)
    print("torch.sort fp32 %.3f ms, int64 (keys + int64 indices) %.3f ms" % (
        bench_ms(lambda: torch.sort(xf)), bench_ms(lambda: torch.sort(xl))), flush=True)
    shipped = policy.select("radix_sort", torch.device("cuda"), "default").as_dict()
    print("shipped:", {k: shipped[k] for k in ("WARPS", "ITEMS", "MAXNREG", "MAXNREG_WIDE")}, flush=True)
    for warps, items, cap in ((8, 16, 80), (8, 8, 64), (8, 8, 80), (8, 12, 64), (8, 12, 80), (16, 8, 80),
                              (16, 8, 64), (8, 20, 96), (4, 16, 80), (8, 16, 96), (8, 16, 80)):
        over = {**shipped, "WARPS": warps, "num_warps": warps, "ITEMS": items, "MAXNREG_WIDE": cap}
        try:
            with policy.override("radix_sort", over):
                v, _ = RS.sort(xf)
                ok = torch.equal(v, ref_f)
                ok = ok and torch.equal(RS.sort_keys(xl), ref_l.values)
                kk, vv = RS.sort_pairs(xl, vl)
                ok = ok and torch.equal(kk, ref_l.values) and torch.equal(vv, ref_l.indices)
                t = [min(bench_ms(f, rep=200) for _ in range(2))
                     for f in (lambda: RS.sort(xf), lambda: RS.sort_keys(xl), lambda: RS.sort_pairs(xl, vl))]
        except Exception as e:  # a config the compiler rejects
            print(f"warps={warps} items={items} wide cap={cap}: {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        print(f"warps={warps:2d} items={items:2d} wide cap={cap}: ok={ok}  sort fp32 (values+int64 indices) "
              f"{t[0]:.3f} ms  sort_keys int64 {t[1]:.3f} ms  pairs int64+int64 {t[2]:.3f} ms", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
    small() if sys.argv[1:] == ["small"] else wide()
