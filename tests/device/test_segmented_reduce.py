"""DeviceSegmentedReduce (tritoncub.device.segmented_reduce) and tritoncub::segment_reduce, against torch."""
import math

import pytest
import torch
import triton
import triton.language as tl

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import segmented_reduce as S
from helpers import (DEVICE, assert_close, assert_equal, assert_sum_close, count_calls, launch_values, make_data,
                     poison_value, unit_roundoff)

GPU = DEVICE == "cuda"


def pol(rows, block, split=0, nw=2, eviction=""):
    return policy.Policy("segmented_reduce", {"ROWS": rows, "BLOCK": block, "SPLIT_CHUNK": split,
                                              "CACHE_MODIFIER": "", "EVICTION": eviction}, nw, 1, "test")


# strategies: many rows per program (short), one row per program looping (medium), split (long);
# the load hints (no effect under the interpreter) are compiled on a GPU
STRATEGIES = {"short": pol(8, 16, eviction="evict_first"), "medium": pol(1, 32), "long": pol(1, 32, split=64),
              "medium_evict_first": pol(1, 64, nw=4, eviction="evict_first")}


def ref_rows(x, op):
    if op == "sum":
        return x.double().sum(1).to(x.dtype) if x.dtype.is_floating_point else x.sum(1)
    if op == "mean":
        return x.double().mean(1).to(x.dtype)
    if op == "min":
        return x.amin(1)
    if op == "max":
        return x.amax(1)
    xr = x.to(torch.uint8) if x.dtype == torch.bool else x
    return (xr.argmin(1) if op == "argmin" else xr.argmax(1))


def check(out, x, op):
    if op in ("sum", "mean") and x.dtype.is_floating_point:
        assert out.dtype == x.dtype
        assert_sum_close(out, x, op)
    else:
        assert_equal(out, ref_rows(x, op))


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("op", ["sum", "min", "max", "argmin", "argmax", "mean"])
@pytest.mark.parametrize("shape", [(1, 1), (9, 100), (3, 257)])
def test_rows(strategy, op, shape):
    x = make_data("special", shape[0] * shape[1], torch.float32).reshape(shape)
    if op == "mean":
        x = torch.nan_to_num(x, posinf=1.0, neginf=-1.0)
    out = S.reduce_rows(x, op, pol=STRATEGIES[strategy])
    if op in ("argmin", "argmax"):
        out = out[1]
    check(out, x, op)


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16,
                                   torch.bfloat16, torch.float64])
@pytest.mark.parametrize("op", ["sum", "max", "argmin"])
def test_rows_dtypes(dtype, op):
    x = make_data("random", 6 * 45, dtype).reshape(6, 45)
    out = S.reduce_rows(x, op, pol=STRATEGIES["medium"])
    if op == "argmin":
        out = out[1]
    if op == "sum" and not dtype.is_floating_point:
        assert out.dtype == torch.int64
    check(out, x, op)


@pytest.mark.parametrize("src,dtype", [(torch.float32, torch.float16), (torch.float32, torch.bfloat16),
                                       (torch.int32, torch.int8), (torch.float64, torch.int32),
                                       (torch.int16, torch.float16)])
def test_sum_dtype_converts_items_first(src, dtype):
    """sum with a narrower ``dtype``: each item converted to it first, as torch.sum(x, dtype=...) (not
    only the total): 1000.3 is 1000.5 in fp16, so the segment [1000.3, -1000] sums to 0.5."""
    base = torch.tensor([1000.3, -1000.0, 200.0, 100.0, -300.0, 70000.7, 2.5, -9.75, 33.0, 4097.0, -4096.0, 1.0])
    x = base.to(src).to(DEVICE)
    offs = torch.tensor([0, 2, 5, 8, 12], device=DEVICE)
    got = S.segmented_reduce(x, offs[:-1], offs[1:], "sum", dtype=dtype)
    ref = torch.stack([torch.sum(x.cpu()[a:b], dtype=dtype) for a, b in zip(offs[:-1].tolist(), offs[1:].tolist())])
    assert_equal(got.cpu(), ref)
    rows = S.reduce_rows(x.view(3, 4), "sum", dtype=dtype)
    assert_equal(rows.cpu(), torch.sum(x.cpu().view(3, 4), dim=1, dtype=dtype))


def test_bool_min_max_of_empty_segments_are_bools():
    """An empty segment's bool min is True (the identity), stored as a real bool (byte 1, not 255)."""
    x = torch.tensor([False, True, True], device=DEVICE)
    offs = torch.tensor([0, 0, 1, 3], device=DEVICE)
    for op, empty in (("min", True), ("max", False)):
        got = S.segmented_reduce(x, offs[:-1], offs[1:], op)
        assert got.dtype == torch.bool
        assert got.view(torch.uint8).cpu().tolist() == [int(empty), 0, 1]


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_arg_rows_of_identity_values(strategy):
    x = torch.tensor([[-math.inf, -math.inf], [math.inf, 1.0], [math.inf, math.inf]], device=DEVICE)
    assert_equal(S.reduce_rows(x, "argmax", pol=STRATEGIES[strategy])[1], x.argmax(1))
    assert_equal(S.reduce_rows(x, "argmin", pol=STRATEGIES[strategy])[1], x.argmin(1))
    i = torch.full((2, 3), torch.iinfo(torch.int32).max, dtype=torch.int32, device=DEVICE)
    assert_equal(S.reduce_rows(i, "argmin", pol=STRATEGIES[strategy])[1], i.argmin(1))


@pytest.mark.parametrize("vec", [2, 4])
@pytest.mark.parametrize("op", ["sum", "max", "argmin"])
def test_vector_windows(vec, op):
    # windows widened to whole vectors (the GPU path): x is a view into a padded buffer, so the
    # widened reads stay in bounds under the interpreter too
    buf = make_data("random", 512 + 16, torch.float32)
    x = buf[4:4 + 500] if vec == 2 else buf[:500]
    offs = torch.tensor([0, 3, 3, 7, 50, 51, 133, 134, 300, 500], device=DEVICE)
    out = S._run(x, offs[:-1], offs[1:], 0, 9, op, uniform=False, mean_len=50, pol=STRATEGIES["medium"], vec=vec)
    for i in range(9):
        seg = x[offs[i]:offs[i + 1]]
        if op == "sum":
            assert_sum_close(out[i:i + 1], seg.reshape(1, -1))
        elif op == "max":
            assert float(out[i]) == (float(seg.max()) if seg.numel() else -math.inf), i
        else:
            assert int(out[1][i]) == (int(seg.argmin()) if seg.numel() else -1), i
    rows = x[:21 * 23].reshape(21, 23)
    r = S._run(rows.reshape(-1), None, None, 23, 21, op, uniform=True, mean_len=23, pol=STRATEGIES["short"], vec=vec)
    if op == "argmin":
        assert_equal(r[1], rows.argmin(1))
    elif op == "max":
        assert_equal(r, rows.amax(1))
    else:
        assert_sum_close(r, rows)


def test_rows_default_policy_and_non_contiguous():
    x = make_data("random", 20 * 30, torch.float32).reshape(20, 30).t()
    assert_sum_close(S.reduce_rows(x, "sum"), x)
    assert_equal(S.reduce_rows(x, "argmax")[1], x.argmax(1))


