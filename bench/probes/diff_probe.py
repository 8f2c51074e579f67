"""torch.diff of 2^26 fp32 (one row): the rows kernel with and without its per-item division
(``ONE_ROW``), over tile sizes and warps, against torch.diff and a copy of the same bytes, in one run
(do_bench medians, L2 flushed, three interleaved repeats; every result checked against torch first).

Result (H100, bench/results/logs/diff_probe-20261124s.log): without the division the kernel was no
faster (187.1 us at best, 4096 items on 4 warps, against 187.6 with it; 223.5 at the policy's 1024 on
8 warps), so ``ONE_ROW`` was not kept: this probe needs it added back to ``_diff_rows_kernel`` (a
constexpr that makes ``src = i``) to run. torch.diff 182.6, a copy of the same bytes 182.3.

    PYTHONPATH=. python bench/probes/diff_probe.py
"""
import torch
import triton

import tritoncub  # noqa: F401
from tritoncub.device import adjacent_difference as A
from _timing import interleaved_us

n = 1 << 26
x = torch.randn(n, device="cuda")
ref = torch.diff(x)
out = torch.empty(n - 1, device="cuda")
src, dst = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")


def direct(tile, warps, one_row):
    def run():
        A._diff_rows_kernel[(triton.cdiv(n - 1, tile),)](x, out, 1, n, OP=A.difference, TILE=tile,
                                                          ONE_ROW=one_row, num_warps=warps)
        return out
    return run


cases = {"torch.diff": lambda: torch.diff(x), "copy of the bytes": lambda: dst.copy_(src),
         "rows kernel, division, 1024/8w (before)": direct(1024, 8, False)}
for tile in (1024, 2048, 4096, 8192):
    for warps in (4, 8):
        cases[f"rows kernel, one row, {tile}/{warps}w"] = direct(tile, warps, True)
cases["ops.diff (policy)"] = lambda: torch.ops.tritoncub.diff(x)

print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
for name, fn in cases.items():
    if name.startswith("rows") or name.startswith("ops"):
        assert torch.equal(fn()[: n - 1], ref), name
interleaved_us(cases)
