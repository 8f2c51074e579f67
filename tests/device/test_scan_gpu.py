"""DeviceScan GPU stress tests (marked ``gpu``; skipped under the interpreter): many sizes and
repeated runs, so that tiles finish out of order and the look-back meets every state of its
predecessors. Integer results compared exactly every run, the reproducible mode bitwise across
runs. In their own file so that the GPU run gives them their own time limit."""
import pytest
import torch
import triton

from helpers import DEVICE, assert_equal
from tritoncub.device import scan as S


@pytest.mark.gpu
def test_stress_lookback_exact_and_reproducible():
    """Many sizes, repeated runs: integer scans exact every time (a look-back that combined a
    wrong or stale predecessor would show), the reproducible mode bitwise identical across runs."""
    g = torch.Generator(device=DEVICE).manual_seed(0)
    sizes = [4095, 4097, 123457, 1 << 20, (1 << 22) + 3, 10_000_019, (1 << 25) + 1]
    for n in sizes:
        x = torch.randint(-2**31, 2**31 - 1, (n,), device=DEVICE, generator=g, dtype=torch.int64).to(torch.int32)
        ref = torch.cumsum(x, 0)
        ref32 = torch.cumsum(x, 0, dtype=torch.int32)   # (wrapping int32 sums: the warp-synchronous kernel)
        for rep in range(4):
            assert_equal(S.inclusive_sum(x), ref, msg=f"int32 n={n} rep={rep}")
            assert_equal(S.inclusive_sum(x, deterministic=True), ref, msg=f"int32 det n={n} rep={rep}")
            assert_equal(S.inclusive_sum(x, dtype=torch.int32), ref32, msg=f"int32 acc n={n} rep={rep}")
            assert_equal(S.inclusive_sum(x, dtype=torch.int32, deterministic=True), ref32,
                         msg=f"int32 acc det n={n} rep={rep}")
        xs = (x // 65536).to(torch.int32)
        assert_equal(S.inclusive_sum(xs, dtype=torch.int32), torch.cumsum(xs, 0, dtype=torch.int32))
        v, i = S.cummax(xs, 0)
        rv, ri = torch.cummax(xs, 0)
        assert_equal(v, rv)
        assert_equal(i, ri)
        f = torch.randn(n, device=DEVICE, generator=g)
        first = S.inclusive_sum(f, deterministic=True)
        for rep in range(4):
            assert_equal(S.inclusive_sum(f, deterministic=True), first, signed_zero=True,
                         msg=f"deterministic float n={n} rep={rep}")
        ref_f = torch.cumsum(f.double(), 0)
        scale = torch.cumsum(f.double().abs(), 0)
        for out in (first, S.inclusive_sum(f)):
            assert float(((out.double() - ref_f).abs() / (scale + 1)).max()) < 1e-5
        fd = f.double()
        d1 = S.inclusive_sum(fd, deterministic=True)
        assert_equal(S.inclusive_sum(fd, deterministic=True), d1, signed_zero=True)
        assert float(((d1 - ref_f).abs() / (scale + 1)).max()) < 1e-12


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _add2(a0, a1, b0, b1):
    return a0 + b0, a1 + b1


@pytest.mark.gpu
@pytest.mark.parametrize("costly", [False, True], ids=["plain", "costly"])
def test_stress_portable_kernel_exact(costly):
    """The portable single-pass kernel (every scan but a sum's: cumprod, logcumsumexp, cummax, user
    operators) with an exact operator that is not idempotent (a user's ``+`` on integers: a running
    max would hide a predecessor taken twice), at its tuned tiles and at those of the costly
    buckets (logcumsumexp's: one value, and pairs of 8 and 16 bytes), in both modes, repeated: every
    item exact every run."""
    g = torch.Generator(device=DEVICE).manual_seed(3)
    for n in [4097, 123457, (1 << 22) + 3, (1 << 25) + 1]:
        for dtype in (torch.int32, torch.int64):
            x = torch.randint(-1000, 1000, (n,), device=DEVICE, generator=g, dtype=dtype)
            y = torch.randint(-1000, 1000, (n,), device=DEVICE, generator=g, dtype=dtype)
            ref = torch.cumsum(x, 0, dtype=dtype)
            ref_y = torch.cumsum(y, 0, dtype=dtype)
            for det in (False, True):
                for rep in range(3):
                    (out,), _ = S.scan_rows_launch((x,), _add, acc_dtypes=(dtype,), out_dtypes=(dtype,), dim=0,
                                                   deterministic=det, costly=costly)
                    assert_equal(out, ref, msg=f"{dtype} n={n} det={det} rep={rep}")
                    if costly:
                        (ox, oy), _ = S.scan_rows_launch((x, y), _add2, acc_dtypes=(dtype, dtype),
                                                         out_dtypes=(dtype, dtype), dim=0, deterministic=det,
                                                         costly=True)
                        assert_equal(ox, ref, msg=f"pairs {dtype} n={n} det={det} rep={rep}")
                        assert_equal(oy, ref_y, msg=f"pairs {dtype} n={n} det={det} rep={rep}")


@pytest.mark.gpu
def test_stress_rows_segments():
    g = torch.Generator(device=DEVICE).manual_seed(1)
    for shape in [(16, 1 << 20), (5, 3_000_001), (1000, 4099), (3000, 700)]:
        x = torch.randint(-2**20, 2**20, shape, device=DEVICE, generator=g, dtype=torch.int32)
        for rep in range(3):
            assert_equal(S.inclusive_sum(x, -1), torch.cumsum(x, -1))
        a = torch.rand(shape, device=DEVICE) * 0.2 + 0.9
        b = torch.randn(shape, device=DEVICE)
        _, rb = S.inclusive_scan((a, b), S.combine_linear_recurrence, dim=-1)
        assert torch.isfinite(rb).all()


@pytest.mark.gpu
def test_sums_past_2_to_31_items():
    """A sum over more than 2^31 items (int8 input): int32 accumulation (wrapping, as torch's) and
    torch's int64 promotion, compared with torch.cumsum over every item; the tile index, the tile
    offsets and the look-back stay exact past 32-bit item indices."""
    n = (1 << 31) + 4099
    free, _ = torch.cuda.mem_get_info()
    if free < 48 * 2**30:
        pytest.skip("needs 48 GiB of free GPU memory")
    g = torch.Generator(device=DEVICE).manual_seed(2)
    x = torch.randint(-1, 3, (n,), device=DEVICE, generator=g, dtype=torch.int8)
    ref = torch.cumsum(x, 0)                        # int64
    out = S.inclusive_sum(x)
    assert out.dtype == torch.int64 and torch.equal(out, ref)
    del out
    out32 = S.inclusive_sum(x, dtype=torch.int32)
    assert torch.equal(out32, ref.to(torch.int32))  # (the same wrapped values)
