"""The sort paths that move more than 32-bit keys (torch's sort with int64 indices, int64 keys, int64
pairs) under two policies: the shipped one, and the same without the fused exchange and recomputed
words (each checked against torch.sort; 2^28 keys, torch in the same run).
    python3 bench/probes/onesweep_wide_probe.py"""
import os, sys, torch, triton
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import tritoncub.device.radix_sort as rs
from tritoncub import policy
bench = lambda f: triton.testing.do_bench(f, warmup=5, rep=40, return_mode="median")
shipped = policy.select("radix_sort", torch.device("cuda"), "default").as_dict()
print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, "shipped:", shipped, flush=True)
N = 1 << 28
xf = torch.randn(N, device="cuda")
xl = torch.randint(-2**62, 2**62, (N,), device="cuda", dtype=torch.int64)
vl = torch.arange(N, device="cuda")
print("torch.sort fp32 %.3f ms, int64 %.3f ms" % (bench(lambda: torch.sort(xf)), bench(lambda: torch.sort(xl))), flush=True)
for name, over in (("shipped", {}), ("no fused exchange, no recomputed words", {"FUSED_EXCHANGE": 0, "RECOMPUTE_WORD": 0}),
                   ("shipped, wide cap 80", {"MAXNREG_WIDE": 80}), ("shipped, wide cap 96", {"MAXNREG_WIDE": 96}),
                   ("shipped, wide cap none", {"MAXNREG_WIDE": 0})):
    with policy.override("radix_sort", {**shipped, **over}):
        v, i = rs.sort(xf)
        ok = torch.equal(v, torch.sort(xf).values)
        k = rs.sort_keys(xl)
        ok = ok and torch.equal(k, torch.sort(xl).values)
        t1, t2, t3 = bench(lambda: rs.sort(xf)), bench(lambda: rs.sort_keys(xl)), bench(lambda: rs.sort_pairs(xl, vl))
    print(f"{name}: ok={ok} sort fp32 (values+indices) {t1:.3f} ms, sort_keys int64 {t2:.3f} ms, pairs int64+int64 {t3:.3f} ms", flush=True)
