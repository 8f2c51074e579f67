"""The decoupled look-back agent (tritoncub.agent.lookback).

Two kinds of test:

* hand-made status buffers (any mix of invalid / aggregate / inclusive slots, as tiles finishing
  out of order leave them) read by ``read_window`` / ``read_anchored_window``: the window's flag and
  value are checked against a Python model of the look-back. This is how out-of-order completion is
  tested under the interpreter, where programs run in order and never race;
* a whole single-pass chain (``tile_index`` → ``publish`` → ``look_back`` → ``publish``) over
  several segments, every value layout (packed 32-bit, split 64-bit, pairs) and both modes.
"""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE
from tritoncub.agent.lookback import (LOOKBACK_AGGREGATE, LOOKBACK_INCLUSIVE, allocate_status, look_back,
                                      look_back_bounded, lookback_combine, lookback_reduce, packed_layout, publish, read_anchored_window,
                                      read_window, segmented_combine, status_planes, tile_index, value_halves)


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _affine(a0, b0, a1, b1):
    # x -> a*x + b composed: first (a0, b0), then (a1, b1); not commutative
    return a0 * a1, a1 * b0 + b1


@triton.jit
def _pair_add(a0, a1, b0, b1):
    return a0 + b0, a1 + b1


# ----------------------------------------------------------------------------------------------
# status encoding (host model)
# ----------------------------------------------------------------------------------------------

def _halves(v, dtype):
    a = np.array([v], dtype=dtype)
    if a.itemsize == 4:
        return [int(a.view(np.uint32)[0])]
    u = int(a.view(np.uint64)[0])
    return [u & 0xFFFFFFFF, u >> 32]


def _word(tag, half):
    w = (tag << 32) | half
    return w - (1 << 64) if w >= (1 << 63) else w


def encode(slots, dtypes, deterministic, num_tiles):
    """slots[i] = (agg or None, inc or None) per tile, each a tuple of values per component."""
    counter, status, stride = allocate_status(num_tiles, [torch.empty(0, dtype=d).dtype for d in dtypes],
                                              deterministic, "cpu")
    st = status.numpy()
    npd = [torch.empty(0, dtype=d).numpy().dtype for d in dtypes]
    packed = packed_layout(dtypes, deterministic)
    k = value_halves(dtypes)
    for i, (agg, inc) in enumerate(slots):
        if packed:
            if inc is not None:
                st[i] = _word(2, _halves(inc[0], npd[0])[0])
            elif agg is not None:
                st[i] = _word(1, _halves(agg[0], npd[0])[0])
            continue
        for s, val in ((0, agg), (1, inc)):
            if val is None:
                continue
            hs = [h for c, d in zip(val, npd) for h in _halves(c, d)]
            for j, h in enumerate(hs):
                st[(s * k + j) * stride + i] = _word(s + 1, h)
    return status, stride


@triton.jit
def _window_kernel(status_ptr, plane_stride, hi, first_tile, out0_ptr, out1_ptr, flag_ptr, like0_ptr, like1_ptr,
                   LB_REDUCE: tl.constexpr, NUM_VALUES: tl.constexpr, WINDOW: tl.constexpr,
                   PACKED: tl.constexpr, ANCHORED: tl.constexpr):
    like0 = tl.load(like0_ptr)
    like1 = tl.load(like1_ptr)
    if ANCHORED:
        f, v0, v1 = read_anchored_window(status_ptr, plane_stride, hi, first_tile, like0, like1, LB_REDUCE,
                                         NUM_VALUES, WINDOW)
    else:
        f, v0, v1 = read_window(status_ptr, plane_stride, hi, first_tile, like0, like1, LB_REDUCE, NUM_VALUES,
                                WINDOW, PACKED)
    tl.store(flag_ptr, f)
    tl.store(out0_ptr, v0)
    tl.store(out1_ptr, v1)


def _model_window(slots, hi, first, window, combine):
    """The fast-mode window: latest inclusive slot folded with the aggregates after it."""
    lo = hi - window
    flag, val = None, None
    for j in range(lo, hi):
        if j < first:
            f, v = 2, None
        else:
            agg, inc = slots[j]
            f, v = (2, inc) if inc is not None else (1, agg) if agg is not None else (0, None)
        if f == 1 and flag is not None:
            val = combine(val, v) if val is not None else v
        elif f == 1:
            flag, val = 1, v
        else:
            flag, val = f, v
    return flag, val


