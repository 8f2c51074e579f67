"""striped_shift_up and striped_last_lane (warp shuffles of tritoncub.warp.scan, compiled NVIDIA kernels
only) against torch: per register slot of a warp-striped tile, the next lower lane's value (lane 0: the
fill) and lane 31's value, or in the reverse direction the next higher lane's (lane 31: the fill) and
lane 0's; 32- and 64-bit values, moved bit for bit (NaN payloads, -0.0)."""
import pytest
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from helpers import striped_slot_offsets

from tritoncub.warp.scan import striped_last_lane, striped_shift_up


@gluon.jit
def _shuffles_kernel(v_ptr, fill_ptr, shift_ptr, last_ptr, REVERSE: gl.constexpr, WARPS: gl.constexpr,
                     SLOTS: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, SLOTS, 1], [1, 1, 32], [WARPS, 1, 1], [2, 1, 0])
    off = striped_slot_offsets(L, WARPS, SLOTS)
    v = gl.load(v_ptr + off)
    gl.store(shift_ptr + off, striped_shift_up(v, gl.load(fill_ptr + off), REVERSE))
    gl.store(last_ptr + off, striped_last_lane(v, REVERSE))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.int64, torch.float64], ids=str)
@pytest.mark.parametrize("reverse", [False, True])
def test_striped_shuffles(dtype, reverse):
    if not torch.cuda.is_available() or torch.version.hip is not None:
        pytest.skip("needs an NVIDIA GPU (compiled warp-synchronous code, inline PTX)")
    warps, slots = 4, 2
    bits = torch.int32 if dtype.itemsize == 4 else torch.int64
    # random bit patterns: NaNs with payloads, -0.0, denormals all move as raw bits
    v = torch.randint(torch.iinfo(bits).min, torch.iinfo(bits).max, (warps, slots, 32), dtype=bits).view(dtype)
    fill = torch.randint(torch.iinfo(bits).min, torch.iinfo(bits).max, (warps, slots, 32), dtype=bits).view(dtype)
    dv, dfill = v.cuda(), fill.cuda()
    shift = torch.zeros_like(dv)
    last = torch.zeros_like(dv)
    _shuffles_kernel[(1,)](dv, dfill, shift, last, REVERSE=reverse, WARPS=warps, SLOTS=slots, num_warps=warps)
    if reverse:
        ref_shift = torch.cat([v[..., 1:], fill[..., 31:]], -1)
        ref_last = v[..., :1].expand_as(v)
    else:
        ref_shift = torch.cat([fill[..., :1], v[..., :-1]], -1)
        ref_last = v[..., 31:].expand_as(v)
    assert torch.equal(shift.cpu().view(bits), ref_shift.view(bits))
    assert torch.equal(last.cpu().view(bits), ref_last.contiguous().view(bits))
