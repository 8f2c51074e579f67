"""Two small-input fixes, A/B in one process, every result checked against torch first; GPU time per call
(profiler) and do_bench, torch's alongside.

* unique of 1024-8192 keys: the one-program kernel's own sort network against its permutation taken from
  ``radix_sort.sort`` (``unique.PRESORT_MIN_N``); 8192 keys with ``UNIQUE_TILE_MAX`` raised to 8192 against
  the shipped limit (4096: the other paths; the network's 8192 is in unique_small_probe-limit-h200-20261201.log);
* histc with few samples per bin: the policy's paths against one global atomic per sample into the result
  (``GMEM_MAX_ITEMS_PER_BIN``), the rest of the device's policy kept; uniform samples, and "hot" ones (nine in
  ten in one bin).

    PYTHONPATH=. python bench/probes/small_unique_histc_probe.py [unique|histc]
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import bench_ms, gpu_us  # noqa: E402
import tritoncub  # noqa: E402,F401
from tritoncub import policy  # noqa: E402
from tritoncub.device import unique as U  # noqa: E402

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(0)
which = sys.argv[1:] or ["unique", "histc"]
print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)


def timed(fn):
    return f"gpu {gpu_us(fn):6.1f} do_bench {bench_ms(fn) * 1e3:6.1f}"


if "unique" in which:
    shipped = (U.PRESORT_MIN_N, U.UNIQUE_TILE_MAX)
    for dtype, hi in ((torch.int32, 100), (torch.int32, 1 << 30), (torch.float32, 1000), (torch.int16, 30000),
                      (torch.int64, 1 << 40), (torch.float64, 1000)):
        for n in (1024, 2048, 4096, 8192):
            x = torch.randint(0, hi, (n,), device=d, generator=g).to(dtype)
            ref = torch.unique(x, return_inverse=True, return_counts=True)
            for flags in ((False, False), (True, True)):
                line = f"unique {str(dtype)[6:]:8s} <2^{(hi - 1).bit_length():<2d} n {n:5d} inv+counts {int(flags[0])}:"
                for label, presort, limit in (("network", None, max(4096, n)), ("presort", 1025, max(4096, n)),
                                              ("shipped-limit", 1025, 4096)):
                    if (label == "shipped-limit") != (n > 4096) and label != "presort":
                        continue   # (the network at 8192 keys: 231-561 us, unique_small_probe-limit-h200-20261201.log)
                    U.PRESORT_MIN_N, U.UNIQUE_TILE_MAX = presort, limit
                    got = ops.unique(x, True, *flags)
                    assert torch.equal(got[0], ref[0]), (label, dtype, n)
                    if flags[0]:
                        assert torch.equal(got[1], ref[1]) and torch.equal(got[2], ref[2]), (label, dtype, n)
                    line += f" | {label} {timed(lambda: ops.unique(x, True, *flags))}"
                U.PRESORT_MIN_N, U.UNIQUE_TILE_MAX = shipped
                tfn = lambda: torch.unique(x, return_inverse=flags[0], return_counts=flags[1])   # noqa: E731
                print(f"{line} | torch {timed(tfn)}", flush=True)

if "histc" in which:
    base = policy.select("histogram", torch.device(d)).as_dict()
    print("policy", base, flush=True)
    for bins in (4096, 65536):
        for per_bin, hot in ((1, False), (4, False), (16, False), (64, False), (1, True), (16, True)):
            n = bins * per_bin
            x = torch.rand(n, device=d, generator=g) * 10 - 5
            if hot:   # (nine samples in ten in one bin)
                x[torch.rand(n, device=d, generator=g) < 0.9] = 0.0
            ref = torch.histc(x, bins, -5, 5)
            line = f"histc n {n:8d} bins {bins:6d} ({per_bin:2d} per bin{', hot' if hot else ''}):"
            for label, sparse in (("policy", 0), ("sparse", 1 << 30)):
                with policy.override("histogram", {**base, "GMEM_MAX_ITEMS_PER_BIN": sparse}):
                    assert torch.equal(ops.histc(x, bins, -5, 5), ref), (label, n, bins)
                    line += f" | {label} {timed(lambda: ops.histc(x, bins, -5, 5))}"
            print(f"{line} | torch {timed(lambda: torch.histc(x, bins, -5, 5))}", flush=True)
