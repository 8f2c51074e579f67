"""DeviceHistogram (tritoncub.device.histogram) and the histc/bincount operators, against torch.

Under the interpreter a small tile (256 samples, at most 2 programs per "SM") forces several tiles
per program, a ragged last tile, and both counting paths (private tile histograms and per-sample
atomics, chosen by MAX_PRIVATE_BINS).
"""
import math

import numpy as np
import pytest
import torch
import triton

from helpers import DEVICE, assert_equal, count_calls, deterministic_algorithms, launch_values, make_data
from tritoncub import policy
from tritoncub._utils import interpreter_active
from tritoncub.device import histogram as H

SMALL = {"TILE": 256, "PROGRAMS_PER_SM": 2, "num_warps": 4}
TILE = 256
SIZES = [0, 1, 255, 256, 257, 3 * 256 * 4 + 77] if interpreter_active() else [0, 1, 4095, 4097, 1 << 20, (1 << 22) + 3]
ops = torch.ops.tritoncub


@pytest.fixture(autouse=True)
def small_policy():
    if interpreter_active():
        with policy.override("histogram", SMALL):
            yield
    else:
        yield


def _ref_even(x: torch.Tensor, lower, upper, bins, top_inclusive=False):
    """Reference binning with the same arithmetic as the kernel (fp32 for <=32-bit floats, fp64
    for fp64, exact integers otherwise)."""
    x = x.cpu()
    if x.dtype.is_floating_point:
        ct = torch.float64 if x.dtype == torch.float64 else torch.float32
        v = x.to(ct)
        lo, hi = torch.tensor(lower, dtype=ct), torch.tensor(upper, dtype=ct)
        valid = (v >= lo) & ((v <= hi) if top_inclusive else (v < hi))
        b = ((v - lo) * torch.tensor(float(bins), dtype=ct) / (hi - lo)).to(torch.int64)
    else:
        v = x.to(torch.int64)
        valid = (v >= lower) & ((v <= upper) if top_inclusive else (v < upper))
        b = (v - lower) * bins // (upper - lower)
    b = b.clamp(0, bins - 1)
    return torch.bincount(b[valid], minlength=bins)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kind", ["random", "special"])
def test_histc_matches_torch(n, dtype, kind):
    x = make_data(kind, n, dtype)
    for bins, lo, hi in ((100, -150.0, 150.0), (1, -10.0, 10.0)):
        out = ops.histc(x, bins, lo, hi)
        if dtype in (torch.float32, torch.float64):
            # torch on the same device: CPU torch bins as (x-lo)/(hi-lo)*bins, CUDA torch (and this
            # kernel) as (x-lo)*bins/(hi-lo), which may differ for a sample on a bin edge
            ref = torch.histc(x, bins, lo, hi).cpu()
            assert_equal(out.cpu(), ref, msg=f"bins={bins}")
        ref = _ref_even(x, lo, hi, bins, top_inclusive=True).to(dtype)
        assert_equal(out.cpu(), ref, msg=f"bins={bins}")


@pytest.mark.parametrize("kind", ["random", "equal", "sorted"])
def test_histc_auto_range(kind):
    x = make_data(kind, 700, torch.float32)
    if kind == "special":
        x = x[~torch.isnan(x)]
    out = ops.histc(x, 13)
    assert_equal(out.cpu(), torch.histc(x.cpu(), 13))


