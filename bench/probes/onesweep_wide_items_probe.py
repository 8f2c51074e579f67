"""64-bit keys (int64 keys alone, int64 keys + int64 values, 2^28 random): the shipped policy against
   smaller tiles (ITEMS 8), 16 warps, the wide exchange off and higher register caps, each checked against
   torch.sort first; torch.sort in the same run. Does a tile shaped for 8-byte items (as CUB shrinks its
   tiles for them) close the gap to torch on pairs?

Result (H200, bench/results/logs/onesweep_wide_items_probe-h200-20261128.log): no. The shipped policy
is the fastest of the nine for both (sort_keys 16.46 ms, pairs 36.66; EXCHANGE_WIDE 0 36.59 on pairs
but 19.40 on keys; ITEMS 8 23.28 / 40.23; 16 warps 20.75 / 59.17; caps 96 / 128 20.1 / 39.0); torch.sort
of the int64 keys (values+indices) 26.76 ms.

    PYTHONPATH=. python3 bench/probes/onesweep_wide_items_probe.py
"""
import torch, triton, time
import tritoncub.device.radix_sort as rs
from tritoncub import policy
bench = lambda f: triton.testing.do_bench(f, warmup=5, rep=60, return_mode="median")
shipped = policy.select("radix_sort", torch.device("cuda"), "default").as_dict()
N = 1 << 28
xl = torch.randint(-2**62, 2**62, (N,), device="cuda", dtype=torch.int64)
vl = torch.randint(-2**62, 2**62, (N,), device="cuda", dtype=torch.int64)
ref = torch.sort(xl, stable=True)
refv = vl[ref.indices]
print(torch.cuda.get_device_name(), "torch.sort int64 %.3f ms" % bench(lambda: torch.sort(xl)), flush=True)
variants = [("shipped", {}), ("ITEMS 8", {"ITEMS": 8}), ("ITEMS 8 WARPS 16", {"ITEMS": 8, "WARPS": 16, "num_warps": 16}),
            ("WARPS 16", {"WARPS": 16, "num_warps": 16}), ("EXCHANGE_WIDE 0", {"EXCHANGE_WIDE": 0}),
            ("wide cap 96", {"MAXNREG_WIDE": 96}), ("wide cap 128", {"MAXNREG_WIDE": 128}),
            ("ITEMS 8 wide cap 96", {"ITEMS": 8, "MAXNREG_WIDE": 96}), ("ITEMS 8 wide cap none", {"ITEMS": 8, "MAXNREG_WIDE": 0})]
for name, over in variants:
    t0 = time.time()
    try:
        with policy.override("radix_sort", {**shipped, **over}):
            k, v = rs.sort_pairs(xl, vl)
            ok = torch.equal(k, ref.values) and torch.equal(v, refv)
            ok = ok and torch.equal(rs.sort_keys(xl), ref.values)
            t2, t3 = bench(lambda: rs.sort_keys(xl)), bench(lambda: rs.sort_pairs(xl, vl))
        print(f"{name:24s} ok={ok} sort_keys int64 {t2:.3f} ms, pairs int64+int64 {t3:.3f} ms  ({time.time()-t0:.0f}s)", flush=True)
    except Exception as e:
        print(f"{name:24s} failed: {type(e).__name__}: {str(e)[:150]}", flush=True)
