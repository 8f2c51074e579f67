"""Built-in TuneSpecs for ops whose modules define no ``AUTOTUNE`` (see ``autotune/__init__.py``).

Each spec imports its op lazily and is skipped when the op's module, function or policy name is not
there, so this file never breaks ``python -m autotune`` while the ops change. An op module's own
``AUTOTUNE`` replaces the spec here.

Problems are sized for a current data-centre GPU (2^26 items: far past the L2 cache, at memory speed;
plus a 2^20 launch-bound size where one bucket covers both). ``quick_problems`` are tiny versions
for a smoke run (``--quick``) and for the CPU tests under the Triton interpreter. Float sums are
checked against a float64 reference with a tolerance scaled by the sum of magnitudes (the order of
additions differs between configs); integer results, extremes, indices, counts, selections and
sorts must be exact.
"""
from __future__ import annotations

import importlib

import torch

from .spec import Problem, TuneSpec


#: items of the bandwidth-bound problems: 256 MiB of fp32, several times the L2 cache, ~0.1 ms
BIG = 1 << 26


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def _randn(n, dtype, device, seed):
    return torch.randn(n, generator=_gen(seed)).to(dtype).to(device)


def _randint(n, lo, hi, dtype, device, seed):
    return torch.randint(lo, hi, (n,), generator=_gen(seed)).to(dtype).to(device)


def _p(label, make, nbytes) -> Problem:
    return Problem(label, make, bytes_moved=int(nbytes))


