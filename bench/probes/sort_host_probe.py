"""Where a mid-size ``sort`` (values + indices) spends its time, and what packing would buy.

1. sort 2^20 / 2^22 / 2^24 fp32 and int32 through ``tritoncub.sort`` and the torch operator:
   do_bench time, GPU time per kernel (torch.profiler), host time per call (calls queued without a
   sync), and the top of a cProfile of 100 calls;
2. the upfront histogram kernel alone at several grid sizes (it is persistent over tiles; its
   per-program global atomics are the suspect at small n);
3. the packed-pair estimate: ``sort_keys`` of uint64 words over bits [32, 64) (four 8-bit passes of
   64-bit keys, the cost of carrying a 32-bit key and a 32-bit index packed in one word) against
   ``sort`` fp32 with indices at 2^24 and 2^28.

4. tile sizes of the policy's 'small' bucket at 2^16..2^21 keys;
5. sort with indices, positions packed with the keys or apart (PACKED_POSITIONS), 2^20..2^28;
6. sort 2^20 as the bench calls it, packed or apart, with a cProfile.

    PYTHONPATH=. python bench/probes/sort_host_probe.py [part1 part2 part3 part4]
"""
import cProfile
import io
import os
import pstats
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
from _timing import bench_ms, kernel_breakdown  # noqa: E402

import tritoncub  # noqa: E402,F401
import tritoncub.device.radix_sort as rs  # noqa: E402
from tritoncub import policy  # noqa: E402
from tritoncub._launch import launch  # noqa: E402
from tritoncub._utils import cdiv  # noqa: E402


def host_us(fn, reps=30):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / reps * 1e6