def test_histc_edges_top_inclusive():
    x = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, -1e-7, 4.0000005, math.nan, math.inf], device=DEVICE)
    assert_equal(ops.histc(x, 4, 0, 4).cpu(), torch.histc(x.cpu(), 4, 0, 4))
    # bool bounds are 0 and 1, as torch takes them
    assert_equal(ops.histc(x / 4, 3, False, True).cpu(), torch.histc(x.cpu() / 4, 3, False, True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_histc_range_beyond_float32(dtype):
    """Where (max - min) * bins exceeds float32, torch's fp32 formula overflows (inf / inf, or x / inf: every
    sample in one bin, or none); such samples are binned in float64 instead, as numpy's float64
    histogram bins them (top edge inclusive). Given and data-taken ranges, and a range that fits float32
    while its product with the bins does not. (fp16 samples cannot get there: their range times any bin
    count below 2^31 fits float32; ranges below the limit keep torch's fp32 arithmetic, as the other
    histc tests check.)"""
    big = 3e38
    cases = [(torch.tensor([-big, big, 0.0, big / 3, -big / 2]), 2, -big, big),
             (torch.tensor([-big, big, 0.0, big / 3, -big / 2, big / 7]), 4, 0, 0),    # (the data's range)
             (torch.tensor([1e38, 3e38, 2.5e38, 0.0, 3.3e38, 2e37]), 8, 0.0, 3e38)]   # (range fits, product not)
    for x, bins, lo, hi in cases:
        x = x.to(dtype)
        got = ops.histc(x.to(DEVICE), bins, lo, hi).cpu()
        rng = (float(x.min()), float(x.max())) if lo == hi else (float(np.float32(lo)), float(np.float32(hi)))
        want = torch.from_numpy(np.histogram(x.double().numpy(), bins=bins, range=rng)[0]).to(dtype)
        assert_equal(got, want, msg=f"{dtype} bins={bins} range={rng}")
        assert got.sum() > 0


@pytest.mark.parametrize("bins", [3, 256, 1000])
@pytest.mark.parametrize("private,algo,copies", [(64, 0, 1), (64, 0, 8), (2048, 0, 64), (2048, 1, 64), (64, 2, 8)])
def test_histc_all_paths(bins, private, algo, copies):
    """Private tile histograms (tl.histogram, one-hot tensor-core product) and per-sample atomics
    (one histogram, or copies summed afterwards)."""
    x = torch.rand(3000, device=DEVICE) * 10
    cfg = {"MAX_PRIVATE_BINS": private, "PRIVATE_ALGO": algo, "ATOMIC_COPIES": copies}
    with policy.override("histogram", {**SMALL, **cfg} if interpreter_active() else cfg):
        out = ops.histc(x, bins, 0, 10)
        w = torch.rand(3000, device=DEVICE, dtype=torch.float64)
        xi = (x * 10).long()
        cnt = ops.bincount(xi, w)
    assert_equal(out.cpu(), torch.histc(x.cpu(), bins, 0, 10))
    torch.testing.assert_close(cnt.cpu(), torch.bincount(xi.cpu(), w.cpu()))


def _gmem_tile(n: int, pol_tile: int) -> int:
    """The tile the global-atomic rule launches ``n`` samples in (see histogram._launch)."""
    from tritoncub._utils import num_sms
    return min(pol_tile, max(256, triton.next_power_of_2(-(-n // (4 * num_sms(torch.device(DEVICE)))))))


@pytest.mark.parametrize("algo", [0, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int32, torch.int64], ids=str)
def test_histc_gmem_path(dtype, algo, monkeypatch):
    """At most GMEM_MAX_ITEMS_PER_BIN samples per bin take one global atomic per sample straight into the
    result in small tiles (no private histogram, no copies summed), whatever PRIVATE_ALGO and
    MAX_PRIVATE_BINS say; one more sample per bin takes the usual paths: private histograms (tl.histogram; the
    shared-memory kernel on a GPU with PRIVATE_ALGO 2, whatever MAX_PRIVATE_BINS says), or past MAX_PRIVATE_BINS
    the copies summed after. Counts in the result's
    dtype where exact (see _histc_counts_dtype)."""
    private = launch_values(monkeypatch, H, "_histogram_kernel", "PRIVATE")
    tiles = launch_values(monkeypatch, H, "_histogram_kernel", "TILE")
    sums = launch_values(monkeypatch, H, "_sum_copies_kernel", "COPIES")
    pol_tile = SMALL["TILE"] if interpreter_active() else 8192
    for bins, n, max_private in ((64, 4 * 64, 2048), (300, 4 * 300, 2048), (300, 4 * 300, 32),
                                 (64, 4 * 64 + 1, 2048), (300, 4 * 300 + 1, 32)):
        x = make_data("random", n, torch.float32) * 4
        x[:5] = torch.tensor([-4.0, 4.0, 0.0, -0.0, 3.99])
        x = x.to(dtype) if dtype.is_floating_point else (x * 10).to(dtype)
        lo, hi = (-4, 4) if dtype.is_floating_point else (-40, 40)
        cfg = {"GMEM_MAX_ITEMS_PER_BIN": 4, "PRIVATE_ALGO": algo, "MAX_PRIVATE_BINS": max_private, "ATOMIC_COPIES": 8,
               "TILE": pol_tile}
        del private[:], tiles[:], sums[:]
        with policy.override("histogram", {**SMALL, **cfg} if interpreter_active() else cfg):
            out = ops.histc(x, bins, lo, hi)
        assert out.dtype == dtype
        ref = _ref_even(x, lo, hi, bins, top_inclusive=True).to(dtype)
        assert_equal(out.cpu(), ref, msg=f"bins={bins} n={n}")
        case = (bins, n, max_private, private, tiles, sums)
        if n <= 4 * bins:
            assert private == [False] and tiles == [_gmem_tile(n, pol_tile)] and not sums, case
        elif algo == 2 and not interpreter_active():   # (the shared-memory kernel, whatever MAX_PRIVATE_BINS says)
            assert private == [] and not sums, case
        elif bins <= max_private:
            assert private == [True] and not sums, case
        else:   # (the global-atomic path's copies: several programs under the interpreter's small tiles)
            assert private == [False] and tiles == [pol_tile], case
            if interpreter_active():
                assert sums and sums[0] > 1, case


def test_histogram_gmem_path_weights_levels_channels(monkeypatch):
    """The global-atomic rule in bincount with weights (each weight added straight into the result), in
    histogram_range's bins and in multi_histogram_even, where it counts the active channels' samples only
    (4 channels, 2 active: 2 x 60 counted samples over 2 x 16 bins is 3.75 a bin, at most 4, though the
    input holds 240 items; 2 x 65 is more)."""
    private = launch_values(monkeypatch, H, "_histogram_kernel", "PRIVATE")
    sums = launch_values(monkeypatch, H, "_sum_copies_kernel", "COPIES")
    cfg = {"GMEM_MAX_ITEMS_PER_BIN": 4, "ATOMIC_COPIES": 8, "MAX_PRIVATE_BINS": 32}
    xi = torch.randint(0, 700, (1500,), device=DEVICE)
    xi[0] = 699
    w = torch.rand(1500, device=DEVICE, dtype=torch.float64)
    x = make_data("special", 1100, torch.float32)
    levels = torch.tensor([-300.0, -50.0, -1.0, 0.0, 0.5, 2.0, 120.0], device=DEVICE)
    pix = torch.randint(0, 256, (60, 4), device=DEVICE, dtype=torch.uint8)
    with policy.override("histogram", {**SMALL, **cfg} if interpreter_active() else cfg):
        cnt = ops.bincount(xi, w)
        out = H.histogram_range(x[:20], levels)   # (20 samples, 6 bins: sparse)
        assert private == [False, False] and not sums, (private, sums)
        mh = H.multi_histogram_even(pix.view(-1), 4, 2, [17, 17], [0, 0], [256, 256])
        assert private == [False, False, False] and not sums, (private, sums)
        del private[:]
        pix65 = torch.randint(0, 256, (65, 4), device=DEVICE, dtype=torch.uint8)
        mh65 = H.multi_histogram_even(pix65.view(-1), 4, 2, [17, 17], [0, 0], [256, 256])
        assert private == [True], private   # (2 x 65 counted samples over 32 bins: private histograms)
    torch.testing.assert_close(cnt.cpu(), torch.bincount(xi.cpu(), w.cpu()))
    xs, lv = x[:20].cpu().double(), levels.cpu().double()
    b = torch.searchsorted(lv, xs, right=True) - 1
    valid = (b >= 0) & (b < lv.numel() - 1) & ~torch.isnan(xs)
    assert_equal(out.cpu().long(), torch.bincount(b[valid], minlength=lv.numel() - 1))
    for c in range(2):
        assert_equal(mh[c].cpu().long(), torch.bincount(pix[:, c].cpu().long() // 16, minlength=16))
        assert_equal(mh65[c].cpu().long(), torch.bincount(pix65[:, c].cpu().long() // 16, minlength=16))


def test_histc_counts_dtype():
    """histc counts in its result's dtype where every count is exact there, else in integers."""
    assert H._histc_counts_dtype(torch.float32, 1 << 24) == torch.float32
    assert H._histc_counts_dtype(torch.float32, (1 << 24) + 1) == torch.int32
    assert H._histc_counts_dtype(torch.float64, 1 << 40) == torch.float64
    assert H._histc_counts_dtype(torch.float16, 10) == torch.int32
    assert H._histc_counts_dtype(torch.bfloat16, 10) == torch.int32
    assert H._histc_counts_dtype(torch.int64, 10) == torch.int64
    assert H._histc_counts_dtype(torch.int32, 10) == torch.int32
    assert H._histc_counts_dtype(torch.int32, 2 ** 31) == torch.int64
    assert H._histc_counts_dtype(torch.int16, 10) == torch.int32


#: items of the replay tests: several programs and a ragged last tile; on a GPU enough tiles for several
#: histogram copies
REPLAY_N = 3 * TILE * 2 + 77 if interpreter_active() else 200_003


def _counted_replays(monkeypatch) -> list:
    """An empty cache of remembered histogram launches, and a list that gets an entry per replay (under
    the interpreter, replays run through ``interpreter_replays``' stand-in launcher)."""
    from helpers import count_calls, interpreter_replays
    if DEVICE != "cuda":
        return interpreter_replays(monkeypatch, H, ("_HIST_REPLAYS",))
    monkeypatch.setattr(H, "_HIST_REPLAYS", {})
    return count_calls(monkeypatch, H, "replay")


@pytest.mark.parametrize("bins,cfg", [(13, {}), (300, {"MAX_PRIVATE_BINS": 64, "ATOMIC_COPIES": 8,
                                                         "PRIVATE_ALGO": 0})], ids=["private", "atomic-copies"])
def test_histc_replays(bins, cfg, monkeypatch):
    """A repeated histc (same size, dtype, alignment, bins and bounds as given) replays its remembered
    launches on a fresh zeroed histogram (with histogram copies, on fresh zeroed copies too): new data
    every call, an unaligned input (another key), every result checked, earlier results intact; other
    bounds (-0.0 for 0.0 included) are another problem; the data's own range is never remembered; a
    policy change plans afresh; inside a caller's recording of launches nothing is replayed."""
    from tritoncub import _launch
    replays = _counted_replays(monkeypatch)
    n = REPLAY_N
    g = torch.Generator().manual_seed(bins)

    def data(m):
        return (torch.randn(m, generator=g) * 3).to(DEVICE)

    def check(x, got, lo, hi):
        assert_equal(got.cpu(), torch.histc(x.cpu(), bins, lo, hi))

    with policy.override("histogram", {**SMALL, **cfg} if interpreter_active() else cfg):
        results = []
        for rep in range(4):
            base = data(n + 1)
            x = base[1:] if rep == 1 else base[:-1]   # rep 1: not 16-byte aligned
            results.append((x, ops.histc(x, bins, 0.0, 4.0)))
        for x, got in results:
            check(x, got, 0.0, 4.0)
        assert len(replays) == 2, replays   # (reps 2 and 3 replay rep 0's launches)
        # (the copies case replays with zeroed scratch copies; the private case needs none)
        assert [bool(entry[3]) for entry in H._HIST_REPLAYS.values()] == [bool(cfg)] * 2
        for rep in range(2):   # another key: recorded, then replayed
            x = data(n)
            check(x, ops.histc(x, bins, -0.0, 4.0), -0.0, 4.0)
        assert len(replays) == 3
        for rep in range(2):   # the data's own range: planned every call
            x = data(n)
            assert_equal(ops.histc(x, bins).cpu(), torch.histc(x.cpu(), bins))
        assert len(replays) == 3
    with policy.override("histogram", {**SMALL, "TILE": 512} if interpreter_active() else {"TILE": 4096}):
        for rep in range(2):
            x = data(n)
            check(x, ops.histc(x, bins, 0.0, 4.0), 0.0, 4.0)
    assert len(replays) == 4
    with _launch.record_launches() as rec:
        x = data(n)
        got = ops.histc(x, bins, 0.0, 4.0)
    check(x, got, 0.0, 4.0)
    assert len(replays) == 4 and len(rec) >= 1


@pytest.mark.parametrize("weights", [None, torch.float32, torch.int32], ids=str)
def test_bincount_replays(weights, monkeypatch):
    """A repeated bincount of the same problem (size, dtypes, alignments, and the result's size, known
    after the read-back of the max) replays its remembered launches on a fresh zeroed result: new data
    every call, an unaligned input, every result checked, earlier results intact; another max is
    another problem (recorded, not replayed)."""
    replays = _counted_replays(monkeypatch)
    n = REPLAY_N
    g = torch.Generator().manual_seed(5)

    def data(m, top):
        x = torch.randint(0, top, (m,), generator=g)
        x[m // 2] = top - 1   # (the result's size is top, every call)
        w = None if weights is None else (torch.rand(m, generator=g) * 100).to(weights)
        return x.to(DEVICE), None if w is None else w.to(DEVICE)

    results = []
    for rep in range(4):
        xb, wb = data(n + 1, 50)
        x, w = (xb[1:], None if wb is None else wb[1:]) if rep == 1 else (xb[:-1], None if wb is None else wb[:-1])
        results.append((x, w, ops.bincount(x, w)))
    x, w = data(n, 70)
    results.append((x, w, ops.bincount(x, w)))   # (another size of result: planned)
    for x, w, got in results:
        ref = torch.bincount(x.cpu(), None if w is None else w.cpu())
        if w is None:
            assert_equal(got.cpu(), ref)
        else:   # (float32 sums of ~4000 weights per bin, in another order than torch's)
            tol = 3e-4 if got.dtype == torch.float32 else 1e-12   # (n u: the worst case of ~4000 terms)
            torch.testing.assert_close(got.cpu(), ref.to(got.dtype), rtol=tol, atol=tol)
    assert len(replays) == 2, replays   # (reps 2 and 3; rep 1's unaligned input is another problem)


def test_histc_bad_input():
    x = torch.rand(10, device=DEVICE)
    with pytest.raises(ValueError, match="bins"):
        ops.histc(x, 0, 0, 1)
    with pytest.raises(ValueError, match="larger than min"):
        ops.histc(x, 4, 2, 1)
    with pytest.raises(TypeError, match="dtype bool"):
        ops.histc(torch.ones(10, dtype=torch.bool, device=DEVICE), 4, 0, 10)
    with pytest.raises(ValueError, match="not finite"):
        ops.histc(torch.tensor([1.0, math.nan], device=DEVICE), 4)


# ----------------------------------------------------------------------------------------------
# histc of integer samples: a model of torch's CUDA kernel in exact Python-int arithmetic
# ----------------------------------------------------------------------------------------------

HISTC_INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
INT_SIZES = [0, 1, TILE - 1, TILE + 1] if interpreter_active() else [0, 1, 4095, 4097, (1 << 20) + 3]


def _exact_even(vals, lo: int, hi: int, bins: int, top_inclusive: bool = False) -> np.ndarray:
    """int64 counts of the Python-int samples ``vals`` in ``bins`` equal bins of ``[lo, hi)`` (``[lo,
    hi]`` when ``top_inclusive``): bin ``(v - lo) * bins // (hi - lo)`` (exact: Python ints, no
    overflow), bin ``bins`` folded into the last."""
    v = np.array(list(vals), dtype=object)
    valid = (v >= lo) & ((v <= hi) if top_inclusive else (v < hi)) if v.size else np.zeros(0, bool)
    b = np.minimum((v[valid] - lo) * bins // (hi - lo), bins - 1).astype(np.int64)
    return np.bincount(b, minlength=bins).astype(np.int64)


def _to_i64(v) -> int:
    """torch's Scalar.to<int64_t>: a float truncated toward zero."""
    return math.trunc(v) if isinstance(v, float) else int(v)


def _histc_int_model(x: torch.Tensor, bins: int, mn, mx) -> torch.Tensor:
    """torch's CUDA histc of integer samples, as its source (aten/src/ATen/native/cuda/SummaryOps.cu)
    computes it: bounds converted to int64 (acc_type of every integer type); equal bounds replaced
    by the data's min and max, equal ones widened by 1 each side; a sample counts when
    ``lo <= v <= hi``, in bin ``(v - lo) * bins / (hi - lo)`` (int64 division), bin ``bins`` folded
    into the last; counts in ``x``'s dtype (atomics of that type: they wrap). Exact Python ints
    here: equal to torch wherever its int64 products do not overflow."""
    vals = x.cpu().reshape(-1).tolist()
    lo, hi = _to_i64(mn), _to_i64(mx)
    if lo == hi and vals:
        lo, hi = min(vals), max(vals)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    assert lo < hi
    return torch.from_numpy(_exact_even(vals, lo, hi, bins, top_inclusive=True)).to(x.dtype)


def _edge_samples(lo: int, hi: int, bins: int, dtype: torch.dtype) -> list:
    """Every bin's first value, the values beside it, the bounds and the dtype's extremes (those
    that the dtype holds)."""
    info = torch.iinfo(dtype)
    w = hi - lo
    vals = {lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, info.min, info.min + 1, info.max, info.max - 1, 0}
    for b in range(bins + 1):
        e = lo - (-b * w // bins)    # lo + ceil(b * w / bins)
        vals.update((e - 1, e, e + 1))
    return sorted(v for v in vals if info.min <= v <= info.max)


def _int_tensor(vals, dtype: torch.dtype) -> torch.Tensor:
    """Python ints into a ``dtype`` tensor (uint64 through int64 bit patterns)."""
    if dtype == getattr(torch, "uint64", None):
        return torch.tensor([v - (1 << 64) if v >= 1 << 63 else v for v in vals],
                            dtype=torch.int64).view(torch.uint64).to(DEVICE)
    return torch.tensor(list(vals), dtype=dtype, device=DEVICE)


def _random_ints(n: int, dtype: torch.dtype, lo: int, hi: int, gen: torch.Generator) -> torch.Tensor:
    """``n`` random samples of ``dtype`` spread a little beyond ``[lo, hi]``, clamped to the dtype."""
    info = torch.iinfo(dtype)
    a, b = max(info.min, lo - 3), min(info.max, hi + 3)
    return torch.randint(a, min(b + 1, 2**63 - 1), (n,), generator=gen, dtype=torch.int64).to(dtype).to(DEVICE)


@pytest.mark.parametrize("n", INT_SIZES)
@pytest.mark.parametrize("dtype", HISTC_INT_DTYPES)
def test_histc_int_matches_model(n, dtype):
    """Random samples (fresh seed) around and inside ranges that do not divide into the bins, a
    float range truncated to ints, a unit-width range (no division) and the data's own range."""
    gen = torch.Generator().manual_seed(int(torch.randint(0, 2**31 - 1, (1,))))
    info = torch.iinfo(dtype)
    for bins, mn, mx in ((7, max(info.min, -100), 100), (13, -0.5, 50.7), (255, 0, 255), (3, 5, 5)):
        x = _random_ints(n, dtype, _to_i64(mn), _to_i64(mx), gen)
        out = ops.histc(x, bins, mn, mx)
        assert out.dtype == dtype and out.shape == (bins,)
        assert_equal(out.cpu(), _histc_int_model(x, bins, mn, mx), msg=f"bins={bins} [{mn}, {mx}]")


@pytest.mark.parametrize("dtype", HISTC_INT_DTYPES)
def test_histc_int_edges(dtype):
    """Samples on, just below and just above every bin edge, at min and max, outside the range and
    at the dtype's extremes; negative ranges; the full range of the dtype."""
    info = torch.iinfo(dtype)
    ranges = [(5, 0, 9), (7, -13, 30), (3, info.min, info.max), (64, info.min, 0 if info.min else 17)]
    for bins, lo, hi in ranges:
        x = _int_tensor(_edge_samples(lo, hi, bins, dtype), dtype)
        assert_equal(ops.histc(x, bins, lo, hi).cpu(), _histc_int_model(x, bins, lo, hi), msg=f"{bins} [{lo}, {hi}]")


def test_histc_int_range_rules():
    """The data's range when the int64 bounds are equal (also after truncation: 0.3 and 0.7 are
    both 0), widened around a single value; an empty input; counts wrapping in the input's dtype."""
    x = torch.tensor([3, 9, -4, 9, 0], dtype=torch.int32, device=DEVICE)
    for mn, mx in ((0, 0), (0.3, 0.7), (-0.9, 0.9), (6, 6)):
        assert_equal(ops.histc(x, 4, mn, mx).cpu(), _histc_int_model(x, 4, mn, mx), msg=f"[{mn}, {mx}]")
    same = torch.full((5,), -7, dtype=torch.int16, device=DEVICE)   # data range [-7, -7] -> [-8, -6]
    assert ops.histc(same, 2, 0, 0).cpu().tolist() == [0, 5]
    empty = torch.zeros(0, dtype=torch.int64, device=DEVICE)
    assert_equal(ops.histc(empty, 3, 4, 4).cpu(), torch.zeros(3, dtype=torch.int64))
    for dtype in (torch.int8, torch.uint8):  # 300 samples in one bin: 300 mod 256 in an 8-bit count
        x = torch.full((300,), 5, dtype=dtype, device=DEVICE)
        out = ops.histc(x, 2, 0, 10)
        assert out.cpu().tolist() == [0, 44]
        assert_equal(out.cpu(), _histc_int_model(x, 2, 0, 10))


def test_histc_int64_extremes():
    """int64 ranges where CUDA torch's ``(s - min) * bins`` overflows int64 (there its result is
    undefined: wrapped bins, writes outside the histogram): exact bins here, equal to the model."""
    top, bot = 2**63 - 1, -2**63
    for bins, lo, hi in ((10, bot, top), (3, bot, 0), (7, -2**62 - 5, 2**62 + 3), (1000, 0, top), (2, top - 4, top)):
        x = _int_tensor(_edge_samples(lo, hi, bins, torch.int64), torch.int64)
        assert_equal(ops.histc(x, bins, lo, hi).cpu(), _histc_int_model(x, bins, lo, hi), msg=f"{bins} [{lo}, {hi}]")
    x = torch.tensor([bot, top, 0], dtype=torch.int64, device=DEVICE)
    assert_equal(ops.histc(x, 4, 0, 0).cpu(), _histc_int_model(x, 4, 0, 0))   # the data's range, 2^64 - 1 wide


def test_histc_int_bad_input():
    x = torch.arange(10, device=DEVICE)
    with pytest.raises(ValueError, match="larger than min"):
        ops.histc(x, 4, 5, 3)
    with pytest.raises(ValueError, match="larger than min"):
        ops.histc(x, 4, 5.9, 5.1 - 1)
    for bad in (2**63, 2**64 - 1, -2.0**63 - 2**11, 2.0**63, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="cannot be converted to int64"):
            ops.histc(x, 4, 0, bad)
    with pytest.raises(OverflowError):   # torch's argument parsing: no Scalar holds it
        ops.histc(x, 4, -2**63 - 1, 0)
    top = torch.full((3,), 2**63 - 1, dtype=torch.int64, device=DEVICE)
    with pytest.raises(ValueError, match="overflows int64"):
        ops.histc(top, 4)
    with pytest.raises(ValueError, match="overflows int64"):
        ops.histc(torch.zeros(0, dtype=torch.int64, device=DEVICE), 4, -2**63, -2**63)
    for dtype in (torch.bool, torch.uint16, torch.uint32, torch.uint64):
        with pytest.raises(TypeError, match="does not take either"):
            ops.histc(torch.zeros(3, dtype=dtype, device=DEVICE), 4, 0, 1)
    with pytest.raises(ValueError, match="bins"):
        ops.histc(x, 0, 0, 1)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HISTC_INT_DTYPES)
def test_histc_int_matches_torch_cuda_gpu(dtype):
    """The operator and the model against torch's CUDA histc itself, for every integer dtype: random
    samples, every bin edge, truncated float bounds, the data's range, counts that wrap."""
    gen = torch.Generator().manual_seed(7)
    info = torch.iinfo(dtype)
    # no range whose (max - min) * bins overflows int64: torch's kernel is undefined there
    full = (1000, info.min, info.max) if dtype != torch.int64 else (1000, -2**52 - 7, 2**52)
    cases = [(7, max(info.min, -100), 100), (13, -0.5, 50.7), (256, 0, 255), (3, 5, 5), full, (5, 0.3, 0.7),
             (100, -2, 97)]
    for bins, mn, mx in cases:
        lo, hi = _to_i64(mn), _to_i64(mx)
        # (int64 extremes left out: the data's range of [5, 5] would be 2^64 - 1 wide)
        edges = [v for v in _edge_samples(lo, hi, bins, dtype) if abs(v) < 2**60]
        for x in (_random_ints((1 << 20) + 3, dtype, lo, hi, gen), _int_tensor(edges, dtype),
                  torch.full((1000,), min(max(lo, info.min), info.max), dtype=dtype, device="cuda")):
            ref = torch.histc(x, bins, mn, mx)
            assert_equal(ops.histc(x, bins, mn, mx), ref, msg=f"{dtype} bins={bins} [{mn}, {mx}]")
            if x.numel() < 10000:
                assert_equal(_histc_int_model(x, bins, mn, mx), ref.cpu(), msg=f"model {dtype} bins={bins}")


# ----------------------------------------------------------------------------------------------
# histogram_even of int64/uint64 samples over any integer range (the wide exact path)
# ----------------------------------------------------------------------------------------------

_U64 = getattr(torch, "uint64", None)
WIDE_RANGES = [
    (torch.int64, -2**63, 2**63, 7), (torch.int64, -2**63, 2**63 - 1, 10), (torch.int64, -2**62 - 3, 2**62 + 5, 13),
    (torch.int64, 0, 2**62 + 1, 2), (torch.int64, 2**62, 2**62 + 2**61 + 7, 9), (torch.int64, -2**63, -2**62, 1000),
    (torch.int64, -2**70, 2**70 + 11, 6), (torch.int64, 2**62 - 5, 2**62 + 7, 5),
    (torch.uint64, 0, 2**64, 7), (torch.uint64, 0, 2**64 - 1, 11), (torch.uint64, 2**63 - 3, 2**64 - 1, 6),
    (torch.uint64, 5, 2**63 + 17, 3), (torch.uint64, 2**64 - 10, 2**64 + 10, 4), (torch.uint64, -5, 5, 3),
    (torch.int8, -1000, 2**63 + 100, 5), (torch.int32, -2**40, 2**62, 100),
]


def _range_id(r):
    return f"{str(r[0]).replace('torch.', '')}-{r[1]}-{r[2]}-{r[3]}"


@pytest.mark.parametrize("rng", WIDE_RANGES, ids=_range_id)
def test_histogram_even_wide_ranges(rng):
    """Ranges near +-2^62 and 2^63, the whole of int64/uint64 (upper bound inclusive of the largest
    value or not), bounds beyond the samples' type: samples on and beside every bin edge, at the
    bounds and the type's extremes, and random ones, against exact Python-int bins."""
    dtype, lo, hi, bins = rng
    gen = torch.Generator().manual_seed(int(torch.randint(0, 2**31 - 1, (1,))))
    info = torch.iinfo(dtype)
    a, b = max(info.min, lo), min(info.max, hi)
    rand = [a + int(f * (b - a)) for f in torch.rand(200, generator=gen, dtype=torch.float64).tolist()]
    vals = _edge_samples(lo, hi, bins, dtype) + rand
    x = _int_tensor(vals, dtype)
    out = H.histogram_even(x, bins + 1, lo, hi, counter_dtype=torch.int64)
    assert_equal(out.cpu(), torch.from_numpy(_exact_even(vals, lo, hi, bins)))


@pytest.mark.parametrize("name", ["uint16", "uint32"])
def test_histogram_even_unsigned_16_32(name):
    """uint16 and uint32 samples (no torch histc for them): every bin edge, the type's extremes and
    random samples, against exact Python-int bins; a range past 2^31 for uint32."""
    dtype = getattr(torch, name, None)
    if dtype is None:
        pytest.skip(f"no torch.{name} in this torch")
    top = (1 << 16) - 1 if name == "uint16" else (1 << 32) - 1
    gen = torch.Generator().manual_seed(int(torch.randint(0, 2**31 - 1, (1,))))
    for lo, hi, bins in ((0, top, 7), (100, 40000, 33), (3, top // 2 + 7, 5)):
        rand = [int(f * top) for f in torch.rand(300, generator=gen, dtype=torch.float64).tolist()]
        vals = _edge_samples(lo, hi, bins, dtype) + rand
        x = torch.tensor(vals, dtype=torch.int64).to(dtype).to(DEVICE)
        out = H.histogram_even(x, bins + 1, lo, hi, counter_dtype=torch.int64)
        assert_equal(out.cpu(), torch.from_numpy(_exact_even(vals, lo, hi, bins)), msg=f"{name} [{lo}, {hi}) {bins}")


def test_histogram_even_wide_paths_and_channels():
    """The wide path through the per-sample atomics and the tensor-core one-hot counts, and per
    channel in a multi-channel histogram next to int64-safe channels."""
    lo, hi, bins = -2**62 - 3, 2**63 - 1, 300
    vals = _edge_samples(lo, hi, bins, torch.int64)
    x = _int_tensor(vals, torch.int64)
    ref = torch.from_numpy(_exact_even(vals, lo, hi, bins))
    for cfg in ({"MAX_PRIVATE_BINS": 128, "ATOMIC_COPIES": 8}, {"PRIVATE_ALGO": 1}):
        with policy.override("histogram", {**SMALL, **cfg} if interpreter_active() else cfg):
            assert_equal(H.histogram_even(x, bins + 1, lo, hi, counter_dtype=torch.int64).cpu(), ref, msg=str(cfg))
    n = x.numel() - x.numel() % 3
    chans = [(lo, hi, 17), (-100, 100, 8), (0, 2**64, 5)]
    hs = H.multi_histogram_even(x[:n], 3, 3, [c[2] + 1 for c in chans], [c[0] for c in chans], [c[1] for c in chans])
    for c, (h, (clo, chi, cb)) in enumerate(zip(hs, chans)):
        assert_equal(h.cpu().long(), torch.from_numpy(_exact_even(vals[c:n:3], clo, chi, cb)), msg=f"channel {c}")


def test_histogram_even_whole_float_bounds_are_exact():
    """Whole-number float bounds of integer samples (``0.0``, ``float(2**62)``) bin exactly, as int
    bounds: near 2^62 float64 binning would move edge samples; in a multi-channel histogram too."""
    w = 2**62
    lo, hi, bins = 0, w, 3
    vals = _edge_samples(lo, hi, bins, torch.int64)
    x = _int_tensor(vals, torch.int64)
    ref = torch.from_numpy(_exact_even(vals, lo, hi, bins))
    assert_equal(H.histogram_even(x, bins + 1, 0.0, float(w), counter_dtype=torch.int64).cpu(), ref)
    n = x.numel() - x.numel() % 2
    hs = H.multi_histogram_even(x[:n], 2, 2, [bins + 1, 5], [0.0, -100], [float(w), 100.0])
    for c, (h, (clo, chi, cb)) in enumerate(zip(hs, [(lo, hi, bins), (-100, 100, 4)])):
        assert_equal(h.cpu().long(), torch.from_numpy(_exact_even(vals[c:n:2], clo, chi, cb)), msg=f"channel {c}")


@pytest.mark.gpu
@pytest.mark.parametrize("algo", [0, 1, 2])
def test_histogram_even_wide_gpu(algo):
    """The wide exact path compiled, through every counting path (shared-memory atomics included)."""
    for dtype, lo, hi, bins in WIDE_RANGES[:4] + WIDE_RANGES[8:11]:
        vals = _edge_samples(lo, hi, bins, dtype) * 64
        x = _int_tensor(vals, dtype)
        with policy.override("histogram", {"PRIVATE_ALGO": algo}):
            out = H.histogram_even(x, bins + 1, lo, hi)
        assert_equal(out.cpu().long(), torch.from_numpy(_exact_even(vals, lo, hi, bins)), msg=_range_id((dtype, lo, hi, bins)))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64])
@pytest.mark.parametrize("levels", [(257, 0, 256), (17, -100, 100), (5, 3, 4)])
def test_histogram_even_int(dtype, levels):
    x = make_data("random", 1500, dtype)
    num_levels, lo, hi = levels
    out = H.histogram_even(x, num_levels, lo, hi)
    assert out.dtype == torch.int32
    assert_equal(out.cpu().long(), _ref_even(x, lo, hi, num_levels - 1))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_histogram_even_float_upper_exclusive(dtype):
    x = make_data("special", 1300, dtype)
    out = H.histogram_even(x, 65, -100.0, 100.0, counter_dtype=torch.int64)
    assert out.dtype == torch.int64
    assert_equal(out.cpu(), _ref_even(x, -100.0, 100.0, 64))
    edge = torch.tensor([-100.0, 100.0, 0.0], dtype=dtype, device=DEVICE)
    got = H.histogram_even(edge, 3, -100.0, 100.0).cpu().tolist()
    assert got == [1, 1]  # -100 in bin 0, 0 in bin 1, the upper bound 100 excluded
    # the docstring's example: (0.7 - 0) * 10 / 1 rounds to 7 (exact arithmetic: 0.7 < 7 * 0.1, bin 6)
    seven = H.histogram_even(torch.tensor([0.7], dtype=dtype, device=DEVICE), 11, 0.0, 1.0).cpu()
    assert seven.tolist() == [0] * 7 + [1, 0, 0]


def test_histogram_many_bins_atomic_path():
    x = torch.randint(0, 70000, (3000,), device=DEVICE, dtype=torch.int32)
    out = H.histogram_even(x, 65537, 0, 65536)
    assert_equal(out.cpu().long(), _ref_even(x, 0, 65536, 65536))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_histogram_range(dtype):
    x = make_data("special" if dtype.is_floating_point else "random", 1100, dtype)
    if dtype.is_floating_point:
        levels = torch.tensor([-300.0, -50.0, -1.0, 0.0, 0.5, 2.0, 120.0], device=DEVICE)
    else:
        levels = torch.tensor([-2**31, -10**6, 0, 5, 10**8, 2**31 - 1], device=DEVICE, dtype=torch.int64)
    out = H.histogram_range(x, levels)
    xs, lv = x.cpu().double(), levels.cpu().double()
    b = torch.searchsorted(lv, xs, right=True) - 1
    valid = (b >= 0) & (b < lv.numel() - 1) & ~torch.isnan(xs)
    assert_equal(out.cpu().long(), torch.bincount(b[valid], minlength=lv.numel() - 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_histogram_even_ranges_near_float_max(dtype):
    """Bounds whose range times the bin count passes the float32 maximum: the bins of the documented
    rule (``(s - lower) * bins`` in fp32 overflowed first: finite samples in bin 0 here, the last bin on
    a GPU; with the range itself past it, every sample in bin 0). fp16 samples are binned in fp32 too."""
    if dtype == torch.float32:
        x = torch.tensor([2.9e38, 1e38, 1.0, -2.9e38, -7e37, 0.0], device=DEVICE)
    else:
        x = torch.tensor([60000.0, -60000.0, 1.0, -0.0, 3.0, -2.0], device=DEVICE).half()
    xs = x.cpu().double()
    for lower, upper, bins in ((0.0, 3e38, 4), (-3.2e38, 3.2e38, 4), (-3e38, 3e38, 7)):
        got = H.histogram_even(x, bins + 1, lower, upper)
        lo, hi = float(np.float32(lower)), float(np.float32(upper))
        keep = (xs >= lo) & (xs < hi)
        b = torch.floor((xs[keep] - lo) * bins / (hi - lo)).long()
        assert_equal(got.cpu().long(), torch.bincount(b, minlength=bins), msg=f"{lower}, {upper}, {bins}")
    hs = H.multi_histogram_even(torch.tensor([2.9e38, 5.0, 1e38, 6.0], device=DEVICE), 2, 2, [5, 3], [0.0, 0.0],
                                [3e38, 10.0])
    assert [h.cpu().tolist() for h in hs] == [[0, 1, 0, 1], [0, 2]]


def _ref_range_exact(x, levels):
    """Bin counts by Python integers (no rounding, no wraparound)."""
    lv = [int(v) for v in levels.cpu().tolist()]
    counts = [0] * (len(lv) - 1)
    for v in x.cpu().tolist():
        for j in range(len(lv) - 1):
            if lv[j] <= int(v) < lv[j + 1]:
                counts[j] += 1
                break
    return torch.tensor(counts)


U64 = getattr(torch, "uint64", None)


@pytest.mark.skipif(U64 is None, reason="no torch.uint64 here")
@pytest.mark.parametrize("case", ["u64-both", "signed-samples", "u64-samples-signed-levels", "narrow-samples"])
def test_histogram_range_64bit_unsigned_exact(case):
    """uint64 samples or levels are compared exactly (as float64, samples past 2^53 went to the wrong
    bin; levels past 2^63 wrapped negative)."""
    big = 2**63
    if case == "u64-both":
        x = torch.tensor([big + 2000, big + 999, big + 1000, 0, 2**64 - 1, big - 1], dtype=U64)
        levels = torch.tensor([0, big - 1, big + 1000, big + 3000, 2**64 - 1], dtype=U64)
    elif case == "signed-samples":
        x = torch.tensor([5, 2**62, -3, big - 1, -big, 0])
        levels = torch.tensor([0, 6, big + 10], dtype=U64)
    elif case == "u64-samples-signed-levels":
        x = torch.tensor([0, 1, 2, 5, 2**64 - 1, big], dtype=U64)
        levels = torch.tensor([-10, -5, 0, 3, 6, big - 1])
    else:
        x = torch.tensor([0, 7, 255, 128], dtype=torch.uint8)
        levels = torch.tensor([1, 128, big + 5], dtype=U64)
    out = H.histogram_range(x.to(DEVICE), levels.to(DEVICE))
    assert_equal(out.cpu().long(), _ref_range_exact(x, levels))


@pytest.mark.parametrize("active", [1, 3, 4])
def test_multi_histogram_even_rgba(active):
    px = torch.randint(0, 256, (600 * 4,), dtype=torch.uint8, device=DEVICE)
    levels = [257, 17, 5, 65][:active]
    hs = H.multi_histogram_even(px, 4, active, levels, [0] * active, [256] * active)
    assert len(hs) == active
    for c, h in enumerate(hs):
        assert_equal(h.cpu().long(), _ref_even(px[c::4], 0, 256, levels[c] - 1), msg=f"channel {c}")


def test_histogram_bad_input():
    x = torch.rand(10, device=DEVICE)
    with pytest.raises(ValueError, match="upper .* beyond the float range"):   # (float samples bin in floats)
        H.histogram_even(x, 3, 0, 10 ** 400)
    # integer samples bin exactly for any Python-int range
    assert_equal(H.histogram_even(torch.tensor([1, 2, -3], device=DEVICE), 3, -10 ** 400, 10 ** 400).cpu(),
                 torch.tensor([1, 2], dtype=torch.int32))
    with pytest.raises(ValueError, match="num_levels"):
        H.histogram_even(x, 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="smaller than upper"):
        H.histogram_even(x, 3, 1.0, 0.0)
    with pytest.raises(ValueError, match="multiple of num_channels"):
        H.multi_histogram_even(torch.zeros(7, dtype=torch.uint8, device=DEVICE), 4, 4, [3] * 4, [0] * 4, [9] * 4)
    with pytest.raises(TypeError):
        H.histogram_even([1, 2], 3, 0, 1)
    with pytest.raises(TypeError, match="num_levels must be a list or tuple"):   # (scalars for one channel)
        H.multi_histogram_even(torch.zeros(8, dtype=torch.uint8, device=DEVICE), 2, 1, 3, 0, 9)
    with pytest.raises(TypeError, match="num_channels must be an int"):
        H.multi_histogram_even(torch.zeros(8, dtype=torch.uint8, device=DEVICE), 2.0, 1, [3], [0], [9])
    with pytest.raises(ValueError, match="channels' bins"):   # (each channel's alone is allowed)
        H.multi_histogram_even(torch.tensor([0, 1, 5, 0], dtype=torch.int32, device=DEVICE), 2, 2,
                               [2 ** 31, 3], [0, 0], [2 ** 31 - 1, 2])
    with pytest.raises(TypeError, match="num_channels must be an int"):   # (checked before its range)
        H.multi_histogram_even(torch.zeros(8, dtype=torch.uint8, device=DEVICE), "2", 1, [3], [0], [9])
    with pytest.raises(TypeError, match="lower must be"):
        H.histogram_even(x, 3, True, 1.0)
    with pytest.raises(TypeError, match="validate must be a bool"):
        H.histogram_range(x, torch.tensor([0.0, 1.0], device=DEVICE), validate=1)
    with pytest.raises(ValueError, match="one float64 value"):   # (float samples, int bounds 1 apart near 2^60)
        H.histogram_even(x, 3, 2 ** 60, 2 ** 60 + 1)
    with pytest.raises(ValueError, match="ascending"):
        H.histogram_range(x, torch.tensor([3.0, 0.0, 5.0], device=DEVICE), validate=True)
    with pytest.raises(ValueError, match="no NaN"):
        H.histogram_range(x, torch.tensor([0.0, float("nan"), 5.0], device=DEVICE), validate=True)


def test_histogram_even_bounds_one_fp32_value_apart():
    """Bounds distinct as Python floats but one value in fp32 (the samples' arithmetic) are binned in fp64
    (they gave an all-zero histogram: an fp32 range of zero width); numpy scalars are taken as numbers."""
    x = torch.tensor([1.0, 1.0, 1.0, 0.5, 2.0], device=DEVICE)   # (three samples at lower: bin 0; two outside)
    assert_equal(H.histogram_even(x, 3, 1.0, 1.0 + 1e-10).cpu(), torch.tensor([3, 0], dtype=torch.int32))
    assert_equal(H.histogram_even(torch.zeros(3, device=DEVICE), 3, 0.0, 1e-46).cpu(),
                 torch.tensor([3, 0], dtype=torch.int32))
    (h,) = H.multi_histogram_even(torch.tensor([1.0, 5.0], device=DEVICE), 2, 1, [3], [1.0], [1.0 + 1e-10])
    assert_equal(h.cpu(), torch.tensor([1, 0], dtype=torch.int32))
    assert_equal(H.histogram_even(torch.arange(4.0, device=DEVICE), np.int64(3), np.int64(0), np.float32(4)).cpu(),
                 torch.tensor([2, 2], dtype=torch.int32))


@pytest.mark.parametrize("n", [0, 1, 900])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_bincount_matches_torch(n, dtype):
    x = torch.randint(0, 60, (n,), device=DEVICE).to(dtype)
    assert_equal(ops.bincount(x).cpu(), torch.bincount(x.cpu()))
    assert_equal(ops.bincount(x, None, 100).cpu(), torch.bincount(x.cpu(), minlength=100))
    for wd in (torch.float32, torch.float64, torch.int32):
        w = (torch.rand(n, device=DEVICE) * 10).to(wd)
        out = ops.bincount(x, w, 3)
        ref = torch.bincount(x.cpu(), w.cpu(), 3)
        assert out.dtype == ref.dtype
        torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n", [1, 900])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int16, torch.uint8])
def test_bincount_weights_deterministic_mode(n, dtype, monkeypatch):
    """Under torch.use_deterministic_algorithms(True) weighted bincount sums each value's weights in a
    fixed order (a stable sort by value, then one segment sum per value): torch's sums, the same bits
    every call; unweighted counts take the usual path."""
    sorts = count_calls(monkeypatch, H, "radix_sort_pairs")
    x = torch.randint(0, 60, (n,), device=DEVICE).to(dtype)
    x[: n // 3] = 7   # (a long run of one value)
    for wd in (torch.float32, torch.float64, torch.int32, torch.float16):
        w = ((torch.rand(n, device=DEVICE) - 0.3) * 10).to(wd)
        with deterministic_algorithms():
            a, b = ops.bincount(x, w, 70), ops.bincount(x, w, 70)
            c = ops.bincount(x)
        ref = torch.bincount(x.cpu(), w.cpu(), 70)
        assert a.dtype == ref.dtype and a.shape == ref.shape
        torch.testing.assert_close(a.cpu(), ref, rtol=1e-5, atol=1e-4)
        assert_equal(a, b, signed_zero=True, msg="two calls")
        assert_equal(c.cpu(), torch.bincount(x.cpu()))
    assert len(sorts) == 8


def test_bincount_bad_input():
    with pytest.raises(ValueError, match="non-negative"):
        ops.bincount(torch.tensor([1, -2], device=DEVICE))
    with pytest.raises(TypeError, match="dtype"):
        ops.bincount(torch.tensor([1.0], device=DEVICE))
    with pytest.raises(ValueError, match="dimension"):
        ops.bincount(torch.zeros(2, 2, dtype=torch.int64, device=DEVICE))
    # 2^31 bins or more: refused (their int32 bin indices would wrap), whether from max(x) or minlength
    w = torch.ones(2, device=DEVICE)
    for x, minlength in (([5, 2 ** 31 - 1], 0), ([5, 2 ** 31 + 3], 0), ([5], 2 ** 31)):
        with pytest.raises(ValueError, match="2\\^31 - 1"):
            ops.bincount(torch.tensor(x, device=DEVICE), w[:len(x)], minlength)
    assert ops.bincount(torch.tensor([5, 2 ** 20], device=DEVICE), w)[5].item() == 1   # (a wide one works)


def test_histc_output_does_not_require_grad():
    # as torch.histc's (not differentiable): a loss that adds it in still backpropagates through the rest
    x = torch.rand(50, device=DEVICE, requires_grad=True)
    h = ops.histc(x, 4, 0, 1)
    assert not h.requires_grad and not torch.histc(x.detach().cpu().requires_grad_(), 4, 0, 1).requires_grad
    assert_equal(h.cpu(), torch.histc(x.detach().cpu(), 4, 0, 1))
    (x.sum() + h.sum()).backward()
    assert_equal(x.grad.cpu(), torch.ones(50))


@pytest.mark.parametrize("cfg", [{"TILE": 1024, "PROGRAMS_PER_SM": 16}, {"TILE": 2048, "num_warps": 8},
                                 {"TILE": 4096, "MAX_PRIVATE_BINS": 128}, {"TILE": 8192, "num_stages": 1},
                                 {"TILE": 4096, "PRIVATE_ALGO": 1, "num_warps": 8},
                                 {"TILE": 512, "PRIVATE_ALGO": 1, "MAX_PRIVATE_BINS": 2048, "num_warps": 4}])
def test_policy_configs(cfg):
    x = torch.randn(9000, device=DEVICE)
    with policy.override("histogram", cfg):
        for bins in (200, 300):
            assert_equal(ops.histc(x, bins, -3, 3).cpu(), torch.histc(x.cpu(), bins, -3, 3))


def test_opcheck():
    x = torch.randn(600, device=DEVICE)
    torch.library.opcheck(ops.histc, (x, 10, -1.0, 1.0))
    torch.library.opcheck(ops.histc, (torch.randint(-9, 50, (300,), device=DEVICE), 10, -3, 40))
    xi = torch.randint(0, 20, (300,), device=DEVICE)
    torch.library.opcheck(ops.bincount, (xi, None, 0))
    torch.library.opcheck(ops.bincount, (xi, torch.rand(300, device=DEVICE, dtype=torch.float64), 25))


@pytest.mark.parametrize("call", [
    lambda x, xi: ops.histc(x, 3, 0.0, math.inf), lambda x, xi: ops.histc(x, 3, -math.inf, 1.0),
    lambda x, xi: ops.histc(x, 3, math.nan, 1.0), lambda x, xi: ops.histc(x[:0], 3, math.inf, math.inf),
    lambda x, xi: ops.bincount(xi, x[:3]), lambda x, xi: ops.bincount(xi, x.view(2, 4)),
    lambda x, xi: ops.bincount(xi, x.to(torch.complex64))],
    ids=["histc-inf-max", "histc-inf-min", "histc-nan-min", "histc-empty-equal-inf", "bincount-weights-length",
         "bincount-weights-2d", "bincount-weights-complex"])
def test_fakes_refuse_what_the_ops_refuse(call):
    """The fake implementations (torch.compile's tracing) refuse the arguments that the operators refuse
    without reading data: histc's unequal bounds that are not finite, and equal infinite ones over an
    empty x (which has no range of its own to take), bincount's weights of another length, rank or
    dtype (they returned a result of the usual shape)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    x, xi = torch.randn(8, device=DEVICE), torch.randint(0, 5, (8,), device=DEVICE)
    with pytest.raises((ValueError, TypeError)) as real:
        call(x, xi)
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fx, fxi = mode.from_tensor(x), mode.from_tensor(xi)
    with mode, pytest.raises(type(real.value)):
        call(fx, fxi)


@pytest.mark.gpu
@pytest.mark.parametrize("bins", [256, 1000, 65536])
@pytest.mark.parametrize("algo", [0, 1, 2])
def test_histc_large_gpu(bins, algo):
    x = torch.rand(1 << 24, device="cuda")
    with policy.override("histogram", {"PRIVATE_ALGO": algo}):
        out = ops.histc(x, bins, 0, 1)
    ref = torch.histc(x, bins, 0, 1)
    # torch's float atomics are exact below 2^24 per bin, so the counts must agree exactly
    assert_equal(out, ref)
    assert int(out.sum()) == x.numel()


@pytest.mark.gpu
@pytest.mark.parametrize("bins", [1, 31, 256, 4097, 40000, 65536, 300000])
@pytest.mark.parametrize("copies,warps,tile,prefetch,half", [(1, 4, 512, 0, 0), (4, 4, 2048, 1, 16384),
                                                              (8, 8, 4096, 0, 0), (2, 16, 8192, 1, 16384),
                                                              (1, 16, 8192, 0, 0), (4, 8, 2048, 0, 1)])
def test_histogram_smem_path_gpu(bins, copies, warps, tile, prefetch, half, monkeypatch):
    """Shared-memory atomics (PRIVATE_ALGO=2): every copy count, warp count and tile size, bin
    counts that are not powers of two (with and without the next tile prefetched), that force fewer copies (40000 bins), bin chunks (65536 bins:
    2 chunks of 32768), too many chunks (300000 bins: the global-atomic path; with 16-bit counters 8
    chunks in shared memory), 16-bit counters from ``half`` bins on (0: never; any number of samples
    per bin here), adversarial samples
    (NaN, +-inf, -0.0, out of range, all equal), a ragged tail, int and multi-channel samples."""
    cfg = {"PRIVATE_ALGO": 2, "SMEM_COPIES": copies, "num_warps": warps, "TILE": tile, "PREFETCH": prefetch,
           "SMEM_HALF_MIN_BINS": half}
    monkeypatch.setattr(H, "_HALF_MIN_ITEMS_PER_BIN", 0)
    n = (1 << 20) + 3
    x = torch.randn(n, device="cuda") * 2
    x[::97] = float("nan")
    x[1::101] = float("inf")
    x[2::103] = float("-inf")
    x[3::107] = -0.0
    same = torch.full((tile * 3 + 5,), 0.25, device="cuda")
    u8 = torch.randint(0, 256, (n + 1,), dtype=torch.uint8, device="cuda")   # a multiple of 4 channels
    with policy.override("histogram", cfg):
        out = ops.histc(x, bins, -3, 3)
        out_same = ops.histc(same, bins, -3, 3)
        h8 = H.histogram_even(u8, min(bins, 256) + 1, 0, 256)
        hs = H.multi_histogram_even(u8, 4, 3, [bins + 1, 17, 5], [0, 0, 0], [256, 256, 256])
    assert_equal(out, torch.histc(x, bins, -3, 3))
    assert_equal(out_same, torch.histc(same, bins, -3, 3))
    assert_equal(h8.cpu().long(), _ref_even(u8, 0, 256, min(bins, 256)))
    for c, (h, lv) in enumerate(zip(hs, [bins + 1, 17, 5])):
        assert_equal(h.cpu().long(), _ref_even(u8[c::4], 0, 256, lv - 1), msg=f"channel {c}")


@pytest.mark.gpu
@pytest.mark.parametrize("bins", [2, 256, 65536])
@pytest.mark.parametrize("counter_dtype", [torch.int32, torch.int64])
def test_histogram_smem_half_counters_spill_gpu(bins, counter_dtype, monkeypatch):
    """16-bit shared-memory counters past their spill (2^15 counts a counter hands to the output):
    two hot bins that share a counter word (each program counts ~2^17 of each), a hot bin alone, and
    a uniform rest, into int32 and int64 counters, against a reference (and the counts' total)."""
    n = (1 << 25) + 7
    hot = torch.full((n,), 1.0 / bins + 0.5 / bins, device="cuda")   # bin 1
    hot[1::2] = 0.5 / bins                                            # bin 0: the same word
    if bins > 2:
        hot[2::5] = (bins - 1.5) / bins                               # bin bins - 2, alone in its half
    hot[3::7] = torch.rand(len(range(3, n, 7)), device="cuda")
    halves = _smem_launches(monkeypatch)
    with policy.override("histogram", {"PRIVATE_ALGO": 2, "SMEM_HALF_MIN_BINS": 1, "SMEM_COPIES": 1,
                                       "num_warps": 16, "TILE": 8192, "PROGRAMS_PER_SM": 1}):
        out = H.histogram_even(hot, bins + 1, 0.0, 1.0, counter_dtype=counter_dtype)
    assert out.dtype == counter_dtype
    assert_equal(out.cpu().long(), _ref_even(hot, 0.0, 1.0, bins))
    assert int(out.sum()) == n
    assert halves == [True]


def _smem_launches(monkeypatch) -> list:
    """Spy on the shared-memory histogram's launches (nothing replayed): the list gets each one's ``HALF``."""
    monkeypatch.setattr(H, "_HIST_REPLAYS", {})
    halves, real = [], H.launch

    def spy(kernel, grid, *args, **kwargs):
        if kernel is H._histogram_smem_kernel:
            halves.append(kwargs["HALF"])
        return real(kernel, grid, *args, **kwargs)
    monkeypatch.setattr(H, "launch", spy)
    return halves


@pytest.mark.gpu
@pytest.mark.parametrize("n,bins,max_chunks,half", [
    ((1 << 20) + 1, 65536, 8, False), ((1 << 25) + 3, 65536, 8, True), ((1 << 25) + 3, 32768, 8, False),
    (512 * (32768 + 1), 32768 + 1, 8, True), (512 * (32768 + 1) - 1, 32768 + 1, 8, False),
    ((1 << 20) + 1, 65536, 1, None), ((1 << 20) + 1, 32768, 1, False), ((1 << 20) + 1, 4 * 32768, 4, False),
    ((1 << 20) + 1, 4 * 32768 + 1, 4, None), (1 << 26, 2 * 65536, 2, True), (1 << 26, 2 * 65536, 1, None)])
def test_histogram_smem_half_counters_when_gpu(n, bins, max_chunks, half, monkeypatch):
    """16-bit counters from SMEM_HALF_MIN_BINS bins on, and only for at least 512 samples per bin (the
    rule's edges); at most SMEM_MAX_CHUNKS chunks of bins (32768 32-bit or 65536 16-bit counters each),
    else the global-atomic path (``half`` None: no shared-memory launch); the counts right every way."""
    x = torch.rand(n, device="cuda")
    halves = _smem_launches(monkeypatch)
    with policy.override("histogram", {"PRIVATE_ALGO": 2, "SMEM_HALF_MIN_BINS": 32768 + 1, "SMEM_COPIES": 1,
                                       "num_warps": 16, "TILE": 8192, "PROGRAMS_PER_SM": 1,
                                       "SMEM_MAX_CHUNKS": max_chunks}):
        out = ops.histc(x, bins, 0.0, 1.0)
    assert halves == ([] if half is None else [half])
    assert_equal(out, torch.histc(x, bins, 0.0, 1.0))


@pytest.mark.gpu
@pytest.mark.parametrize("bins", [7, 256, 1000])
@pytest.mark.parametrize("algo", [0, 2])
def test_histc_bin_edges_gpu(bins, algo):
    """Samples on, just below and just above every bin edge of ranges that are not powers of two:
    the fast bin division (thread/trunc_div.py) must put each where torch's IEEE division does."""
    gen = torch.Generator().manual_seed(bins)
    for lo, hi in ((0.0, 1.0), (-3.3, 7.1), (0.1, 0.30000001), (-1e4, 1e4 / 3)):
        lo32, hi32 = np.float32(lo), np.float32(hi)
        k = np.arange(bins + 1, dtype=np.float32)
        edges = (lo32 + k * ((hi32 - lo32) / np.float32(bins))).astype(np.float32)
        up, down = np.nextafter(edges, np.float32(np.inf)), np.nextafter(edges, np.float32(-np.inf))
        rand = (lo32 + torch.rand(5000, generator=gen).numpy() * (hi32 - lo32)).astype(np.float32)
        x = torch.from_numpy(np.concatenate([edges, up, down, rand] * 8)).cuda()
        with policy.override("histogram", {"PRIVATE_ALGO": algo}):
            out = ops.histc(x, bins, lo, hi)
        assert_equal(out, torch.histc(x, bins, lo, hi), msg=f"range [{lo}, {hi})")


def test_histc_fake_checks_like_the_op():
    """The fake implementation (torch.compile's shapes) refuses what the op refuses: dtypes torch's
    CUDA histc does not take, bins of 2^31 or more; it gives ``(bins,)`` in ``x``'s dtype otherwise."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        with pytest.raises(TypeError, match="histc"):
            torch.ops.tritoncub.histc(torch.empty(10, dtype=torch.bool), 4, 0, 1)
        with pytest.raises(ValueError, match="below 2"):
            torch.ops.tritoncub.histc(torch.empty(10), 2 ** 31, 0, 1)
        out = torch.ops.tritoncub.histc(torch.empty(10, dtype=torch.int16), 7, 0, 1)
        assert out.shape == (7,) and out.dtype == torch.int16


def test_histc_bincount_fakes_check_arguments_as_the_ops():
    ops = torch.ops.tritoncub
    with torch.device(DEVICE), torch._subclasses.fake_tensor.FakeTensorMode():
        with pytest.raises(ValueError, match="must be larger than min"):
            ops.histc(torch.empty(10), 4, 3, 1)
        with pytest.raises(TypeError):
            ops.bincount(torch.empty(10), None, 0)
        with pytest.raises(ValueError):
            ops.bincount(torch.empty(2, 5, dtype=torch.int64), None, 0)
        with pytest.raises(ValueError, match="minlength"):
            ops.bincount(torch.empty(5, dtype=torch.int64), None, -1)
        assert ops.histc(torch.empty(10), 4, 0, 1).shape == (4,)
        # (equal infinite bounds over data take the data's range: the op does not refuse them)
        assert ops.histc(torch.empty(10), 4, math.inf, math.inf).shape == (4,)
