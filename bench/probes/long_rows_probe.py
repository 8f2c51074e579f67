"""Where the time of sorting 16 rows of 2^20 fp32 goes: tritoncub's segmented ``sort_rows`` (long rows as
one radix sort of composite segment|key keys), with and without the direct launch path, next to the
``sort`` operator (onesweep over all rows) and torch.

    python bench/probes/long_rows_probe.py
"""
import time
import warnings

import torch
import triton.testing

from tritoncub import _launch
from tritoncub.device import segmented_sort as S

warnings.simplefilter("always")


def main():
    x = torch.randn(16, 1 << 20, device="cuda")
    ref = torch.sort(x, -1)
    for direct in (True, False):
        _launch._DIRECT[:] = [direct]
        v, i = S.sort_rows(x)
        assert torch.equal(v, ref.values), "values differ"
        ms = triton.testing.do_bench(lambda: S.sort_rows(x), return_mode="median")
        print(f"segmented sort_rows direct_launch={direct}: {ms:.4f} ms; radix path unavailable: {S._RADIX_UNAVAILABLE}")
    orig = S._sort_long_radix

    def traced(*a, **k):
        t = time.perf_counter()
        r = orig(*a, **k)
        torch.cuda.synchronize()
        print(f"  _sort_long_radix returned {r} in {(time.perf_counter() - t) * 1e3:.3f} ms (host+GPU)")
        return r
    S._sort_long_radix = traced
    S.sort_rows(x)
    torch.cuda.synchronize()
    S._sort_long_radix = orig
    ms = triton.testing.do_bench(lambda: torch.ops.tritoncub.sort(x, -1), return_mode="median")
    print(f"ops.sort (onesweep over all rows): {ms:.4f} ms")
    ms = triton.testing.do_bench(lambda: torch.sort(x, -1), return_mode="median")
    print(f"torch.sort: {ms:.4f} ms")


if __name__ == "__main__":
    main()
