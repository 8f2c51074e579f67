"""Sorted unique of small inputs (the one-program path's sizes): host time of one call with the GPU
idle, GPU time per call, do_bench, against torch.unique in the same process; every result is checked
against torch first (values, inverse, counts; no NaN in the data).

    PYTHONPATH=. python bench/probes/unique_small_probe.py
    PYTHONPATH=OLD_TREE:. python bench/probes/unique_small_probe.py   # another tree's package (A/B)
    PYTHONPATH=. python bench/probes/unique_small_probe.py --warps | --network | --limit   # one sweep alone
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: E402
from _timing import bench_ms, gpu_us, host_idle_us  # noqa: E402

ops = torch.ops.tritoncub
g = torch.Generator(device="cuda").manual_seed(0)
print(f"{torch.cuda.get_device_name()} torch {torch.__version__}, tritoncub from {tritoncub.__file__}")
if len(sys.argv) == 1:   # (the table; an option runs its sweep alone)
    for n in (100, 1024, 4096):
        for dtype, hi in ((torch.int32, 100), (torch.float32, 1000), (torch.int16, 30000), (torch.int64, 100),
                          (torch.int64, 1 << 40), (torch.float64, 1000)):
            x = torch.randint(0, hi, (n,), device="cuda", generator=g).to(dtype)
            for flags in ((False, False), (True, True)):
                got = ops.unique(x, True, *flags)
                ref = torch.unique(x, return_inverse=True, return_counts=True)
                assert torch.equal(got[0], ref[0])
                if flags[0]:
                    assert torch.equal(got[1], ref[1]) and torch.equal(got[2], ref[2])
                fn = lambda: ops.unique(x, True, *flags)   # noqa: E731
                tfn = lambda: torch.unique(x, return_inverse=flags[0], return_counts=flags[1])   # noqa: E731
                print(f"n {n:5d} {str(dtype)[6:]:8s} < 2^{(hi - 1).bit_length():<2d} inverse+counts {int(flags[0])}: "
                      f"host {host_idle_us(fn):7.1f} us, "
                      f"gpu {gpu_us(fn):6.1f} us, do_bench {bench_ms(fn) * 1e3:7.1f} us | torch host "
                      f"{host_idle_us(tfn):6.1f}, gpu {gpu_us(tfn):6.1f}, do_bench {bench_ms(tfn) * 1e3:6.1f}",
                      flush=True)


def checked_timing(x, label):
    """unique with inverse and counts checked against torch's, then its GPU time and do_bench."""
    got = ops.unique(x, True, True, True)
    ref = torch.unique(x, return_inverse=True, return_counts=True)
    assert all(torch.equal(a, b) for a, b in zip(got, ref))
    fn = lambda: ops.unique(x, True, True, True)   # noqa: E731
    print(f"{label}: gpu {gpu_us(fn):6.1f} us, do_bench {bench_ms(fn) * 1e3:7.1f} us", flush=True)


# the one-program path's warps (32-bit keys: one packed word each; 64-bit: the pair network), where the
# tree's launcher takes them as a keyword
if len(sys.argv) > 1 and sys.argv[1] == "--warps":
    from tritoncub.device import unique as U
    real = U.launch
    for dtype in (torch.int32, torch.int64):
        for n in (1024, 4096):
            x = torch.randint(0, 1 << 20, (n,), device="cuda", generator=g).to(dtype)
            for w in (4, 8, 16, 32):
                U.launch = lambda *a, **k: real(*a, **{**k, "num_warps": w})   # noqa: E731
                checked_timing(x, f"{str(dtype)[6:]:6s} n {n:5d} warps {w:2d}")
    U.launch = real

# the one-program path's sort network: min/max dims for keys packed into 32-bit words (the run of
# 2026-12-01 also timed tl.sort, through a switch since removed: unique_small_probe-network-h200-20261201.log)
if len(sys.argv) > 1 and sys.argv[1] == "--network":
    from tritoncub.device import unique as U
    for rnd in (1, 2):
        for dtype, hi in ((torch.int16, 30000), (torch.uint8, 256)):
            for n in (1024, 4096):
                x = torch.randint(0, hi, (n,), device="cuda", generator=g).to(dtype)
                for mm in (0, 2, 7):
                    U._TILE_MINMAX_DIMS = mm
                    checked_timing(x, f"round {rnd} {str(dtype)[6:]:6s} n {n:5d} minmax {mm}")

# the one-program path's limit: inputs past 4096 keys in one program (limit 8192) or by the other paths
# (limit 4096), two rounds; host time of an idle call, GPU time and do_bench, torch.unique alongside
if len(sys.argv) > 1 and sys.argv[1] == "--limit":
    from tritoncub.device import unique as U
    for rnd in (1, 2):
        for dtype, hi in ((torch.int32, 1000), (torch.float32, 1000), (torch.int64, 1 << 40), (torch.float64, 1000)):
            for n in (4097, 6000, 8192):
                x = torch.randint(0, hi, (n,), device="cuda", generator=g).to(dtype)
                fn = lambda: ops.unique(x, True, True, True)   # noqa: E731
                tfn = lambda: torch.unique(x, return_inverse=True, return_counts=True)   # noqa: E731
                line = f"round {rnd} n {n:5d} {str(dtype)[6:]:8s} < 2^{(hi - 1).bit_length():<2d} inverse+counts:"
                for limit in (4096, 8192):
                    U.UNIQUE_TILE_MAX = limit
                    checked = [torch.equal(a, b) for a, b in zip(fn(), tfn())]
                    assert all(checked), (limit, checked)
                    line += (f" limit {limit}: host {host_idle_us(fn):6.1f} gpu {gpu_us(fn):6.1f} "
                             f"do_bench {bench_ms(fn) * 1e3:6.1f} |")
                print(f"{line} torch host {host_idle_us(tfn):6.1f} gpu {gpu_us(tfn):6.1f} do_bench "
                      f"{bench_ms(tfn) * 1e3:6.1f}", flush=True)