def random_offsets(num_segments, max_len, empty_every=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    lens = torch.randint(0, max_len + 1, (num_segments,), generator=g)
    lens[::empty_every] = 0
    offs = torch.zeros(num_segments + 1, dtype=torch.int64)
    offs[1:] = torch.cumsum(lens, 0)
    return offs


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("op", ["sum", "min", "max", "mean", "argmax"])
def test_offsets_vs_loop(strategy, op):
    offs = random_offsets(13, 150, seed=3)
    x = make_data("random", int(offs[-1]), torch.float32)
    out = S.segmented_reduce(x, offs.to(DEVICE), None, op, pol=STRATEGIES[strategy])
    for i in range(13):
        seg = x[offs[i]:offs[i + 1]]
        if op == "argmax":
            v, j = out
            if seg.numel() == 0:
                assert int(j[i]) == -1
            else:
                assert int(j[i]) == int(seg.argmax()), i
                assert float(v[i]) == float(seg.max())
            continue
        if op in ("sum", "mean"):
            # fp32 sums of ~150 items of magnitude ~100 (sum|x| ~ 1e4) err by up to ~1e-4 in
            # practice and gamma_(n-1) * sum|x| ~ 0.09 at worst, whatever |sum| is
            assert_sum_close(out[i:i + 1], seg.reshape(1, -1), op)
            continue
        ref = {"min": math.inf, "max": -math.inf}[op] if seg.numel() == 0 else float(
            {"min": seg.min, "max": seg.max}[op]())
        assert float(out[i]) == ref, (i, float(out[i]), ref)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.int16])
@pytest.mark.parametrize("op", ["min", "max", "argmin", "argmax"])
def test_offsets_specials_and_dtypes(strategy, dtype, op):
    # the offsets path (every strategy) on special data: NaN propagates through min/max and argmin/argmax
    # return the first NaN, as torch's do; ±inf, -0.0; integer and bf16 items; empty segments
    offs = random_offsets(13, 150, seed=5)
    x = make_data("special" if dtype.is_floating_point else "few_unique", int(offs[-1]), dtype)
    out = S.segmented_reduce(x, offs.to(DEVICE), None, op, pol=STRATEGIES[strategy])
    xc = x.cpu()
    for i in range(13):
        seg = xc[offs[i]:offs[i + 1]]
        if op in ("argmin", "argmax"):
            v, j = out
            if seg.numel() == 0:
                assert int(j[i]) == -1, i
                continue
            ref_j = int(seg.argmin() if op == "argmin" else seg.argmax())
            assert int(j[i]) == ref_j, (i, int(j[i]), ref_j)
            assert_equal(v[i:i + 1].cpu(), seg[ref_j:ref_j + 1])
        elif seg.numel():
            assert_equal(out[i:i + 1].cpu(), (seg.amin() if op == "min" else seg.amax()).reshape(1))


@pytest.mark.parametrize("op", ["sum", "min", "max", "mean"])
def test_split_covers_skewed_segments(op):
    """The split is sized from the mean segment length; a segment many times longer than the mean still
    has every item reduced (pieces grow past SPLIT_CHUNK), and a short one after it too."""
    lengths = [530, 1, 1, 0, 2, 1, 40]
    offs = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), device=DEVICE)
    x = make_data("random", int(offs[-1]), torch.float32)
    x[517] = 1e6   # the extremes sit past what SPLIT_CHUNK-item pieces would cover
    x[300] = -1e6
    out = S.segmented_reduce(x, offs, None, op, pol=pol(1, 32, split=16))
    for i in range(len(lengths)):
        seg = x[offs[i]:offs[i + 1]]
        if op in ("sum", "mean"):
            if seg.numel():
                assert_sum_close(out[i:i + 1], seg.reshape(1, -1), op)
        else:
            ref = {"min": math.inf, "max": -math.inf}[op] if seg.numel() == 0 else float(
                {"min": seg.min, "max": seg.max}[op]())
            assert float(out[i]) == ref, (i, float(out[i]), ref)


@pytest.mark.parametrize("narrow", [True, False], ids=["int32_pos", "int64_pos"])
@pytest.mark.parametrize("op", ["argmin", "argmax"])
def test_split_arg_ops(op, narrow, monkeypatch):
    """argmin/argmax split into pieces: each segment's first extreme wherever it sits (past what
    SPLIT_CHUNK-item pieces would cover, on a piece boundary, repeated in a later piece), a NaN (the first
    one wins), segments of one value (-inf, +inf: ties with the identity of empty pieces), empty segments
    (index -1), against torch per segment; rows too. Positions in int32 lanes and, forced, int64 ones
    (the rows kernel's launches checked to take the one asked for)."""
    if not narrow:
        monkeypatch.setattr(S, "_NARROW_POS_ITEMS", 0)
    flags = launch_values(monkeypatch, S, "_segmented_reduce_kernel", "NARROW_POS")
    lengths = [530, 1, 0, 2, 97, 40, 64, 33]
    offs = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), device=DEVICE)
    x = make_data("random", int(offs[-1]), torch.float32)
    big = 1e6 if op == "argmax" else -1e6
    x[517] = big
    x[300] = big           # the same extreme earlier: the first wins
    x[531] = big           # (segment 1, one item)
    x[533:630] = float("-inf") if op == "argmax" else float("inf")   # segments 3 (the first item) and 4
    x[634] = float("nan")  # segment 5: the first NaN wins
    x[660] = float("nan")
    x[670:734] = 5.0       # segment 6: all equal
    vals, idx = S.segmented_reduce(x, offs, None, op, pol=pol(1, 32, split=16))
    for i in range(len(lengths)):
        seg = x[offs[i]:offs[i + 1]]
        if seg.numel() == 0:
            assert int(idx[i]) == -1, i
            continue
        j = int((seg.argmax() if op == "argmax" else seg.argmin()).item())
        assert int(idx[i]) == j, (i, int(idx[i]), j)
        assert_equal(vals[i:i + 1].cpu(), seg[j:j + 1].cpu())
    rows = make_data("random", 3 * 1000, torch.float32).reshape(3, 1000)
    rows[1, 999] = big
    rows[2, 64:] = rows[2, 0]   # ties across pieces
    rv, ri = S.reduce_rows(rows, op, pol=pol(1, 32, split=64))
    assert_equal(ri.cpu(), ref_rows(rows, op).cpu())
    assert flags and set(flags) == {narrow}


def test_split_many_pieces():
    """A split into 100 pieces a row (not a power of two): the pass over the partials reads 100 rows of
    one column per segment, in more than one step under the interpreter's tiles."""
    x = make_data("random", 2 * 3200, torch.float32).reshape(2, 3200)
    out = S.reduce_rows(x, "max", pol=pol(1, 32, split=32))
    assert_equal(out, x.amax(1))
    vals, idx = S.reduce_rows(x, "argmin", pol=pol(1, 32, split=32))
    assert_equal(idx, x.argmin(1))


@pytest.mark.parametrize("dtype,ops", [
    (torch.bool, ("argmin", "argmax", "max", "sum")), (torch.int8, ("argmin", "argmax", "min", "sum")),
    (torch.uint8, ("argmax", "min")), (torch.int64, ("argmin", "max", "sum")),
    (torch.float16, ("sum", "mean", "argmax")), (torch.bfloat16, ("sum", "mean", "argmin", "min")),
    (torch.float64, ("sum", "argmax"))], ids=str)
