"""DeviceHistogram (tritoncub.device.histogram) and the histc/bincount operators, against torch.

Under the interpreter a small tile (256 samples, at most 2 programs per "SM") forces several tiles
per program, a ragged last tile, and both counting paths (private tile histograms and per-sample
atomics, chosen by MAX_PRIVATE_BINS).
"""
import math

import numpy as np
import pytest
import torch

from helpers import DEVICE, assert_equal, make_data
from tritoncub import policy
from tritoncub._utils import interpreter_active
from tritoncub.device import histogram as H

SMALL = {"TILE": 256, "PROGRAMS_PER_SM": 2, "num_warps": 4}
TILE = 256
SIZES = [0, 1, 257, 3 * 256 * 4 + 77] if interpreter_active() else [0, 1, 4095, 4097, 1 << 20, (1 << 22) + 3]
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


def test_histc_bad_input():
    x = torch.rand(10, device=DEVICE)
    with pytest.raises(ValueError, match="bins"):
        ops.histc(x, 0, 0, 1)
    with pytest.raises(ValueError, match="larger than min"):
        ops.histc(x, 4, 2, 1)
    with pytest.raises(TypeError, match="dtype"):
        ops.histc(torch.arange(10, device=DEVICE), 4, 0, 10)
    with pytest.raises(ValueError, match="not finite"):
        ops.histc(torch.tensor([1.0, math.nan], device=DEVICE), 4)


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
    with pytest.raises(ValueError, match="num_levels"):
        H.histogram_even(x, 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="smaller than upper"):
        H.histogram_even(x, 3, 1.0, 0.0)
    with pytest.raises(ValueError, match="multiple of num_channels"):
        H.multi_histogram_even(torch.zeros(7, dtype=torch.uint8, device=DEVICE), 4, 4, [3] * 4, [0] * 4, [9] * 4)
    with pytest.raises(TypeError):
        H.histogram_even([1, 2], 3, 0, 1)
    with pytest.raises(ValueError, match="ascending"):
        H.histogram_range(x, torch.tensor([3.0, 0.0, 5.0], device=DEVICE), validate=True)
    with pytest.raises(ValueError, match="no NaN"):
        H.histogram_range(x, torch.tensor([0.0, float("nan"), 5.0], device=DEVICE), validate=True)


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


def test_bincount_bad_input():
    with pytest.raises(ValueError, match="non-negative"):
        ops.bincount(torch.tensor([1, -2], device=DEVICE))
    with pytest.raises(TypeError, match="dtype"):
        ops.bincount(torch.tensor([1.0], device=DEVICE))
    with pytest.raises(ValueError, match="dimension"):
        ops.bincount(torch.zeros(2, 2, dtype=torch.int64, device=DEVICE))


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
    xi = torch.randint(0, 20, (300,), device=DEVICE)
    torch.library.opcheck(ops.bincount, (xi, None, 0))
    torch.library.opcheck(ops.bincount, (xi, torch.rand(300, device=DEVICE, dtype=torch.float64), 25))


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
@pytest.mark.parametrize("copies,warps,tile,prefetch", [(1, 4, 512, 0), (4, 4, 2048, 1), (8, 8, 4096, 0),
                                                         (2, 16, 8192, 1), (1, 16, 8192, 0)])
def test_histogram_smem_path_gpu(bins, copies, warps, tile, prefetch):
    """Shared-memory atomics (PRIVATE_ALGO=2): every copy count, warp count and tile size, bin
    counts that are not powers of two (with and without the next tile prefetched), that force fewer copies (40000 bins), bin chunks (65536 bins:
    2 chunks of 32768), too many chunks (300000 bins: the global-atomic path), adversarial samples
    (NaN, +-inf, -0.0, out of range, all equal), a ragged tail, int and multi-channel samples."""
    cfg = {"PRIVATE_ALGO": 2, "SMEM_COPIES": copies, "num_warps": warps, "TILE": tile, "PREFETCH": prefetch}
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
