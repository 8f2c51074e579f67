"""DeviceRadixSort (onesweep): sort_keys / sort_pairs / double buffer / torch ops, against torch.sort
(GPU-only large-size tests: test_radix_sort_gpu.py).

CPU runs use the portable kernels through the interpreter with tiny sizes; the ``gpu`` tests run
the fast (Gluon) kernels at large sizes and compare them with the portable ones.
"""
import numpy as np
import pytest
import torch
import triton

import tritoncub  # noqa: F401  (registers the torch ops)
import tritoncub.device.radix_sort as rs
from helpers import ALL_DTYPES, DEVICE, assert_equal, count_calls, make_data
from tritoncub import policy
from tritoncub.thread.radix_traits import KEY_DTYPES

DTYPES = [torch.bool] + ALL_DTYPES
UNSIGNED = tuple(d for d in (getattr(torch, "uint16", None), getattr(torch, "uint32", None),
                             getattr(torch, "uint64", None)) if d is not None)
TILE = policy.op_policy("radix_sort").fallback["TL_TILE"]


def _proxy(x: torch.Tensor) -> torch.Tensor:
    """A tensor torch can sort (on any device) in the same order as x."""
    if x.dtype == getattr(torch, "uint64", None):
        return x.view(torch.int64) ^ (-2**63)
    if x.dtype in UNSIGNED:
        return x.to(torch.int64)
    return x


def _ref(x: torch.Tensor, descending: bool = False):
    r = torch.sort(_proxy(x).cpu(), descending=descending, stable=True)
    return x.cpu()[r.indices] if x.dtype not in UNSIGNED else _gather_cpu(x, r.indices), r.indices


def _gather_cpu(x, idx):
    if x.dtype == getattr(torch, "uint64", None):
        return x.cpu().view(torch.int64)[idx].view(x.dtype)
    return x.cpu().to(torch.int64)[idx].to(x.dtype)


