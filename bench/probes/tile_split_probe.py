"""Rows of up to 128 keys (the in-register bitonic tile sort of ``tritoncub.device.segmented_sort``):
reading each row as 2 or 4 joined column slices (``TILE_SPLIT``), which puts more of a row in each
thread's registers, against the plain read, over tile sizes and warps; torch.sort(dim=-1) in the same
run. Every config is checked against torch.sort (stable: values bit for bit and indices) before it is
timed (do_bench medians, L2 flushed, as ``python -m bench``).

    PYTHONPATH=. python bench/probes/tile_split_probe.py [SPLIT ...]   (default: 1 2 4 8)
    PYTHONPATH=. python bench/probes/tile_split_probe.py decode
    PYTHONPATH=. python bench/probes/tile_split_probe.py ragged
    PYTHONPATH=. python bench/probes/tile_split_probe.py masks
    PYTHONPATH=. python bench/probes/tile_split_probe.py minmax [half] | minmax1024 | tiles
    PYTHONPATH=<tree>:. python bench/probes/tile_split_probe.py ragged-host [--profile]

``ragged``: the bench's ragged segmented sort (100k power-law segments, 2^26 keys) under the small
bucket before (1024 items, no split) and after (2048 items, split 4, integer keys decoded), interleaved.
``masks``: the shipped small bucket with full rows masked by row only (``ROW_MASKS_ONLY``) or per item,
interleaved, on every case.
``minmax``: the compare-swaps of the innermost ``MINMAX_DIMS`` hypercube dims by min/max against the
partner compare, on the shipped small bucket and a 2-warp one (65536x128 fp32), every case;
``half``: keys of 16 bits (packed 32-bit words), more depths.
``tiles``: the shipped small bucket at 512 or 1024 items per program on 1 or 2 warps, every case, with
GPU time per call.
``minmax1024``: rows of 1024, the medium bucket's block radix sort against the bitonic tile sort
(split 4/8) with and without min/max compare-swaps.
``ragged-host``: the bench's ragged sort with this tree's code: do_bench median, GPU time, and the
host's time per call queued without waiting (run it once per tree to compare).
``decode``: the best split configs with the sorted keys decoded from the packed words
(``DECODE_KEYS``) or gathered from the input, on every case.
"""
import sys

import torch
import triton

sys.path.insert(0, "bench/probes")
from _timing import bench_ms, gpu_us  # noqa: E402
from tritoncub import policy  # noqa: E402
from tritoncub.device import segmented_sort as ss  # noqa: E402


def check(x, v, i):
    rv, ri = torch.sort(x, dim=-1, stable=True)
    return torch.equal(i, ri) and torch.equal(v.view(torch.uint8), rv.view(torch.uint8))


def run(x, cfg):
    with policy.override("segmented_sort", cfg):
        v, i = ss.sort_rows(x)
        ok = check(x, v, i)
        t = min(bench_ms(lambda: ss.sort_rows(x)) for _ in range(3))
    return ok, t


def cases(g):
    return [("65536x128 fp32", torch.randn(65536, 128, device="cuda", generator=g)),
            ("65536x128 int32", (torch.rand(65536, 128, device="cuda", generator=g) * 2**31).to(torch.int32)),
            ("65536x128 fp16", torch.randn(65536, 128, device="cuda", generator=g).half()),
            ("131072x64 fp32", torch.randn(131072, 64, device="cuda", generator=g)),
            ("262144x32 fp32", torch.randn(262144, 32, device="cuda", generator=g)),
            ("65536x100 fp32", torch.randn(65536, 100, device="cuda", generator=g))]


def each_case(seed, timings):
    """One line per case of :func:`cases`: torch.sort's time, then the strings ``timings(x)`` gives."""
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
    for name, xc in cases(torch.Generator(device="cuda").manual_seed(seed)):
        tt = min(bench_ms(lambda: torch.sort(xc, dim=-1)) for _ in range(3))
        print(" | ".join([f"{name}: torch {tt:.4f}"] + timings(xc)), flush=True)


def small_bucket() -> dict:
    return policy.select("segmented_sort", torch.device("cuda"), "small").as_dict()


def decode():
    base = {**small_bucket(), "TILE_SORT": "bitonic", "NETWORK": "own"}

    def timings(xc):
        line = []
        for split, tile, warps, dec in ((1, 1024, 4, 0), (4, 2048, 4, 0), (4, 2048, 4, 1), (4, 1024, 2, 0),
                                        (4, 1024, 2, 1), (8, 2048, 4, 1)):
            ok, t = run(xc, {**base, "TILE_SPLIT": split, "TILE_ITEMS": tile, "num_warps": warps, "DECODE_KEYS": dec})
            line.append(f"{split}/{tile}/{warps}w/dec{dec} ok={ok} {t:.4f}")
        return line

    each_case(2, timings)


