"""Bitonic tile sort of 65536 x 128 rows under the sm_90 "small" policy with TILE_ITEMS, num_warps and NETWORK
varied (checked against torch.sort first), torch.sort(dim=-1) in the same run: a float16 bench figure of 0.102 ms
(0.072 the run before) was a noisy timing, the shipped config measures 0.0725 ms here.

    PYTHONPATH=. python bench/probes/sort_rows_small_ab.py
"""
import torch, sys, json
sys.path.insert(0, __file__.rsplit("/", 1)[0] if "/" in __file__ else ".")
from _timing import bench_ms
from tritoncub import policy
from tritoncub.device import segmented_sort as ss
base = json.load(open("tritoncub/policies/sm_90/segmented_sort.json"))["tuned"]["small"]
g = torch.Generator(device="cuda").manual_seed(0)
for dtype in (torch.float32, torch.float16, torch.int32):
    x = (torch.randn(65536, 128, device="cuda", generator=g) * 1000).to(dtype)
    tt = bench_ms(lambda: torch.sort(x, dim=-1))
    out = [f"{dtype} 65536x128: torch {tt:.4f}", f"shipped {bench_ms(lambda: ss.sort_rows(x)):.4f}"]
    for ti in (1024, 2048, 4096):
        for nw in (2, 4, 8):
            for net in ("own", "tl"):
                cfg = dict(base, TILE_ITEMS=ti, num_warps=nw, NETWORK=net)
                with policy.override("segmented_sort", cfg):
                    v, i = ss.sort_rows(x)
                    rv, ri = torch.sort(x, dim=-1, stable=True)
                    assert torch.equal(i, ri)
                    out.append(f"{ti}/{nw}w/{net} {bench_ms(lambda: ss.sort_rows(x)):.4f}")
    print(", ".join(out), flush=True)
