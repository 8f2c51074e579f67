"""Sort with indices (torch.sort API) of 2^20 and 2^22 keys: host time per call (back-to-back calls),
GPU time per kernel (torch.profiler) and do_bench, ours (checked against torch.sort) against torch.sort
in the same run.

    PYTHONPATH=. python bench/probes/small_sort_kernels_probe.py
"""
import sys
sys.path.insert(0, "bench/probes")
import torch, triton
import tritoncub  # noqa: F401 (registers the ops)
from tritoncub.device import radix_sort as rs
from reduce_overhead import host_us, kernel_times


def main():
    ops = torch.ops.tritoncub
    for n in (1 << 20, 1 << 22):
        for dt in (torch.float32, torch.int32):
            x = (torch.randn(n, device="cuda").to(dt) if dt.is_floating_point
                 else torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", dtype=dt))
            v, i = ops.sort(x, -1, False, True)
            r = torch.sort(x, stable=True)
            assert torch.equal(v, r.values) and torch.equal(i, r.indices)
            for name, fn in (("ours", lambda: ops.sort(x, -1, False, True)), ("torch", lambda: torch.sort(x, stable=True))):
                h = host_us(fn)
                times = kernel_times(fn)
                k = sum(t for t, _ in times.values())
                names = " ".join(f"{key[:28]}:{t:.1f}x{c}" for key, (t, c) in times.items())
                b = triton.testing.do_bench(fn, warmup=10, rep=100, return_mode="median") * 1e3
                print(f"n=2^{n.bit_length()-1} {str(dt)[6:]:8} {name:5} host {h:6.1f} gpu {k:6.1f} do_bench {b:6.1f} us  "
                      f"replays={len(rs._SORT_REPLAYS)} {names}", flush=True)


if __name__ == "__main__":
    main()
