"""GPU check + timing of the onesweep radix sort (tritoncub.device.radix_sort), one script per call.

python3 bench/probes/onesweep_probe.py [--quick]
Prints failures of the correctness sweep, then a table of timings (ms, Gkeys/s) against torch.sort
and CuPy's sort (Thrust -> CUB radix sort), all measured in this run.
"""
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import torch
import triton

import tritoncub.device.radix_sort as rs
from tritoncub import policy

dev = "cuda"
rows = []
fails = []


def bench(fn):
    return triton.testing.do_bench(fn, warmup=10, rep=100, return_mode="median")


def data(kind, n, dtype):
    g = torch.Generator(device=dev)
    g.manual_seed(n + len(kind))
    if dtype == torch.bool:
        return torch.randint(0, 2, (n,), device=dev, generator=g).bool()
    if dtype.is_floating_point:
        x = torch.randn(n, device=dev, generator=g, dtype=torch.float32).to(dtype)
    else:
        x = torch.randint(-2**62, 2**62, (n,), device=dev, generator=g, dtype=torch.int64)
        if dtype in (torch.int64,):
            pass
        elif dtype == torch.uint64:
            x = x.view(torch.uint64)
        else:
            bits = torch.empty((), dtype=dtype).element_size() * 8
            x = (x & ((1 << bits) - 1))
            if dtype.is_signed:
                x = x - (1 << (bits - 1))
            x = x.to(dtype) if dtype not in (torch.uint16, torch.uint32) else x.to(torch.int64).to(dtype)
    if kind == "equal":
        x = x[:1].expand(n).contiguous()
    elif kind == "sorted":
        x = torch.sort(x).values if dtype not in (torch.uint16, torch.uint32, torch.uint64) else x
    elif kind == "few":
        sel = torch.randint(0, min(7, n), (n,), device=dev, generator=g)
        if dtype in (torch.uint16, torch.uint32, torch.uint64):
            x = (x.view(torch.int64)[sel].view(torch.uint64) if dtype == torch.uint64
                 else x.to(torch.int64)[sel].to(dtype))
        else:
            x = x[sel]
    elif kind == "special" and dtype.is_floating_point:
        sp = torch.tensor([float("nan"), -float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -1.0],
                          device=dev).to(dtype)
        x = sp[torch.randint(0, 8, (n,), device=dev, generator=g)]
    return x


UNSIGNED = (torch.uint16, torch.uint32, torch.uint64)


def as_i64(x):
    # an int64 tensor ordered like the unsigned x
    if x.dtype == torch.uint64:
        return x.view(torch.int64) ^ (-2**63)
    return x.to(torch.int64)


def ref_sort(x, desc):
    if x.dtype in UNSIGNED:
        r = torch.sort(as_i64(x), descending=desc, stable=True)
        return r.values, r.indices
    r = torch.sort(x, descending=desc, stable=True)
    return r.values, r.indices


def same(a, b):
    if a.dtype in UNSIGNED:
        a = as_i64(a)
    if b.dtype in UNSIGNED:
        b = as_i64(b)
    if a.dtype.is_floating_point:
        return torch.equal(a.view(torch.int16 if a.element_size() == 2 else (torch.int32 if a.element_size() == 4 else torch.int64)).masked_fill(torch.isnan(a), 0),
                           b.view(torch.int16 if b.element_size() == 2 else (torch.int32 if b.element_size() == 4 else torch.int64)).masked_fill(torch.isnan(b), 0)) \
            and torch.equal(torch.isnan(a), torch.isnan(b))
    return torch.equal(a, b)


def check(name, cond):
    if not cond:
        fails.append(name)


