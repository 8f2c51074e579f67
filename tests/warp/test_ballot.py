"""warp_ballot_sum (the warp-synchronous count scan of tritoncub.warp.scan, compiled NVIDIA kernels
only) against numpy: per register slot of a warp-striped tile, the counts of the lower lanes summed
and the slot's total, for counts of 1..5 bits."""
import numpy as np
import pytest
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from helpers import striped_slot_offsets

from tritoncub.warp.scan import warp_ballot_sum


@gluon.jit
def _ballot_sum_kernel(c_ptr, lower_ptr, total_ptr, BITS: gl.constexpr, WARPS: gl.constexpr, SLOTS: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, SLOTS, 1], [1, 1, 32], [WARPS, 1, 1], [2, 1, 0])
    off = striped_slot_offsets(L, WARPS, SLOTS)
    lower, total = warp_ballot_sum(gl.load(c_ptr + off), BITS)
    gl.store(lower_ptr + off, lower)
    gl.store(total_ptr + off, total)


@pytest.mark.gpu
@pytest.mark.parametrize("bits", [1, 2, 3, 4, 5])
def test_warp_ballot_sum(bits):
    if not torch.cuda.is_available() or torch.version.hip is not None:
        pytest.skip("needs an NVIDIA GPU (compiled warp-synchronous code, inline PTX)")
    warps, slots = 4, 8
    rng = np.random.default_rng(bits)
    c = rng.integers(0, 1 << bits, size=(warps, slots, 32)).astype(np.int32)
    c[0, 0] = 0                 # an empty slot
    c[1, 1] = (1 << bits) - 1   # a full one
    dc = torch.from_numpy(c).cuda()
    lower = torch.full_like(dc, -1)
    total = torch.full_like(dc, -1)
    _ballot_sum_kernel[(1,)](dc, lower, total, BITS=bits, WARPS=warps, SLOTS=slots, num_warps=warps)
    ref_lower = np.cumsum(c, axis=2) - c
    ref_total = np.broadcast_to(c.sum(axis=2, keepdims=True), c.shape)
    np.testing.assert_array_equal(lower.cpu().numpy(), ref_lower)
    np.testing.assert_array_equal(total.cpu().numpy(), ref_total)