def test_split_dtypes(dtype, ops):
    """Segments split into pieces for items whose accumulator differs from their dtype (bool and small
    integers, fp16/bf16) or is wide: the partials' pass reduces the accumulators and stores the result
    dtype; ragged segments (empty, shorter than a piece, several pieces) against torch per segment."""
    lengths = [150, 0, 7, 64, 65, 1, 200]
    offs = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), device=DEVICE)
    x = make_data("few_unique" if not dtype.is_floating_point else "special", int(offs[-1]), dtype)
    for op in ops:
        res = S.segmented_reduce(x, offs, None, op, pol=pol(1, 16, split=32),
                                 dtype=torch.float32 if op == "mean" else None)
        for i in range(len(lengths)):
            seg = x[offs[i]:offs[i + 1]]
            if op in ("argmin", "argmax"):
                vals, idx = res
                if seg.numel() == 0:
                    assert int(idx[i]) == -1
                    continue
                segr = seg.to(torch.uint8) if dtype == torch.bool else seg
                assert int(idx[i]) == int(getattr(segr, op)()), (op, i)
                assert vals.dtype == dtype
                assert_equal(vals[i:i + 1], seg[int(idx[i]):int(idx[i]) + 1])
            elif op in ("min", "max"):
                assert res.dtype == dtype
                if seg.numel():
                    assert_equal(res[i:i + 1], getattr(seg, "amin" if op == "min" else "amax")().reshape(1))
            elif op == "sum" and not dtype.is_floating_point:
                assert_equal(res[i:i + 1], seg.sum().reshape(1))
            else:
                want = seg.double().sum() / (max(seg.numel(), 1) if op == "mean" else 1)
                got = res[i].double()
                assert res.dtype == (torch.float32 if op == "mean" else dtype)
                if seg.numel() and bool(want.isnan()):
                    assert bool(got.isnan()), (op, i)
                elif seg.numel() and not bool(want.isfinite()):
                    assert float(got) == float(want), (op, i)
                elif seg.numel():
                    tol = 4e-3 * float(seg.double().abs().nan_to_num(0, 0, 0).sum()) + 1e-2 * abs(float(want))
                    assert abs(float(got) - float(want)) <= tol + 1e-6, (op, i, float(got), float(want))


def test_begin_end_offsets_cub_style():
    # gaps between segments, overlapping segments, an inverted (empty) one
    x = make_data("random", 100, torch.int32)
    begins = torch.tensor([0, 10, 50, 40, 90, 7], device=DEVICE)
    ends = torch.tensor([5, 10, 100, 60, 80, 9], device=DEVICE)
    out = S.segmented_reduce(x, begins, ends, "sum")
    ref = torch.stack([x[b:e].sum() if e > b else torch.zeros((), dtype=torch.int64, device=DEVICE)
                       for b, e in zip(begins.tolist(), ends.tolist())])
    assert_equal(out, ref)
    mn = S.segmented_reduce(x, begins.to(torch.int32), ends.to(torch.int32), "min")
    assert int(mn[1]) == torch.iinfo(torch.int32).max   # empty: the identity
    assert int(mn[0]) == int(x[0:5].min())


def test_zero_segments_and_empty_input():
    offs = torch.zeros(1, dtype=torch.int64, device=DEVICE)
    assert S.segmented_reduce(torch.empty(0, device=DEVICE), offs, None, "sum").shape == (0,)
    offs = torch.zeros(4, dtype=torch.int64, device=DEVICE)
    assert_equal(S.segmented_reduce(torch.empty(0, device=DEVICE), offs, None, "sum"),
                 torch.zeros(3, device=DEVICE))


@triton.jit
def max_fn(a, b):
    return tl.maximum(a, b)


def test_user_combine():
    offs = random_offsets(7, 60, seed=5).to(DEVICE)
    x = make_data("random", int(offs[-1]), torch.float32)
    out = S.segmented_reduce(x, offs, None, "user", combine_fn=max_fn, init=-math.inf)
    ref = S.segmented_reduce(x, offs, None, "max")
    assert_equal(out, ref)
    rows = S.reduce_rows(x[:60].reshape(4, 15), "user", combine_fn=max_fn, init=-math.inf, pol=STRATEGIES["short"])
    assert_equal(rows, x[:60].reshape(4, 15).amax(1))


@triton.jit
def add_fn(a, b):
    return a + b


@pytest.mark.parametrize("strategy", ["short", "medium", "long"])
def test_user_combine_init_once(strategy):
    """``init`` is combined once per segment, not once per lane (it need not be an identity); an empty
    segment gives ``init``."""
    lengths = [4, 0, 6, 1, 37, 3]
    offs = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), device=DEVICE)
    x = torch.randint(-1000, 1000, (int(offs[-1]),), dtype=torch.int32, device=DEVICE)
    out = S.segmented_reduce(x, offs, None, "user", combine_fn=add_fn, init=10, pol=STRATEGIES[strategy])
    ref = torch.stack([x[a:b].sum() + 10 for a, b in zip(offs[:-1].tolist(), offs[1:].tolist())])
    assert_equal(out.to(torch.int64), ref.to(torch.int64))
    rows = S.reduce_rows(x[:36].reshape(4, 9), "user", combine_fn=add_fn, init=-3, pol=STRATEGIES[strategy])
    assert_equal(rows.to(torch.int64), x[:36].reshape(4, 9).to(torch.int64).sum(1) - 3)


@triton.jit
def square_fn(v):
    return v.to(tl.float32) * v.to(tl.float32)


@pytest.mark.parametrize("strategy", ["short", "medium"])
def test_user_transform_reduce(strategy):
    """Segmented transform_reduce: ``init (+) t(x_b) (+) ...`` per segment (sum of squares of int16 items
    in an fp32 accumulator; an empty segment gives init), and transform_fn without a user op is refused."""
    lengths = [5, 0, 9, 1, 30]
    offs = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), device=DEVICE)
    x = torch.randint(-300, 300, (int(offs[-1]),), dtype=torch.int16, device=DEVICE)
    out = S.segmented_reduce(x, offs, None, "user", combine_fn=add_fn, init=0.5, transform_fn=square_fn,
                             dtype=torch.float32, pol=STRATEGIES[strategy])
    ref = torch.stack([(x[a:b].double() ** 2).sum() + 0.5 for a, b in zip(offs[:-1].tolist(), offs[1:].tolist())])
    assert out.dtype == torch.float32
    assert_equal(out.double().cpu(), ref.cpu())   # (integers below 2^24: exact in fp32)
    rows = S.reduce_rows(x[:30].view(3, 10), "user", combine_fn=add_fn, init=0.0, transform_fn=square_fn,
                         dtype=torch.float32, pol=STRATEGIES[strategy])
    assert_equal(rows.double().cpu(), (x[:30].view(3, 10).double() ** 2).sum(1).cpu())
    with pytest.raises(ValueError, match="transform_fn goes with op='user'"):
        S.segmented_reduce(x, offs, None, "sum", transform_fn=square_fn)
    with pytest.raises(TypeError, match="segmented_reduce: transform_fn must take 1 positional argument"):
        S.segmented_reduce(x, offs, None, "user", combine_fn=add_fn, init=0.0, transform_fn=add_fn, dtype=torch.float32)
    with pytest.raises(TypeError, match="segmented_reduce: combine_fn must take 2 positional arguments"):
        S.reduce_rows(x[:30].view(3, 10), "user", combine_fn=square_fn, init=0.0)
    # arguments a built-in op has no use for are refused, not ignored
    with pytest.raises(ValueError, match="combine_fn goes with op='user'"):
        S.segmented_reduce(x, offs, None, "sum", combine_fn=add_fn)
    with pytest.raises(ValueError, match="init goes with op='user'"):
        S.reduce_rows(x[:30].view(3, 10), "max", init=0)
    with pytest.raises(ValueError, match="dtype goes with op 'sum'"):
        S.segmented_reduce(x, offs, None, "min", dtype=torch.int32)
    # an integer mean would be truncated: refused as torch.mean does, computed with a float dtype
    with pytest.raises(TypeError, match="needs a floating result"):
        S.segmented_reduce(x, offs, None, "mean")
    with pytest.raises(TypeError, match="needs a floating result"):
        S.reduce_rows(x[:30].view(3, 10) > 0, "mean")
    mean = S.reduce_rows(x[:30].view(3, 10), "mean", dtype=torch.float32)
    # (the sums are exact; the division may round once more: torch divides a CUDA tensor by a number
    # as a multiplication by its reciprocal, as torch.mean does)
    assert_close(mean.cpu(), x[:30].view(3, 10).cpu().double().mean(1).float(), rtol=2.0 ** -23, atol=0)