def correctness(quick):
    dtypes = [torch.int32, torch.float32, torch.uint32, torch.int64, torch.float16, torch.bfloat16, torch.float64,
              torch.uint8, torch.int8, torch.int16, torch.uint16, torch.uint64, torch.bool]
    sizes = [1, 1000, 4097, 100003] if quick else [1, 2, 1000, 4095, 4097, 100003, (1 << 20) + 7]
    count = 0
    for dt in dtypes:
        for n in sizes:
            for kind in (("random", "special", "few") if quick else ("random", "special", "equal", "few", "sorted")):
                if kind == "special" and not dt.is_floating_point:
                    continue
                x = data(kind, n, dt)
                for desc in (False, True):
                    try:
                        rv, ri = ref_sort(x, desc)
                        k = rs.sort_keys(x, desc)
                        check(f"sort_keys {dt} n={n} {kind} desc={desc}", same(k, rv))
                        v, i = rs.sort(x, descending=desc)
                        check(f"sort {dt} n={n} {kind} desc={desc} values", same(v, rv))
                        check(f"sort {dt} n={n} {kind} desc={desc} indices", torch.equal(i, ri))
                        count += 1
                    except Exception as e:
                        fails.append(f"{dt} n={n} {kind} desc={desc}: {type(e).__name__} {str(e)[:200]}")
    # pairs with float payload, bit ranges
    x = data("random", 300001, torch.int32)
    vals = torch.randn(x.numel(), device=dev)
    k, v = rs.sort_pairs(x, vals)
    r = torch.sort(x, stable=True)
    check("pairs fp32 payload", torch.equal(k, r.values) and torch.equal(v, vals[r.indices]))
    for b0, b1 in ((0, 16), (8, 24), (3, 17), (0, 1), (5, 5), (20, 32)):
        k = rs.sort_keys(x, False, b0, b1)
        bits = (x.view(torch.int32).to(torch.int64) ^ (1 << 31)) & 0xFFFFFFFF
        sub = (bits >> b0) & ((1 << (b1 - b0)) - 1)
        ref = x[torch.sort(sub, stable=True).indices]
        check(f"bit range {b0},{b1}", torch.equal(k, ref))
    # batched rows
    x = data("few", 64 * 1000, torch.float32).view(64, 1000)
    v, i = rs.sort(x, dim=1, descending=True)
    r = torch.sort(x, dim=1, descending=True, stable=True)
    check("rows 64x1000", torch.equal(v, r.values) and torch.equal(i, r.indices))
    # fast vs portable path
    x = data("random", 50000, torch.float32)
    a = rs.sort(x)
    rs.FORCE_PORTABLE = True
    try:
        b = rs.sort(x)
    finally:
        rs.FORCE_PORTABLE = False
    check("fast == portable", torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]))
    # several configs
    for W, R, mr, win in ((8, 16, 0, 16), (8, 16, 80, 8), (16, 8, 0, 0), (8, 8, 0, 1), (4, 16, 64, 0), (16, 16, 0, 16)):
        with policy.override("radix_sort", {"WARPS": W, "ITEMS": R, "MAXNREG": mr, "WINDOW": win, "num_warps": W}):
            x = data("random", 123457, torch.int32)
            check(f"config {W},{R},{mr},{win}", torch.equal(rs.sort_keys(x), torch.sort(x).values))
            v, i = rs.sort(x)
            check(f"config {W},{R},{mr},{win} sort", torch.equal(i, torch.sort(x, stable=True).indices))
    print(f"correctness: {count} sweeps, {len(fails)} failures")
    for f in fails[:40]:
        print("  FAIL", f)


variants = []
small_variants = []