def _eq(a: torch.Tensor, b: torch.Tensor, msg=""):
    if a.dtype in UNSIGNED:
        assert torch.equal(_proxy(a.cpu()), _proxy(b.cpu())), msg
    else:
        assert_equal(a.cpu(), b.cpu(), signed_zero=True, msg=msg)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sort_keys_every_dtype_both_directions(dtype):
    if dtype not in KEY_DTYPES:
        pytest.skip("dtype missing in this torch")
    for n, kind, descs in ((0, "random", (False,)), (1, "random", (True,)), (TILE - 1, "special", (False, True)),
                           (TILE + 1, "few_unique", (False, True))):
        x = make_data(kind, n, dtype)
        for desc in descs:
            out = rs.sort_keys(x, desc)
            _eq(out, _ref(x, desc)[0], f"{dtype} n={n} {kind} desc={desc}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int8, torch.bool], ids=str)
@pytest.mark.parametrize("kind", ["special", "few_unique", "equal", "sorted", "reversed"])
def test_sort_op_values_and_indices_equal_torch(dtype, kind):
    if dtype == torch.int64 and kind not in ("few_unique", "equal") and DEVICE == "cpu":
        pytest.skip("64-bit keys: 8 passes, kept to two kinds under the interpreter (all kinds on the GPU)")
    x = make_data(kind, TILE + 3, dtype)
    for desc in (False, True):
        v, i = torch.ops.tritoncub.sort(x, -1, desc, False)
        rv, ri = _ref(x, desc)
        _eq(v, rv, f"{kind} desc={desc}")   # -0.0/+0.0 and NaN payloads kept: original bits move
        assert torch.equal(i.cpu(), ri), f"{kind} desc={desc}"
        # rows this short go to the in-register row sort; the onesweep path (long rows) directly:
        v2, i2 = rs._sort_lastdim(x.view(1, -1), desc)
        _eq(v2.view(-1), rv, f"onesweep {kind} desc={desc}")
        assert torch.equal(i2.view(-1).cpu(), ri), f"onesweep {kind} desc={desc}"
    if kind == "few_unique":
        assert torch.equal(torch.ops.tritoncub.argsort(x, -1, True, True).cpu(), _ref(x, True)[1])


@pytest.mark.parametrize("narrow_limit,packed", [(1 << 31, 1), (1 << 31, 0), (0, 1)],
                         ids=["packed", "int32-positions", "int64-positions"])
def test_generated_positions(monkeypatch, narrow_limit, packed):
    # sort/argsort carry the generated positions packed with the keys in uint64 words (PACKED_POSITIONS,
    # keys of up to 32 bits) or apart, as int32 between passes (int64 at and past the limit), and return
    # int64 from the last pass, whatever the number of passes that run (odd and even counts alternate the
    # word buffers differently); packed float keys are restored from the input for -0.0 and NaN
    monkeypatch.setattr(rs, "_NARROW_INDEX_LIMIT", narrow_limit)
    n = 2 * TILE + 5
    cases = {"4 passes": make_data("random", n, torch.int32),
             "3 passes": make_data("random", n, torch.int32) & 0xFFFFFF,
             "2 passes": make_data("random", n, torch.int32) & 0xFFFF,
             "1 pass (upper places skipped)": make_data("random", n, torch.int32) & 255,
             "no pass (all equal)": make_data("equal", n, torch.int32),
             "2 keys": make_data("random", 2, torch.int32),
             "float32 specials": make_data("special", n, torch.float32),
             "float16 specials": make_data("special", n, torch.float16),
             "int8": make_data("random", n, torch.int8)}
    with policy.override("radix_sort", {"PACKED_POSITIONS": packed}):
        for name, x in cases.items():
            for desc in (False, True):
                v, i = rs._sort_lastdim(x.view(1, -1), desc)
                rv, ri = _ref(x, desc)
                assert i.dtype == torch.int64, name
                _eq(v.view(-1), rv, f"{name} desc={desc}")
                assert torch.equal(i.view(-1).cpu(), ri), f"{name} desc={desc}"
    with policy.override("radix_sort", {"SMALL_N": 256, "PACKED_POSITIONS": packed}):
        x = make_data("few_unique", 200, torch.float32)
        v, i = rs._sort_lastdim(x.view(1, -1), False)
        assert i.dtype == torch.int64 and torch.equal(i.view(-1).cpu(), _ref(x)[1])


@pytest.mark.parametrize("b,length,kind,dtype,packed", [
    (3, 300, "random", torch.int32, 1), (5, 129, "special", torch.float32, 1), (2, 700, "few_unique", torch.float16, 1),
    (4, 200, "equal", torch.int8, 1), (3, 257, "small", torch.int32, 1), (257, 3, "random", torch.int32, 1),
    (5, 129, "special", torch.float32, 0)],
    ids=lambda v: str(v).replace("torch.", ""))
def test_rows_sorted_as_one_problem(b, length, kind, dtype, packed):
    # rows longer than the segmented sort's tiles: up to 256 rows sort as one problem with positions
    # packed as row and column and a last pass over the row ids (PACKED_POSITIONS); more rows (or
    # positions apart) by a second stable sort of the row ids
    x = make_data("random" if kind == "small" else kind, b * length, dtype).view(b, length)
    if kind == "small":
        x = x & 0xFF     # the upper places are skipped: one key pass, then the row pass
    with policy.override("radix_sort", {"PACKED_POSITIONS": packed}):
        for desc in (False, True):
            v, i = rs._sort_lastdim(x, desc)
            r = torch.sort(x.cpu(), dim=-1, descending=desc, stable=True)
            assert torch.equal(i.cpu(), r.indices), desc
            _eq(v, r.values, f"desc={desc}")


def _pass_tile() -> int:
    """Keys per tile of a sort pass on this device (the fast path's on a GPU, else the portable one's)."""
    if DEVICE != "cuda":
        return TILE
    pol = policy.select("radix_sort", torch.device(DEVICE), "small")
    return pol["WARPS"] * pol["ITEMS"] * 32


@pytest.mark.parametrize("lengths,kind,dtype", [
    ((1, 2 + 44 / 128, 1 + 1 / 128, 3 + 66 / 128, 1 + 72 / 128), "special", torch.float32),
    ((1 + 3 / 128, 2 - 1 / 128), "random", torch.int32),
    ((1, 1, 1), "equal", torch.bfloat16),
    ((4 + 5 / 128,), "few_unique", torch.uint8),
    ((1 + 9 / 128, 2 + 1 / 128, 1), "sorted", torch.int16),
    ((2 + 7 / 128, 1 + 2 / 128), "reversed", torch.float16),
    ((1 + 5 / 128, 2 + 3 / 128), "special", torch.float64),     # (64-bit keys: positions apart)
    ((2, 1 + 1 / 128, 1), "few_unique", torch.int64)],
    ids=lambda v: str(v).replace("torch.", ""))
def test_sort_segments(lengths, kind, dtype):
    # ragged segments (each at least a pass tile long, tiles straddling their boundaries; lengths in
    # tiles) sorted each on its own by one onesweep sort: keys and flat positions equal a stable sort
    # of every segment
    tile = _pass_tile()
    offsets = np.concatenate([[0], np.cumsum([round(x * tile) for x in lengths])]).astype(np.int64)
    x = make_data(kind, int(offsets[-1]), dtype)
    # (flat positions ascending, positions within the segment descending: both kinds, every case)
    for desc in (False, True):
        v, i = rs.sort_segments(x, offsets, desc, segment_positions=desc)
        assert i.dtype == torch.int64 and v.dtype == dtype
        for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
            want_v, want_i = _ref(x[a:b], desc)
            assert torch.equal(i[a:b].cpu(), want_i + (0 if desc else a)), f"positions of [{a}, {b}) desc={desc}"
            _eq(v[a:b], want_v, f"keys of [{a}, {b}) desc={desc}")


@pytest.mark.parametrize("b,tiles,kind,dtype", [(3, 1 + 44 / 128, "special", torch.float32),
                                                 (2, 2, "equal", torch.int16), (4, 1, "reversed", torch.uint8),
                                                 (2, 1 + 3 / 128, "special", torch.int64)],
                         ids=lambda v: str(v).replace("torch.", ""))
def test_rows_sorted_as_segments(b, tiles, kind, dtype, monkeypatch):
    # rows past the one-problem limit (forced here: more than 256 rows in real use), each at least a
    # pass tile long: one segmented sort whose last pass writes columns
    length = round(tiles * _pass_tile())
    monkeypatch.setattr(rs, "rows_in_one_sort", lambda x: False)
    calls = count_calls(monkeypatch, rs, "sort_segments")
    x = make_data(kind, b * length, dtype).view(b, length)
    for desc in (False, True):
        v, i = rs._sort_lastdim(x, desc)   # (what sort() calls for rows longer than sort_rows takes)
        r = torch.sort(_proxy(x).cpu(), dim=-1, descending=desc, stable=True)
        assert i.dtype == torch.int64 and torch.equal(i.cpu(), r.indices), desc
        _eq(v, torch.gather(x.cpu(), -1, r.indices) if dtype not in UNSIGNED else
            _gather_cpu(x.view(-1), (r.indices + torch.arange(b).view(b, 1) * length).view(-1)).view(b, length),
            f"desc={desc}")
    assert len(calls) == 2


@pytest.mark.parametrize("n_segs,block", [(37, 8), (5, 8), (1, 1), (64, 16)])
def test_segment_prefix_and_offsets_kernels(n_segs, block):
    # the segmented sort's digit offsets, launched directly: the counts' prefix over segments in
    # place (several steps of ``block`` segments, a ragged last one), then each segment's offsets =
    # its start + the digit's exclusive prefix within it - the digit's count in earlier segments
    places, radix = 2, 16
    g = torch.Generator().manual_seed(n_segs)
    counts = torch.randint(0, 50, (places, radix, n_segs), generator=g, dtype=torch.int64)
    starts = torch.randint(0, 1000, (n_segs,), generator=g, dtype=torch.int64)
    off_at = places * radix * n_segs + 3
    hist = torch.full((off_at + places * n_segs * radix,), -7, dtype=torch.int64)   # (poisoned)
    hist[:places * radix * n_segs] = counts.view(-1)
    hist[places * radix * n_segs:places * radix * n_segs + 3] = 0
    starts_at = hist.numel()
    hist = torch.cat([hist, starts]).to(DEVICE)
    rs._segment_prefix_kernel[(places * radix,)](hist, n_segs, BLOCK=block)
    assert torch.equal(hist[:places * radix * n_segs].cpu().view(places, radix, n_segs), counts.cumsum(2))
    rs._segment_offsets_kernel[(triton.cdiv(n_segs, 16), places)](hist, n_segs, starts_at, off_at, RADIX=radix,
                                                                  SEGS=16)
    want = (starts.view(1, n_segs, 1) + counts.transpose(1, 2).cumsum(2) - counts.transpose(1, 2)
            - (counts.cumsum(2) - counts).transpose(1, 2))
    assert torch.equal(hist[off_at:off_at + places * n_segs * radix].cpu().view(places, n_segs, radix), want)


def test_sort_segments_refuses_what_does_not_fit():
    t = _pass_tile()
    x = make_data("random", 3 * t, torch.int32)
    assert rs.segments_fit(t, 3 * t, x) and not rs.segments_fit(t - 1, 3 * t, x)
    assert not rs.segments_fit(t, 3 * t, x.bool())
    for bad in ([0, t - 1, 3 * t], [0, 2 * t], [1, 2 * t, 3 * t], [0], [[0, 3 * t]]):
        with pytest.raises(ValueError, match="sort_segments"):
            rs.sort_segments(x, np.array(bad))
    with pytest.raises(ValueError, match="contiguous"):
        rs.sort_segments(torch.cat([x, x])[::2], np.array([0, 3 * t]))
    with pytest.raises(ValueError, match="1-D"):
        rs.sort_segments(x.view(3, t), np.array([0, 3 * t]))
    with pytest.raises(TypeError, match="descending"):
        rs.sort_segments(x, np.array([0, 3 * t]), descending="yes")
    with pytest.raises(TypeError, match="segment_positions"):
        rs.sort_segments(x, np.array([0, 3 * t]), segment_positions=1)


def test_sort_nd_rows_and_dims():
    x = make_data("few_unique", 3 * 5 * 12, torch.float32).view(3, 5, 12)
    for dim, desc in ((-1, False), (0, True), (1, False)):
        if True:
            v, i = torch.ops.tritoncub.sort(x, dim, desc, True)
            r = torch.sort(x.cpu(), dim=dim, descending=desc, stable=True)
            _eq(v, r.values, f"dim={dim}")
            assert torch.equal(i.cpu(), r.indices)
    for desc in (False, True):  # several rows as one onesweep batch (the path of long rows)
        v, i = rs._sort_lastdim(x.reshape(-1, 12), desc)
        r = torch.sort(x.cpu().reshape(-1, 12), dim=-1, descending=desc, stable=True)
        _eq(v, r.values, f"onesweep batch desc={desc}")
        assert torch.equal(i.cpu(), r.indices)
    v, i = torch.ops.tritoncub.sort(torch.tensor(3.0, device=DEVICE), -1, False, False)
    assert v.item() == 3.0 and i.item() == 0
    e = torch.empty(2, 0, device=DEVICE)
    assert torch.ops.tritoncub.sort(e, -1, False, False)[0].shape == (2, 0)


def test_stability_with_duplicates_pairs():
    n = 3 * TILE + 7
    keys = torch.randint(0, 3, (n,), dtype=torch.int32).to(DEVICE)
    vals = torch.arange(n, dtype=torch.int64).to(DEVICE)
    k, v = rs.sort_pairs(keys, vals)
    rk, ri = _ref(keys)
    _eq(k, rk)
    assert torch.equal(v.cpu(), ri)          # equal keys keep input order
    k, v = rs.sort_pairs(keys, vals, descending=True)
    rk, ri = _ref(keys, True)
    assert torch.equal(v.cpu(), ri)


@pytest.mark.parametrize("vdtype", [torch.float32, torch.bfloat16, torch.uint8, torch.bool, torch.float64], ids=str)
def test_pairs_value_dtypes(vdtype):
    n = TILE + 9
    keys = make_data("random", n, torch.int16)
    vals = make_data("random", n, vdtype)
    k, v = rs.sort_pairs(keys, vals)
    rk, ri = _ref(keys)
    _eq(k, rk)
    assert_equal(v.cpu(), vals.cpu()[ri])


@pytest.mark.parametrize("begin,end", [(0, 8), (4, 13), (0, 1), (9, 9), (20, 32), (0, 32)])
def test_bit_ranges(begin, end):
    x = make_data("random", TILE + 30, torch.int32)
    out = rs.sort_keys(x, False, begin, end)
    bits = (x.cpu().to(torch.int64) & 0xFFFFFFFF) ^ 0x80000000
    sub = (bits >> begin) & ((1 << (end - begin)) - 1)
    assert torch.equal(out.cpu(), x.cpu()[torch.sort(sub, stable=True).indices])
    out2 = torch.ops.tritoncub.sort_keys(x, True, begin, end)
    assert torch.equal(out2.cpu(), x.cpu()[torch.sort(sub, descending=True, stable=True).indices])


def test_skips_places_where_all_keys_agree():
    # keys < 256: only the lowest digit place is sorted; the result must still be complete
    x = torch.randint(0, 256, (2 * TILE + 1,), dtype=torch.int64).to(DEVICE)
    _eq(rs.sort_keys(x), _ref(x)[0])
    x = torch.full((TILE + 3,), -7, dtype=torch.int32, device=DEVICE)
    _eq(rs.sort_keys(x), x)


def test_double_buffer():
    n = TILE + 17
    keys = make_data("random", n, torch.float32)
    vals = torch.arange(n, dtype=torch.int32, device=DEVICE)
    kdb = rs.DoubleBuffer(keys.clone(), torch.empty_like(keys))
    vdb = rs.DoubleBuffer(vals.clone(), torch.empty_like(vals))
    rs.sort_pairs_double_buffer(kdb, vdb)
    rk, ri = _ref(keys)
    _eq(kdb.current, rk)
    assert torch.equal(vdb.current.cpu().long(), ri)
    kdb2 = rs.DoubleBuffer(keys.clone(), torch.empty_like(keys))
    rs.sort_keys_double_buffer(kdb2, descending=True)
    _eq(kdb2.current, _ref(keys, True)[0])
    # selectors that differ: the values' buffers are reordered, values.current stays the same tensor
    kdb3 = rs.DoubleBuffer(torch.empty_like(keys), keys.clone())
    kdb3.selector = 1
    vcur = vals.clone()
    vdb3 = rs.DoubleBuffer(vcur, torch.empty_like(vals))
    rs.sort_pairs_double_buffer(kdb3, vdb3)
    assert vdb3.selector == kdb3.selector
    _eq(kdb3.current, rk)
    assert torch.equal(vdb3.current.cpu().long(), ri)
    assert any(b is vcur for b in vdb3.buffers)
    # a bit range through the double buffer: stable by bits [4, 12) of the integer keys
    ik = torch.randint(0, 1 << 16, (n,), dtype=torch.int32, device=DEVICE)
    idb = rs.DoubleBuffer(ik.clone(), torch.empty_like(ik))
    rs.sort_keys_double_buffer(idb, False, 4, 12)
    ikc = ik.cpu()
    assert torch.equal(idb.current.cpu(), ikc[torch.sort((ikc >> 4) & 0xFF, stable=True).indices])


@pytest.mark.parametrize("cfg", [
    {"RADIX_BITS": 5, "TL_TILE": 64, "WINDOW": 1},
    {"RADIX_BITS": 6, "TL_TILE": 256, "WINDOW": 4},
    {"RADIX_BITS": 7, "TL_TILE": 128, "WINDOW": 16},
    {"RADIX_BITS": 8, "TL_TILE": 64, "WINDOW": 8, "WARPS": 4, "ITEMS": 8, "num_warps": 4},
    {"RADIX_BITS": 8, "TL_TILE": 128, "WINDOW": 0, "WARPS": 16, "ITEMS": 16, "num_warps": 16, "MAXNREG": 80},
    {"TL_TILE": 128, "SMALL_N": 512},
], ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_policy_configs(cfg):
    x = make_data("few_unique", 3 * cfg["TL_TILE"] + 11, torch.float32)
    x[::5] = make_data("special", x[::5].numel(), torch.float32)
    with policy.override("radix_sort", cfg):
        v, i = rs.sort(x, descending=True)
    rv, ri = _ref(x, True)
    _eq(v, rv)
    assert torch.equal(i.cpu(), ri)


@pytest.mark.parametrize("places, programs, limit, groups", [
    (8, 1, 132, 8), (8, 16, 132, 8), (8, 17, 132, 4), (8, 66, 132, 2), (8, 67, 132, 1), (8, 200, 132, 1),
    (4, 66, 132, 2), (4, 1, 0, 1), (3, 1, 132, 3), (3, 50, 132, 1), (6, 30, 132, 3), (1, 1, 132, 1), (7, 1, 8, 7)])
def test_hist_place_groups(places, programs, limit, groups):
    # the upfront histogram's place groups (GPU kernel; its results are tested on a GPU in
    # test_radix_sort_gpu.py::test_gpu_histogram_program_counts): a divisor of the places, the most that keep
    # programs x groups within the limit, one group when none does or the split is off (limit 0)
    assert rs._hist_place_groups(places, programs, limit) == groups


@pytest.mark.parametrize("dtype", [torch.int32, torch.float16, torch.bool, torch.int64], ids=str)
def test_single_program_small_path(dtype):
    # SMALL_N routes inputs of up to that many keys (<= 32-bit) to one program; 64-bit keys and
    # larger inputs keep the onesweep path
    with policy.override("radix_sort", {"SMALL_N": 256}):
        for n, kind, descs in ((2, "random", (True,)), (200, "special", (False, True)), (256, "few_unique", (True,)),
                               (257, "random", (False,))):
            if dtype == torch.int64 and n > 2:
                continue
            x = make_data(kind, n, dtype)
            for desc in descs:
                v, i = rs.sort(x, descending=desc)
                rv, ri = _ref(x, desc)
                _eq(v, rv, f"n={n} desc={desc}")
                assert torch.equal(i.cpu(), ri)
        x = make_data("random", 200, torch.int32)
        k, v = rs.sort_pairs(x, x.to(torch.float64), True, 3, 11)
        sub = (((x.cpu().to(torch.int64) & 0xFFFFFFFF) ^ 0x80000000) >> 3) & 255
        idx = torch.sort(sub, descending=True, stable=True).indices
        assert torch.equal(k.cpu(), x.cpu()[idx]) and torch.equal(v.cpu(), x.cpu().to(torch.float64)[idx])


def test_bad_input():
    x = torch.arange(10, dtype=torch.int32, device=DEVICE)
    with pytest.raises(TypeError, match="keys must be a DoubleBuffer"):
        rs.sort_keys_double_buffer(x)
    with pytest.raises(TypeError, match="values must be a DoubleBuffer"):
        rs.sort_pairs_double_buffer(rs.DoubleBuffer(x.clone(), x.clone()), x)
    db = rs.DoubleBuffer(x.clone(), x.clone())
    db.selector = 1.0
    with pytest.raises(ValueError, match="selector must be 0 or 1, got 1.0"):
        rs.sort_keys_double_buffer(db)
    with pytest.raises(TypeError):
        rs.sort_keys(torch.zeros(4, dtype=torch.complex64, device=DEVICE))
    with pytest.raises(ValueError):
        rs.sort_keys(x, False, 0, 33)
    with pytest.raises(ValueError):
        rs.sort_keys(x, False, 5, 4)
    with pytest.raises(ValueError):
        rs.sort_pairs(x, torch.zeros(9, device=DEVICE))
    with pytest.raises(ValueError):
        rs.sort_keys(x.view(2, 5))
    with pytest.raises(TypeError):
        rs.sort(torch.zeros(3, dtype=torch.complex64, device=DEVICE))
    for flag in (None, 1, "yes"):   # flags are bools, as torch's (not read as true or false)
        with pytest.raises(TypeError, match="descending must be a bool"):
            rs.sort(x, -1, flag)
        with pytest.raises(TypeError, match="stable must be a bool"):
            rs.sort(x, -1, False, flag)
        with pytest.raises(TypeError, match="descending must be a bool"):
            rs.sort_keys(x, flag)
    buf = torch.empty(20, dtype=torch.int32, device=DEVICE)
    with pytest.raises(ValueError):
        rs.sort_keys_double_buffer(rs.DoubleBuffer(buf[:10], buf[5:15]))
    assert rs.sort_keys(x[:0]).numel() == 0
    assert rs.sort_keys(x[:1]).item() == 0
    with pytest.raises(TypeError, match="begin_bit"):
        rs.sort_keys(x, False, True)
    with pytest.raises(TypeError, match="end_bit"):
        rs.sort_keys(x, False, 0, 4.0)
    assert_equal(rs.sort_keys(x, False, np.int64(0), np.int32(4)), rs.sort_keys(x, False, 0, 4))  # (numpy ints: ints)
    with pytest.raises(IndexError, match="Dimension out of range"):
        rs.sort(x.view(2, 5), dim=2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        rs.sort(x.view(2, 5), dim=-3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        rs.sort(x[0], dim=1)
    # double buffers: contiguous, one device; no buffer may alias another, keys against values too
    with pytest.raises(ValueError, match="contiguous"):
        rs.DoubleBuffer(buf[:10], buf[::2])
    keys = rs.DoubleBuffer(x.clone(), torch.empty_like(x))
    with pytest.raises(ValueError, match="overlap"):
        rs.sort_pairs_double_buffer(keys, rs.DoubleBuffer(x.clone(), keys.alternate))
    with pytest.raises(ValueError, match="overlap"):
        rs.sort_pairs_double_buffer(keys, rs.DoubleBuffer(keys.current, torch.empty_like(x)))
    with pytest.raises(TypeError, match="16-byte"):
        rs.sort_pairs_double_buffer(keys, rs.DoubleBuffer(torch.zeros(10, dtype=torch.complex128, device=DEVICE),
                                                          torch.zeros(10, dtype=torch.complex128, device=DEVICE)))
    # selector and buffers are plain attributes: checked again by every sort
    bad = rs.DoubleBuffer(x.clone(), torch.empty_like(x))
    bad.selector = 2
    with pytest.raises(ValueError, match="selector must be 0 or 1"):
        rs.sort_keys_double_buffer(bad)
    bad.selector = 0
    bad.buffers[1] = torch.empty(3, dtype=x.dtype, device=DEVICE)
    with pytest.raises(ValueError, match="same shape"):
        rs.sort_keys_double_buffer(bad)


@pytest.mark.parametrize("op", ["keys", "pairs"])
def test_strided_inputs(op):
    """1-D keys and values with any strides are sorted as the items they show (not their storage)."""
    big = make_data("random", 24, torch.int8)
    keys = big[::2]
    vals = torch.arange(48, device=DEVICE)[::4]
    if op == "keys":
        assert_equal(rs.sort_keys(keys), torch.sort(keys.cpu(), stable=True).values.to(DEVICE))
        assert_equal(torch.ops.tritoncub.sort_keys(keys), torch.sort(keys.cpu(), stable=True).values.to(DEVICE))
    else:
        k, v = rs.sort_pairs(keys, vals)
        rk, ri = torch.sort(keys.cpu(), stable=True)
        assert_equal(k, rk.to(DEVICE))
        assert_equal(v, vals[ri.to(DEVICE)])


def test_rows_skip_single_program_path():
    """Rows sorted as one problem never take the single-program path for small inputs (it would sort
    the batch as one flat array)."""
    x = make_data("random", 3 * 300, torch.int32).view(3, 300)
    with policy.override("radix_sort", {"SMALL_N": 8192}):
        v, i = rs._sort_lastdim(x, False)
    rv, ri = torch.sort(x.cpu(), dim=-1, stable=True)
    assert_equal(v.cpu(), rv)
    assert_equal(i.cpu(), ri)


@pytest.mark.parametrize("vdtype", [torch.complex64, torch.complex128, torch.bool, torch.float64])
def test_values_of_any_dtype(vdtype):
    """Values move as raw bits whatever their dtype (complex64 as 8-byte words); 16-byte complex128
    values are gathered through the sorted positions."""
    keys = make_data("few_unique", 37, torch.int16)
    vals = torch.randn(37, dtype=vdtype).to(DEVICE) if vdtype != torch.bool else \
        (torch.arange(37, device=DEVICE) % 3 == 0)
    for desc in (False, True):
        k, v = rs.sort_pairs(keys, vals, descending=desc)
        rk, ri = torch.sort(keys.cpu(), descending=desc, stable=True)
        assert_equal(k.cpu(), rk)
        assert torch.equal(v.cpu(), vals.cpu()[ri])


def test_opcheck_and_autograd():
    x = make_data("random", 20, torch.int16)
    torch.library.opcheck(torch.ops.tritoncub.sort_keys.default, (x, False, 0, None))
    torch.library.opcheck(torch.ops.tritoncub.sort_pairs.default, (x, torch.arange(x.numel(), device=DEVICE), True, 0, 9))
    torch.library.opcheck(torch.ops.tritoncub.argsort.default, (x, -1, False, False))
    xs = make_data("random", 2 * 6, torch.float16).to(torch.float32).view(2, 6).requires_grad_()
    torch.library.opcheck(torch.ops.tritoncub.sort.default, (xs, -1, True, False))
    # a transposed input: the results are contiguous, in the fake too
    torch.library.opcheck(torch.ops.tritoncub.sort.default, (xs.detach().t(), -1, False, False))
    xt = xs.detach().t()
    for dim in (0, 1):
        v, i = torch.ops.tritoncub.sort(xt, dim, False, False)
        ai = torch.ops.tritoncub.argsort(xt, dim, False, False)
        assert v.is_contiguous() and i.is_contiguous() and ai.is_contiguous()
        rv, ri = torch.sort(xt.cpu(), dim=dim, stable=True)
        assert_equal(v.cpu(), rv)
        assert torch.equal(i.cpu(), ri) and torch.equal(ai.cpu(), ri)
    torch.library.opcheck(torch.ops.tritoncub.sort_keys.default, (x[::2], False, 0, None))
    v, i = torch.ops.tritoncub.sort(xs, 1, False, False)
    g = torch.randn_like(v)
    v.backward(g)
    ref = xs.detach().clone().requires_grad_()
    torch.sort(ref, dim=1, stable=True).values.backward(g)
    assert torch.equal(xs.grad, ref.grad)


@pytest.mark.parametrize("once_words", [1 << 22, 0], ids=["status-once", "status-reused"])
@pytest.mark.parametrize("skip_min", [0, 1 << 20], ids=["read-back", "no-read-back"])
def test_places_without_histogram_read_back(monkeypatch, skip_min, once_words):
    # below SKIP_PLACES_MIN_N every place runs (no host sync): places where all keys agree are sorted
    # anyway, with the same result. Look-back words: one zeroed set per pass after the histogram
    # (small sorts), or one set zeroed before each pass
    monkeypatch.setattr(rs, "_STATUS_ONCE_WORDS", once_words)
    x = make_data("random", 2 * TILE + 7, torch.int32) & 0x00FF00F0   # two places hold one digit
    x[::7] = -x[::7]
    with policy.override("radix_sort", {"SKIP_PLACES_MIN_N": skip_min}):
        for desc in (False, True):
            v, i = rs._sort_lastdim(x.view(1, -1), desc)
            rv, ri = _ref(x, desc)
            _eq(v.view(-1), rv, f"desc={desc}")
            assert torch.equal(i.view(-1).cpu(), ri)
        f = make_data("special", TILE + 3, torch.float16)
        _eq(rs.sort_keys(f), _ref(f)[0])


def test_fakes_check_arguments_as_the_ops():
    """Under FakeTensorMode (torch.compile's tracing) the operators refuse what the real ones refuse."""
    ops = torch.ops.tritoncub
    with torch.device(DEVICE), torch._subclasses.fake_tensor.FakeTensorMode():   # (fakes of GPU tensors on a GPU)
        x = torch.empty(4, 5)
        with pytest.raises(IndexError, match="Dimension out of range"):
            ops.sort(x, 5, False, False)
        with pytest.raises(IndexError, match="Dimension out of range"):
            ops.argsort(x, -3, False, False)
        with pytest.raises(TypeError, match="supported dtypes"):
            ops.sort(torch.empty(4, dtype=torch.complex64), -1, False, False)
        with pytest.raises(ValueError, match="1-D"):
            ops.sort_keys(x, False, 0, None)
        with pytest.raises(ValueError, match="end_bit"):
            ops.sort_keys(torch.empty(4), False, 0, 99)
        with pytest.raises(ValueError, match="values must be 1-D"):
            ops.sort_pairs(torch.empty(4), torch.empty(5), False, 0, None)
        v, i = ops.sort(x, 1, False, False)
        assert v.shape == x.shape and i.dtype == torch.int64


def _with_read_back(select):
    """``policy.select`` whose radix sort policies read the digit counts back at any size."""
    def sel(op, *a, **kw):
        pol = select(op, *a, **kw)
        return {**pol.as_dict(), "SKIP_PLACES_MIN_N": 0} if op == "radix_sort" else pol
    return sel


@pytest.mark.parametrize("speculative", [True, False], ids=["first-pass-early", "first-pass-after-read-back"])
@pytest.mark.parametrize("kind", ["equal", "low-place-shared", "two-places-shared", "random"])
def test_first_pass_before_read_back(monkeypatch, speculative, kind):
    # a sort that reads the digit counts back launches place 0's pass before it sees them (unless
    # positions are packed or narrowed): the result is the same whether or not place 0 turns out to be
    # one all keys share, for keys-only, pairs and the double-buffer API, in both directions
    monkeypatch.setattr(rs, "SPECULATIVE_FIRST_PASS", speculative)
    passes = []
    real_launch = rs.launch
    pass_kernels = (rs._onesweep_tl_kernel, rs._onesweep_gluon_kernel)
    monkeypatch.setattr(rs, "launch", lambda k, *a, **kw: (passes.append(k) if k in pass_kernels else None,
                                                           real_launch(k, *a, **kw))[1])
    monkeypatch.setattr(policy, "select", _with_read_back(policy.select))
    n = 2 * TILE + 5
    x = make_data("random", n, torch.int32)
    x = {"equal": torch.full_like(x, -3), "low-place-shared": x & ~0xFF, "two-places-shared": x & 0x00FF00FF,
         "random": x}[kind]
    v = torch.randint(-9, 9, (n,), dtype=torch.int16).to(DEVICE)
    for desc in (False, True):
        passes.clear()
        _eq(rs.sort_keys(x, descending=desc), _ref(x, desc)[0], f"keys desc={desc}")
        trivial_low = kind in ("equal", "low-place-shared")
        expect = {"equal": 0, "low-place-shared": 3, "two-places-shared": 2, "random": 4}[kind]
        assert len(passes) == expect + (speculative and trivial_low)
        sk, sv = rs.sort_pairs(x, v, descending=desc)
        rk, ri = _ref(x, desc)
        _eq(sk, rk)
        assert torch.equal(sv.cpu(), v.cpu()[ri])
        kdb = rs.DoubleBuffer(x.clone(), torch.empty_like(x))
        vdb = rs.DoubleBuffer(v.clone(), torch.empty_like(v))
        rs.sort_pairs_double_buffer(kdb, vdb, descending=desc)
        _eq(kdb.current, rk)
        assert torch.equal(vdb.current.cpu(), v.cpu()[ri])
    f = make_data("special", n, torch.float32)   # -0.0 and NaN: the passes after the first stay canonical
    f[: n // 2] = 0.0
    _eq(rs.sort_keys(f), _ref(f)[0])
    _eq(rs.sort_keys(f, descending=True), _ref(f, True)[0])


def _varying_places(x: torch.Tensor) -> list[int]:
    """The 8-bit digit places of signed integer keys x (ordered: sign bit flipped) where keys differ."""
    bits = x.element_size() * 8
    u = x.cpu().to(torch.int64) ^ (-(1 << 63) if bits == 64 else (1 << (bits - 1)))
    return [p for p in range(bits // 8) if ((u >> (8 * p)) & 0xFF).unique().numel() > 1]


@pytest.mark.parametrize("speculative", [True, False], ids=["first-pass-early", "first-pass-after-read-back"])
@pytest.mark.parametrize("dtype,mask", [
    (torch.int32, -1), (torch.int32, 0), (torch.int32, 0xFF), (torch.int32, ~0xFF), (torch.int32, 0x00FF00FF),
    (torch.int32, 0x00FFFFFF), (torch.int16, 0xFF), (torch.int16, ~0xFF), (torch.int64, 0), (torch.int64, 0xFF),
    (torch.int64, 0x00FF00FF00FF00FF), (torch.int64, -1)],
    ids=lambda v: str(v) if isinstance(v, torch.dtype) else hex(v & 0xFFFFFFFFFFFFFFFF))
def test_sort_with_positions_first_pass_before_read_back(monkeypatch, speculative, dtype, mask):
    # sort/argsort: positions packed with keys of up to 32 bits (the first pass is not launched early
    # there: its form depends on the count of passes) or narrowed to int32 for wider keys (launched
    # early; a lone first pass's positions are copied to the int64 output). Masks leave 0 to all
    # places shared; the passes launched are counted (the read-back summary must see every row),
    # for one row and for rows sorted as one problem (64-bit keys: sorted, then sorted by row)
    monkeypatch.setattr(rs, "SPECULATIVE_FIRST_PASS", speculative)
    monkeypatch.setattr(policy, "select", _with_read_back(policy.select))
    passes = []
    real_launch = rs.launch
    pass_kernels = (rs._onesweep_tl_kernel, rs._onesweep_gluon_kernel)
    monkeypatch.setattr(rs, "launch", lambda k, *a, **kw: (passes.append(k) if k in pass_kernels else None,
                                                           real_launch(k, *a, **kw))[1])
    n = 2 * TILE + 5
    x = make_data("random", n, dtype) & mask
    packed = rs._packs_positions(x)
    for desc in (False, True):   # (the onesweep path of sort: rows this short go elsewhere)
        varying = _varying_places(x)
        passes.clear()
        v, i = rs._sort_lastdim(x.view(1, -1), desc)
        rv, ri = _ref(x, desc)
        _eq(v.view(-1), rv, f"desc={desc}")
        assert torch.equal(i.view(-1).cpu(), ri), f"desc={desc}"
        early = speculative and not packed
        assert len(passes) == len(varying) + (early and 0 not in varying)
        rows = x[: 3 * 50].view(3, 50)
        varying = _varying_places(rows)
        passes.clear()
        v, i = rs._sort_lastdim(rows, desc)
        r = torch.sort(_proxy(rows).cpu(), descending=desc, stable=True)
        _eq(v, rows.cpu().gather(1, r.indices))
        assert torch.equal(i.cpu(), r.indices)
        if packed:   # (rows as one problem: a lone place runs twice)
            assert len(passes) == (2 if len(varying) == 1 else len(varying))


@pytest.mark.parametrize("dtype,vm,rows,wide,src,want_words", [
    (torch.int32, 0, 0, 1, 1, 1), (torch.int64, 0, 0, 1, 1, 2), (torch.float64, 0, 1, 1, 0, 2),
    (torch.int64, 0, 0, 0, 1, 0),                                 # EXCHANGE_WIDE off: positions alone
    (torch.uint64, 4, 1, 1, 1, 2), (torch.uint64, 4, 3, 1, 1, 0),  # last packed pass (segments need positions)
    (torch.int32, 3, 0, 1, 1, 2), (torch.int32, 3, 1, 1, 1, 2), (torch.int32, 3, 2, 1, 1, 0),
    (torch.int32, 3, 0, 1, 0, 0), (torch.int64, 2, 0, 1, 1, 3), (torch.int64, 2, 0, 0, 1, 0),
    (torch.int64, 1, 0, 1, 1, 0), (torch.int32, 1, 0, 1, 1, 0),   # values travel: always gathered
    (torch.int16, 0, 0, 1, 1, 0), (torch.uint64, 0, 2, 1, 1, 0)])
def test_pass_exchange_choice(dtype, vm, rows, wide, src, want_words, monkeypatch):
    # which fast passes move their keys through shared memory (words per key: 1 or 2 for the key, +1
    # for its source position; 0: the source position alone, keys gathered back) and the shared
    # memory they get for it; a device with too little shared memory for the larger buffer keeps
    # the gather
    pol = {**policy.op_policy("radix_sort").fallback_for("default"), "EXCHANGE_KEYS": 1, "EXCHANGE_WIDE": wide,
           "EXCHANGE_SRC": src}
    tile, radix = pol["WARPS"] * pol["ITEMS"] * 32, 1 << pol["RADIX_BITS"]
    kin = torch.empty(8, dtype=dtype)

    def choice():
        kw = rs._pass_kwargs(pol, kin, vm, pol["RADIX_BITS"], False, False, tile, 1 << 20, True, rows)
        return kw["KEYS_IN_SMEM"], kw["SMEM_ROWS"]

    def rows_for(words):
        return rs._smem_rows(radix, pol["WARPS"], tile * words, bool(pol["EXCHANGE_APART"]), rows >= 2)

    assert choice() == (want_words > 0, rows_for(max(want_words, 1)))
    if want_words > 1:   # (the larger buffer does not fit: positions alone)
        monkeypatch.setattr(rs, "smem_per_block", lambda device: rows_for(want_words) * radix * 4)
        assert choice() == (False, rows_for(1))


@pytest.mark.parametrize("kdt,vdt,vm,rows,wide,values,want_words", [
    (torch.int64, torch.int64, 1, 0, 1, 1, 3), (torch.int32, torch.int32, 1, 0, 1, 1, 2),
    (torch.float32, torch.int64, 1, 0, 1, 1, 3), (torch.int64, torch.float32, 1, 0, 1, 1, 3),
    (torch.int64, torch.int16, 1, 0, 1, 1, 0),     # 2-byte values: gathered
    (torch.int64, torch.int64, 1, 0, 1, 0, 0),     # EXCHANGE_VALUES off: gathered
    (torch.int64, torch.int64, 1, 0, 0, 1, 0),     # keys gathered (EXCHANGE_WIDE off): values too
    (torch.int16, torch.int64, 1, 0, 1, 1, 0),     # 16-bit keys never cross shared memory
    (torch.int64, torch.int64, 1, 2, 1, 1, 0),     # segments: positions exchanged
    (torch.int64, torch.int64, 2, 0, 1, 1, -3)])   # positions generated: EXCHANGE_SRC's keys + positions
def test_pass_values_exchange_choice(kdt, vdt, vm, rows, wide, values, want_words, monkeypatch):
    # which passes carrying values send them through shared memory by their keys' ranks (words per key
    # of the exchange buffer: the wider of key and value, + 1 for each sorted slot's digit), and the
    # gather when the larger buffer does not fit the device (negative: keys exchanged, values not)
    pol = {**policy.op_policy("radix_sort").fallback_for("default"), "EXCHANGE_KEYS": 1, "EXCHANGE_WIDE": wide,
           "EXCHANGE_SRC": 1, "EXCHANGE_VALUES": values}
    tile, radix = pol["WARPS"] * pol["ITEMS"] * 32, 1 << pol["RADIX_BITS"]
    kin, vin = torch.empty(8, dtype=kdt), torch.empty(8, dtype=vdt)

    def choice():
        kw = rs._pass_kwargs(pol, kin, vm, pol["RADIX_BITS"], False, False, tile, 1 << 20, True, rows, vin=vin)
        return kw["KEYS_IN_SMEM"], kw["VALUES_IN_SMEM"], kw["SMEM_ROWS"]

    def rows_for(words):
        return rs._smem_rows(radix, pol["WARPS"], tile * words, bool(pol["EXCHANGE_APART"]), rows >= 2)

    assert choice() == (want_words != 0, want_words > 0, rows_for(max(abs(want_words), 1)))
    if want_words > 1:
        monkeypatch.setattr(rs, "smem_per_block", lambda device: rows_for(want_words) * radix * 4)
        assert choice() == (False, False, rows_for(1))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_sort_pairs_lazily_conjugated_values(dtype):
    # (a conjugated view's memory holds the unconjugated values: the sorted values are the conjugates)
    keys = torch.tensor([3, 1, 2, 0, 1], dtype=torch.int32, device=DEVICE)
    z = torch.complex(torch.arange(5.0), torch.arange(5.0) + 1).to(dtype).to(DEVICE).conj()
    k, v = rs.sort_pairs(keys, z)
    order = torch.argsort(keys.cpu(), stable=True)
    assert_equal(k.cpu(), keys.cpu()[order])
    assert torch.equal(v.cpu(), z.cpu().resolve_conj()[order])


#: the tests that take the fast path through CPU stand-ins run where CPU tensors are accepted (the
#: interpreter, the compile check); the GPU run takes the real fast path in the other tests
_CPU_STAND_INS = pytest.mark.skipif(DEVICE == "cuda", reason="CPU stand-ins for the GPU fast path: a CPU-run test")


def _noted_fast_path(monkeypatch, log: list, plans: dict) -> None:
    """The radix sort's GPU fast path taken on the CPU: each launch is noted in ``log`` (kernel, grid,
    Triton's specialisation of every runtime argument as the kernel declares it, constexprs) instead
    of run, bound launches do nothing when replayed, and the queued plans live in ``plans``."""
    from tritoncub import _launch

    def note(kernel, grid, args, kwargs):
        # (a Gluon kernel declares what it does not specialise on; under the interpreter a plain
        # Triton kernel does not say: every argument counts as specialised, which is stricter)
        params = getattr(kernel, "params", None) or [None] * len(args)
        spec = []
        for p, a in zip(params, args):
            if p is None:
                spec.append(_launch._spec(a))
            elif a.__class__ is int and p.do_not_specialize:
                spec.append(("int", -(1 << 31) <= a < (1 << 31)))
            elif isinstance(a, torch.Tensor) and p.do_not_specialize_on_alignment:
                spec.append((a.dtype,))
            else:
                spec.append(_launch._spec(a))
        log.append((kernel.__name__, tuple(grid), tuple(spec), repr(sorted(kwargs.items()))))

    def fake_bind(kernel, grid, *args, **kwargs):
        note(kernel, grid, args, kwargs)
        return lambda *new_args: None
    monkeypatch.setattr(rs, "bind", fake_bind)
    monkeypatch.setattr(rs, "launch", lambda kernel, grid, *args, **kwargs: note(kernel, grid, args, kwargs))
    monkeypatch.setattr(rs, "direct_ok", lambda: True)
    monkeypatch.setattr(rs, "_use_fast_path", lambda device: True)
    monkeypatch.setattr(rs, "_QUEUED_PLANS", plans)


@_CPU_STAND_INS
def test_queued_plan_keys_fix_the_launches(monkeypatch):
    """The queued sorts' remembered launches (``_QUEUED_PLANS``: a GPU fast path, replayed for a later
    call with the same key) are keyed by everything the launches depend on. With the fast path taken
    on the CPU (``_noted_fast_path``), every call plans afresh, and every key met over the calls below
    (sizes, key and value dtypes, alignments, directions, bit ranges, double buffers, rows, the module
    switches) must come with one launch sequence. (No results are checked: no kernel runs.)"""
    from collections import defaultdict

    class Keys(dict):   # (never a hit: every call plans afresh; each key looked up is noted)
        def get(self, key, default=None):
            keys.append(key)

        def __setitem__(self, key, value):
            pass
    keys: list = []
    log: list = []
    _noted_fast_path(monkeypatch, log, Keys())
    sequences = defaultdict(set)
    real_db = rs._radix_sort_db

    def noted_db(*args, **kwargs):
        n_log, n_keys = len(log), len(keys)
        real_db(*args, **kwargs)
        assert len(keys) == n_keys + 1, "the queued path was not taken"
        sequences[keys[-1]].add(tuple(log[n_log:]))
    monkeypatch.setattr(rs, "_radix_sort_db", noted_db)

    def data(n, dtype, off):
        return torch.randint(-100, 100, (n + off,)).to(dtype)[off:]

    def calls():
        for n in (3 * 4096 + 5,):
            for dtype in (torch.int32, torch.float16, torch.int64):
                for off in (0, 1):
                    x = data(n, dtype, off)
                    for desc in (False, True):
                        rs.sort_keys(x, desc)
                        rs.sort(x, descending=desc)
                        rs.sort_keys(x, desc, 1, 7)
                        rs.sort_keys(x, desc, 0, 7)
                        for vdtype in (torch.int32, torch.float64):
                            rs.sort_pairs(x, torch.zeros(n + off, dtype=vdtype)[off:], desc)
                        for sel in (0, 1):
                            db = rs.DoubleBuffer(data(n, dtype, off), data(n, dtype, (off + 1) % 4))
                            db.selector = sel
                            rs.sort_keys_double_buffer(db, desc)
                            db = rs.DoubleBuffer(data(n, dtype, off), data(n, dtype, (off + 1) % 4))
                            vdb = rs.DoubleBuffer(torch.zeros(n, dtype=torch.int32),
                                                  torch.zeros(n + 1, dtype=torch.int32)[1:])
                            db.selector = vdb.selector = sel
                            rs.sort_pairs_double_buffer(db, vdb, desc)
                    rs.sort(x[:12000].reshape(6, 2000))

    with policy.override("radix_sort", {"SKIP_PLACES_MIN_N": 1 << 30}):   # (queued: nothing read back)
        calls()
        for name, value in (("_NARROW_INDEX_LIMIT", 8192), ("_STATUS_ONCE_WORDS", 0),
                            ("SPECULATIVE_FIRST_PASS", False)):
            with monkeypatch.context() as m:
                m.setattr(rs, name, value)
                calls()
    assert len(sequences) >= 60
    ambiguous = [key for key, seqs in sequences.items() if len(seqs) > 1]
    assert not ambiguous, f"{len(ambiguous)} keys with more than one launch sequence, e.g. {ambiguous[0]}"


@_CPU_STAND_INS
def test_queued_plan_replays_check_kernel_grid_and_count(monkeypatch):
    """A remembered queued-sort plan replays only when each launch matches the recorded kernel and
    grid and the call uses every recorded launch; otherwise the plan is forgotten and the call raises
    (a key that does not fix the launches is an internal error, not a silent wrong launch). Fast path
    taken on the CPU as in ``_noted_fast_path``."""
    log: list = []
    plans: dict = {}
    _noted_fast_path(monkeypatch, log, plans)
    x = torch.randint(-100, 100, (3 * 4096 + 5,), dtype=torch.int32)
    with policy.override("radix_sort", {"SKIP_PLACES_MIN_N": 1 << 30}):   # (queued: nothing read back)
        rs.sort_keys(x)
        assert len(plans) == 1
        (key, (pol, fns, checks)), = plans.items()
        n_launches = len(log)
        assert len(fns) == len(checks) == n_launches
        rs.sort_keys(x)   # (replays: its bound launches note nothing)
        assert len(log) == n_launches and key in plans
        for corrupt in ("grid", "kernel", "fewer", "more"):
            rs.sort_keys(x)   # (records again when the last corruption dropped the plan)
            pol, fns, checks = plans[key]
            if corrupt == "grid":
                checks[-1] = (checks[-1][0], (checks[-1][1][0] + 1,) + tuple(checks[-1][1][1:]))
            elif corrupt == "kernel":
                checks[0] = (rs._digit_offsets_kernel if checks[0][0] is not rs._digit_offsets_kernel
                             else rs._onesweep_gluon_kernel, checks[0][1])
            elif corrupt == "fewer":
                plans[key] = (pol, fns[:-1], checks[:-1])
            else:
                plans[key] = (pol, fns + fns[-1:], checks + checks[-1:])
            with pytest.raises(RuntimeError, match="does not match"):
                rs.sort_keys(x)
            assert key not in plans, corrupt
