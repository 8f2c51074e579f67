"""Sorts below 2^22 keys (the radix sort's ``small`` policy bucket) on the GPU: where their GPU time
goes, and what the upfront histogram's program count and the small bucket's tile shape do to it.

``--hist``: the upfront histogram kernel alone (uint32 keys, 4 places of 8 bits) per input size,
tile shape (warps x keys per thread) and program count; counts checked against torch's bincount of
each place's digits. ``--large``: the same at 2^22-2^26 and 2^28 keys (with ``--sorts``: whole sorts of 2^22-2^28
keys under the default bucket's histogram shapes). ``--sorts``: whole sorts (keys-only int32, ``ops.sort`` of fp32 with its
int64 positions) per size under overrides of the small bucket (``WARPS`` x ``ITEMS``, the histogram's
warps, programs and tiles per program); every result checked against torch.sort first; GPU time
per call (profiler) split into histogram, digit offsets and passes; interleaved rounds.

    PYTHONPATH=. python bench/probes/small_sort_tiles_probe.py [--hist] [--sorts] [--large] [--rounds R]
"""
import argparse
import sys

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: F401,E402
from tritoncub import policy  # noqa: E402
from tritoncub._utils import cdiv, num_sms  # noqa: E402
from tritoncub.device import radix_sort as RS  # noqa: E402
from _timing import bench_ms, host_idle_us, kernel_breakdown  # noqa: E402

ops = torch.ops.tritoncub
SIZES = [1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21]
#: (whole sorts: also sizes whose tiles are not a multiple of the programs')
SORT_SIZES = [1 << 16, 100_003, 1 << 18, 1 << 19, 1 << 20, 1_500_007, 1 << 21]


def _hist_ref(k64):
    return torch.cat([torch.bincount((k64 >> (8 * p)) & 255, minlength=256) for p in range(4)])