# ---- user reductions over tuples (k_in inputs, k accumulators) ----

@triton.jit
def argmax_pair(a, ai, b, bi):
    take = (a > b) | ((a == b) & (ai < bi))   # ties: the lower index
    return tl.where(take, a, b), tl.where(take, ai, bi)


@triton.jit
def min_max_pair(amin, amax, bmin, bmax):
    return tl.minimum(amin, bmin), tl.maximum(amax, bmax)


@triton.jit
def sum_pair(a0, a1, b0, b1):
    return a0 + b0, a1 + b1


@triton.jit
def sum_triple(a0, a1, a2, b0, b1, b2):
    return a0 + b0, a1 + b1, a2 + b2


@triton.jit
def value_and_square(v):
    return v, v * v


@triton.jit
def both_and_product(a, b):
    return a, b, a * b


@triton.jit
def product_fn(a, b):
    return a * b


def _argmax_py(a, b):
    return a if a[0] > b[0] or (a[0] == b[0] and a[1] < b[1]) else b


def _as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def _acc(dtype):
    return torch.float32 if dtype.is_floating_point else torch.int64


def _low_high(dtype):
    return (-math.inf, math.inf) if dtype.is_floating_point else (torch.iinfo(dtype).min, torch.iinfo(dtype).max)


# name: (k_in, combine_fn, transform_fn, init(dtype), dtype=(dtype) or None, Python combine, Python transform).
# Items are small integers (stored as the test dtype): every sum is exact, and ties are frequent.
TUPLE_CASES = {
    # (values, indices) -> (max, index of its first occurrence); k_in = k = 2, no transform
    "argmax": (2, argmax_pair, None, lambda d: (_low_high(d)[0], 1 << 40), None, _argmax_py, None),
    # (min of a, max of b) with an init that is not an identity (it shows in the result)
    "minmax": (2, min_max_pair, None, lambda d: (50, -50), None,
               lambda a, b: (min(a[0], b[0]), max(a[1], b[1])), None),
    # (sum, sum of squares) of one input: k_in = 1 -> k = 2 through transform_fn; init combined once
    "sum_sumsq": (1, sum_pair, value_and_square, lambda d: (3, -2), lambda d: (_acc(d), _acc(d)),
                  lambda a, b: (a[0] + b[0], a[1] + b[1]), lambda v: (v, v * v)),
    # k_in = 2 -> k = 3: (sum a, sum b, sum a*b)
    "moments": (2, sum_triple, both_and_product, lambda d: (1, 2, 3), lambda d: (d, _acc(d), _acc(d)),
                lambda a, b: tuple(p + q for p, q in zip(a, b)), lambda a, b: (a, b, a * b)),
    # k_in = 2 -> k = 1: a segmented dot product (one tensor back; dtype one dtype, not a tuple)
    "dot": (2, add_fn, product_fn, lambda d: 7, _acc, lambda a, b: (a[0] + b[0],), lambda a, b: (a * b,)),
}


def tuple_inputs(case, n, dtype):
    """Fresh inputs of a tuple case: k_in tensors of ``n`` small integers (as ``dtype``); the argmax
    case's second input is the item index."""
    a = torch.randint(-9, 10, (n,), device=DEVICE).to(dtype)
    if case == "argmax":
        return (a, torch.arange(n, device=DEVICE))
    if TUPLE_CASES[case][0] == 1:
        return (a,)
    return (a, torch.randint(-9, 10, (n,), device=DEVICE).to(dtype))


def ref_tuple_reduce(xs, bounds, init, combine, transform):
    """The user reduction of each segment ``[b, e)`` of the inputs ``xs``, folded item by item in
    Python: ``init (+) t(x_b) (+) ... (+) t(x_(e-1))``; a list of k-tuples (an empty segment: init)."""
    cols = [x.tolist() for x in xs]
    out = []
    for b, e in bounds:
        acc = init
        for i in range(b, e):
            item = tuple(c[i] for c in cols)
            acc = combine(acc, transform(*item) if transform else item)
        out.append(acc)
    return out


def tuple_call(case, dtype, fn, *args, pol=None):
    """``fn(*args, "user", ...)`` with the case's combine/transform/init/dtype; the results as a tuple."""
    k_in, combine_fn, transform_fn, init, dtypes, _, _ = TUPLE_CASES[case]
    init_v = init(dtype)
    out = fn(*args, "user", combine_fn=combine_fn, transform_fn=transform_fn, init=init_v,
             dtype=dtypes(dtype) if dtypes else None, pol=pol)
    return out if isinstance(init_v, tuple) else (out,)


def check_tuple(case, dtype, got, xs, bounds):
    _, _, _, init, dtypes, combine, transform = TUPLE_CASES[case]
    init_v = init(dtype)
    init_t = init_v if isinstance(init_v, tuple) else (init_v,)
    want_dtypes = _as_tuple(dtypes(dtype)) if dtypes else tuple(_acc(t.dtype) if t.dtype.is_floating_point else t.dtype
                                                      for t in xs)
    ref = ref_tuple_reduce(xs, bounds, init_t, combine, transform)
    assert len(got) == len(init_t)
    for j, (g, d) in enumerate(zip(got, want_dtypes)):
        assert g.dtype == d, (case, j, g.dtype, d)
        r = torch.tensor([t[j] for t in ref], dtype=torch.float64 if d.is_floating_point else torch.int64)
        assert_equal(g.cpu().to(r.dtype), r, msg=f"{case}: result {j}")


def _tuple_lengths(block):
    # empty segments, 1, BLOCK-1, BLOCK, BLOCK+1, several blocks; 13 segments: several programs of 8 rows
    return [0, 1, block - 1, block, block + 1, 0, 2 * block + 3, 3, 0, 1, 5, block + 1, 7]


@pytest.mark.parametrize("strategy", ["short", "medium", "default"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=str)
@pytest.mark.parametrize("case", list(TUPLE_CASES))
def test_user_tuple_segments(case, dtype, strategy):
    """Tuple reductions per segment against a Python fold, on fresh data; the outputs of a first call
    are poisoned and freed before a second call on new data (its results must all be written anew)."""
    p = STRATEGIES[strategy] if strategy != "default" else None
    block = p["BLOCK"] if p is not None else S._INTERPRETER_OVERRIDE["segments"]["BLOCK"]
    lengths = _tuple_lengths(block)
    offs = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), device=DEVICE)
    bounds = list(zip(offs[:-1].tolist(), offs[1:].tolist()))
    for _ in range(2):
        xs = tuple_inputs(case, int(offs[-1]), dtype)
        got = tuple_call(case, dtype, S.segmented_reduce, xs if len(xs) > 1 else xs[0], offs, None, pol=p)
        check_tuple(case, dtype, got, xs, bounds)
        for g in got:
            g.fill_(poison_value(g.dtype))
        del got


