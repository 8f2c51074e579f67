"""Row sums of a 4096x1024 fp32 matrix: how fast can a plain Triton kernel read 16 MB and write one
sum per row on this GPU? Minimal kernels (no segment machinery) over a grid of shapes, timed as
``python -m bench`` times (do_bench median, L2 flushed), against torch.sum(dim=-1) and the shipped
``reduce_rows`` in the same run.

    PYTHONPATH=. python bench/probes/rows_floor_probe.py
"""
import torch
import triton
import triton.language as tl
import triton.testing

import tritoncub  # noqa: F401
from tritoncub.device import segmented_reduce as S


@triton.jit
def _rows_kernel(x_ptr, out_ptr, n_rows, K: tl.constexpr, ROWS: tl.constexpr, EVICT: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, K)
    v = tl.load(x_ptr + r[:, None].to(tl.int64) * K + c[None, :], mask=(r < n_rows)[:, None], other=0.0,
                eviction_policy=EVICT)
    tl.store(out_ptr + r, tl.sum(v, 1), mask=r < n_rows)


@triton.jit
def _rows_persistent_kernel(x_ptr, out_ptr, n_rows, K: tl.constexpr, ROWS: tl.constexpr):
    c = tl.arange(0, K)
    for start in tl.range(tl.program_id(0) * ROWS, n_rows, tl.num_programs(0) * ROWS, num_stages=3):
        r = start + tl.arange(0, ROWS)
        v = tl.load(x_ptr + r[:, None].to(tl.int64) * K + c[None, :], mask=(r < n_rows)[:, None], other=0.0)
        tl.store(out_ptr + r, tl.sum(v, 1), mask=r < n_rows)


def t(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


m, k = 4096, 1024
xs = [torch.randn(m, k, device="cuda") for _ in range(2)]
x = xs[0]
out = torch.empty(m, device="cuda")
ref = x.sum(-1)
print(f"torch x.sum(-1)         {t(lambda: x.sum(-1)):6.2f} us")
print(f"reduce_rows (shipped)   {t(lambda: S.reduce_rows(x, 'sum')):6.2f} us")
print(f"torch copy (2x bytes)   {t(lambda: x.clone()):6.2f} us")
sms = torch.cuda.get_device_properties(0).multi_processor_count
for rows in (1, 2, 4, 8, 16):
    for w in (1, 2, 4, 8, 16):
        if rows * k // (32 * w) < 4:
            continue
        for ev in ("", "evict_first"):
            f = lambda: _rows_kernel[(triton.cdiv(m, rows),)](x, out, m, K=k, ROWS=rows, EVICT=ev, num_warps=w)
            f()
            assert torch.allclose(out, ref, rtol=1e-4, atol=1e-3)
            print(f"rows={rows:<3} warps={w:<3} {ev or 'plain':12s} {t(f):6.2f} us", flush=True)
for per_sm in (1, 2, 4, 8):
    for rows, w in ((1, 4), (2, 4), (4, 8)):
        f = lambda: _rows_persistent_kernel[(sms * per_sm,)](x, out, m, K=k, ROWS=rows, num_warps=w)
        f()
        assert torch.allclose(out, ref, rtol=1e-4, atol=1e-3)
        print(f"persistent {per_sm}/SM rows={rows} warps={w} {t(f):6.2f} us", flush=True)