def part1():
    g = torch.Generator(device="cuda").manual_seed(0)
    for lg in (20, 22, 24):
        for dt in (torch.float32, torch.int32):
            n = 1 << lg
            x = (torch.randn(n, device="cuda", generator=g) if dt == torch.float32 else
                 torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", generator=g, dtype=torch.int32))
            ref = torch.sort(x, stable=True)
            v, i = torch.ops.tritoncub.sort(x)
            ok = torch.equal(i, ref.indices) and torch.equal(v, ref.values)
            t_torch = bench_ms(lambda: torch.sort(x))
            t_fn = bench_ms(lambda: rs.sort(x))
            t_op = bench_ms(lambda: torch.ops.tritoncub.sort(x))
            kb = kernel_breakdown(lambda: rs.sort(x))
            gpu = sum(us for _, us, _ in kb)
            print(f"sort {str(dt)[6:]} 2^{lg}: ok={ok} fn {t_fn*1e3:.1f} us, op {t_op*1e3:.1f} us, torch "
                  f"{t_torch*1e3:.1f} us; GPU {gpu:.1f} us; host/call fn {host_us(lambda: rs.sort(x)):.1f} us, "
                  f"op {host_us(lambda: torch.ops.tritoncub.sort(x)):.1f} us", flush=True)
            for name, us, cnt in sorted(kb, key=lambda r: -r[1])[:8]:
                print(f"    {us:8.1f} us x{cnt}  {name[:90]}")
            if lg == 20:
                pr = cProfile.Profile()
                pr.enable()
                for _ in range(100):
                    torch.ops.tritoncub.sort(x)
                torch.cuda.synchronize()
                pr.disable()
                st = io.StringIO()
                pstats.Stats(pr, stream=st).sort_stats("tottime").print_stats(18)
                print("\n".join(st.getvalue().splitlines()[4:]), flush=True)


def part2():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    pol = policy.select("radix_sort", torch.device("cuda"), "small")
    warps, items, rb = pol["WARPS"], pol["HIST_ITEMS"], pol["RADIX_BITS"]
    tile = warps * items * 32
    for lg in (20, 22, 24, 28):
        n = 1 << lg
        x = torch.randn(n, device="cuda")
        n_tiles = cdiv(n, tile)
        hist_all = torch.zeros((5, 1 << rb), device="cuda", dtype=torch.int64)
        rows = 1 << (4 * warps - 1).bit_length()
        res = []
        for grid in sorted({n_tiles, sms * 4, sms * 2, sms, 64, 32, 16}):
            if grid > n_tiles:
                continue

            def run():
                launch(rs._histogram_gluon_kernel, (grid,), x, hist_all, n, n_tiles, 0, 32,
                       NUM_PLACES=4, RADIX_BITS=rb, DESCENDING=False, WARPS=warps, ITEMS=items, SMEM_ROWS=rows,
                       COUNT_SPECIAL=True, num_warps=warps)
            kb = kernel_breakdown(run)
            res.append(f"grid {grid}: {sum(us for nm, us, _ in kb if 'histogram' in nm):.1f} us")
        print(f"histogram 2^{lg} ({n_tiles} tiles of {tile}): " + ", ".join(res), flush=True)


def part3():
    for lg in (24, 28):
        n = 1 << lg
        w = torch.randint(-2**63, 2**63 - 1, (n,), device="cuda", dtype=torch.int64).view(torch.uint64)
        x = torch.randn(n, device="cuda")
        kb64 = kernel_breakdown(lambda: rs.sort_keys(w, begin_bit=32))
        kbp = kernel_breakdown(lambda: rs.sort(x))
        kbk = kernel_breakdown(lambda: rs.sort_keys(x))
        f = lambda kb: sum(us for nm, us, _ in kb if "onesweep" in nm)
        print(f"2^{lg}: onesweep passes (4 of 8-bit digits) GPU us: uint64 keys bits [32,64) {f(kb64):.1f}; "
              f"fp32 key + int32 index (sort) {f(kbp):.1f}; fp32 keys only {f(kbk):.1f}; "
              f"do_bench ms: uint64[32,64) {bench_ms(lambda: rs.sort_keys(w, begin_bit=32)):.3f}, "
              f"sort {bench_ms(lambda: rs.sort(x)):.3f}, torch.sort {bench_ms(lambda: torch.sort(x)):.3f}",
              flush=True)


def part4():
    """Tile sizes of the 'small' bucket (below 2^22 keys), GPU time of sort fp32 with indices."""
    shipped = policy.select("radix_sort", torch.device("cuda"), "small").as_dict()
    for lg in (16, 18, 20, 21):
        x = torch.randn(1 << lg, device="cuda")
        res = []
        for cfg in ({}, {"ITEMS": 8}, {"WARPS": 4, "num_warps": 4}, {"WARPS": 4, "num_warps": 4, "ITEMS": 8}):
            with policy.override("radix_sort", {**shipped, **cfg}):
                gpu = sum(us for _, us, _ in kernel_breakdown(lambda: rs.sort(x)))
                t = bench_ms(lambda: rs.sort(x)) * 1e3
            res.append(f"{cfg or 'shipped'}: GPU {gpu:.1f} us, call {t:.1f} us")
        print(f"sort fp32 2^{lg}: " + "; ".join(res), flush=True)


def part5():
    """PACKED_POSITIONS 1 / 0: sort (values + int64 indices) with key and position packed in one
    word between the first and the last pass, or apart (int32 positions); torch.sort in the same run."""
    for lg in (20, 22, 24, 26, 28):
        for dt in (torch.float32, torch.int32):
            n = 1 << lg
            x = (torch.randn(n, device="cuda") if dt == torch.float32 else
                 torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", dtype=torch.int32))
            r = torch.sort(x, stable=True)
            res = [f"torch {bench_ms(lambda: torch.sort(x)) * 1e3:.1f} us"]
            b = "small" if lg < 22 else "default"
            shipped = policy.select("radix_sort", torch.device("cuda"), b).as_dict()
            for packed in (1, 0):
                with policy.override("radix_sort", {**shipped, "PACKED_POSITIONS": packed}):
                    v, i = torch.ops.tritoncub.sort(x)
                    ok = torch.equal(i, r.indices) and torch.equal(v, r.values)
                    kb = kernel_breakdown(lambda: torch.ops.tritoncub.sort(x))
                    t = bench_ms(lambda: torch.ops.tritoncub.sort(x)) * 1e3
                passes = [f"{us:.1f}" for nm, us, _ in kb if "onesweep" in nm]
                res.append(f"packed={packed}: ok={ok} {t:.1f} us (GPU {sum(us for _, us, _ in kb):.1f}, "
                           f"passes {passes})")
            print(f"sort {str(dt)[6:]} 2^{lg}: " + "; ".join(res), flush=True)


def part6():
    """sort 2^20 as the bench calls it (4 input copies in rotation, the torch operator): positions
    packed or apart (shipped policy, no override), and a cProfile of the packed calls."""
    n = 1 << 20
    xs = [torch.randn(n, device="cuda") for _ in range(4)]
    it = [0]

    def call():
        it[0] += 1
        return torch.ops.tritoncub.sort(xs[it[0] % 4])
    real = rs._packs_positions
    for name, fn in (("packed", real), ("apart", lambda k: False)):
        rs._packs_positions = fn
        kb = kernel_breakdown(call)
        print(f"sort fp32 2^20 {name}: {bench_ms(call) * 1e3:.1f} us per call, GPU {sum(us for _, us, _ in kb):.1f} us, "
              f"host {host_us(call, 100):.1f} us; torch {bench_ms(lambda: torch.sort(xs[0])) * 1e3:.1f} us", flush=True)
    rs._packs_positions = real
    for sort_by in ("tottime", "cumulative"):
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(200):
            call()
        torch.cuda.synchronize()
        pr.disable()
        st = io.StringIO()
        pstats.Stats(pr, stream=st).sort_stats(sort_by).print_stats(25)
        print("\n".join(st.getvalue().splitlines()[4:]), flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    parts = sys.argv[1:] or ["part1", "part2", "part3", "part4"]
    for name in parts:
        globals()[name]()