@pytest.mark.parametrize("strategy", ["short", "medium", "default"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=str)
@pytest.mark.parametrize("case", list(TUPLE_CASES))
def test_user_tuple_rows(case, dtype, strategy):
    """Tuple reductions of every row (equal rows: 1, BLOCK-1, BLOCK+1 and 0 items; more rows than a
    program takes) against a Python fold."""
    p = STRATEGIES[strategy] if strategy != "default" else None
    block = p["BLOCK"] if p is not None else S._INTERPRETER_OVERRIDE["short"]["BLOCK"]
    runs = []
    for rows, cols in [(9, 1), (9, block - 1), (10, block + 1), (2, 0)]:
        xs = tuple(x.reshape(rows, cols) for x in tuple_inputs(case, rows * cols, dtype))
        got = tuple_call(case, dtype, S.reduce_rows, xs if len(xs) > 1 else xs[0], pol=p)
        runs.append((xs, got))
    for xs, got in runs:
        rows, cols = xs[0].shape
        check_tuple(case, dtype, got, [x.reshape(-1) for x in xs], [(r * cols, (r + 1) * cols) for r in range(rows)])


def test_user_tuple_non_contiguous_and_default_dtypes():
    """Non-contiguous tuple members (rows and a strided 1-D view), fp16/int8 items accumulate as
    fp32/int8 by default, begin/end offsets with gaps and an inverted (empty) segment."""
    a = torch.randint(-9, 10, (12, 7), device=DEVICE).to(torch.float16)
    b = torch.randint(-9, 10, (7, 12), device=DEVICE).to(torch.int8).t()
    mn, mx = S.reduce_rows((a, b), "user", combine_fn=min_max_pair, init=(50, -50), pol=STRATEGIES["short"])
    x = torch.randint(-9, 10, (200,), device=DEVICE).to(torch.float16)[::2]
    y = torch.randint(-9, 10, (100,), device=DEVICE).to(torch.int8)
    begins = torch.tensor([0, 10, 50, 40, 90, 7], device=DEVICE)
    ends = torch.tensor([5, 10, 100, 60, 80, 9], device=DEVICE)
    smn, smx = S.segmented_reduce((x, y), begins, ends, "user", combine_fn=min_max_pair, init=(50, -50),
                                  pol=STRATEGIES["medium"])
    assert (mn.dtype, mx.dtype, smn.dtype, smx.dtype) == (torch.float32, torch.int8, torch.float32, torch.int8)
    assert_equal(mn, a.float().amin(1).clamp(max=50))
    assert_equal(mx, b.amax(1).clamp(min=-50))
    bounds = list(zip(begins.tolist(), ends.tolist()))
    ref = ref_tuple_reduce((x.float(), y), bounds, (50, -50), TUPLE_CASES["minmax"][5], None)
    assert_equal(smn, torch.tensor([r[0] for r in ref], dtype=torch.float32, device=DEVICE))
    assert_equal(smx, torch.tensor([r[1] for r in ref], dtype=torch.int8, device=DEVICE))


@triton.jit
def or_fn(a, b):
    return a | b


@pytest.mark.parametrize("dtype", [torch.int32, torch.float32], ids=str)
@pytest.mark.parametrize("strategy", ["short", "medium"])
def test_user_bool_accumulator(dtype, strategy):
    """A bool accumulator (``dtype=torch.bool``) takes each item as ``item != 0`` (256, 512, 0.5 and NaN
    are true, not their low 8 bits); results are bool; an empty segment gives init (256: true)."""
    lengths = [3, 0, 5, 1, 40, 2, 7]
    offs = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), device=DEVICE)
    n = int(offs[-1])
    x = torch.zeros(n, dtype=torch.float64)
    x[1], x[4], x[9], x[30], x[49] = 256.0, 512.0, 0.5, float("nan"), -3.0
    if dtype != torch.float32:
        x = torch.nan_to_num(x, nan=1024.0)
    x = x.to(dtype).to(DEVICE)
    nz = (x.cpu().double() != 0)
    for init in (False, 256):
        out = S.segmented_reduce(x, offs, None, "user", combine_fn=or_fn, init=init, dtype=torch.bool,
                                 pol=STRATEGIES[strategy])
        ref = [bool(init) or bool(nz[a:b].any()) for a, b in zip(offs[:-1].tolist(), offs[1:].tolist())]
        assert out.dtype == torch.bool
        assert out.cpu().tolist() == ref, (init, out.cpu().tolist(), ref)
    rows = S.reduce_rows(x[:56].reshape(7, 8), "user", combine_fn=or_fn, init=False, dtype=torch.bool,
                         pol=STRATEGIES[strategy])
    assert rows.dtype == torch.bool
    assert rows.cpu().tolist() == nz[:56].reshape(7, 8).any(1).tolist()


def test_user_tuple_errors():
    x = torch.randn(10, device=DEVICE)
    i = torch.arange(10, device=DEVICE)
    offs = torch.tensor([0, 5, 10], device=DEVICE)
    seg = S.segmented_reduce
    with pytest.raises(ValueError, match="goes with op='user'"):
        seg((x, i), offs, None, "sum")
    with pytest.raises(ValueError, match="goes with op='user'"):
        seg(x, offs, None, "max", init=(0.0, 0))
    with pytest.raises(ValueError, match="goes with op='user'"):
        S.reduce_rows(x.view(2, 5), "min", dtype=(torch.float32,))
    with pytest.raises(ValueError, match="differ in length"):
        seg((x, i[:7]), offs, None, "user", combine_fn=argmax_pair, init=(0.0, 0))
    with pytest.raises(ValueError, match="differ in shape"):
        S.reduce_rows((x.view(2, 5), i.view(5, 2)), "user", combine_fn=argmax_pair, init=(0.0, 0))
    with pytest.raises(ValueError, match="2 dimension"):
        S.reduce_rows((x.view(2, 5), i), "user", combine_fn=argmax_pair, init=(0.0, 0))
    with pytest.raises(ValueError, match=r"x\[1\] is on meta"):
        seg((x, i.to("meta")), offs, None, "user", combine_fn=argmax_pair, init=(0.0, 0))
    with pytest.raises(TypeError, match=r"x\[1\] must be a torch.Tensor"):
        seg((x, [1] * 10), offs, None, "user", combine_fn=argmax_pair, init=(0.0, 0))
    with pytest.raises(ValueError, match="empty tuple"):
        seg((), offs, None, "user", combine_fn=add_fn, init=0.0)
    with pytest.raises(ValueError, match="empty tuple"):
        seg(x, offs, None, "user", combine_fn=add_fn, init=())
    with pytest.raises(ValueError, match="init has 2 operand"):   # k = 2 accumulators from one input
        seg(x, offs, None, "user", combine_fn=sum_pair, init=(0.0, 0.0))
    with pytest.raises(ValueError, match="init has 1 operand"):
        seg((x, i), offs, None, "user", combine_fn=add_fn, init=0.0)
    with pytest.raises(ValueError, match="pass dtype="):   # a transform that changes the operand count
        seg(x, offs, None, "user", combine_fn=sum_pair, transform_fn=value_and_square, init=(0.0, 0.0))
    with pytest.raises(ValueError, match="dtype gives 1"):
        seg((x, i), offs, None, "user", combine_fn=argmax_pair, init=(0.0, 0), dtype=torch.float32)
    with pytest.raises(ValueError, match="dtype gives 3"):
        seg((x, i), offs, None, "user", combine_fn=argmax_pair, init=(0.0, 0), dtype=(torch.float32,) * 3)
    with pytest.raises(TypeError, match=r"dtype\[1\] must be a torch.dtype"):
        seg((x, i), offs, None, "user", combine_fn=argmax_pair, init=(0.0, 0), dtype=(torch.float32, "int64"))
    with pytest.raises(TypeError, match="accumulator dtype complex64 is not supported"):
        seg(x, offs, None, "user", combine_fn=add_fn, init=0.0, dtype=torch.complex64)
    with pytest.raises(TypeError, match=r"accumulator dtype\[1\] float8_e4m3fn is not supported"):
        S.reduce_rows((x.view(2, 5), i.view(2, 5)), "user", combine_fn=argmax_pair, init=(0.0, 0),
                      dtype=(torch.float32, torch.float8_e4m3fn))
    with pytest.raises(ValueError, match="needs combine_fn and init"):
        seg((x, i), offs, None, "user", init=(0.0, 0))