def write_best_policy():
    """Write the fastest correct variant as the sm_90 policy file under $OUT (for the bench run)."""
    if not variants:
        return
    t, cfg = min(variants, key=lambda v: v[0])
    small_cfg = {**cfg, **min(small_variants, key=lambda v: v[0])[1]} if small_variants else cfg
    out = os.environ.get("OUT")
    if not out:
        return
    full = {**policy.op_policy("radix_sort").fallback, **cfg}
    os.makedirs(os.path.join(out, "pol", "sm_90"), exist_ok=True)
    with open(os.path.join(out, "pol", "sm_90", "radix_sort.json"), "w") as f:
        json.dump({"op": "radix_sort", "target": "sm_90", "device_name": torch.cuda.get_device_name(),
                   "tuned": {"default": full, "small": {**policy.op_policy("radix_sort").fallback, **small_cfg}},
                   "log": {"how": "bench/probes/onesweep_probe.py --variants: fastest correct variant, 2^28 uint32",
                           "ms": {" ".join(f"{k}={v}" for k, v in c.items()): round(tt, 3) for tt, c in variants},
                           "small_ms (sort with indices, 2^20)": {str(c): round(tt, 4) for tt, c in small_variants}}},
                  f, indent=1)
    print("best variant", cfg, f"{t:.3f} ms")


def final_cases(x, t_cub, cub_sort):
    """The issue's bars with the fastest correct variant (the policy the bench would use)."""
    N = x.numel()
    best = min(variants, key=lambda v: v[0])[1] if variants else {}
    sbest = {**best, **(min(small_variants, key=lambda v: v[0])[1] if small_variants else {})}
    with policy.override("radix_sort", best):
        for dt in (torch.int32, torch.float32):
            y = data("random", N, dt)
            t = bench(lambda: rs.sort_keys(y))
            rows.append((f"FINAL sort_keys {str(dt)[6:]} 2^28; cub", t, N / t / 1e6, bench(cub_sort(y))))
            if dt == torch.float32:
                t = bench(lambda: rs.sort(y))
                rows.append((f"FINAL sort (values+indices) fp32 2^28; torch", t, N / t / 1e6, bench(lambda: torch.sort(y))))
            del y
        t = bench(lambda: rs.sort_keys(x, False, 0, 16))
        rows.append(("FINAL sort_keys uint32 2^28 end_bit=16; full-width best", t, N / t / 1e6,
                     min(variants, key=lambda v: v[0])[0] if variants else float("nan")))
        y = data("few", N, torch.int32)
        t = bench(lambda: rs.sort_keys(y))
        rows.append(("FINAL sort_keys int32 2^28 few-unique; cub", t, N / t / 1e6, bench(cub_sort(y))))
        del y
        y = data("random", N, torch.int64)
        t = bench(lambda: rs.sort_keys(y))
        rows.append(("FINAL sort_keys int64 2^28; cub", t, N / t / 1e6, bench(cub_sort(y))))
        vv = torch.arange(N, device=dev)
        t = bench(lambda: rs.sort_pairs(y, vv))
        rows.append(("FINAL sort_pairs int64+int64 2^28; torch.sort", t, N / t / 1e6, bench(lambda: torch.sort(y))))
        del y, vv
        y = data("random", 1 << 24, torch.float32)
        t = bench(lambda: rs.sort(y))
        rows.append(("FINAL sort (values+indices) fp32 2^24; torch", t, (1 << 24) / t / 1e6, bench(lambda: torch.sort(y))))
    with policy.override("radix_sort", sbest):
        y = data("random", 1 << 20, torch.float32)
        t = bench(lambda: rs.sort(y))
        rows.append(("FINAL sort (values+indices) fp32 2^20 (small bucket); torch", t, (1 << 20) / t / 1e6,
                     bench(lambda: torch.sort(y))))