def hist_probe(rounds, sizes=SIZES):
    dev = torch.device("cuda")
    sms = num_sms(dev)
    print(f"== upfront histogram alone, GPU us per call ({sms} SMs)", flush=True)
    g = torch.Generator(device="cuda").manual_seed(3)
    for n in sizes:
        k64 = torch.randint(0, 1 << 32, (n,), device="cuda", generator=g, dtype=torch.int64)
        k = k64.to(torch.uint32)
        ref = _hist_ref(k64)
        hist = torch.zeros(4 * 256, device="cuda", dtype=torch.int64)
        for warps, items in ((8, 8), (16, 8), (4, 8), (8, 16)):
            tiles = cdiv(n, warps * items * 32)
            progs = sorted({min(tiles, p) for p in ((tiles, sms, sms // 2, sms // 4, 16, 8, 4) if n <= SIZES[-1]
                                                    else (4 * sms, 2 * sms, sms, sms // 2, sms // 4))}, reverse=True)
            res = []
            for _ in range(rounds):
                for p in progs:
                    def call(p=p):
                        hist.zero_()
                        RS.launch(RS._histogram_gluon_kernel, (p, 1), k, hist, n, tiles, 0, 32, NUM_PLACES=4,
                                  RADIX_BITS=8, DESCENDING=False, WARPS=warps, ITEMS=items,
                                  SMEM_ROWS=1 << (4 * warps - 1).bit_length(), COUNT_SPECIAL=False,
                                  PREFETCH=True, num_warps=warps, PDL=0)
                    call()
                    torch.cuda.synchronize()
                    assert torch.equal(hist, ref), (n, warps, items, p)
                    us = sum(t for name, t, _ in kernel_breakdown(call, 20) if "_histogram" in name)
                    res.append((p, us))
            line = "  ".join(f"{p}:{min(u for q, u in res if q == p):.1f}-{max(u for q, u in res if q == p):.1f}"
                             for p in progs)
            print(f"n=2^{n.bit_length() - 1} {warps}x{items} ({tiles} tiles)  programs:us  {line}", flush=True)


def _variants(bucket):
    """(label, the bucket's values): the shipped policy and the histogram's shapes around it (small
    bucket: also the one before the histogram's program count for small inputs was a policy value)."""
    base = policy.select("radix_sort", torch.device("cuda"), bucket).as_dict()
    keys = ("HIST_WARPS", "HIST_ITEMS", "HIST_PER_SM", "HIST_SMS_PER_PROGRAM", "HIST_MIN_TILES")
    shipped = ("shipped " + ",".join(f"{k[5:]}={base.get(k)}" for k in keys), base)
    if bucket == "default":
        return [shipped, ("hist 8x8 1/SM", {**base, "HIST_WARPS": 8, "HIST_ITEMS": 8, "HIST_PER_SM": 1}),
                ("hist 16x8 1/SM", {**base, "HIST_WARPS": 16, "HIST_ITEMS": 8, "HIST_PER_SM": 1})]
    hist48 = {"HIST_WARPS": 4, "HIST_ITEMS": 8, "HIST_SMS_PER_PROGRAM": 2, "HIST_MIN_TILES": 4}
    return [shipped,
            ("before (8x8, 1/SM)", {**base, "HIST_WARPS": 0, "HIST_ITEMS": 8, "HIST_SMS_PER_PROGRAM": 1,
                                    "HIST_MIN_TILES": 1}),
            ("hist 4x8 /2 SMs", {**base, **hist48}),
            ("hist 4x8 1/SM", {**base, **hist48, "HIST_SMS_PER_PROGRAM": 1}),
            ("hist 4x8 /2 SMs, min 8", {**base, **hist48, "HIST_MIN_TILES": 8})]


def _split(bd):
    h = sum(t for name, t, _ in bd if "_histogram" in name)
    d = sum(t for name, t, _ in bd if "_digit_offsets" in name)
    p = sum(t for name, t, _ in bd if "_onesweep" in name)
    return h, d, p, sum(t for _, t, _ in bd)


def sorts_probe(rounds, sizes=SORT_SIZES, bucket="small"):
    print("== whole sorts, GPU us per call: total (histogram / digit offsets / passes), host time of a call with the "
          "GPU idle (us, per round), do_bench (us, per round)", flush=True)
    g = torch.Generator(device="cuda").manual_seed(4)
    variants = _variants(bucket)
    for n in sizes:
        ki = torch.randint(-2**31, 2**31, (n,), device="cuda", generator=g, dtype=torch.int64).to(torch.int32)
        kf = torch.randn(n, device="cuda", generator=g)
        ref_i = torch.sort(ki).values
        ref_fv, ref_fp = torch.sort(kf, stable=True)
        cases = {"keys int32": (lambda: RS.sort_keys(ki)), "sort fp32 +positions": (lambda: ops.sort(kf, -1, False, True))}
        res = {}
        for _ in range(rounds):
            for label, forced in variants:
                with policy.override("radix_sort", forced, bucket=bucket):
                    got = RS.sort_keys(ki)
                    assert torch.equal(got, ref_i), (label, n)
                    v, p = ops.sort(kf, -1, False, True)
                    assert torch.equal(v, ref_fv) and torch.equal(p, ref_fp), (label, n)
                    for case, fn in cases.items():
                        res.setdefault((case, label), []).append(
                            _split(kernel_breakdown(fn, 20)) + (host_idle_us(fn, 50), bench_ms(fn) * 1e3))
        for case in cases:
            print(f"n={n} {case}", flush=True)
            for label, _ in variants:
                r = res[(case, label)]
                tot = [x[3] for x in r]
                h, d, p = (min(x[j] for x in r) for j in range(3))
                host = "-".join(f"{x[4]:.0f}" for x in r)
                db = "-".join(f"{x[5]:.1f}" for x in r)
                print(f"    {label:24s} {min(tot):7.1f}-{max(tot):7.1f}  ({h:.1f} / {d:.1f} / {p:.1f})  host(idle) {host}"
                      f"  do_bench {db}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hist", action="store_true")
    ap.add_argument("--sorts", action="store_true")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--large", action="store_true", help="--hist at 2^22-2^26 and 2^28 keys (the default bucket)")
    a = ap.parse_args()
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    if a.hist or not a.sorts:
        hist_probe(a.rounds, [1 << 22, 1 << 23, 1 << 24, 1 << 25, 1 << 26, 1 << 28] if a.large else SIZES)
    if a.sorts or not a.hist:
        if a.large:
            sorts_probe(a.rounds, [1 << 22, 1 << 24, 1 << 26, 1 << 28], "default")
        else:
            sorts_probe(a.rounds)


if __name__ == "__main__":
    main()