@pytest.mark.parametrize("reduce", ["sum", "max", "min", "mean", "prod"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
def test_segment_reduce_op(reduce, dtype):
    offs = random_offsets(9, 40, seed=11).to(DEVICE)
    x = make_data("random", int(offs[-1]), dtype)
    if reduce == "prod":   # items near 1: products of ~40 stay finite
        x = (1 + torch.randn(int(offs[-1]), device=DEVICE) * 0.05).to(dtype)
    out = torch.ops.tritoncub.segment_reduce(x, offs, reduce)
    # fp16 sums accumulate in fp32 here (torch's CPU kernel accumulates fp16 in fp16)
    assert out.dtype == torch.segment_reduce(x, reduce, offsets=offs).dtype
    if reduce == "prod":   # (empty segments give 1; about n roundings of relative size u each)
        ref = torch.segment_reduce(x.double(), "prod", offsets=offs)
        tol = 100 * unit_roundoff(dtype)
        assert_close(out.double(), ref, rtol=tol, atol=0)
        e = torch.ops.tritoncub.segment_reduce(x[:5], torch.tensor([0, 2, 2, 5], device=DEVICE), "prod")
        assert float(e[1]) == 1.0   # an empty segment: the product's identity, as torch
    elif reduce in ("sum", "mean"):
        assert_sum_close(out, x, reduce, offsets=offs)
    else:
        assert_equal(out, torch.segment_reduce(x, reduce, offsets=offs))


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "amax", "prod"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_segment_reduce_autograd(reduce, dtype):
    """Gradients as torch.segment_reduce's (CPU) for positive output gradients: ties of the extreme
    (equal items, -0.0 with +0.0, NaNs) share it; a product's 0 and NaN items get the product of the
    others (one zero, two zeros, a zero with a NaN); empty segments; items before the first and after
    the last offset get 0. A negative gradient is shared among ties too (torch gives it whole to
    each: its kernel divides only positive ones), so a segment's items' gradients sum to its own."""
    nan, inf = math.nan, math.inf
    x = torch.tensor([7.0, 1, 3, 3, 2, 5, 0, 0, nan, 4, -0.0, 0.0, 2, 0, nan, 0.5, 3, 2, 9, 9, inf, 6, -2],
                     dtype=dtype)
    offs = torch.tensor([1, 5, 5, 6, 8, 10, 12, 15, 15, 18, 21])
    if reduce == "prod":
        x[19] = 4.0   # (a segment of inf: its other items' grads are inf / x, torch's too)
    xa, xb = x.clone().to(DEVICE).requires_grad_(), x.clone().requires_grad_()
    ya = torch.ops.tritoncub.segment_reduce(xa, offs.to(DEVICE), reduce)
    yb = torch.segment_reduce(xb, reduce, offsets=offs)
    g = torch.rand(yb.shape, dtype=dtype, generator=torch.Generator().manual_seed(3)) + 0.25
    ya.backward(g.to(DEVICE))
    yb.backward(g)
    assert xa.grad[0] == 0 and bool((xa.grad[21:] == 0).all())
    if reduce == "prod":   # (torch multiplies the others in order: the last bit may differ)
        assert_close(xa.grad.cpu(), xb.grad, rtol=4 * unit_roundoff(dtype), atol=0)
    else:
        assert_equal(xa.grad.cpu(), xb.grad)
    if reduce in ("max", "min", "amax"):
        xa.grad = None
        ya = torch.ops.tritoncub.segment_reduce(xa, offs.to(DEVICE), reduce)
        ya.backward(-g.to(DEVICE))
        per_segment = torch.segment_reduce(xa.grad.cpu(), "sum", offsets=offs)
        assert_close(per_segment, torch.where(offs.diff() > 0, -g, 0), rtol=1e-6, atol=0)


def test_segment_reduce_offsets_and_names_as_torch():
    """torch's "amax"/"amin" spellings are accepted; offsets that decrease or leave the data raise (they
    used to give silent results: [6, 0, 25] for offsets [0, 3, 2, 7])."""
    x = torch.arange(1.0, 8.0, device=DEVICE)
    offs = torch.tensor([0, 3, 3, 7], device=DEVICE)
    for name, alias in (("amax", "max"), ("amin", "min")):
        assert_equal(torch.ops.tritoncub.segment_reduce(x, offs, name), torch.segment_reduce(x, alias, offsets=offs))
    for bad in ([0, 3, 2, 7], [3, 1], [-1, 3], [0, 8]):
        with pytest.raises(ValueError, match="non-decreasing and within"):
            torch.ops.tritoncub.segment_reduce(x, torch.tensor(bad, device=DEVICE), "sum")
    from tritoncub.device.segmented_reduce import segment_reduce
    with pytest.raises(TypeError, match="offsets must be a torch.Tensor"):
        segment_reduce(x, [0, 3, 7])
    with pytest.raises(TypeError, match="offsets has dtype"):
        segment_reduce(x, torch.tensor([0.0, 7.0], device=DEVICE))


def test_segment_reduce_opcheck_and_compile():
    offs = torch.tensor([0, 3, 3, 10], device=DEVICE)
    x = torch.randn(10, device=DEVICE)
    torch.library.opcheck(torch.ops.tritoncub.segment_reduce.default, (x, offs, "sum"))
    torch.library.opcheck(torch.ops.tritoncub.segment_reduce.default, (x.clone().requires_grad_(), offs, "max"))
    f = torch.compile(lambda a: torch.ops.tritoncub.segment_reduce(a, offs, "max") * 2, fullgraph=True,
                      backend="eager" if not GPU else "inductor")
    assert_close(f(x), torch.segment_reduce(x, "max", offsets=offs) * 2)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "prod"])
def test_segment_reduce_backward_compiled(reduce):
    """The backward traced by torch.compile (fullgraph) gives the eager gradient (prod's ran the kernel
    launch of the Python function on fake tensors and failed)."""
    offs = torch.tensor([0, 3, 7, 10], device=DEVICE)
    x = torch.tensor([1.5, 0.0, 2.0, -1.0, 3.0, 0.5, 2.5, 0.0, 0.0, 4.0], device=DEVICE, dtype=torch.float64)
    g = torch.randn(3, dtype=torch.float64, device=DEVICE)
    torch._dynamo.reset()
    f = torch.compile(lambda a: torch.ops.tritoncub.segment_reduce(a, offs, reduce), fullgraph=True,
                      backend="aot_eager")
    a, b = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    (got,) = torch.autograd.grad(f(a), a, g)
    (ref,) = torch.autograd.grad(torch.ops.tritoncub.segment_reduce(b, offs, reduce), b, g)
    assert_close(got, ref, rtol=1e-12, atol=0)


@pytest.mark.parametrize("items", [[1.0, 0.0, 2.0], [0.0, 0.0, 2.0, 3.0], [0.0, 0.0, 0.0], [2.0, 3.0, 0.5]])
def test_segment_reduce_prod_second_derivatives(items):
    """Second derivatives of a product over segments with zeros as torch.prod's (they were NaN: the
    quotient branch not taken at a 0 item; and 0 where a segment had two zeros)."""
    x = torch.tensor(items + [1.5, -2.0], dtype=torch.float64, device=DEVICE)
    offs = torch.tensor([0, len(items), len(items) + 2], device=DEVICE)
    hess = []
    for f in (lambda t: torch.ops.tritoncub.segment_reduce(t, offs, "prod"),
              lambda t: torch.stack([t[:len(items)].prod(), t[len(items):].prod()])):
        a = x.clone().requires_grad_(True)
        (g1,) = torch.autograd.grad(f(a), a, torch.tensor([1.0, 2.0], dtype=torch.float64, device=DEVICE),
                                    create_graph=True)
        hess.append(torch.stack([torch.autograd.grad(g1[i], a, retain_graph=True)[0] for i in range(x.numel())]))
    assert_close(hess[0], hess[1], rtol=1e-12, atol=0)