def _n(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def _float_sum_check(rel: float):
    def check(out, ref):
        exact, scale = ref
        err = (out.double() - exact.to(out.device)).abs()
        scale = scale.to(out.device)
        tol = rel * scale + 1e-6
        if not bool((err <= tol).all()):
            raise AssertionError(f"max error {float(err.max()):.3g} > tolerance {float(tol.max() if tol.dim() else tol):.3g}")
    return check


def _module(name):
    try:
        return importlib.import_module(f"tritoncub.device.{name}")
    except Exception:
        return None


def _registered(op: str) -> bool:
    from tritoncub import policy
    return op in policy.registered_ops()


# ----------------------------------------------------------------------------------------------
def reduce_spec():
    m = _module("reduce")
    if m is None or not all(hasattr(m, f) for f in ("sum", "max", "argmax")) or not _registered("reduce"):
        return None

    def sum_problem(dtype, n):
        if dtype.is_floating_point:
            make = lambda dev, seed: ("sum", _randn(n, dtype, dev, seed))  # noqa: E731
        else:
            make = lambda dev, seed: ("sum", _randint(n, -1000, 1000, dtype, dev, seed))  # noqa: E731
        return _p(f"sum {str(dtype)[6:]} n={_n(n)}", make, n * dtype.itemsize)

    def arg_problem(kind, n, dtype=torch.float32):
        if dtype.is_floating_point:
            make = lambda dev, seed: (kind, _randn(n, dtype, dev, seed))  # noqa: E731
        else:
            make = lambda dev, seed: (kind, _randint(n, -10**6, 10**6, dtype, dev, seed))  # noqa: E731
        return _p(f"{kind} {str(dtype)[6:]} n={_n(n)}", make, n * dtype.itemsize)

    def call(p):
        kind, x = p
        return {"sum": m.sum, "max": m.max, "argmax": m.argmax}[kind](x)

    def reference(p):
        kind, x = p
        if kind == "sum":
            if x.dtype.is_floating_point:
                return ("float", x.double().sum(), x.double().abs().sum())
            return ("exact", x.sum())
        if kind == "max":
            return ("exact", torch.amax(x))
        i = torch.argmax(x)
        return ("exact", (x[i], i))

    def check(out, ref):
        from .spec import compare
        if ref[0] == "float":
            rel = 1e-5 if out.dtype == torch.float32 else 1e-2
            _float_sum_check(rel)(out, (ref[1], ref[2]))
        else:
            compare(out, ref[1])

    # 2^28 items (1 GiB of fp32): at 2^26 the tool's winners were within 2% of each other and measured
    # up to 5% slower than the fallback at 2^28, the size the reductions are judged at
    big, small = 1 << 28, 1 << 20
    return TuneSpec(
        op="reduce",
        problems={"sum_f4": [sum_problem(torch.float32, big)],
                  "sum_i4": [sum_problem(torch.int32, big)],
                  "sum_f4_small": [sum_problem(torch.float32, small)],
                  "sum_f2": [sum_problem(torch.bfloat16, big)],
                  "minmax_f4": [arg_problem("max", big)],
                  "arg_f4": [arg_problem("argmax", big)],
                  # (other item sizes and integer extremes: without a problem of their own, their
                  # buckets keep the built-in fallback on a newly tuned GPU)
                  "sum_f8": [sum_problem(torch.float64, big // 2)],
                  "sum_i8": [sum_problem(torch.int64, big // 2)],
                  "sum_i1": [sum_problem(torch.int8, big)],
                  "minmax_i4": [arg_problem("max", big, torch.int32)],
                  "arg_i4": [arg_problem("argmax", big, torch.int32)]},
        quick_problems={"sum_f4_small": [sum_problem(torch.float32, 5000)],
                        "sum_i4_small": [sum_problem(torch.int32, 3000)],
                        "arg_f4_small": [arg_problem("argmax", 3000)]},
        call=call, reference=reference, check=check,
        doc="sum / max / argmax over a whole tensor; buckets = reduction kind and item size")


def scan_spec():
    m = _module("scan")
    if m is None or not hasattr(m, "inclusive_sum") or not _registered("scan"):
        return None

    def make_f(n):
        return lambda dev, seed: _randn(n, torch.float32, dev, seed)

    def make_i(n):
        return lambda dev, seed: _randint(n, -1000, 1000, torch.int32, dev, seed)

    def reference(x):
        if x.dtype.is_floating_point:
            return ("float", torch.cumsum(x.double(), 0), torch.cumsum(x.double().abs(), 0))
        return ("exact", torch.cumsum(x, 0))

    def check(out, ref):
        from .spec import compare
        if ref[0] == "float":
            if out.dtype != torch.float32 or out.shape != ref[1].shape:
                raise AssertionError(f"got {out.dtype} {tuple(out.shape)}")
            _float_sum_check(1e-5)(out, (ref[1], ref[2]))
        else:
            compare(out, ref[1])

    big = BIG
    return TuneSpec(
        op="scan",
        problems={"sum": [_p(f"inclusive_sum float32 n={_n(big)}", make_f(big), 8 * big)],
                  "sum64": [_p(f"inclusive_sum int32->int64 n={_n(big)}", make_i(big), 12 * big)]},
        quick_problems={"sum": [_p("inclusive_sum float32 n=5000", make_f(5000), 40000)],
                        "sum64": [_p("inclusive_sum int32->int64 n=5000", make_i(5000), 60000)]},
        call=lambda x: m.inclusive_sum(x, 0),
        reference=reference, check=check,
        doc="single-pass inclusive sum of one long row; buckets: sum (32-bit accumulators), sum64 (64-bit)")


def histogram_spec():
    m = _module("histogram")
    if m is None or not hasattr(m, "histc") or not _registered("histogram"):
        return None

    def prob(bins, n):
        # samples at bin centres: every implementation must agree exactly
        def make(dev, seed):
            return (_randint(n, 0, bins, torch.float32, dev, seed) + 0.5, bins)
        return _p(f"histc {bins} bins float32 n={_n(n)}", make, 4 * n)

    return TuneSpec(
        op="histogram",
        problems={"default": [prob(256, BIG), prob(4096, BIG)]},
        quick_problems={"default": [prob(16, 3000)]},
        call=lambda p: m.histc(p[0], p[1], 0.0, float(p[1])),
        reference=lambda p: torch.histc(p[0], p[1], 0.0, float(p[1])),
        doc="histc over uniform samples; 256 bins (private counters) and 4096 bins")


def select_spec():
    m = _module("select")
    rle = _module("run_length_encode")
    if m is None or not hasattr(m, "masked_select") or not _registered("select"):
        return None

    def prob(n, density, kind="masked"):
        # masked: torch.masked_select (bucket 'two_pass'); flagged: the device select (bucket 'default')
        def make(dev, seed):
            g = _gen(seed)
            return (kind, torch.randn(n, generator=g).to(dev), (torch.rand(n, generator=g) < density).to(dev))
        name = "masked_select" if kind == "masked" else "select.flagged"
        return _p(f"{name} float32 n={_n(n)} {int(density * 100)}%", make, n * 5 + int(n * density) * 4)

    def runs_prob(n, avg_run, kind="encode"):
        # keys read once (the heads pass reads a neighbour too), one or two outputs written per run
        name = "run_length_encode" if kind == "encode" else "non_trivial_runs"
        return _p(f"{name} int32 n={_n(n)} runs~{avg_run}",
                  lambda dev, seed: (kind, _sorted_runs(n, avg_run, dev, seed), None), n * 4 + (n // avg_run) * 8)

    def call(p):
        if p[0] == "masked":
            return m.masked_select(p[1], p[2])
        if p[0] == "flagged":
            return m.flagged(p[1], p[2])
        if p[0] == "encode":
            return rle.encode(p[1])
        return rle.non_trivial_runs(p[1])

    def reference(p):
        if p[0] in ("masked", "flagged"):
            return torch.masked_select(p[1], p[2])
        vals, counts = torch.unique_consecutive(p[1], return_counts=True)
        if p[0] == "encode":
            return vals, counts
        starts = torch.cumsum(counts, 0) - counts
        return starts[counts > 1], counts[counts > 1]

    def check(out, ref):
        from .spec import compare
        if isinstance(out, torch.Tensor):
            compare(out, ref)
            return
        *outs, num = out
        r = int(num)
        if len(outs) == 1:   # (select.flagged: the items)
            if r != ref.numel():
                raise AssertionError(f"count {r} != {ref.numel()}")
            compare(outs[0][:r], ref, path="items")
            return
        if r != ref[0].numel():
            raise AssertionError(f"count {r} != {ref[0].numel()}")
        compare(outs[0][:r].to(ref[0].dtype), ref[0], path="values or offsets")
        compare(outs[1][:r].to(ref[1].dtype), ref[1], path="lengths")

    problems = {"two_pass": [prob(BIG, 0.5), prob(BIG, 0.01)], "default": [prob(BIG, 0.5, "flagged")]}
    quick = {"two_pass": [prob(5000, 0.5)], "default": [prob(5000, 0.5, "flagged")]}
    if rle is not None and hasattr(rle, "encode"):
        problems["heads"] = [runs_prob(BIG, 64)]
        quick["heads"] = [runs_prob(3000, 8)]
        # (runs of ~4 items: the single pass and the bitmask form level; ~64: the benchmark's case, where the
        # bitmask form took half the time on an H200, bench/probes/SELECT_NOTES.md round 22)
        problems["runs"] = [runs_prob(BIG, 4, "non_trivial"), runs_prob(BIG, 64, "non_trivial")]
        quick["runs"] = [runs_prob(3000, 4, "non_trivial")]
    return TuneSpec(
        op="select",
        problems=problems,
        quick_problems=quick,
        call=call, reference=reference, check=check,
        doc="the compaction engine: masked_select at 50% and 1% ('two_pass'), the device select ('default'), "
            "run-length encoding ('heads') and non-trivial runs ('runs')")


def segmented_sort_spec():
    m = _module("segmented_sort")
    if m is None or not hasattr(m, "sort_rows") or not _registered("segmented_sort"):
        return None

    def prob(rows, cols):
        return _p(f"sort_rows float32 {rows}x{cols}", lambda dev, seed: _randn(rows * cols, torch.float32, dev, seed)
                  .reshape(rows, cols), rows * cols * (4 + 4 + 8))

    def reference(x):
        v, i = torch.sort(x, dim=-1, stable=True)
        return (v, i)

    return TuneSpec(
        op="segmented_sort",
        # two row lengths per bucket where the block radix sort (TILE_SORT, RADIX_MIN_BLOCK) takes over
        # (128 vs 256 keys); "large" also holds the rows longer than MAX_BLOCK: rows of 8192 keys (the
        # block radix sort up to RADIX_MAX_BLOCK, or a long path) and a long-row problem of more than 256
        # rows (fewer go to radix_sort's one-problem path, which no knob here changes) times LONG_PATH and
        # MERGE_TILE
        problems={"small": [prob(65536, 128), prob(16384, 256)], "medium": [prob(8192, 512), prob(4096, 1024)],
                  "large": [prob(1024, 4096), prob(512, 8192), prob(512, 1 << 16)]},
        quick_problems={"small": [prob(4, 100)]},
        call=lambda x: tuple(m.sort_rows(x)),
        reference=reference,
        doc="batched row sort (values + int64 indices); buckets by row length")


def radix_sort_spec():
    m = _module("radix_sort")
    if m is None or not hasattr(m, "sort_keys") or not _registered("radix_sort"):
        return None

    def prob(dtype, n, op="sort_keys"):
        # inputs: (keys, op); "sort" is torch's API (values and int64 positions: the passes then move
        # packed key-position words for 32-bit keys, as 64-bit keys do, and carry the positions as values
        # for 64-bit keys), so the wide passes' and the value exchange's policy values are timed too
        if dtype == torch.float32:
            make = lambda dev, seed: (_randn(n, dtype, dev, seed), op)  # noqa: E731
        else:
            lo = -2**63 if dtype == torch.int64 else -2**31
            make = lambda dev, seed: (_randint(n, lo, -lo - 1, dtype, dev, seed), op)  # noqa: E731
        moved = 2 * n * dtype.itemsize + (8 * n if op == "sort" else 0)
        return _p(f"{op} {str(dtype)[6:]} n={_n(n)}", make, moved)

    def call(inputs):
        x, op = inputs
        return m.sort_keys(x) if op == "sort_keys" else m.sort(x)

    def reference(inputs):
        x, op = inputs
        r = torch.sort(x, stable=True)
        return r.values if op == "sort_keys" else (r.values, r.indices)

    return TuneSpec(
        op="radix_sort",
        problems={"default": [prob(torch.int32, BIG), prob(torch.float32, BIG), prob(torch.int64, BIG // 4),
                              prob(torch.float32, BIG, "sort"), prob(torch.int64, BIG // 4, "sort")],
                  # (sorts below 2^22 keys ask for the "small" bucket: its own tile and read-back values)
                  "small": [prob(torch.int32, 1 << 20), prob(torch.float32, 1 << 20, "sort"),
                            prob(torch.int64, 1 << 20, "sort")]},
        quick_problems={"default": [prob(torch.int32, 3000)]},
        call=call,
        reference=reference,
        doc="onesweep sort of random keys: keys-only 32- and 64-bit, and torch's sort (values + positions) of "
            "float32 keys and of int64 keys (whose passes carry the positions as values)")


def topk_spec():
    m = _module("topk")
    if m is None or not hasattr(m, "topk") or not _registered("topk"):
        return None

    def prob(rows, cols, k):
        return _p(f"topk k={k} float32 {rows}x{cols}",
                  lambda dev, seed: (_randn(rows * cols, torch.float32, dev, seed).reshape(rows, cols), k),
                  rows * cols * 4 + rows * k * 12)

    def check(out, ref):
        from .spec import compare
        (v, i), (x, rv) = out, ref
        compare(v, rv, path="values")                         # equal values (sorted, largest first)
        if i.dtype != torch.int64:
            raise AssertionError(f"indices dtype {i.dtype}")
        compare(torch.gather(x, -1, i), rv, path="x[indices]")  # indices point at those values

    return TuneSpec(
        op="topk",
        # (rows of 2048: ROW_MAX_BLOCK decides between the rows' tile path and the long path there)
        problems={"rows": [prob(65536, 128, 8), prob(2048, 2048, 16)],
                  "long": [prob(16, 1 << 20, 8), prob(1, 1 << 26, 100), prob(64, 128256, 50)]},
        quick_problems={"rows": [prob(8, 64, 4)]},
        call=lambda p: tuple(m.topk(p[0], p[1])),
        reference=lambda p: (p[0], torch.topk(p[0], p[1]).values),
        check=check,
        doc="top-8 of many short rows; top-8 of a few long rows, top-100 of 2^26 items and top-50 of a batch of "
            "vocabulary logits (64 x 128256)")


def segmented_reduce_spec():
    m = _module("segmented_reduce")
    if m is None or not hasattr(m, "reduce_rows") or not _registered("segmented_reduce"):
        return None

    def prob(rows, cols):
        return _p(f"reduce_rows sum float32 {rows}x{cols}",
                  lambda dev, seed: _randn(rows * cols, torch.float32, dev, seed).reshape(rows, cols),
                  rows * cols * 4 + rows * 4)

    def reference(x):
        return (x.double().sum(-1), x.double().abs().sum(-1))

    return TuneSpec(
        op="segmented_reduce",
        problems={"short": [prob(65536, 128)], "medium": [prob(4096, 1024)], "long": [prob(16, 1 << 22)]},
        quick_problems={"short": [prob(8, 100)]},
        call=lambda x: m.reduce_rows(x, "sum"),
        reference=reference, check=_float_sum_check(1e-5),
        doc="row sums: many short rows, medium rows, a few very long rows")


def _sorted_runs(n, avg_run, device, seed):
    """Sorted int32 keys in runs of random length (geometric, mean ``avg_run``), distinct per run."""
    g = _gen(seed)
    heads = torch.rand(n, generator=g) < 1.0 / avg_run
    heads[0] = True
    steps = torch.randint(1, 16, (n,), generator=g, dtype=torch.int32) * heads
    keys = torch.cumsum(steps, 0, dtype=torch.int32) - (1 << 30)  # negative keys too; < 2^31 for n <= 2^26
    return keys.to(device)


def reduce_by_key_spec():
    m = _module("reduce_by_key")
    if m is None or not hasattr(m, "reduce_by_key") or not _registered("reduce_by_key"):
        return None

    def prob(n, avg_run):
        def make(dev, seed):
            return (_sorted_runs(n, avg_run, dev, seed), _randn(n, torch.float32, dev, seed + 1))
        runs = n // avg_run
        return _p(f"reduce_by_key sum int32->float32 n={_n(n)} runs~{_n(runs)}", make, 8 * n + 8 * runs)

    def reference(p):
        keys, vals = p
        uniq, counts = torch.unique_consecutive(keys, return_counts=True)
        seg = torch.repeat_interleave(torch.arange(uniq.numel(), device=keys.device), counts)
        exact = torch.zeros(uniq.numel(), dtype=torch.float64, device=keys.device).index_add_(0, seg, vals.double())
        scale = torch.zeros_like(exact).index_add_(0, seg, vals.double().abs())
        return (uniq, exact, scale)

    sums = _float_sum_check(1e-5)

    def check(out, ref):
        from .spec import compare
        out_k, out_v, num = out
        uniq, exact, scale = ref
        r = int(num)
        if r != uniq.numel():
            raise AssertionError(f"num_runs {r} != expected {uniq.numel()}")
        if out_v.dtype != torch.float32 or out_k.dtype != uniq.dtype:
            raise AssertionError(f"got keys {out_k.dtype}, aggregates {out_v.dtype}")
        compare(out_k[:r], uniq, path="unique_keys")
        sums(out_v[:r], (exact, scale))

    return TuneSpec(
        op="reduce_by_key",
        problems={"default": [prob(BIG, 64), prob(BIG, 4)]},
        quick_problems={"default": [prob(3000, 8)]},
        call=lambda p: tuple(m.reduce_by_key(p[0], p[1], "sum")),
        reference=reference, check=check,
        doc="sums of float32 values per run of sorted int32 keys; runs of 64 items on average, and of 4")


def adjacent_difference_spec():
    m = _module("adjacent_difference")
    if m is None or not hasattr(m, "subtract_left") or not _registered("adjacent_difference"):
        return None

    def prob(kind, dtype, n):
        if dtype.is_floating_point:
            make = lambda dev, seed: (kind, _randn(n, dtype, dev, seed))  # noqa: E731
        else:
            make = lambda dev, seed: (kind, _randint(n, -(1 << 29), 1 << 29, dtype, dev, seed))  # noqa: E731
        return _p(f"{kind} {str(dtype)[6:]} n={_n(n)}", make, 2 * n * dtype.itemsize)

    def call(inputs):
        kind, x = inputs
        return m.subtract_left(x) if kind == "subtract_left" else m.diff(x)

    def reference(inputs):   # one subtraction per item: exact for floats too
        kind, x = inputs
        d = x[1:] - x[:-1]
        return torch.cat([x[:1], d]) if kind == "subtract_left" else d

    # (both kernels of the op share its policy: subtract_left's and the diff operator's rows kernel)
    return TuneSpec(
        op="adjacent_difference",
        problems={"default": [prob("subtract_left", torch.float32, BIG), prob("subtract_left", torch.int32, BIG),
                              prob("diff", torch.float32, BIG)]},
        quick_problems={"default": [prob("subtract_left", torch.float32, 3000),
                                    prob("subtract_left", torch.int32, 3000), prob("diff", torch.float32, 3000)]},
        call=call, reference=reference, rtol=0.0, atol=0.0,
        doc="subtract_left (out[i] = x[i] - x[i-1]) of one long float32 / int32 row, and torch.diff of one "
            "long float32 row (the rows kernel)")


BUILTIN = (reduce_spec, scan_spec, histogram_spec, select_spec, segmented_sort_spec, radix_sort_spec, topk_spec,
           segmented_reduce_spec, reduce_by_key_spec, adjacent_difference_spec)


def builtin_specs() -> list[TuneSpec]:
    out = []
    for make in BUILTIN:
        try:
            s = make()
        except Exception:  # an op mid-rewrite must not stop the others
            s = None
        if s is not None:
            out.append(s)
    return out
