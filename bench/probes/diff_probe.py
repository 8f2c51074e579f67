"""torch.diff of 2^26 fp32 (one row), and of rows: the rows kernel's ways (``ROW_TILES``: whole
tiles of one row, one scalar division per program; else one division per item, 32-bit or ``WIDE``
64-bit), over tile sizes and warps, against torch.diff and a copy of the same bytes, in one run
(do_bench medians, L2 flushed, three interleaved repeats; every result checked against torch first).

Results:

* H100 (bench/results/logs/diff_probe-20261124s.log, the one-row case only, before ``ROW_TILES``;
  the per-item division was then 64-bit): without the division no faster (187.1 us at best, 4096
  items on 4 warps, against 187.6 with it; 223.5 at the policy's 1024 on 8 warps). torch.diff 182.6,
  a copy of the same bytes 182.3.
* H200 (bench/results/logs/diff_probe-h200-20261128.log), one row: the 64-bit per-item division
  159 us, whole tiles of the row 135.6-142 us (2048/8w best, the sm_90 policy's 1024/8w 142), torch
  135, a copy 131; 4096 rows of 16384: 64-bit / 32-bit division 146 / 142 us, row tiles 140-144,
  torch 201. The 32-bit division on one row (a path the launcher never takes) was 187 us. So the
  launcher takes row tiles for one row and for rows of at least the largest tile; autotuning the
  op on the H200 (its diff problem included) chose 1024/4w: diff of one row 137 us, torch 134
  (bench/results/logs/diff_after_tuning-h200-20261128.log).

    PYTHONPATH=. python bench/probes/diff_probe.py
"""
import torch
import triton

import tritoncub  # noqa: F401
from tritoncub.device import adjacent_difference as A
from _timing import interleaved_us

n = 1 << 26
print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
for rows in (1, 4096):
    length = n // rows
    x = torch.randn(rows, length, device="cuda")
    ref = torch.diff(x)
    out = torch.empty(rows, length - 1, device="cuda")
    src, dst = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")

    def direct(tile, warps, row_tiles, wide):
        grid = rows * triton.cdiv(length - 1, tile) if row_tiles else triton.cdiv(rows * (length - 1), tile)

        def run():
            A._diff_rows_kernel[(grid,)](x, out, rows, length, OP=A.difference, ROW_TILES=row_tiles, WIDE=wide,
                                         TILE=tile, num_warps=warps)
            return out
        return run

    cases = {"torch.diff": lambda: torch.diff(x), "copy of the bytes": lambda: dst.copy_(src),
             "per-item 64-bit division, 1024/8w": direct(1024, 8, False, True),
             "per-item 32-bit division, 1024/8w": direct(1024, 8, False, False)}
    for tile in (1024, 2048, 4096, 8192):
        for warps in (4, 8):
            cases[f"row tiles, {tile}/{warps}w"] = direct(tile, warps, True, False)
    cases["ops.diff (policy)"] = lambda: torch.ops.tritoncub.diff(x)
    print(f"## {rows} x {length}", flush=True)
    for name, fn in cases.items():
        if name[0] in "pro":
            assert torch.equal(fn(), ref), name
    interleaved_us(cases)