def timing(quick):
    import cupy
    N = 1 << 28
    def cub_sort(x):
        cx = cupy.from_dlpack(x)
        return lambda: cupy.sort(cx)
    for dt in (torch.uint32, torch.int32, torch.float32):
        x = data("random", N, dt)
        t_cub = bench(cub_sort(x))
        if dt == torch.uint32:
            ref_u32 = torch.sort(as_i64(x)).values
        base = {"WARPS": 8, "ITEMS": 16, "MAXNREG": 64, "WINDOW": 0, "num_warps": 8}
        b2 = {**base, "COUNTS_COLUMNS": 1, "RANK_PACK": 4, "EXCHANGE_APART": 1}
        cfgs = [dict(base), {**base, "COUNTS_COLUMNS": 1}, dict(b2), {**b2, "MAXNREG": 80}
                ] if dt == torch.uint32 else []
        # each variant runs in its own process: a broken one cannot poison this one's CUDA context
        import subprocess
        for cfg in cfgs:
            name = " ".join(f"{k}={v}" for k, v in cfg.items() if k not in ("num_warps",))
            try:
                r = subprocess.run([sys.executable, __file__, "--one-variant", json.dumps(cfg)], capture_output=True,
                                   text=True, timeout=60)
                line = [l for l in r.stdout.splitlines() if l.startswith("VARIANT ")]
                ok, t = (line[0].split()[1] == "True", float(line[0].split()[2])) if line else (False, float("nan"))
                if not line:
                    print("variant failed:", name, (r.stdout + r.stderr)[-600:])
            except subprocess.TimeoutExpired:
                ok, t = False, float("nan")
            check(f"variant {cfg}", ok)
            rows.append((f"sort_keys uint32 2^28 {name} ok={ok}", t, N / t / 1e6, t_cub))
            if ok:
                variants.append((t, cfg))
        if dt == torch.uint32:
            for probe, what in (() if "--variants" in sys.argv else ((1, "no look-back"), (2, "no look-back, no scatter"))):
                rs._PROBE = probe
                try:
                    with policy.override("radix_sort", min(variants, key=lambda v: v[0])[1] if variants else {}):
                        t = bench(lambda: rs.sort_keys(x))
                finally:
                    rs._PROBE = 0
                rows.append((f"  timing-only: 4 passes with {what} (wrong output)", t, N / t / 1e6, float("nan")))
            best = min(variants, key=lambda v: v[0])[1] if variants else {}
            xs = data("random", 1 << 20, torch.float32)
            rs_ = torch.sort(xs, stable=True)
            for extra in ({"WINDOW": 0}, {"WINDOW": 8}):
                cfg = {**best, **extra}
                try:
                    with policy.override("radix_sort", cfg):
                        v_, i_ = rs.sort(xs)
                        ok = torch.equal(i_, rs_.indices)
                        t = bench(lambda: rs.sort(xs))
                except Exception as e:
                    ok, t = False, float("nan")
                    print("small variant failed", extra, e)
                rows.append((f"  sort (values+indices) fp32 2^20 {extra} ok={ok}; torch", t, (1 << 20) / t / 1e6,
                             bench(lambda: torch.sort(xs))))
                if ok:
                    small_variants.append((t, extra))
            hist = torch.zeros(5, 256, device=dev, dtype=torch.int64)
            sms = torch.cuda.get_device_properties(0).multi_processor_count
            for hi in (() if "--variants" in sys.argv else (8, 16)):
                tile = 8 * hi * 32
                nt = N // tile
                def runh():
                    rs._histogram_gluon_kernel[(min(nt, sms * 4),)](x, hist, N, nt, 0, 32, NUM_PLACES=4, RADIX_BITS=8,
                                                                    DESCENDING=False, WARPS=8, ITEMS=hi, SMEM_ROWS=32,
                                                                    num_warps=8)
                th = bench(runh)
                rows.append((f"  upfront histogram kernel alone, 4 places, ITEMS={hi}", th, N / th / 1e6, float("nan")))
        if "--variants" in sys.argv:
            final_cases(x, t_cub, cub_sort)
            break
        if dt == torch.uint32:
            t1 = bench(lambda: rs.sort_keys(x, False, 0, 8))
            rows.append(("  sort_keys uint32 2^28 end_bit=8 (hist + 1 pass)", t1, N / t1 / 1e6, float("nan")))
            t16 = bench(lambda: rs.sort_keys(x, False, 0, 16))
            rows.append(("  sort_keys uint32 2^28 end_bit=16", t16, N / t16 / 1e6, float("nan")))
            for kind in ("equal", "sorted", "few"):
                y = (data(kind, N, torch.int32).view(torch.uint32) if kind != "sorted"
                     else torch.sort(x.view(torch.int32)).values.view(torch.uint32))
                t = bench(lambda: rs.sort_keys(y))
                rows.append((f"  sort_keys uint32 2^28 {kind}", t, N / t / 1e6, bench(cub_sort(y))))
            y = x.view(torch.int32).flip(0).contiguous()
            y = torch.sort(y, descending=True).values.view(torch.uint32)
            t = bench(lambda: rs.sort_keys(y))
            rows.append(("  sort_keys uint32 2^28 reversed", t, N / t / 1e6, float("nan")))
        del x
    if "--variants" in sys.argv:
        return
    for dt in (torch.float32, torch.int32):
        for lg in (20, 24, 28):
            x = data("random", 1 << lg, dt)
            t = bench(lambda: rs.sort(x))
            tt = bench(lambda: torch.sort(x))
            rows.append((f"sort (values+indices) {str(dt)[6:]} 2^{lg}; torch.sort in last col", t, (1 << lg) / t / 1e6, tt))
            del x
    x = data("random", N, torch.int64)
    rows.append(("sort_keys int64 2^28", bench(lambda: rs.sort_keys(x)), float("nan"), bench(cub_sort(x))))
    v = torch.arange(N, device=dev)
    rows.append(("sort_pairs int64+int64 2^28; torch.sort in last col", bench(lambda: rs.sort_pairs(x, v)), float("nan"),
                 bench(lambda: torch.sort(x))))
    del x, v


