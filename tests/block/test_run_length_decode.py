"""BlockRunLengthDecode (tritoncub.block.run_length_decode): windows over the decoded sequence,
zero-length runs, windows past the end, against numpy's repeat."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import ALL_DTYPES, DEVICE, _np, make_data, poisoned
from tritoncub.block.run_length_decode import block_run_length_decode


@triton.jit
def _kernel(v_ptr, l_ptr, out_ptr, rel_ptr, tot_ptr, fill, RUNS: tl.constexpr, W: tl.constexpr):
    pid = tl.program_id(0)  # program p decodes window p
    r = tl.arange(0, RUNS)
    v = tl.load(v_ptr + r)
    lens = tl.load(l_ptr + r)
    dec, rel, total = block_run_length_decode(v, lens, pid * W, W, fill)
    j = tl.arange(0, W)
    tl.store(out_ptr + pid * W + j, dec)
    tl.store(rel_ptr + pid * W + j, rel)
    tl.store(tot_ptr + pid, total)


def _run(dtype, runs, window, max_len):
    v = make_data("special" if dtype.is_floating_point else "random", runs, dtype)
    lens = torch.randint(0, max_len + 1, (runs,), dtype=torch.int32)
    lens[0] = 0  # a zero-length first run
    lens[runs // 2] = 0
    total = int(lens.sum())
    programs = total // window + 2  # the last window is entirely past the end
    out = poisoned(programs * window, dtype)
    rel = poisoned(programs * window, torch.int64)
    tot = poisoned(programs, torch.int64)
    fill = 9.0 if dtype.is_floating_point else 9
    _kernel[(programs,)](v, lens.to(DEVICE), out, rel, tot, fill, RUNS=runs, W=window)
    vn, ln = _np(v), lens.numpy().astype(np.int64)
    dec = np.repeat(vn, ln)
    starts = np.concatenate([[0], np.cumsum(ln)[:-1]])
    relref = np.concatenate([np.arange(k) for k in ln]) if total else np.zeros(0, np.int64)
    m = programs * window
    exp = np.full(m, np.array([fill]).astype(vn.dtype)[0])
    exp[:total] = dec
    exp_rel = np.zeros(m, np.int64)
    exp_rel[:total] = relref
    np.testing.assert_array_equal(_np(out), exp, "decoded items")
    np.testing.assert_array_equal(_np(rel), exp_rel, "relative offsets")
    np.testing.assert_array_equal(_np(tot), np.full(programs, total), "total decoded size")
    del starts


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_run_length_decode_dtypes(dtype):
    _run(dtype, 16, 32, 6)


@pytest.mark.parametrize("runs,window,max_len", [(64, 16, 3), (4, 64, 40), (32, 8, 1)])
def test_run_length_decode_shapes(runs, window, max_len):
    _run(torch.int32, runs, window, max_len)
