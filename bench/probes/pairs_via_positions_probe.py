"""sort_pairs with 8-byte values: carried through every pass (shipped) or sorted as int32 positions and
   gathered once at the end (values[positions]); int64 / int32 / float64 keys, each checked equal, torch.sort
   in the same run.

Result (H200, bench/results/logs/pairs_via_positions_probe-h200-20261128.log): no gain worth a second
path. int64+int64 2^28: carried 36.52 ms, positions + gather 36.80 (the sort with positions 29.51, the
random gather 7.29; torch.sort 26.77); 2^24: 2.51 / 2.37; 2^20 0.215 / 0.232; int32+int64 2^28
15.64 / 16.42; float64+float64 2^26 10.01 / 9.72.

    PYTHONPATH=. python3 bench/probes/pairs_via_positions_probe.py
"""
import torch, triton
from tritoncub.device import radix_sort as R
def bench(fn): return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
for kd, vd, n in [(torch.int64, torch.int64, 1 << 28), (torch.int64, torch.int64, 1 << 24), (torch.int64, torch.int64, 1 << 20),
                  (torch.int32, torch.int64, 1 << 28), (torch.float64, torch.float64, 1 << 26), (torch.int32, torch.int64, 1 << 24)]:
    if kd.is_floating_point: keys = torch.randn(n, device="cuda", dtype=kd)
    else: keys = torch.randint(-2**31 if kd == torch.int32 else -2**62, 2**31 - 1 if kd == torch.int32 else 2**62, (n,), device="cuda", dtype=kd)
    vals = torch.randint(-2**62, 2**62, (n,), device="cuda", dtype=torch.int64).view(vd)
    def via_positions():
        k, idx = R._sort_into(keys, None, False, 0, keys.element_size() * 8, gen_indices=True)
        return k, vals[idx]
    a = R.sort_pairs(keys, vals); b = via_positions()
    ok = torch.equal(a[0], b[0]) and torch.equal(a[1].view(torch.int64), b[1].view(torch.int64))
    t_pairs = bench(lambda: R.sort_pairs(keys, vals)); t_pos = bench(via_positions)
    t_sortidx = bench(lambda: R._sort_into(keys, None, False, 0, keys.element_size() * 8, gen_indices=True))
    idx = b[0].new_empty(n, dtype=torch.int64).random_(0, n)
    t_gather = bench(lambda: vals[idx])
    t_torch = bench(lambda: torch.sort(keys, stable=True))
    print(f"{str(kd)[6:]}+{str(vd)[6:]} n=2^{n.bit_length()-1}: pairs {t_pairs:.3f} ms  positions+gather {t_pos:.3f} "
          f"(sort w/ positions {t_sortidx:.3f}, random gather {t_gather:.3f})  torch.sort {t_torch:.3f}  equal={ok}", flush=True)