def test_segment_reduce_prod_backward_checks_offsets_once(monkeypatch):
    """The offsets are checked (with a read-back of the result: a host sync on a GPU) by the forward
    only: the eager 'prod' backward computes its products directly, not through the operator, which
    checked them again."""
    offs = torch.tensor([0, 3, 7, 10], device=DEVICE)
    x = torch.tensor([1.5, 0.0, 2.0, -1.0, 3.0, 0.5, 2.5, 0.0, 0.0, 4.0], device=DEVICE,
                     dtype=torch.float64, requires_grad=True)
    checks = []
    check = S._check_segment_args
    monkeypatch.setattr(S, "_check_segment_args", lambda *a: (checks.append(a), check(*a))[1])
    y = torch.ops.tritoncub.segment_reduce(x, offs, "prod")
    assert len(checks) == 1
    (got,) = torch.autograd.grad(y, x, torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, device=DEVICE))
    assert len(checks) == 1
    b = x.detach().clone().requires_grad_(True)
    (ref,) = torch.autograd.grad(torch.stack([b[:3].prod(), b[3:7].prod(), b[7:].prod()]), b,
                                 torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, device=DEVICE))
    assert_close(got, ref, rtol=1e-12, atol=0)


def test_errors(monkeypatch):
    x = torch.randn(10, device=DEVICE)
    offs = torch.tensor([0, 5, 10], device=DEVICE)
    with pytest.raises(ValueError, match="unknown op"):
        S.segmented_reduce(x, offs, None, "median")
    with pytest.raises(TypeError, match="begin_offsets"):
        S.segmented_reduce(x, offs.float(), None, "sum")
    with pytest.raises(ValueError, match="out of range"):
        S.segmented_reduce(x, torch.tensor([0, 5, 11], device=DEVICE), None, "sum", validate=True)
    with pytest.raises(ValueError, match="monotone"):
        S.segmented_reduce(x, torch.tensor([0, 6, 5, 10], device=DEVICE), None, "sum", validate=True)
    with pytest.raises(ValueError, match="reduce must be"):
        torch.ops.tritoncub.segment_reduce(x, offs, "median")
    with pytest.raises(TypeError, match="validate must be a bool"):
        S.segmented_reduce(x, offs, None, "sum", validate=1)
    with pytest.raises(TypeError, match="float"):
        torch.ops.tritoncub.segment_reduce(x.to(torch.int32), offs, "sum")
    with pytest.raises(ValueError, match="differ in shape"):
        S.segmented_reduce(x, offs, offs[:2], "sum")
    with pytest.raises(ValueError, match="2 dimension"):
        S.reduce_rows(x, "sum")
    with pytest.raises(ValueError, match="begin_offsets is on meta"):   # offsets on another device
        S.segmented_reduce(x, offs.to("meta"), None, "sum")
    # the operator too: a meta offsets tensor sends the call to the fake, whose empty result came back
    # as the answer
    with pytest.raises(ValueError, match="offsets is on meta"):
        torch.ops.tritoncub.segment_reduce(x, offs.to("meta"), "sum")
    monkeypatch.setenv("TRITONCUB_DEBUG", "1")   # the debug check through the operator
    with pytest.raises(ValueError, match="out of range"):
        S.segmented_reduce(x, torch.tensor([0, 5, 11], device=DEVICE), None, "sum")


@pytest.mark.gpu
def test_gpu_large_segments():
    offs = random_offsets(100_000, 1300, seed=1).to("cuda")
    x = torch.randn(int(offs[-1]), device="cuda")
    out = S.segmented_reduce(x, offs, None, "sum")
    assert_sum_close(out, x, offsets=offs)
    a = S.segmented_reduce(x, offs, None, "sum")
    assert torch.equal(a, out)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(65536, 128), (4096, 1024), (3, 1 << 22), (1 << 20, 3)])
def test_gpu_rows(shape):
    x = torch.randn(shape, device="cuda")
    assert_sum_close(S.reduce_rows(x, "sum"), x)
    assert_equal(S.reduce_rows(x, "max"), x.amax(1))
    assert_equal(S.reduce_rows(x, "argmin")[1], x.argmin(1))


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(300, 128), (17, 1000), (5, 33)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32], ids=str)
def test_gpu_rows_plan_reuse(shape, dtype):
    """Repeated calls of one shape reuse a recorded launch (the rows plan): fresh data each call,
    poisoned outputs from earlier calls, an unaligned view (another plan), a policy override in
    between (the plan must not be used with another policy)."""
    base = torch.randn(shape[0] * shape[1] + 4, device="cuda")
    for trial in range(3):
        buf = (base.normal_() * 100).to(dtype)
        x = buf[trial % 2: trial % 2 + shape[0] * shape[1]].view(shape)   # aligned, then not, then aligned
        for op in ("sum", "min", "max"):
            got = S.reduce_rows(x, op)
            assert_close(got, ref_rows(x, op), rtol=1e-2 if dtype == torch.float16 else 1e-5,
                         atol=1e-1 if dtype == torch.float16 else 1e-3)
            got.fill_(-1)   # a later call must not hand back this buffer's contents
        with policy.override("segmented_reduce", {"ROWS": 2, "BLOCK": 16, "num_warps": 1}):
            before = policy.override_hits("segmented_reduce")
            assert_close(S.reduce_rows(x, "sum"), ref_rows(x, "sum"), rtol=1e-2, atol=1e-1)
            assert policy.override_hits("segmented_reduce") > before
        ops = torch.ops.tritoncub
        for keepdim in (False, True):   # the operator's repeated-call path: same results as the first
            assert_close(ops.sum(x, [-1], keepdim), x.sum(-1, keepdim=keepdim), rtol=1e-2, atol=1e-1)
            x3 = x.view(shape[0], 1, shape[1])
            assert_close(ops.sum(x3, [1, 2], keepdim), x3.sum([1, 2], keepdim=keepdim), rtol=1e-2, atol=1e-1)
            assert_close(ops.sum(x3, [-1], keepdim, torch.float64), x3.sum(-1, keepdim=keepdim, dtype=torch.float64),
                         rtol=1e-2, atol=1e-1)


COLUMN_SHAPES = [(1, 5, 7), (3, 37, 9), (1, 300, 3), (2, 130, 40), (4, 1, 33), (1, 2, 1)]


@pytest.mark.parametrize("shape", COLUMN_SHAPES, ids=str)
@pytest.mark.parametrize("op", ["sum", "min", "max", "argmin", "argmax"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int16,
                                   torch.int32, torch.int64, torch.uint8, torch.bool], ids=str)
def test_reduce_columns(shape, op, dtype):
    """The middle dim of [A, R, B] in place (reductions over dims that are not the last): columns in
    several blocks, rows in several chunks whose partials a second launch reduces (300 rows under the
    interpreter's small tiles), adversarial floats (NaN, +-0.0, +-inf, ties), against torch over dim 1."""
    n = math.prod(shape)
    x = make_data("special" if dtype.is_floating_point else "few_unique", n, dtype).reshape(shape)
    res = S.reduce_columns(x, op)
    xr = x.to(torch.uint8) if dtype == torch.bool else x
    if op == "sum":
        ref = x.sum(1)
        if dtype.is_floating_point:
            assert res.dtype == dtype
            assert_sum_close(res.reshape(-1), x.permute(0, 2, 1).reshape(-1, shape[1]))
        else:
            assert_equal(res, ref)
    elif op in ("min", "max"):
        assert_equal(res, (x.amin(1) if op == "min" else x.amax(1)) if dtype != torch.bool else
                     (xr.amin(1) if op == "min" else xr.amax(1)).bool())
    else:
        vals, idx = res
        assert_equal(idx, xr.argmin(1) if op == "argmin" else xr.argmax(1))
        assert_equal(vals, x.gather(1, idx.unsqueeze(1)).squeeze(1))


