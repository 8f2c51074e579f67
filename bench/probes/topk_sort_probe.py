"""Top-k's last step, sorting the k selected values, for k = 10000 (one row): the path sort_rows
takes for rows longer than the tile sort's MAX_BLOCK (a device radix sort of composite keys), against
one program sorting the whole row in registers (the tile sort at BLOCK 16384), and what topk costs
with and without the sort.

    PYTHONPATH=. python bench/probes/topk_sort_probe.py
"""
import torch
import triton.testing

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import segmented_sort as SS
from bench.harness import rotating

ops = torch.ops.tritoncub


def t(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


g = torch.Generator(device="cuda").manual_seed(0)
for k in (10000, 16384, 5000):
    v = torch.randn(1, k, device="cuda", generator=g)
    ref_v, ref_i = torch.sort(v, dim=-1, descending=True, stable=True)
    got_v, got_i = SS.sort_rows(v, descending=True)
    assert torch.equal(got_v, ref_v) and torch.equal(got_i, ref_i)
    print(f"k={k}: sort_rows {t(lambda: SS.sort_rows(v, descending=True)) * 1e3:.1f} us, "
          f"torch.sort {t(lambda: torch.sort(v, dim=-1, descending=True)) * 1e3:.1f} us", flush=True)
    meta = SS.key_meta(v.dtype)
    for warps in (8, 16, 32):
        for net in ("own", "tl"):
            # (MAX_BLOCK 16384: the tile sort refuses blocks past its MAX_BLOCK, launching nothing)
            with policy.override("segmented_sort", {"num_warps": warps, "NETWORK": net, "MAX_BLOCK": 16384}):
                def run():
                    ov = torch.empty_like(v)
                    oi = torch.empty(v.shape, dtype=torch.int64, device="cuda")
                    assert SS._launch_tile_sort(SS.bits_view(v), None, SS.bits_view(ov), None, oi, block=16384,
                                                num_segs=1, descending=True, meta=meta, device=v.device, uniform=True,
                                                row_len=k, row_stride=k, rows=1)
                    return ov, oi
                try:
                    ov, oi = run()
                    ok = torch.equal(ov, ref_v) and torch.equal(oi, ref_i)
                    print(f"   tile sort BLOCK 16384, {warps} warps, {net}: ok={ok} {t(run) * 1e3:.1f} us", flush=True)
                except Exception as e:  # a probe: report and go on
                    print(f"   tile sort BLOCK 16384, {warps} warps, {net}: {type(e).__name__}: {str(e)[:200]}",
                          flush=True)

x = [torch.randn(1 << 26, device="cuda", generator=g) for _ in range(2)]
for k in (100, 10000):
    for s in (True, False):
        print(f"topk 2^26 k={k} sorted={s}: {t(rotating(x, lambda a: ops.topk(a, k, -1, True, s))):.4f} ms", flush=True)
print(f"torch.topk 2^26 k=10000: {t(rotating(x, lambda a: torch.topk(a, 10000))):.4f} ms", flush=True)
