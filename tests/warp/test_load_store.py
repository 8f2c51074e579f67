"""WarpLoad / WarpStore (tritoncub.warp.load, .store, .exchange) under every algorithm, against numpy.

One launch checks all four load algorithms and all four store algorithms at once (the interpreter's
cost is per program), over dtypes, logical warp sizes (powers of two and not), several programs, a
ragged end and a base offset that is not a multiple of ITEMS_PER_THREAD (VECTORIZE's fallback)."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import ALL_DTYPES, DEVICE, _np, make_data, poison_value, poisoned
from tritoncub.warp.exchange import warp_blocked_to_striped, warp_striped_to_blocked
from tritoncub.warp.load import warp_load
from tritoncub.warp.store import warp_store

OTHER = 77


def _other(dtype):
    # a float constant for float tiles: the interpreter mis-converts an integer `other` to bfloat16
    return float(OTHER) if dtype.is_floating_point else OTHER


@triton.jit
def _load_store_kernel(x_ptr, raw_ptr, loaded_ptr, stored_ptr, xchg_ptr, base0, num_items,
                       WARPS: tl.constexpr, LWT: tl.constexpr, IPT: tl.constexpr, OTHER: tl.constexpr):
    LANES: tl.constexpr = triton.next_power_of_2(LWT)
    TILE: tl.constexpr = WARPS * LANES * IPT
    SEG: tl.constexpr = LWT * IPT
    pid = tl.program_id(0)
    base = base0 + pid * (WARPS * SEG)
    w = tl.arange(0, WARPS)[:, None, None]
    t = tl.arange(0, LANES)[None, :, None]
    i = tl.arange(0, IPT)[None, None, :]
    slot = (w * LANES + t) * IPT + i  # raw position of a slot in a [WARPS, LANES, IPT] block
    for a in tl.static_range(4):
        tile = warp_load(x_ptr, base, num_items, WARPS, LWT, IPT, a, other=OTHER)
        tl.store(loaded_ptr + (a * tl.num_programs(0) + pid) * TILE + slot, tile)
    raw = tl.load(raw_ptr + pid * TILE + slot)
    for a in tl.static_range(4):
        warp_store(stored_ptr + a * num_items, base, num_items, raw, WARPS, LWT, IPT, a)
    # exchange round trip: blocked -> striped -> blocked (padding lanes excluded by the test)
    s = warp_blocked_to_striped(raw, LWT)
    tl.store(xchg_ptr + (2 * pid) * TILE + slot, s)
    tl.store(xchg_ptr + (2 * pid + 1) * TILE + slot, warp_striped_to_blocked(s, LWT))


def _positions(programs, warps, lwt, ipt, base0, striped):
    lanes = triton.next_power_of_2(lwt)
    p, w, t, i = np.meshgrid(np.arange(programs), np.arange(warps), np.arange(lanes), np.arange(ipt),
                             indexing="ij")
    seg = lwt * ipt
    within = i * lwt + t if striped else t * ipt + i
    return base0 + p * warps * seg + w * seg + within, t < lwt


CONFIGS = [  # (WARPS, LOGICAL_WARP_THREADS, ITEMS_PER_THREAD, programs, base0, cut)
    (2, 32, 4, 2, 0, 5),     # full warps, ragged end
    (2, 7, 4, 2, 4, 0),      # non-power-of-two warp, aligned base, exact end
    (4, 5, 2, 1, 3, 7),      # non-power-of-two, unaligned base (VECTORIZE falls back), ragged
    (1, 1, 8, 3, 0, 3),      # one-thread warps
    (2, 16, 1, 2, 0, 0),     # one item per thread
]


# every dtype on a power-of-two and a non-power-of-two warp; the other shapes on three dtypes
CASES = ([(d, c) for c in CONFIGS[:2] for d in ALL_DTYPES]
         + [(d, c) for c in CONFIGS[2:] for d in (torch.int8, torch.float32, torch.float64)])


@pytest.mark.parametrize("dtype,cfg", CASES, ids=lambda v: str(v) if isinstance(v, torch.dtype) else
                         "w{}x{}x{}p{}b{}c{}".format(*v))
def test_warp_load_store_all_algorithms(dtype, cfg):
    warps, lwt, ipt, programs, base0, cut = cfg
    lanes = triton.next_power_of_2(lwt)
    tile = warps * lanes * ipt
    total = base0 + programs * warps * lwt * ipt
    num_items = total - cut
    x = make_data("random", num_items + 16, dtype)  # items past num_items exist but must not be read
    raw = make_data("random", programs * tile, dtype)
    loaded = poisoned(4 * programs * tile, dtype)
    stored = poisoned(4 * num_items, dtype)
    xchg = poisoned(2 * programs * tile, dtype)
    _load_store_kernel[(programs,)](x, raw, loaded, stored, xchg, base0, num_items,
                                    WARPS=warps, LWT=lwt, IPT=ipt, OTHER=_other(dtype))
    xn, rawn = _np(x), _np(raw).reshape(programs, warps, lanes, ipt)
    ldn = _np(loaded).reshape(4, programs, warps, lanes, ipt)
    for algo in range(4):
        pos, lane_ok = _positions(programs, warps, lwt, ipt, base0, striped=(algo == 1))
        ok = lane_ok & (pos < num_items)
        expect = np.where(ok, xn[np.minimum(pos, num_items - 1)], np.array(OTHER).astype(xn.dtype))
        got = ldn[algo]
        if algo == 3 and lanes != lwt:  # TRANSPOSE: padding lanes hold an unspecified padding value
            got, expect = got[lane_ok], expect[lane_ok]
        np.testing.assert_array_equal(got, expect, err_msg=f"load algorithm {algo}")
        # stores: every valid position receives its slot, everything else keeps the poison
        ref = np.full(num_items, _np(poisoned(1, dtype))[0])
        ref[pos[ok]] = rawn[ok]
        np.testing.assert_array_equal(_np(stored)[algo * num_items:(algo + 1) * num_items], ref,
                                      err_msg=f"store algorithm {algo}")
    xc = _np(xchg).reshape(programs, 2, warps, lanes, ipt)
    # blocked -> striped: striped slot (t, i) holds the blocked item i*LWT + t
    _, lane_ok = _positions(programs, warps, lwt, ipt, 0, striped=False)
    flat = rawn.reshape(programs, warps, lanes * ipt)  # blocked slot t*ipt+i == item index
    t = np.arange(lanes)[:, None]
    i = np.arange(ipt)[None, :]
    item = np.minimum(i * lwt + t, lanes * ipt - 1)
    expect_s = flat[:, :, item]
    np.testing.assert_array_equal(xc[:, 0][lane_ok], expect_s[lane_ok])
    np.testing.assert_array_equal(xc[:, 1][lane_ok], rawn[lane_ok])


def test_warp_vectorize_emits_16_byte_loads_in_ptx():
    """WARP_LOAD_VECTORIZE gives each lane one ld.global.v4.b32 for fp32 (also with a non-power-of-two
    logical warp); DIRECT with an arbitrary item count issues 4-byte loads."""
    from tests.block.test_load_store import _ptx_rows

    rows, failures = _ptx_rows("warp")
    assert failures == []
    for lwt, nw in ((32, 4), (8, 1), (24, 4)):
        vec = rows[f"vectorize fp32 WARPS=4 LWT={lwt} IPT=4 n%16!=0 num_warps={nw}"]["ops"]
        direct = rows[f"direct fp32 WARPS=4 LWT={lwt} IPT=4 n%16!=0 num_warps={nw}"]["ops"]
        assert vec.get("ld.global.v4.b32", 0) >= 1 and vec.get("st.global.v4.b32", 0) >= 1, vec
        assert not any(".v" in op for op in direct), direct