def one_variant(cfg):
    """Child process: check and time one policy variant on 2^28 uint32 keys (prints VARIANT ok ms)."""
    N = 1 << 28
    probe = cfg.pop("_PROBE", 0)
    x = data("random", N, torch.uint32)
    if probe:   # timing-only switch (wrong output by design): time, check nothing
        rs._PROBE = probe
        with policy.override("radix_sort", cfg):
            t = bench(lambda: rs.sort_keys(x))
        print("VARIANT", True, t, flush=True)
        return
    ref = torch.sort(as_i64(x)).values
    small = data("random", (1 << 22) + 77, torch.int32)
    sref = torch.sort(small, stable=True)
    with policy.override("radix_sort", cfg):
        ok = torch.equal(as_i64(rs.sort_keys(x)), ref)
        v, i = rs.sort(small)
        ok = ok and torch.equal(i, sref.indices) and torch.equal(v, sref.values)
        kk, vv = rs.sort_pairs(small, small.to(torch.float64), descending=True)
        r2 = torch.sort(small, descending=True, stable=True)
        ok = ok and torch.equal(kk, r2.values) and torch.equal(vv, small.to(torch.float64)[r2.indices])
        t = bench(lambda: rs.sort_keys(x))
    print("VARIANT", ok, t, flush=True)


def main():
    if "--one-variant" in sys.argv:
        one_variant(json.loads(sys.argv[sys.argv.index("--one-variant") + 1]))
        return
    quick = "--quick" in sys.argv
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    t0 = time.time()
    try:
        timing(quick)
    except Exception:
        traceback.print_exc()
    print(f"timing took {time.time() - t0:.1f}s, failures so far: {fails}")
    write_best_policy()
    t0 = time.time()
    try:
        if "--variants" not in sys.argv:
            correctness(quick)
    except Exception:
        traceback.print_exc()
    print(f"correctness took {time.time() - t0:.1f}s")
    print(f"\n{'case':<72} {'ms':>8} {'Mkeys/s':>9} {'ref ms':>8}")
    for name, t, r, ref in rows:
        print(f"{name:<72} {t:8.3f} {r:9.0f} {ref:8.3f}")
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "onesweep.json"), "w") as f:
            json.dump({"rows": rows, "fails": fails}, f, indent=1)


if __name__ == "__main__":
    main()