CASES = [
    # (dtypes, combine, deterministic)
    ((torch.int32,), _add, False),
    ((torch.float32,), _add, False),
    ((torch.int64,), _add, False),
    ((torch.float64,), _add, False),
    ((torch.int32,), _add, True),
    ((torch.float32, torch.float32), _affine, False),
    ((torch.float64, torch.float64), _affine, True),
    ((torch.int64, torch.int32), _pair_add, False),
    ((torch.int64, torch.int32), _pair_add, True),
]


def _pycombine(combine, nv):
    if nv == 1:
        return lambda a, b: (a[0] + b[0],)
    if combine is _pair_add:
        return lambda a, b: (a[0] + b[0], a[1] + b[1])
    return lambda a, b: (a[0] * b[0], b[0] * a[1] + b[1])


@pytest.mark.parametrize("dtypes,combine,det", CASES)
def test_read_window_out_of_order(dtypes, combine, det):
    """Random mixes of unpublished / aggregate-only / inclusive slots, as out-of-order completion
    leaves them: the window reduction must match the model (flag, and value where ready)."""
    _check_windows(dtypes, combine, det, window=8, num_tiles=24, his=(4, 15, 24), trials=4, num_warps=4)


@pytest.mark.gpu
@pytest.mark.parametrize("dtypes,combine,det", CASES)
@pytest.mark.parametrize("window,num_warps", [(32, 8), (64, 4), (128, 8), (512, 8)])
def test_read_window_wide(dtypes, combine, det, window, num_warps):
    """The policy's window sizes: windows spread over several warps (or repeated in each warp), the
    same flag and value in every thread."""
    _check_windows(dtypes, combine, det, window=window, num_tiles=3 * window,
                   his=(4, window // 2, window + 5, 2 * window + 1, 3 * window), trials=6, num_warps=num_warps)


def _check_windows(dtypes, combine, det, window, num_tiles, his, trials, num_warps):
    rng = np.random.default_rng(1)
    nv = len(dtypes)
    pyc = _pycombine(combine, nv)
    first = 3
    like = [torch.zeros(1, dtype=d, device=DEVICE) for d in dtypes]
    lb = lookback_reduce(combine, nv)

    def value():
        # long affine windows: slopes of +-1 keep the composition exact (and not commutative)
        if combine is _affine and window > 8:
            return (int(rng.choice([-1, 1])), int(rng.integers(1, 5)))
        return tuple(int(rng.integers(1, 5)) for _ in range(nv))

    for trial in range(trials):
        slots = []
        for i in range(num_tiles):
            agg = value()
            inc = value()
            r = rng.random()
            if det:  # anchored mode: aggregates mostly there, anchors' inclusive sometimes not
                agg_p = 0.9 if window <= 8 else 1 - 0.5 / window
                slots.append((agg if r < agg_p else None, inc if rng.random() < 0.7 else None))
            else:
                slots.append((None, None) if r < 0.15 else (agg, None) if r < 0.7 else (agg, inc))
            if i == first:  # a segment's first tile publishes its inclusive prefix only
                slots[-1] = (None, inc) if r < 0.8 else (None, None)
        status, stride = encode(slots, dtypes, det, num_tiles)
        status = status.to(DEVICE)
        for hi in his:
            outs = [torch.zeros(1, dtype=d, device=DEVICE) for d in dtypes]
            flag = torch.full((1,), -1, dtype=torch.int32, device=DEVICE)
            _window_kernel[(1,)](status, stride, hi, first, outs[0], outs[-1], flag, like[0], like[-1],
                                 LB_REDUCE=lb, NUM_VALUES=nv, WINDOW=window,
                                 PACKED=packed_layout(dtypes, det), ANCHORED=det, num_warps=num_warps)
            got_f = int(flag.item())
            if det:
                a = max(hi - window, first)
                ready = slots[a][1] is not None and all(slots[j][0] is not None for j in range(a + 1, hi))
                exp_f = 2 if ready else 0
                exp_v = None
                if ready:
                    exp_v = slots[a][1]
                    for j in range(a + 1, hi):
                        exp_v = pyc(exp_v, slots[j][0])
            else:
                exp_f, exp_v = _model_window(slots, hi, first, window, pyc)
            assert got_f == exp_f, (trial, hi, got_f, exp_f)
            if exp_f != 0:
                got_v = tuple(o.item() for o in outs)
                assert got_v == tuple(type(g)(e) for g, e in zip(got_v, exp_v)), (trial, hi, got_v, exp_v)


#: window reads before a chain tile gives up (a bug that leaves a predecessor unpublished then fails
#: the test instead of hanging the GPU; a correct run needs a handful)
MAX_SPINS = 1 << 20


@triton.jit
def _chain_kernel(val0_ptr, val1_ptr, out0_ptr, out1_ptr, ok_ptr, counter_ptr, status_ptr, plane_stride,
                  tiles_per_seg, COMBINE: tl.constexpr, LB_REDUCE: tl.constexpr, NUM_VALUES: tl.constexpr,
                  WINDOW: tl.constexpr, DETERMINISTIC: tl.constexpr, PACKED: tl.constexpr, MAX_SPINS: tl.constexpr):
    """Each tile's aggregate is val[tile]; it writes its exclusive prefix within its segment, and
    ``ok[tile] = 1`` unless its look-back gave up (it then still publishes, so no successor waits
    forever)."""
    tile = tile_index(counter_ptr)
    seg = tile // tiles_per_seg
    first = seg * tiles_per_seg
    a0 = tl.load(val0_ptr + tile)
    a1 = tl.load(val1_ptr + tile)
    if tile == first:
        publish(status_ptr, plane_stride, tile, a0, a1, LOOKBACK_INCLUSIVE, NUM_VALUES, PACKED)
        tl.store(ok_ptr + tile, 1)
    else:
        publish(status_ptr, plane_stride, tile, a0, a1, LOOKBACK_AGGREGATE, NUM_VALUES, PACKED)
        p0, p1, ok = look_back_bounded(status_ptr, plane_stride, tile, first, a0, a1, COMBINE, LB_REDUCE,
                                       NUM_VALUES, WINDOW, DETERMINISTIC, PACKED, MAX_SPINS)
        tl.store(ok_ptr + tile, ok)
        if NUM_VALUES == 1:
            i0 = COMBINE(p0, a0)
            i1 = i0
        else:
            i0, i1 = COMBINE(p0, p1, a0, a1)
        publish(status_ptr, plane_stride, tile, i0, i1, LOOKBACK_INCLUSIVE, NUM_VALUES, PACKED)
        tl.store(out0_ptr + tile, p0)
        if NUM_VALUES == 2:
            tl.store(out1_ptr + tile, p1)


def _run_chain(dtypes, combine, det, window, tiles_per_seg, segs, seed):
    nv = len(dtypes)
    n = tiles_per_seg * segs
    g = torch.Generator().manual_seed(seed)
    vals = [torch.randint(1, 4, (n,), generator=g).to(d) for d in dtypes]
    counter, status, stride = allocate_status(n, list(dtypes), det, DEVICE)
    outs = [torch.zeros(n, dtype=d, device=DEVICE) for d in dtypes]
    ok = torch.zeros(n, dtype=torch.int32, device=DEVICE)
    _chain_kernel[(n,)](vals[0].to(DEVICE), vals[-1].to(DEVICE), outs[0], outs[-1], ok, counter, status, stride,
                        tiles_per_seg, COMBINE=combine, LB_REDUCE=lookback_reduce(combine, nv), NUM_VALUES=nv,
                        WINDOW=window, DETERMINISTIC=det, PACKED=packed_layout(dtypes, det), MAX_SPINS=MAX_SPINS)
    assert int(counter.item()) == n
    bad = torch.nonzero(ok.cpu() != 1).flatten().tolist()
    assert not bad, f"look-back gave up (a predecessor never published) in tiles {bad[:10]}"
    return vals, [o.cpu() for o in outs]


def _check_chain(vals, outs, combine, tiles_per_seg):
    pyc = _pycombine(combine, len(vals))
    n = vals[0].numel()
    for t in range(n):
        if t % tiles_per_seg == 0:
            exp = tuple(v[t].item() for v in vals)
            continue
        got = tuple(o[t].item() for o in outs)
        assert got == tuple(type(x)(e) for x, e in zip(got, exp)), (t, got, exp)
        exp = pyc(exp, tuple(v[t].item() for v in vals))


@pytest.mark.parametrize("dtypes,combine,det", CASES)
@pytest.mark.parametrize("window", [2, 8])
def test_chain(dtypes, combine, det, window):
    vals, outs = _run_chain(dtypes, combine, det, window, 11, 2, 3)
    _check_chain(vals, outs, combine, 11)


@pytest.mark.gpu
@pytest.mark.parametrize("dtypes,combine,det", CASES)
@pytest.mark.parametrize("window", [4, 32])
def test_chain_stress(dtypes, combine, det, window):
    """Thousands of tiles (more than are resident at once, so tiles wait on predecessors that
    started in an earlier wave and finish out of order), repeated: the affine values are products of
    small integers, exact in floating point while they stay below 2**24."""
    tiles_per_seg = 2000 if combine is not _affine else 11
    segs = 3 if combine is not _affine else 600
    for rep in range(3):
        vals, outs = _run_chain(dtypes, combine, det, window, tiles_per_seg, segs, 10 + rep)
        _check_chain(vals, outs, combine, tiles_per_seg)


@pytest.mark.parametrize("dtypes,combine,det", [CASES[0], CASES[3], CASES[4], CASES[5]])
def test_look_back_waits_for_unpublished(dtypes, combine, det):
    """A predecessor that never publishes: the look-back must keep waiting (here: give up after a
    few reads and say so), never pass over the missing slot."""
    nv = len(dtypes)
    window, num_tiles, first, tile = 4, 12, 0, 9
    slots = [((1,) * nv, (j + 1,) * nv) for j in range(num_tiles)]
    slots[first] = (None, (1,) * nv)
    for j in range(first + 1, tile):
        slots[j] = ((1,) * nv, None)      # aggregates only: the look-back must go back to tile 0
    slots[3] = (None, None)               # ... and tile 3 never publishes
    status, stride = encode(slots, dtypes, det, num_tiles)
    status = status.to(DEVICE)
    like = [torch.ones(1, dtype=d, device=DEVICE) for d in dtypes]
    outs = [torch.zeros(1, dtype=d, device=DEVICE) for d in dtypes]
    ok = torch.full((1,), -1, dtype=torch.int32, device=DEVICE)
    _bounded_kernel[(1,)](status, stride, tile, first, like[0], like[-1], outs[0], outs[-1], ok,
                          COMBINE=combine, LB_REDUCE=lookback_reduce(combine, nv), NUM_VALUES=nv, WINDOW=window,
                          DETERMINISTIC=det, PACKED=packed_layout(dtypes, det), MAX_SPINS=3)
    # fast mode: tile 3 is missing; reproducible mode: tile 9's anchor (tile 5) has no inclusive prefix
    assert int(ok.item()) == 0
    # once they publish, the same look-back completes
    slots[3] = ((1,) * nv, None)
    if det:
        slots[5] = ((1,) * nv, (6,) * nv)
    status, stride = encode(slots, dtypes, det, num_tiles)
    status = status.to(DEVICE)
    _bounded_kernel[(1,)](status, stride, tile, first, like[0], like[-1], outs[0], outs[-1], ok,
                          COMBINE=combine, LB_REDUCE=lookback_reduce(combine, nv), NUM_VALUES=nv, WINDOW=window,
                          DETERMINISTIC=det, PACKED=packed_layout(dtypes, det), MAX_SPINS=3)
    assert int(ok.item()) == 1
    pyc = _pycombine(combine, nv)
    exp = (6,) * nv if det else (1,) * nv
    for j in range(6 if det else 1, tile):
        exp = pyc(exp, (1,) * nv)
    got = tuple(o.item() for o in outs)
    assert got == tuple(type(x)(e) for x, e in zip(got, exp)), (got, exp)


@triton.jit
def _bounded_kernel(status_ptr, plane_stride, tile, first_tile, like0_ptr, like1_ptr, out0_ptr, out1_ptr, ok_ptr,
                    COMBINE: tl.constexpr, LB_REDUCE: tl.constexpr, NUM_VALUES: tl.constexpr, WINDOW: tl.constexpr,
                    DETERMINISTIC: tl.constexpr, PACKED: tl.constexpr, MAX_SPINS: tl.constexpr):
    a0 = tl.load(like0_ptr)
    a1 = tl.load(like1_ptr)
    p0, p1, ok = look_back_bounded(status_ptr, plane_stride, tile, first_tile, a0, a1, COMBINE, LB_REDUCE,
                                   NUM_VALUES, WINDOW, DETERMINISTIC, PACKED, MAX_SPINS)
    tl.store(ok_ptr, ok)
    tl.store(out0_ptr, p0)
    if NUM_VALUES == 2:
        tl.store(out1_ptr, p1)


def test_host_helpers():
    assert value_halves([torch.float32]) == 1 and value_halves([torch.int64, torch.int32]) == 3
    assert status_planes([torch.float32], False) == 1
    assert status_planes([torch.float32], True) == 2
    assert status_planes([torch.float64, torch.int64], False) == 8
    with pytest.raises(TypeError):
        value_halves([torch.float16])
    with pytest.raises(ValueError):
        lookback_combine(_add, 3)
    with pytest.raises(ValueError):
        segmented_combine(_add, 0)
    counter, status, stride = allocate_status(5, [torch.int64], False, "cpu")
    assert stride % 16 == 0 and status.numel() == 2 * 2 * stride and int(counter.item()) == 0