def masks():
    small = small_bucket()

    def timings(xc):
        line = []
        for rep in range(2):
            for rows_only in (False, True):
                ss.ROW_MASKS_ONLY = rows_only
                ok, t = run(xc, small)
                line.append(f"{'row masks' if rows_only else 'item masks'} ok={ok} {t:.4f}")
        return line

    each_case(3, timings)
    ss.ROW_MASKS_ONLY = True


def ragged():
    sys.path.insert(0, "bench")
    from bench_segmented import _power_law_offsets
    from _timing import kernel_breakdown
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
    total, nseg = 1 << 26, 100_000
    offs = torch.as_tensor(_power_law_offsets(nseg, total), device="cuda")
    keys = torch.randn(total, device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
    small = policy.select("segmented_sort", torch.device("cuda"), "small").as_dict()
    before = {**small, "TILE_ITEMS": 1024, "TILE_SPLIT": 1, "DECODE_KEYS": 0}
    ref = None
    for rep in range(3):
        for name, cfg in (("before", before), ("after", small)):
            with policy.override("segmented_sort", cfg, bucket="small"):
                out = ss.segmented_sort(keys, offs)
                ref = out if ref is None else ref
                ok = torch.equal(out, ref)
                t = bench_ms(lambda: ss.segmented_sort(keys, offs))
                kb = kernel_breakdown(lambda: ss.segmented_sort(keys, offs), reps=2) if rep == 0 else []
            top = ", ".join(f"{k[:28]} {us:.0f}" for k, us, _ in sorted(kb, key=lambda e: -e[1])[:5])
            print(f"{name}: ok={ok} {t:.3f} ms  gpu {sum(u for _, u, _ in kb):.0f} us {top}", flush=True)


def half_cases(g):
    r = lambda *shape: torch.randn(*shape, device="cuda", generator=g)   # noqa: E731
    return [("65536x128 fp16", r(65536, 128).half()), ("65536x128 bf16", r(65536, 128).bfloat16()),
            ("65536x128 int16", (r(65536, 128) * 4000).to(torch.int16)),
            ("131072x64 fp16", r(131072, 64).half()), ("65536x100 fp16", r(65536, 100).half()),
            ("262144x32 fp16", r(262144, 32).half())]


def tiles():
    small = small_bucket()

    def timings(xc):
        line = []
        for tile, warps in ((1024, 2), (512, 1), (512, 2), (1024, 1)):
            cfg = {**small, "TILE_ITEMS": tile, "num_warps": warps}
            ok, t = run(xc, cfg)
            with policy.override("segmented_sort", cfg):
                us = gpu_us(lambda: ss.sort_rows(xc))
            line.append(f"{tile}/{warps}w ok={ok} {t:.4f} gpu {us:.1f}")
        return line

    each_case(7, timings)


def minmax():
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
    g = torch.Generator(device="cuda").manual_seed(4)
    if "half" in sys.argv:   # (keys of 16 bits: packed 32-bit words)
        small = policy.select("segmented_sort", torch.device("cuda"), "small").as_dict()
        for name, xc in half_cases(g):
            tt = min(bench_ms(lambda: torch.sort(xc, dim=-1)) for _ in range(3))
            line = [f"{name}: torch {tt:.4f}"]
            for mm in (0, 3, 5, 6, 7):
                ok, t = run(xc, {**small, "MINMAX_DIMS": mm})
                line.append(f"mm{mm} ok={ok} {t:.4f}")
            print(" | ".join(line), flush=True)
        return
    small = policy.select("segmented_sort", torch.device("cuda"), "small").as_dict()
    two = {**small, "TILE_ITEMS": 1024, "num_warps": 2}
    for c, (name, xc) in enumerate(cases(g)):
        tt = min(bench_ms(lambda: torch.sort(xc, dim=-1)) for _ in range(3))
        line = [f"{name}: torch {tt:.4f}"]
        for label, base in (("4w", small), ("2w", two))[:2 if c == 0 else 1]:
            for mm in (0, 2, 3, 4, 5, 7) if c == 0 else (0, 3, 5):
                try:
                    ok, t = run(xc, {**base, "MINMAX_DIMS": mm})
                except Exception as e:   # a config the compiler rejects
                    line.append(f"{label}/mm{mm} {type(e).__name__}")
                    continue
                line.append(f"{label}/mm{mm} ok={ok} {t:.4f}")
        print(" | ".join(line), flush=True)


def minmax_1024():
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
    g = torch.Generator(device="cuda").manual_seed(5)
    x = torch.randn(4096, 1024, device="cuda", generator=g)
    medium = policy.select("segmented_sort", torch.device("cuda"), "medium").as_dict()
    tt = min(bench_ms(lambda: torch.sort(x, dim=-1)) for _ in range(3))
    ok, t = run(x, medium)
    print(f"4096x1024 fp32: torch {tt:.4f} | shipped (block radix) ok={ok} {t:.4f} = {tt / t:.2f}x", flush=True)
    bit = {**medium, "TILE_SORT": "bitonic", "NETWORK": "own"}
    for split in (4, 8):
        for tile, warps in ((2048, 4), (4096, 8)):
            line = []
            for mm in (0, 4):
                try:
                    ok, t = run(x, {**bit, "TILE_SPLIT": split, "TILE_ITEMS": tile, "num_warps": warps,
                                    "MINMAX_DIMS": mm})
                except Exception as e:
                    line.append(f"mm{mm} {type(e).__name__}")
                    continue
                line.append(f"mm{mm} ok={ok} {t:.4f}")
            print(f"  bitonic split {split} tile {tile} warps {warps}: " + " | ".join(line), flush=True)


def ragged_host():
    import time
    sys.path.insert(0, "bench")
    from bench_segmented import _power_law_offsets
    from _timing import kernel_breakdown
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, ss.__file__, flush=True)
    total, nseg = 1 << 26, 100_000
    offs = torch.as_tensor(_power_law_offsets(nseg, total), device="cuda")
    keys = torch.randn(total, device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
    out = ss.segmented_sort(keys, offs)
    # (each segment ascending, and the same multiset of keys)
    seg = torch.repeat_interleave(torch.arange(nseg, device="cuda"), offs.diff())
    ok = bool(((out[1:] >= out[:-1]) | (seg[1:] != seg[:-1])).all()) and torch.equal(
        torch.sort(out)[0], torch.sort(keys)[0])
    for rep in range(3):
        t = bench_ms(lambda: ss.segmented_sort(keys, offs))
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(10):
            ss.segmented_sort(keys, offs)
        host = (time.perf_counter() - t0) / 10 * 1e3
        torch.cuda.synchronize()
        kb = kernel_breakdown(lambda: ss.segmented_sort(keys, offs), reps=2)
        print(f"ok={ok} bench {t:.3f} ms  host per call {host:.3f} ms  gpu {sum(u for _, u, _ in kb) / 1e3:.3f} ms",
              flush=True)
    if "--profile" in sys.argv:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        torch.cuda.synchronize()
        prof.enable()
        for _ in range(5):
            ss.segmented_sort(keys, offs)
        torch.cuda.synchronize()
        prof.disable()
        for key in ("cumulative", "tottime"):
            pstats.Stats(prof).sort_stats(key).print_stats(22)


def main():
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    shipped = policy.select("segmented_sort", torch.device("cuda"), "small").as_dict()
    base = {**shipped, "TILE_SORT": "bitonic", "NETWORK": "own"}
    print("shipped small bucket:", {k: shipped.get(k) for k in ("TILE_ITEMS", "num_warps", "TILE_SPLIT")}, flush=True)
    x = torch.randn(65536, 128, device="cuda", generator=g)
    print(f"torch.sort 65536x128 fp32: {min(bench_ms(lambda: torch.sort(x, dim=-1)) for _ in range(3)):.4f} ms",
          flush=True)
    results = []
    splits = [int(a) for a in sys.argv[1:]] or [1, 2, 4, 8]
    for split in splits:
        for tile in (1024, 2048, 4096):
            for warps in (2, 4, 8):
                cfg = {**base, "TILE_SPLIT": split, "TILE_ITEMS": tile, "num_warps": warps}
                try:
                    ok, t = run(x, cfg)
                except Exception as e:   # a config the compiler rejects
                    print(f"split {split} tile {tile} warps {warps}: {type(e).__name__}: {str(e)[:160]}", flush=True)
                    continue
                results.append((t, split, tile, warps))
                print(f"split {split} tile {tile:4d} warps {warps}: ok={ok} {t:.4f} ms", flush=True)
    results.sort()
    best = [(s, t_, w) for _, s, t_, w in results[:3]]
    plain = sorted(r for r in results if r[1] == 1)[:1]
    best += [(s, t_, w) for _, s, t_, w in plain if (s, t_, w) not in best]
    cases = [("65536x128 int32", (torch.rand(65536, 128, device="cuda", generator=g) * 2**31).to(torch.int32)),
             ("65536x128 fp16", torch.randn(65536, 128, device="cuda", generator=g).half()),
             ("131072x64 fp32", torch.randn(131072, 64, device="cuda", generator=g)),
             ("262144x32 fp32", torch.randn(262144, 32, device="cuda", generator=g)),
             ("65536x100 fp32", torch.randn(65536, 100, device="cuda", generator=g))]
    for name, xc in cases:
        tt = min(bench_ms(lambda: torch.sort(xc, dim=-1)) for _ in range(3))
        line = [f"{name}: torch {tt:.4f}"]
        for split, tile, warps in [(shipped.get("TILE_SPLIT", 1), shipped["TILE_ITEMS"], shipped["num_warps"])] + best:
            ok, t = run(xc, {**base, "TILE_SPLIT": split, "TILE_ITEMS": tile, "num_warps": warps})
            line.append(f"split {split}/{tile}/{warps}w ok={ok} {t:.4f}")
        print(" | ".join(line), flush=True)


if __name__ == "__main__":
    {"decode": decode, "ragged": ragged, "masks": masks, "minmax": minmax, "tiles": tiles, "minmax1024": minmax_1024, "ragged-host": ragged_host}.get(sys.argv[1] if sys.argv[1:] else "", main)()