def test_reduce_columns_outer_extent_past_the_grid(monkeypatch):
    """An outer extent whose programs would pass grid dim 0 gives None (the caller transposes); the
    operators still answer through the rows."""
    monkeypatch.setattr(S, "_GRID_X_MAX", 2)
    x = make_data("random", 3 * 4 * 40, torch.float32).reshape(3, 4, 40)
    # (3 outer extents of at least one column block each: 3 x 10 blocks of the interpreter's 4 columns, 3 x 1
    # of a GPU's 128 or more)
    assert S.reduce_columns(x, "sum") is None
    y = x[:2, :, :4].contiguous()   # (2 x 1 blocks: exactly the limit)
    # (against the float64 sums, within a float32 sum's rounding bound: sums of 4 items of ~100 round by up to
    # ~1e-5, a fixed atol's size, so an order other than torch's (a GPU's tree) can fail a sum near zero; the
    # bound, ~6e-5, is far below an item's ~80: a dropped or doubled item fails)
    assert_sum_close(S.reduce_columns(y, "sum"), y, dim=1)
    assert_sum_close(torch.ops.tritoncub.sum(x, [1]), x, dim=1)
    assert_equal(torch.ops.tritoncub.argmax(x, 1), x.argmax(1))
    with pytest.raises(ValueError, match="contiguous 3-D"):
        S.reduce_columns(x.transpose(0, 1), "sum")
    with pytest.raises(ValueError, match="built-in"):
        S.reduce_columns(x, "mean")


@pytest.mark.parametrize("op", ["argmin", "argmax", "max", "sum"])
@pytest.mark.parametrize("wide_pos", [False, True], ids=["int32_pos", "int64_pos"])
def test_reduce_columns_extremes_in_later_chunks(op, wide_pos, monkeypatch):
    """Rows split into chunks (300 rows under the interpreter; 20000 on a GPU, whose tiles are larger),
    the chunks' partials reduced in one more launch, which looks up the rows of the arg ops' winners: a
    column's extreme in the last chunk, one repeated in two later chunks (the first wins), a NaN in a
    later chunk after a NaN-free first one, a column of one value; positions within a chunk as int32
    and, forced, as int64 (the kernel's form for chunks of 2^31 rows or more)."""
    if wide_pos:
        monkeypatch.setattr(S, "_NARROW_POS_ROWS", 1)
    rows = 300 if DEVICE == "cpu" else 20000
    x = make_data("random", rows * 5, torch.float32).reshape(1, rows, 5).clamp(-10, 10)
    big = -1e6 if op == "argmin" else 1e6
    at = [rows - 10, rows // 2, rows - 20, rows - 50, rows - 40]
    x[0, at[0], 0] = big
    x[0, at[1], 1] = big
    x[0, at[2], 1] = big
    x[0, at[3], 2] = float("nan")
    x[0, at[4], 2] = float("nan")
    x[0, :, 3] = 2.5
    launches = count_calls(monkeypatch, S, "launch")
    res = S.reduce_columns(x, op)
    assert len(launches) == 2   # (the rows split into chunks, and one pass over their partials)
    if op == "sum":
        assert_sum_close(res.reshape(-1), x.permute(0, 2, 1).reshape(5, rows))
        return
    if op == "max":
        assert_equal(res, x.amax(1))
        return
    vals, idx = res
    ref = x.argmin(1) if op == "argmin" else x.argmax(1)
    assert_equal(idx, ref)
    assert [int(i) for i in idx[0, :4]] == [at[0], at[1], at[3], 0]
    assert_equal(vals, x.gather(1, idx.unsqueeze(1)).squeeze(1))


@pytest.mark.parametrize("shape", [(2, 0, 3), (0, 4, 3), (2, 4, 0)], ids=str)
@pytest.mark.parametrize("op", ["sum", "min", "max", "argmin", "argmax"])
def test_reduce_columns_empty(shape, op):
    """Empty extents: no launch; empty results, or the identity (index -1) of columns with no rows."""
    x = torch.zeros(shape, device=DEVICE)
    res = S.reduce_columns(x, op)
    vals, idx = res if op in ("argmin", "argmax") else (res, None)
    assert vals.shape == (shape[0], shape[2])
    if shape[1] == 0 and vals.numel():
        want = {"sum": 0.0, "min": math.inf, "max": -math.inf, "argmin": math.inf, "argmax": -math.inf}[op]
        assert bool((vals == want).all())
        if idx is not None:
            assert bool((idx == -1).all())


@pytest.mark.parametrize("dtype", [torch.bool, torch.int32], ids=str)
def test_sum_to_bool_counts_past_255(dtype):
    """A sum to bool is "any item non-zero": counts that are multiples of 256 stay True (the count is
    not stored in a byte), over columns and rows."""
    x = torch.ones(1, 256, 3, dtype=dtype, device=DEVICE)
    x[0, :, 2] = 0
    assert_equal(S.reduce_columns(x, "sum", dtype=torch.bool), torch.tensor([[True, True, False]], device=DEVICE))
    rows = x[0].t().contiguous()
    assert_equal(S.reduce_rows(rows, "sum", dtype=torch.bool), torch.tensor([True, True, False], device=DEVICE))


def test_reduce_columns_dtype_only_for_sum():
    x = make_data("random", 24, torch.float32).reshape(2, 3, 4)
    with pytest.raises(ValueError, match="dtype goes with op 'sum'"):
        S.reduce_columns(x, "min", dtype=torch.float64)
    assert S.reduce_columns(x, "sum", dtype=torch.float64).dtype == torch.float64


@pytest.mark.parametrize("itemsize,acc_size", [(1, 8), (1, 1), (2, 4), (4, 4), (4, 8), (8, 8)])
@pytest.mark.parametrize("is_arg", [False, True], ids=["value", "arg"])
def test_columns_geometry(itemsize, acc_size, is_arg):
    """The GPU steps of the columns' kernel: within the tile (for 4-byte accumulators; 8-byte ones half,
    arg ops a quarter) and the extents; few rows get the wide steps the measurements asked for (each
    warp's part of a row 32 lanes x 16 bytes: 4 rows of bf16 ran 8x slower in 256-column steps than in
    1024), many rows narrow ones."""
    tile = S._COLUMNS_TILE * 4 // max(4, acc_size) // (4 if is_arg else 1)
    wide = S._COLUMNS_WARPS * 32 * max(1, 16 // itemsize)
    for R in (1, 2, 3, 4, 17, 128, 4096, 1 << 20):
        for B in (1, 5, 256, 1000, 1 << 20):
            block_r, block_b = S._columns_geometry(R, B, itemsize, acc_size, is_arg, False)
            assert block_r * block_b <= max(tile, block_b)
            assert block_b <= max(1, 2 * B - 1) and block_r <= max(1, 2 * R - 1)   # (powers of 2 from B, R)
            if R <= 4 and B >= wide and tile // 4 >= wide:
                assert block_b == wide and block_r == triton.next_power_of_2(R)
            if R >= 4096 and B >= 1000:
                assert block_b == S._COLUMNS_MIN_BLOCK and block_r == tile // block_b
