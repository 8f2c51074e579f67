"""DeviceSegmentedSort and the batched row sort against torch (stable sort is the reference)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers import (ALL_DTYPES, DEVICE, assert_equal, count_calls, interpreter_bounds_checked, interpreter_replays,
                     launch_values, limit_grid_y, make_data)
from tritoncub import policy
from tritoncub.device import radix_sort as rs
from tritoncub.device import segmented_sort as ss

ss_launch = ss.launch

def _np_take(x, a, i):
    """x's items at positions i along the last axis (numpy; torch lacks gather for uint16/32/64 on CPU)."""
    v = np.take_along_axis(a, i, -1)
    if x.dtype == getattr(torch, "uint64", None):
        return torch.from_numpy(np.ascontiguousarray(v).view(np.int64)).view(torch.uint64)
    return torch.from_numpy(np.ascontiguousarray(v)).to(x.dtype)


KINDS = ["special", "equal", "few_unique", "random", "sorted", "reversed"]


#: segments longer than 16 items to the long-segment paths (none to the block radix sort past MAX_BLOCK)
LONG_ONLY = dict(MAX_BLOCK=16, MERGE_TILE=8, RADIX_MAX_BLOCK=0)


def adversarial_rows(rows: int, L: int, dtype, seed: int = 0) -> torch.Tensor:
    """rows x L keys, each row a different data kind (NaN, +-0.0, +-inf, all-equal, duplicates...)."""
    out = [make_data(KINDS[r % len(KINDS)], L, dtype, seed=seed + r) for r in range(rows)]
    return torch.stack(out) if L else torch.empty((rows, 0), dtype=dtype, device=DEVICE)


def np_stable_sort(x: torch.Tensor, descending: bool):
    """Stable sort along the last axis through numpy (for dtypes torch cannot sort on every version)."""
    from helpers import _np
    a = _np(x)
    if descending:
        j = np.argsort(a[..., ::-1], axis=-1, kind="stable")
        i = (a.shape[-1] - 1 - j)[..., ::-1].copy()
    else:
        i = np.argsort(a, axis=-1, kind="stable")
    it = torch.from_numpy(i.astype(np.int64))
    return _np_take(x, a, i), it


def ref_sort_rows(x, descending):
    if x.dtype in (getattr(torch, "uint16", None), getattr(torch, "uint32", None), getattr(torch, "uint64", None)):
        return np_stable_sort(x, descending)
    return torch.sort(x.cpu(), dim=-1, descending=descending, stable=True)


def check_rows(x, descending):
    v, i = ss.sort_rows(x, descending)
    rv, ri = ref_sort_rows(x, descending)
    assert_equal(i.cpu(), ri, msg="indices")
    assert_equal(v.cpu(), rv, signed_zero=True, msg="values")


def ref_segmented(keys, values, offs, descending):
    k, v = keys.clone().cpu(), None if values is None else values.clone().cpu()
    o = offs.tolist()
    for a, b in zip(o[:-1], o[1:]):
        s, p = torch.sort(keys[a:b].cpu(), descending=descending, stable=True)
        k[a:b] = s
        if values is not None:
            v[a:b] = values[a:b].cpu()[p]
    return k, v


# -- batched rows --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES + [torch.bool], ids=str)
def test_sort_rows_every_dtype(dtype):
    # 6 adversarial rows, a non-power-of-two length; ascending for half the dtypes, descending for the rest
    # (bool: both)
    i = (ALL_DTYPES + [torch.bool]).index(dtype)
    x = adversarial_rows(6, 13, dtype, seed=i)
    check_rows(x, descending=i % 2 == 1)
    if dtype == torch.bool:
        check_rows(x, descending=i % 2 == 0)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_rows_float_specials_both_orders(descending):
    x = adversarial_rows(12, 29, torch.float32, seed=3)
    x[0, :] = float("nan")
    x[1, ::2] = -0.0
    x[1, 1::2] = 0.0
    x[2, :5] = torch.tensor([float("nan"), -float("inf"), float("inf"), -0.0, 0.0])
    check_rows(x, descending)


@pytest.mark.parametrize("L", [1, 7, 8, 9, 100])
def test_sort_rows_lengths(L):
    # 300 rows of 8 items is two programs of 256 rows; other lengths, one or several programs
    rows = 300 if L == 8 else 5
    check_rows(adversarial_rows(rows, L, torch.float32, seed=L), descending=L % 2 == 0)


def test_sort_rows_shapes():
    x = make_data("few_unique", 2 * 3 * 10, torch.int32).view(2, 3, 10)
    v, i = ss.sort_rows(x)
    rv, ri = torch.sort(x.cpu(), dim=-1, stable=True)
    assert_equal(v.cpu(), rv)
    assert_equal(i.cpu(), ri)
    # non-contiguous input, empty shapes and a 0-d tensor
    xt = make_data("random", 60, torch.float32).view(10, 6).t()
    check_rows(xt, False)
    for shape in [(0, 5), (4, 0)]:
        e = torch.empty(shape, device=DEVICE)
        v, i = ss.sort_rows(e)
        assert v.shape == shape and i.shape == shape and i.dtype == torch.int64
    v, i = ss.sort_rows(torch.tensor(2.5, device=DEVICE))
    assert v.item() == 2.5 and i.item() == 0


@pytest.mark.parametrize("cfg", [dict(TILE_ITEMS=1024, num_warps=4), dict(TILE_ITEMS=8192, num_warps=16),
                                 dict(TILE_ITEMS=64, NETWORK="tl")], ids=["tile1024", "tile8192", "tl.sort"])
def test_sort_rows_policy_configs(cfg):
    rows = 4 if cfg.get("NETWORK") == "tl" else 70   # tl.sort is slow under the interpreter
    with policy.override("segmented_sort", cfg):
        check_rows(adversarial_rows(rows, 30, torch.float32, seed=5), descending=True)


@pytest.mark.parametrize("split,decode,minmax", [(2, 0, 0), (4, 1, 7), (8, 0, 3), (8, 1, 0), (1, 0, 7)])
@pytest.mark.parametrize("dtype,L", [(torch.float32, 30), (torch.float16, 100), (torch.bfloat16, 17), (torch.int32, 3),
                                     (torch.float32, 1), (torch.uint8, 64), (torch.int16, 40), (torch.int64, 9),
                                     (torch.int32, 64), (torch.int8, 16), (getattr(torch, "uint16", None), 40),
                                     (getattr(torch, "uint32", None), 33)], ids=str)
def test_sort_rows_column_slices(split, decode, minmax, dtype, L):
    # TILE_SPLIT: rows read as joined column slices (packed words; 64-bit keys keep the pair network),
    # whole rows (masked by row: 9 rows, not a multiple of the tile's rows) and ragged ones, both orders,
    # keys and pairs; lengths under the slice count give one column per slice. DECODE_KEYS: integer
    # keys decoded from the words (floats, gathered, compared bit for bit: -0.0 and NaNs with a sign or
    # payload). MINMAX_DIMS: the innermost dims' compare-swaps by min/max (32-bit words: keys of up to
    # 16 bits here). Under the interpreter, no load or store may leave its tensor.
    if dtype is None:
        pytest.skip("this torch has no such dtype")
    with policy.override("segmented_sort", dict(TILE_SPLIT=split, DECODE_KEYS=decode, MINMAX_DIMS=minmax,
                                                TILE_ITEMS=256, TILE_SORT="bitonic")), \
            interpreter_bounds_checked() as outside:
        x = adversarial_rows(9, L, dtype, seed=L + split)
        if dtype.is_floating_point:   # NaNs with their sign set or a payload, and -0.0: read back bit for bit
            width = {2: torch.int16, 4: torch.int32}[x.element_size()]
            odd = torch.tensor({torch.float16: [-512, 0x7C01], torch.bfloat16: [-64, 0x7F81],
                                torch.float32: [-0x400000, 0x7F800001]}[dtype], dtype=width).view(dtype)
            x[0, :: 2] = odd[0].to(DEVICE)
            x[1, 1:: 3] = odd[1].to(DEVICE)
            x[2, :: 2] = -0.0
        for descending in (False, True):
            v, i = ss.sort_rows(x, descending)
            rv, ri = ref_sort_rows(x, descending)
            assert_equal(i.cpu(), ri, msg="indices")
            assert torch.equal(v.cpu().view(torch.uint8), rv.view(torch.uint8))
        lengths = [L, 0, max(1, L // 3), L, 1]
        keys = make_data("special", sum(lengths), dtype, seed=split)
        vals = torch.arange(keys.numel(), dtype=torch.int32, device=DEVICE)
        offs = ragged_offsets(lengths).to(torch.int32)
        for descending in (False, True):
            out = ss.segmented_sort(keys, offs, descending=descending)
            ok, ov = ss.segmented_sort_pairs(keys, vals, offs, descending=descending)
            bounds = offs.tolist()
            for a, b in zip(bounds[:-1], bounds[1:]):
                rk, rp = ref_sort_rows(keys[a:b].cpu()[None], descending)
                assert_equal(out[a:b].cpu(), rk[0], signed_zero=True, msg=f"keys [{a}, {b})")
                assert_equal(ok[a:b].cpu(), rk[0], signed_zero=True, msg=f"pair keys [{a}, {b})")
                assert torch.equal(ov[a:b].cpu().long(), rp[0] + a), f"values [{a}, {b})"
    assert not outside, outside[:3]


@pytest.mark.parametrize("dtype,expect", [(torch.int16, 6), (torch.float16, 6), (torch.int32, 0), (torch.float32, 0)],
                         ids=str)
def test_minmax_dims_reaches_32bit_words_only(dtype, expect, monkeypatch):
    # MINMAX_DIMS (7 asked; rows of 64: at most 6 dims) reaches the tile sort for packed 32-bit words
    # (16-bit keys) only, 0 for 64-bit words; the policy refuses it with tl.sort
    with pytest.raises(ValueError, match="not valid"):
        with policy.override("segmented_sort", dict(MINMAX_DIMS=7, NETWORK="tl")):
            pass
    sent = launch_values(monkeypatch, ss, "_segment_tile_sort_kernel", "MINMAX_DIMS")
    with policy.override("segmented_sort", dict(MINMAX_DIMS=7, TILE_SPLIT=4, TILE_SORT="bitonic", TILE_ITEMS=256)):
        check_rows(adversarial_rows(6, 64, dtype, seed=3), descending=False)
    assert sent == [expect]


@pytest.mark.parametrize("form", ["offsets", "begin_end"])
@pytest.mark.parametrize("odtype", [torch.int32, torch.int64])
def test_segments_binned_on_the_gpu(form, odtype, monkeypatch):
    # the segments' begin, length and bin from _segment_bins_kernel (several programs) against the host's
    # _block_bins: lengths 0, 1, powers of two and one past them, the one-program limit and one past it
    rng = np.random.default_rng(11 if form == "offsets" else 12)
    max_block = 4096
    lengths = np.concatenate([[0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 4095, 4096, 4097, 2**20],
                              rng.integers(0, 5000, 2000), 1 << rng.integers(0, 13, 300)])
    rng.shuffle(lengths)
    if form == "offsets":
        offs = np.concatenate([[0], np.cumsum(lengths)])
        want_begin, n = offs[:-1], int(offs[-1])
        offsets, end_offsets = torch.as_tensor(offs, dtype=odtype, device=DEVICE), None
    else:   # gaps between the segments, listed out of order
        starts = np.cumsum(lengths + 1) - (lengths + 1)
        perm = rng.permutation(len(lengths))
        want_begin, lengths = starts[perm], lengths[perm]
        n = int((want_begin + lengths).max()) + 1
        offsets = torch.as_tensor(want_begin, dtype=odtype, device=DEVICE)
        end_offsets = torch.as_tensor(want_begin + lengths, dtype=odtype, device=DEVICE)
    keys = torch.empty(n, device=DEVICE)   # (only its size and device are read)
    host_bins = count_calls(monkeypatch, ss, "_block_bins")
    begin, length, binned = ss._segments(offsets, end_offsets, n, keys, max_block)
    assert not host_bins
    assert np.array_equal(begin, want_begin) and np.array_equal(length, lengths)
    d_begin, d_len, d_bin, bins = binned
    bin_of, want_bins = ss._block_bins(lengths, (lengths > 1) & (lengths <= max_block), ss.MIN_BLOCK)
    assert bins == want_bins
    assert np.array_equal(d_bin.cpu().numpy(), bin_of)
    assert np.array_equal(d_begin.cpu().numpy(), want_begin) and np.array_equal(d_len.cpu().numpy(), lengths)
    # bad offsets past the first program's segments, flagged on the GPU: the host's message names the segment
    if form == "offsets":
        bad = offsets.clone()
        bad[1501] = bad[1500] - 1
        with pytest.raises(ValueError, match="segment 1500 ends"):
            ss._segments(bad, None, n, keys, max_block)
        bad = offsets.clone()
        bad[1500] = n + 1
        with pytest.raises(ValueError, match="out of range"):
            ss._segments(bad, None, n, keys, max_block)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "begin_end_columns"])
@pytest.mark.parametrize("long_path", [None, "radix", "merge"])
def test_segmented_sort_bins_on_the_gpu(layout, long_path, monkeypatch):
    # the operators bin their segments on the GPU (the host bins none) and sort them right: offsets
    # packed, strided (every other item of a longer tensor) and as columns of a [segments, 2] table;
    # with segments past the one-program limit too (short ones are launched first, then the long ones)
    lengths = np.array([0, 1, 2, 3, 9, 17, 1, 0, 33, 5, 40])
    offs_np = np.concatenate([[0], np.cumsum(lengths)])
    keys = make_data("special", int(lengths.sum()), torch.float32, seed=4)
    vals = torch.arange(keys.numel(), device=DEVICE, dtype=torch.int32)
    end = None
    if layout == "contiguous":
        offs = torch.as_tensor(offs_np, device=DEVICE)
    elif layout == "strided":
        offs = torch.as_tensor(np.repeat(offs_np, 2) + np.tile([0, 99], len(offs_np)), device=DEVICE)[::2]
    else:
        table = torch.as_tensor(np.stack([offs_np[:-1], offs_np[1:]], 1), device=DEVICE)
        offs, end = table[:, 0], table[:, 1]
    host_bins = count_calls(monkeypatch, ss, "_block_bins")
    cfg = {} if long_path is None else dict(LONG_ONLY, LONG_PATH=long_path)
    with policy.override("segmented_sort", cfg):
        got_k = ss.segmented_sort(keys, offs, end)
        got_k2, got_v = ss.segmented_sort_pairs(keys, vals, offs, end)
    assert not host_bins
    for s, e in zip(offs_np[:-1].tolist(), offs_np[1:].tolist()):
        want_k, want_i = torch.sort(keys[s:e], stable=True)
        assert_equal(got_k[s:e], want_k)
        assert_equal(got_k2[s:e], want_k)
        assert_equal(got_v[s:e], vals[s:e][want_i])


def test_segments_by_block():
    # segments grouped by block (next power of two of the length, at least the minimum), ascending ids
    # within a block, against a grouping by np.unique: lengths 0, 1, powers of two and one past them
    rng = np.random.default_rng(3)
    lengths = np.concatenate([[0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 2**20, 2**20 + 1],
                              rng.integers(0, 5000, 3000), 1 << rng.integers(0, 13, 500)])
    rng.shuffle(lengths)
    for chosen, min_block in (((lengths > 1) & (lengths <= 4096), 8), (lengths > 0, 2), (lengths < 0, 8)):
        ids, bins = ss._segments_by_block(lengths, chosen, min_block)
        blocks = np.maximum(min_block, 2 ** np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64))
        expect = [(int(b), np.flatnonzero(chosen & (blocks == b))) for b in np.unique(blocks[chosen])]
        assert [b for b, _, _ in bins] == [b for b, _ in expect]
        for (block, start, count), (_, want) in zip(bins, expect):
            assert np.array_equal(ids[start:start + count], want), block
        assert len(ids) == chosen.sum()
        # (segmented_sort's form: the bins' bytes sorted stably by torch, the chosen ones first)
        bin_of, bins2 = ss._block_bins(lengths, chosen, min_block)
        assert bins2 == bins and np.array_equal(
            torch.argsort(torch.from_numpy(bin_of.astype(np.int64)), stable=True)[:len(ids)].numpy(), ids)
    # the long-segment kernels' tiles: every position of every segment in exactly one tile, in order
    long_ = lengths   # (empty segments get no tile)
    seg, first = ss._segment_tiles(long_, 1024)
    pos = first[:, None] + np.arange(1024)[None, :]
    inside = pos < long_[seg][:, None]
    starts = np.repeat(np.cumsum(long_) - long_, long_)
    assert np.array_equal(np.broadcast_to(seg[:, None], pos.shape)[inside], np.repeat(np.arange(len(long_)), long_))
    assert np.array_equal(pos[inside], np.arange(int(long_.sum())) - starts)


@pytest.mark.parametrize("path", ["merge", "radix", "rows-in-one-sort"])
@pytest.mark.parametrize("dtype,descending", [(torch.float32, False), (torch.int64, True)], ids=str)
def test_sort_rows_long_paths(dtype, descending, path, monkeypatch):
    # rows longer than MAX_BLOCK: merge (chunks of MERGE_TILE sorted in registers, then merge passes)
    # or radix (one device radix sort of segment-tagged keys; 64-bit keys of 3 rows fall back to merge);
    # a few rows of keys of <= 32 bits go to the onesweep sort of all rows as one problem unless that is
    # switched off here
    import tritoncub.device.radix_sort as rs
    if path != "rows-in-one-sort":
        monkeypatch.setattr(rs, "rows_in_one_sort", lambda x: False)
    with policy.override("segmented_sort", dict(LONG_ONLY,
                                                LONG_PATH="merge" if path == "merge" else "radix")):
        x = adversarial_rows(3, 45, dtype, seed=11)
        x[1] = make_data("few_unique", 45, dtype, seed=1)
        check_rows(x, descending)


@pytest.mark.parametrize("dtype,descending", [(torch.float32, False), (torch.int32, True)], ids=str)
def test_sort_rows_long_rows_as_segments(dtype, descending, monkeypatch):
    # rows longer than MAX_BLOCK and than a radix sort tile, not sorted as one rows problem: one
    # segmented radix sort (sort_segments), whose flat positions become the rows' indices
    tile = _radix_tile()
    monkeypatch.setattr(rs, "rows_in_one_sort", lambda x: False)
    calls = count_calls(monkeypatch, rs, "sort_segments")
    with policy.override("segmented_sort", dict(LONG_ONLY, LONG_PATH="radix")):
        x = adversarial_rows(3, tile + 5, dtype, seed=12)
        check_rows(x, descending)
    assert calls


def _radix_tile() -> int:
    """Keys per pass tile of the device radix sort here (the fast path's on a GPU)."""
    pol = policy.select("radix_sort", torch.device(DEVICE) if DEVICE == "cuda" else None, "small")
    return pol["WARPS"] * pol["ITEMS"] * 32 if DEVICE == "cuda" else pol["TL_TILE"]


def test_long_rows_of_a_tile_take_the_merge_path_when_the_policy_says(monkeypatch):
    calls = []
    monkeypatch.setattr(rs, "sort_segments", lambda *a, **k: calls.append(1))
    monkeypatch.setattr(rs, "rows_in_one_sort", lambda x: False)
    x = adversarial_rows(3, _radix_tile() + 2, torch.float32, seed=3)
    with policy.override("segmented_sort", dict(LONG_ONLY, LONG_PATH="merge")):
        check_rows(x, True)
    assert not calls


def _fail_to_build(*args, **kwargs):
    """Stand-in for a kernel launch that fails to compile for the GPU."""
    import triton

    class NoBuild(triton.CompilationError):
        def __init__(self):
            Exception.__init__(self, "no build for this GPU")

        def __repr__(self):
            return "NoBuild()"
    raise NoBuild()


@pytest.mark.parametrize("row_tiles", [0, 1], ids=["rows-under-a-tile", "rows-of-a-tile-and-more"])
def test_long_rows_fall_back_to_merge_when_radix_does_not_compile(row_tiles, monkeypatch):
    """A device radix sort that fails to compile for the GPU: one warning, then the merge path, with the
    same results (rows under a radix sort tile go through the long-segment path, longer ones through
    the segmented sort of the rows)."""
    from tritoncub.device import segmented_sort as S
    monkeypatch.setattr(S, "_sort_long_radix", _fail_to_build)
    monkeypatch.setattr(rs, "_radix_sort_db", _fail_to_build)
    monkeypatch.setattr(S, "_RADIX_UNAVAILABLE", [])
    monkeypatch.setattr("tritoncub.device.radix_sort.rows_in_one_sort", lambda x: False)
    x = adversarial_rows(3, 45 if not row_tiles else _radix_tile() + 2, torch.float32, seed=2)
    with policy.override("segmented_sort", dict(LONG_ONLY, LONG_PATH="radix")):
        with pytest.warns(UserWarning, match="device radix sort unavailable"):
            check_rows(x, False)
        check_rows(x, True)   # (no second warning needed: the merge path from now on)
    assert S._RADIX_UNAVAILABLE


def test_sort_rows_autograd():
    x = torch.randn(3, 7, dtype=torch.float32, device=DEVICE, requires_grad=True)
    v, _ = torch.ops.tritoncub.sort_rows(x, False)
    g = torch.randn_like(v)
    v.backward(g)
    x2 = x.detach().clone().requires_grad_()
    torch.sort(x2, dim=-1, stable=True)[0].backward(g)
    assert_equal(x.grad.cpu(), x2.grad.cpu())


# -- segmented -----------------------------------------------------------------------------------

def ragged_offsets(lengths):
    return torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), dtype=torch.int64, device=DEVICE)


# -- the shared-memory block radix sort (compiled NVIDIA kernels only) --------------------------------

# (RADIX_MIN_BLOCK 8: every segment of 2+ items goes to the block radix sort)
# (RADIX_OR_EVERY: 0 ranks by ballots alone, k > 0 every k-th register slot through mask words;
# RADIX_SMEM_GATHER: the sorted keys gathered from the input (0), carried through shared memory by the
# sort (1), or read again after it and exchanged through shared memory (2))
RADIX_CFGS = [dict(TILE_SORT="radix", RADIX_MIN_BLOCK=8, RADIX_BITS=b, RADIX_ITEMS=i, RADIX_MAXNREG=cap,
                   RADIX_OR_EVERY=k, RADIX_SMEM_GATHER=sg)
              for b, i, cap, k, sg in ((8, 8, 64, 4, 1), (6, 4, 0, 0, 1), (8, 16, 56, 3, 2), (7, 2, 0, 1, 1),
                                       (5, 1, 0, 1, 2), (8, 8, 0, 0, 2), (8, 4, 0, 2, 0), (8, 8, 0, 0, 1),
                                       (6, 8, 0, 0, 0))]
# one segment per warp (segments up to 512 keys, RADIX_MIN_BLOCK above them), every radix width
WARP_CFGS = [dict(TILE_SORT="radix", RADIX_MIN_BLOCK=1024, RADIX_WARP_MIN_BLOCK=8, RADIX_WARP_ROWS=w, RADIX_BITS=b,
                  RADIX_MAXNREG=0, RADIX_OR_EVERY=k, RADIX_SMEM_GATHER=sg)
             for w, b, k, sg in ((4, 8, 4, 1), (2, 6, 0, 0), (8, 7, 1, 2), (4, 5, 2, 2), (2, 8, 0, 2),
                                 (4, 8, 1, 0))]
NARROW_DTYPES = [d for d in ALL_DTYPES if d.itemsize <= 4]


class BlockRadixCalls(list):
    """Each block radix sort launch's result (``blocks``: its BLOCK)."""

    def __init__(self):
        super().__init__()
        self.blocks = []


@pytest.fixture
def block_radix_calls(monkeypatch):
    """The results of every block radix sort launch (False: fell back); skips where it cannot run."""
    from tritoncub._utils import interpreter_active
    if interpreter_active():
        pytest.skip("the block radix sort runs in compiled NVIDIA kernels only (the interpreter uses the tile sort)")
    calls = BlockRadixCalls()
    real = ss._launch_block_radix_sort

    def spy(*args, **kwargs):
        calls.append(real(*args, **kwargs))
        calls.blocks.append(kwargs["block"])
        return calls[-1]
    monkeypatch.setattr(ss, "_launch_block_radix_sort", spy)
    return calls


@pytest.mark.parametrize("L", [1, 31, 33, 100, 256, 1000, 1025, 4096, 4097, 8192])
@pytest.mark.parametrize("dtype", NARROW_DTYPES, ids=str)
def test_block_radix_sort_rows(dtype, L, block_radix_calls):
    # 6 adversarial rows (NaN, +-0, +-inf, all-equal, few unique, sorted, reversed), both orders, one
    # policy config per case (every radix width and warp count is covered across the cases); rows
    # past MAX_BLOCK (4096) up to RADIX_MAX_BLOCK (8192) are the block radix sort's too
    i = NARROW_DTYPES.index(dtype) + L
    cfg = RADIX_CFGS[i % len(RADIX_CFGS)]
    x = adversarial_rows(6, L, dtype, seed=i)
    with policy.override("segmented_sort", cfg) as pol:
        if L > ss._one_program_limit(pol, x.element_size() * 8, x.device, rows=6):
            pytest.skip("a block radix sort of 8192 keys does not fit this GPU's shared memory")
        check_rows(x, descending=i % 2 == 1)
    assert block_radix_calls == [True]


@pytest.mark.parametrize("L", [1, 5, 31, 32, 33, 100, 128, 255, 256, 500])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16, torch.uint8, torch.int8], ids=str)
def test_block_radix_sort_warp_rows(dtype, L, block_radix_calls):
    # a segment per warp: 7 adversarial rows (the last program's spare warps sort nothing), both orders
    i = L + len(str(dtype))
    cfg = WARP_CFGS[i % len(WARP_CFGS)]
    x = adversarial_rows(7, L, dtype, seed=i)
    with policy.override("segmented_sort", cfg):
        check_rows(x, descending=i % 2 == 1)
    assert block_radix_calls == [True]


WIDE_DTYPES = [d for d in ALL_DTYPES if d.itemsize == 8]


@pytest.mark.parametrize("L", [1, 33, 100, 513, 1000, 1025, 2049, 4096, 4097, 8192])
@pytest.mark.parametrize("dtype", WIDE_DTYPES, ids=str)
def test_block_radix_sort_wide_keys(dtype, L, block_radix_calls, monkeypatch):
    # 64-bit keys through the block radix sort (two words a key; WIDE_KEYS_BLOCK_RADIX on): rows of one
    # segment per program and, up to 512 keys, of one per warp; 8-bit digits only (the configs of other
    # widths leave them to the tile sort); adversarial rows, both orders
    monkeypatch.setattr(ss, "WIDE_KEYS_BLOCK_RADIX", True)
    i = WIDE_DTYPES.index(dtype) + L
    cfgs = [c for c in RADIX_CFGS if c["RADIX_BITS"] == 8]
    warp_cfgs = [c for c in WARP_CFGS if c["RADIX_BITS"] == 8]
    cfg = warp_cfgs[i % len(warp_cfgs)] if L <= 512 and i % 2 else cfgs[i % len(cfgs)]
    x = adversarial_rows(6, L, dtype, seed=i)
    with policy.override("segmented_sort", cfg) as pol:
        if L > ss._one_program_limit(pol, 64, x.device, rows=6):
            pytest.skip("a block radix sort of 8192 64-bit keys does not fit this GPU's shared memory")
        check_rows(x, descending=(i // 2) % 2 == 1)
        if L >= 33 and dtype in (torch.int64, torch.float64):   # (ragged segments, with values; torch sorts these)
            offs = torch.tensor([0, L // 3, L // 3, L, 6 * L], device=DEVICE)
            keys, vals = x.reshape(-1), torch.arange(6 * L, device=DEVICE, dtype=torch.int32)
            for desc in (False, True):
                k, v = ss.segmented_sort_pairs(keys, vals, offs, descending=desc)
                rk, rv = ref_segmented(keys, vals, offs, desc)
                assert_equal(k.cpu(), rk, signed_zero=True, msg="keys")
                assert_equal(v.cpu(), rv, msg="values")
    assert block_radix_calls and all(block_radix_calls), block_radix_calls
    if L == 8192 and dtype == torch.int64:
        # a segment past the one-program sorts: the merge path, whose chunks the block radix sort presorts
        keys = make_data("few_unique", 20001, dtype, seed=3)
        offs = torch.tensor([0, 3, 20001], device=DEVICE)
        del block_radix_calls[:]
        with policy.override("segmented_sort", dict(cfgs[0], MERGE_TILE=1024, LONG_PATH="merge")):
            for desc in (False, True):
                assert_equal(ss.segmented_sort(keys, offs, descending=desc).cpu(),
                             ref_segmented(keys, None, offs, desc)[0])
        assert 1024 in block_radix_calls.blocks and all(block_radix_calls), block_radix_calls.blocks
    # (and with 6-bit digits: not taken)
    del block_radix_calls[:]
    with policy.override("segmented_sort", RADIX_CFGS[1]):
        check_rows(adversarial_rows(2, 100, dtype, seed=1), descending=False)
    assert block_radix_calls == []


def _nan_payload_rows(rows: int, L: int, dtype, seed: int) -> torch.Tensor:
    """Rows of normal keys, about a quarter NaNs of random payloads and signs, and some -0.0/+0.0."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, L, generator=g).to(dtype)
    ibits = {torch.float32: (torch.int32, 8, 23), torch.float16: (torch.int16, 5, 10),
             torch.bfloat16: (torch.int16, 8, 7)}[dtype]
    itype, exp_bits, man_bits = ibits
    width = exp_bits + man_bits + 1
    man = torch.randint(1, 1 << man_bits, (rows, L), generator=g)
    sign = torch.randint(0, 2, (rows, L), generator=g) << (width - 1)
    nan = ((((1 << exp_bits) - 1) << man_bits) | man | sign)
    nan = torch.where(nan >= 1 << (width - 1), nan - (1 << width), nan).to(itype)   # (as signed bits)
    pick = torch.rand(rows, L, generator=g)
    xb = x.view(itype)
    xb[pick < 0.25] = nan[pick < 0.25]
    x[(pick >= 0.25) & (pick < 0.3)] = -0.0
    x[(pick >= 0.3) & (pick < 0.35)] = 0.0
    return x


@pytest.mark.parametrize("gather", [0, 1, 2])
@pytest.mark.parametrize("dtype,L", [(torch.float32, 200), (torch.float32, 1000), (torch.float32, 4000),
                                     (torch.float16, 3000), (torch.bfloat16, 100)], ids=str)
def test_block_radix_sort_values_keep_their_bits(dtype, L, gather, block_radix_calls):
    # NaNs of many payloads and both signs, -0.0 and +0.0: each sorted value is its input's bits, however
    # the keys reach the output (RADIX_SMEM_GATHER 0 gathered, 1 carried by the sort, 2 exchanged after it;
    # fp32 rows of 200 / 1000+ keys: the key and its index share a word from the second / third pass,
    # 16-bit keys from the first)
    x = _nan_payload_rows(5, L, dtype, seed=L + gather)
    itype = torch.int32 if dtype == torch.float32 else torch.int16
    with policy.override("segmented_sort", dict(TILE_SORT="radix", RADIX_MIN_BLOCK=8, RADIX_SMEM_GATHER=gather)):
        for desc in (False, True):
            v, i = ss.sort_rows(x.to(DEVICE), descending=desc)
            rv, ri = torch.sort(x, dim=-1, descending=desc, stable=True)
            assert_equal(i.cpu(), ri, msg="indices")
            assert torch.equal(v.cpu().view(itype), rv.view(itype)), "values differ in their bits"
    assert block_radix_calls == [True, True]


def test_smem_gather_policy_values_checked():
    with pytest.raises(ValueError):
        with policy.override("segmented_sort", dict(RADIX_SMEM_GATHER=3)):
            pass


@pytest.mark.parametrize("cfg", RADIX_CFGS + WARP_CFGS,
                         ids=lambda c: (f"r{c['RADIX_BITS']}i{c.get('RADIX_ITEMS')}w{c.get('RADIX_WARP_ROWS')}"
                                       f"o{c['RADIX_OR_EVERY']}g{c['RADIX_SMEM_GATHER']}"))
def test_block_radix_segmented_pairs_and_merge_chunks(cfg, block_radix_calls, monkeypatch):
    # ragged segments binned by length (segment lists, several bins), values carried; then rows longer
    # than MAX_BLOCK by the merge path, whose MERGE_TILE chunks the block radix sort presorts (index bases)
    lengths = [0, 1, 2, 0, 8, 9, 3, 16, 5, 0, 40, 7, 21, 300, 64, 65, 5000]   # (5000: past MAX_BLOCK)
    n = sum(lengths)
    keys = make_data("special", n, torch.float32, seed=17)
    vals = torch.arange(n, dtype=torch.int32, device=DEVICE)
    offs = ragged_offsets(lengths)
    for desc in (False, True):
        with policy.override("segmented_sort", dict(cfg, MAX_BLOCK=4096)):
            k, v = ss.segmented_sort_pairs(keys, vals, offs, descending=desc)
        rk, rv = ref_segmented(keys, vals, offs.cpu(), desc)
        assert_equal(k.cpu(), rk, signed_zero=True)
        assert_equal(v.cpu(), rv)
    assert len(block_radix_calls) >= 4 and all(block_radix_calls)
    assert 8192 in block_radix_calls.blocks    # (the 5000-key segment)
    monkeypatch.setattr("tritoncub.device.radix_sort.rows_in_one_sort", lambda x: False)   # (the merge path)
    del block_radix_calls[:], block_radix_calls.blocks[:]
    x = adversarial_rows(3, 300, torch.int32, seed=3)
    with policy.override("segmented_sort", dict(cfg, MAX_BLOCK=64, MERGE_TILE=64, LONG_PATH="merge",
                                                RADIX_MAX_BLOCK=0)):
        check_rows(x, descending=True)
    assert block_radix_calls == [True] and block_radix_calls.blocks == [64]   # (the chunk presort: 15 chunks
    # with index bases)


def test_segments_past_max_block_the_block_radix_sort_refuses_take_a_long_path(monkeypatch):
    """Segments longer than MAX_BLOCK whose BLOCK is at most RADIX_MAX_BLOCK go to the block radix sort;
    where it does not take them (made to refuse here, as for want of shared memory), the row sort, the
    ragged sort and top-k's sort of its selection use a long-segment path: same results, nothing left
    unsorted."""
    from tritoncub.device import topk as tk
    monkeypatch.setattr(ss, "block_radix_available", lambda device: True)
    asked = []
    monkeypatch.setattr(ss, "_launch_block_radix_sort", lambda *a, block, **k: asked.append(block) or False)
    cfg = dict(TILE_SORT="radix", MAX_BLOCK=64, MERGE_TILE=64, RADIX_MAX_BLOCK=256, RADIX_MIN_BLOCK=128,
               LONG_PATH="merge")
    with policy.override("segmented_sort", cfg):
        check_rows(adversarial_rows(3, 100, torch.float32, seed=5), descending=True)
        lengths = [3, 100, 0, 70, 200, 1]
        n = sum(lengths)
        keys = make_data("special", n, torch.float32, seed=6)
        vals = torch.arange(n, dtype=torch.int64, device=DEVICE)
        offs = ragged_offsets(lengths)
        k, v = ss.segmented_sort_pairs(keys, vals, offs)
        rk, rv = ref_segmented(keys, vals, offs.cpu(), False)
        assert_equal(k.cpu(), rk, signed_zero=True)
        assert_equal(v.cpu(), rv)
        sel = make_data("random", 2 * 90, torch.float32, seed=7).view(2, 90)
        idx = torch.arange(180, dtype=torch.int64, device=DEVICE).view(2, 90)
        sv, si = tk._sort_selected(sel, idx, largest=True)
        rsv, rsi = torch.sort(sel.cpu(), dim=-1, descending=True, stable=True)
        assert_equal(sv.cpu(), rsv)
        assert_equal(si.cpu(), idx.cpu().gather(-1, rsi))
    assert 128 in asked and 256 in asked   # (the 100- and 90-key rows, the 200-key segment)


@pytest.mark.parametrize("smem_kb,key_bits,wide_radix,cfg,limit", [
    (227, 32, True, {}, 8192), (227, 16, True, {}, 8192),
    (99, 32, True, {}, 4096), (99, 16, True, {}, 8192), (99, 8, True, {}, 8192),   # (32-bit keys of 8192 need 129 KB)
    (150, 32, True, dict(RADIX_MAX_BLOCK=2048), 4096), (227, 32, True, dict(RADIX_MAX_BLOCK=0), 4096),
    (227, 32, True, dict(TILE_SORT="bitonic"), 4096),
    # 64-bit keys in the block radix sort (two words a key, 8-bit digits): its limits, as 32-bit keys'
    (227, 64, True, {}, 8192), (99, 64, True, {}, 4096), (150, 64, True, dict(RADIX_MAX_BLOCK=2048), 4096),
    # 64-bit keys it does not take (WIDE_KEYS_BLOCK_RADIX off, other digit widths, the tile sort): the wide
    # keys' rule
    (227, 64, False, dict(MERGE_TILE=1024), 2048), (227, 64, False, dict(MAX_BLOCK=1024, MERGE_TILE=1024), 1024),
    (227, 64, False, dict(MERGE_TILE=4096), 4096), (227, 64, True, dict(RADIX_BITS=7, MERGE_TILE=1024), 2048),
    (227, 64, True, dict(TILE_SORT="bitonic", MERGE_TILE=1024), 2048)])
def test_one_program_limit(smem_kb, key_bits, wide_radix, cfg, limit, monkeypatch):
    """Segments past MAX_BLOCK (4096) go to the block radix sort up to RADIX_MAX_BLOCK (8192) only where it
    applies (TILE_SORT radix, keys of at most 32 bits, or 64 bits in 8-bit digits with
    WIDE_KEYS_BLOCK_RADIX) and fits the device's shared memory; 64-bit rows it does not take stop at
    WIDE_KEYS_MAX_BLOCK (2048 keys, one row or more) on compiled kernels, or at MERGE_TILE (the merge
    path takes longer rows only)."""
    monkeypatch.setattr(ss, "WIDE_KEYS_BLOCK_RADIX", wide_radix)
    monkeypatch.setattr(ss, "_compiled_nvidia", lambda device: True)
    monkeypatch.setattr(ss, "smem_per_block", lambda device: smem_kb * 1024)
    dev = torch.device(DEVICE)
    with policy.override("segmented_sort", dict(dict(TILE_SORT="radix", MAX_BLOCK=4096, RADIX_MAX_BLOCK=8192,
                                                     RADIX_ITEMS=16, RADIX_BITS=8), **cfg)) as pol:
        assert ss._one_program_limit(pol, key_bits, dev, rows=2) == limit
        assert ss._one_program_limit(pol, key_bits, dev, rows=1) == limit   # (one row: the same limits)
        # (segments and top-k's rows: no wide keys' rule)
        taken = key_bits <= 32 or (wide_radix and pol["RADIX_BITS"] == 8 and pol["TILE_SORT"] == "radix")
        assert ss._one_program_limit(pol, key_bits, dev, None) == (limit if taken else pol["MAX_BLOCK"])
    monkeypatch.setattr(ss, "_compiled_nvidia", lambda device: False)
    with policy.override("segmented_sort", dict(MAX_BLOCK=4096, RADIX_MAX_BLOCK=8192)) as pol:
        assert ss._one_program_limit(pol, 32, dev, rows=2) == 4096   # (no block radix sort here)
        assert ss._one_program_limit(pol, 64, dev, rows=1) == 4096   # (nor the wide keys' rule)
    # the block radix sort failing to build leaves the wide keys' rule alone
    monkeypatch.setattr(ss, "_compiled_nvidia", lambda device: True)
    monkeypatch.setattr(ss, "_BLOCK_RADIX_UNAVAILABLE", ["a build failure"])
    with policy.override("segmented_sort", dict(MAX_BLOCK=4096, RADIX_MAX_BLOCK=8192, MERGE_TILE=1024)) as pol:
        assert ss._one_program_limit(pol, 32, dev, rows=2) == 4096
        assert ss._one_program_limit(pol, 64, dev, rows=1) == 2048


def test_block_radix_sorts_rows(monkeypatch):
    """Which rows the block radix sort takes, by the policy of the rows' size bucket: one per program from
    RADIX_MIN_BLOCK, one per warp from RADIX_WARP_MIN_BLOCK up to 512 keys; 64-bit keys in 8-bit digits with
    WIDE_KEYS_BLOCK_RADIX; compiled NVIDIA kernels only. (What top-k asks before sorting 64-bit rows.)"""
    dev = torch.device(DEVICE)
    monkeypatch.setattr(ss, "_compiled_nvidia", lambda device: True)
    monkeypatch.setattr(ss, "WIDE_KEYS_BLOCK_RADIX", True)
    with policy.override("segmented_sort", dict(TILE_SORT="radix", RADIX_MIN_BLOCK=256, RADIX_BITS=8,
                                                RADIX_WARP_MIN_BLOCK=0)):
        assert [ss.block_radix_sorts_rows(L, 64, dev) for L in (128, 129, 256, 1000, 4096)] == [
            False, True, True, True, True]
        # a kernel that failed to run here, or that does not fit the device's shared memory: not taken
        pol = policy.select("segmented_sort", dev, "medium")
        monkeypatch.setattr(ss, "_BLOCK_RADIX_FAILED", {ss._block_radix_config(1024, pol, 64, False)})
        assert not ss.block_radix_sorts_rows(1000, 64, dev) and ss.block_radix_sorts_rows(1000, 32, dev)
        assert ss.block_radix_sorts_rows(200, 64, dev)
        monkeypatch.setattr(ss, "_BLOCK_RADIX_FAILED", set())
        with monkeypatch.context() as m:
            m.setattr(ss, "smem_per_block", lambda device: 1024)
            assert not ss.block_radix_sorts_rows(1000, 32, dev)
        assert ss.block_radix_sorts_rows(1000, 32, dev)
        monkeypatch.setattr(ss, "WIDE_KEYS_BLOCK_RADIX", False)
        assert not ss.block_radix_sorts_rows(1000, 64, dev) and ss.block_radix_sorts_rows(1000, 32, dev)
    with policy.override("segmented_sort", dict(TILE_SORT="radix", RADIX_MIN_BLOCK=2048, RADIX_BITS=8,
                                                RADIX_WARP_MIN_BLOCK=64)):
        assert [ss.block_radix_sorts_rows(L, 32, dev) for L in (32, 33, 512, 513, 2048)] == [
            False, True, True, False, True]
    with policy.override("segmented_sort", dict(TILE_SORT="bitonic")):
        assert not ss.block_radix_sorts_rows(1000, 32, dev)
    monkeypatch.setattr(ss, "_compiled_nvidia", lambda device: False)
    assert not ss.block_radix_sorts_rows(1000, 32, dev)


@pytest.mark.parametrize("dtype", [torch.int64, torch.float64], ids=str)
def test_wide_keys_past_their_limit_leave_the_tile_sort(dtype, monkeypatch):
    """Keys of more than 32 bits: one row longer than WIDE_KEYS_MAX_BLOCK[0], or several longer than
    WIDE_KEYS_MAX_BLOCK[1], leave the tile sort for the device radix sort (radix_sort._sort_lastdim: one
    row as it is, several sorted then sorted by row), through sort_rows and the sort operator alike; the
    operator sends shorter rows to sort_rows and longer ones straight to the device radix sort. The tile
    sort's programs take WIDE_KEYS_WARPS' warps for their BLOCK. (The limits and warps lowered here, and
    compiled kernels, which the rule keys on, faked.)"""
    monkeypatch.setattr(ss, "_compiled_nvidia", lambda device: True)
    monkeypatch.setattr(ss, "WIDE_KEYS_BLOCK_RADIX", False)   # (the rule for 64-bit keys the block radix sort leaves)
    monkeypatch.setattr(ss, "WIDE_KEYS_MAX_BLOCK", (16, 32))
    monkeypatch.setattr(ss, "WIDE_KEYS_WARPS", {16: 1, 32: 2})   # (powers of two: a GPU compiles them)
    warps = launch_values(monkeypatch, ss, "_segment_tile_sort_kernel", "num_warps")
    long_rows = count_calls(monkeypatch, ss, "_sort_long_rows")
    lastdim = count_calls(monkeypatch, rs, "_sort_lastdim")
    row_sorts = count_calls(monkeypatch, ss, "sort_rows")
    for (rows, L), leaves in (((1, 16), False), ((1, 17), True), ((3, 32), False), ((3, 33), True)):
        x = adversarial_rows(rows, L, dtype, seed=L)
        for descending in (False, True):
            rv, ri = ref_sort_rows(x, descending)
            with policy.override("segmented_sort", dict(MAX_BLOCK=64, MERGE_TILE=8, TILE_ITEMS=64, num_warps=4)):
                del long_rows[:], lastdim[:], warps[:]
                check_rows(x, descending)
                assert bool(long_rows) == leaves and bool(lastdim) == leaves, (rows, L)
                # (the tile sort's programs of 32 keys take WIDE_KEYS_WARPS' warps, others the policy's)
                assert warps == ([] if leaves else [2 if L > 16 else 1]), (rows, L, warps)
                del lastdim[:], row_sorts[:]
                v, i = torch.ops.tritoncub.sort(x.squeeze(0) if rows == 1 else x, -1, descending)
                assert bool(row_sorts) != leaves, (rows, L)
                assert bool(lastdim) == (leaves and rows > 1), (rows, L)   # (one row: 1-D, straight to _sort_into)
            assert_equal(i.cpu().view(ri.shape), ri, msg="indices")
            assert_equal(v.cpu().view(rv.shape), rv, signed_zero=True, msg="values")
    with policy.override("segmented_sort", dict(MAX_BLOCK=64, MERGE_TILE=8, TILE_ITEMS=64, num_warps=4)):
        del warps[:]
        check_rows(adversarial_rows(3, 32, torch.float32, seed=1), False)   # (32-bit keys: the policy's warps)
        assert warps == [4]
        # a segmented sort's bins of 64-bit keys take the same warps (segments of 20 keys: BLOCK 32)
        offs = torch.tensor([0, 20, 40, 43], device=DEVICE)
        keys = adversarial_rows(1, 43, dtype, seed=2).reshape(-1)
        del warps[:]
        assert_equal(ss.segmented_sort(keys, offs).cpu(), ref_segmented(keys, None, offs, False)[0])
        assert 2 in warps, warps
        # not compiled NVIDIA kernels: neither the limits nor the warps apply
        monkeypatch.setattr(ss, "_compiled_nvidia", lambda device: False)
        del warps[:], long_rows[:]
        check_rows(adversarial_rows(3, 32, dtype, seed=3), True)
        check_rows(adversarial_rows(3, 33, dtype, seed=3), True)
        assert warps == [4, 4] and not long_rows


@pytest.mark.parametrize("wide_radix,radix_bits", [(False, 8), (True, 6), (True, 7)])
def test_block_radix_sort_leaves_64bit_keys_to_the_tile_sort(wide_radix, radix_bits, block_radix_calls, monkeypatch):
    # 64-bit keys stay in the tile sort with WIDE_KEYS_BLOCK_RADIX off, or digits of other than 8 bits
    monkeypatch.setattr(ss, "WIDE_KEYS_BLOCK_RADIX", wide_radix)
    with policy.override("segmented_sort", dict(RADIX_CFGS[0], RADIX_BITS=radix_bits)):
        check_rows(adversarial_rows(6, 50, torch.float64, seed=4), descending=False)
    assert block_radix_calls == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_block_radix_sort_falls_back_when_it_does_not_compile(dtype, monkeypatch):
    """A block radix sort that fails to build for the GPU: one warning, then the tile sort, same results.
    32-bit keys: the block radix sort is off from then on; 64-bit keys (WIDE_KEYS_BLOCK_RADIX on): only
    that config is taken out, not the block radix sort of 32-bit keys."""
    monkeypatch.setattr(ss, "WIDE_KEYS_BLOCK_RADIX", True)
    monkeypatch.setattr(ss, "launch", lambda kernel, *a, **k: _fail_to_build() if kernel is ss._segment_block_radix_sort_kernel
                        else ss_launch(kernel, *a, **k))
    monkeypatch.setattr(ss, "_BLOCK_RADIX_UNAVAILABLE", [])
    monkeypatch.setattr(ss, "_BLOCK_RADIX_FAILED", set())
    monkeypatch.setattr(ss, "block_radix_available", lambda device: not ss._BLOCK_RADIX_UNAVAILABLE)
    x = adversarial_rows(4, 40, dtype, seed=9)
    with policy.override("segmented_sort", RADIX_CFGS[0]):
        with pytest.warns(UserWarning, match="block radix sort unavailable"):
            check_rows(x, False)
        check_rows(x, True)
    if dtype.itemsize == 8:
        assert not ss._BLOCK_RADIX_UNAVAILABLE and len(ss._BLOCK_RADIX_FAILED) == 1
    else:
        assert ss._BLOCK_RADIX_UNAVAILABLE and not ss._BLOCK_RADIX_FAILED


def test_block_radix_first_k_failure_leaves_the_sorts_on(monkeypatch):
    """The first-k variant of the block radix sort (segmented top-k's, ``block_radix_first_k``) failing to
    build: a warning and False (the caller's tile path), its own key taken out and not tried again, and
    the same config's sorts still sent to the block radix sort (the launches are recorded, not run: the
    kernel runs on compiled NVIDIA kernels only)."""
    monkeypatch.setattr(ss, "WIDE_KEYS_BLOCK_RADIX", True)
    monkeypatch.setattr(ss, "_BLOCK_RADIX_UNAVAILABLE", [])
    monkeypatch.setattr(ss, "_BLOCK_RADIX_FAILED", set())
    monkeypatch.setattr(ss, "block_radix_available", lambda device: True)
    launched = []

    def fake_launch(kernel, *args, **kwargs):
        if kernel is ss._segment_block_radix_sort_kernel:
            launched.append(bool(kwargs.get("TOP_K")))
            if kwargs.get("TOP_K"):
                _fail_to_build()
            return None
        return ss_launch(kernel, *args, **kwargs)
    monkeypatch.setattr(ss, "launch", fake_launch)
    x = make_data("random", 60, torch.int64, seed=3)
    meta = ss.key_meta(x.dtype)
    vals, idx = torch.zeros((2, 4), dtype=torch.int64, device=DEVICE), torch.full((2, 4), -1, device=DEVICE)
    seg = dict(block=32, num_segs=2, seg_begin=torch.tensor([0, 30], device=DEVICE),
               seg_len=torch.tensor([30, 30], device=DEVICE), seg_list=torch.tensor([0, 1], device=DEVICE),
               descending=True, meta=meta, device=x.device)
    with policy.override("segmented_sort", RADIX_CFGS[0]):
        pol = policy.select("segmented_sort", x.device, ss._bucket(32))
        with pytest.warns(UserWarning, match="block radix sort unavailable"):
            assert not ss.block_radix_first_k(ss.bits_view(x), ss.bits_view(vals), idx, 4, **seg)
        assert ss._BLOCK_RADIX_FAILED == {ss._block_radix_config(32, pol, 64, False) + ("first_k",)}
        assert not ss.block_radix_first_k(ss.bits_view(x), ss.bits_view(vals), idx, 4, **seg)
        assert launched == [True]                                   # (not tried again)
        assert ss._block_radix_runs(32, pol, 64, x.device, False)   # (the config's sorts still run)
        ss.segmented_sort(x, torch.tensor([0, 30, 60], device=DEVICE))
        assert launched == [True, False] and not ss._BLOCK_RADIX_UNAVAILABLE


@pytest.mark.parametrize("grid_y", [None, 1])
@pytest.mark.parametrize("descending,path", [(False, "merge"), (True, "radix"), (False, "radix")])
def test_segmented_sort_pairs_ragged(descending, path, grid_y, monkeypatch):
    # empty segments, length 1, power-of-two and ragged lengths, two long segments (merge or radix path,
    # one program per tile of a long segment: lengths 40 and 21 over tiles of 8 end ragged); grid_y 1:
    # every launch here is one-dimensional (on a GPU grid axis 1 takes at most 65535)
    grids = limit_grid_y(monkeypatch, ss, grid_y) if grid_y is not None else None
    monkeypatch.setattr(ss, "_COMPOSITE_TILE", 8)
    lengths = [0, 1, 2, 0, 8, 9, 3, 16, 5, 0, 40, 7, 21]
    n = sum(lengths)
    keys = make_data("few_unique" if descending else "special", n, torch.float32, seed=7)
    vals = torch.arange(n, dtype=torch.int32, device=DEVICE)
    offs = ragged_offsets(lengths)
    with policy.override("segmented_sort", dict(LONG_ONLY, LONG_PATH=path)):
        k, v = ss.segmented_sort_pairs(keys, vals, offs, descending=descending)
    rk, rv = ref_segmented(keys, vals, offs.cpu(), descending)
    assert grids is None or (grids and all(len(g) == 1 for g in grids)), grids
    assert_equal(k.cpu(), rk, signed_zero=True)
    assert_equal(v.cpu(), rv)


@pytest.mark.parametrize("layout", ["interleaved", "adjacent", "one"])
@pytest.mark.parametrize("dtype,descending", [(torch.float32, False), (torch.int32, True), (torch.float16, False),
                                              (torch.float64, True)], ids=str)
def test_long_segments_by_segmented_radix_sort(layout, dtype, descending, monkeypatch):
    # long segments of keys of up to 32 bits, each at least a radix sort tile long: one segmented
    # onesweep sort (sort_segments) of their keys laid one after another (gathered from between short
    # segments, or in place when adjacent), then keys, values and the gathered positions put back
    tile = _radix_tile()
    lengths = {"interleaved": [3, tile + 40, 0, 1, 9, 2 * tile + 3, 5, tile],
               "adjacent": [2, tile + 5, tile, 2 * tile + 1, 7],
               "one": [tile + 77]}[layout]
    calls = count_calls(monkeypatch, rs, "sort_segments")
    n = sum(lengths)
    keys = make_data("special", n, dtype, seed=11)
    vals = torch.arange(n, dtype=torch.int64, device=DEVICE) * 3
    offs = ragged_offsets(lengths)
    with policy.override("segmented_sort", dict(LONG_ONLY, LONG_PATH="radix")):
        k, v = ss.segmented_sort_pairs(keys, vals, offs, descending=descending)
        k2 = ss.segmented_sort(keys, offs, descending=descending)
    long_ = [x for x in lengths if x > 16]
    assert len(calls) == 2 and list(np.diff(calls[0][1])) == long_, calls
    rk, rv = ref_segmented(keys, vals, offs.cpu(), descending)
    assert_equal(k.cpu(), rk, signed_zero=True)
    assert_equal(v.cpu(), rv)
    assert_equal(k2.cpu(), rk, signed_zero=True)


@pytest.mark.parametrize("first,last,ones", [(0, 0, False), (0, 0, True), (3, 0, True), (0, 2, False)],
                         ids=["covering", "covering-one-item-segments", "head-gap", "tail-gap"])
def test_segmented_sort_writes_every_item(first, last, ones, monkeypatch):
    # offsets covering every item with segments of two or more: the outputs are not copied from the
    # input first, so every segment must be written (outputs come poisoned here); one-item segments,
    # or items before the first or after the last segment: those pass through
    real_empty_like = torch.empty_like
    monkeypatch.setattr(torch, "empty_like", lambda t, **kw: real_empty_like(t, **kw).fill_(77))
    lengths = [1, 0, 1, 5, 1, 20, 0, 1] if ones else [2, 0, 3, 5, 2, 20, 0, 2]
    n = first + sum(lengths) + last
    keys = make_data("special", n, torch.float32, seed=13)
    vals = torch.arange(n, dtype=torch.int64, device=DEVICE) - 5
    offs = ragged_offsets(lengths) + first
    with policy.override("segmented_sort", dict(LONG_ONLY, LONG_PATH="merge")):
        k, v = ss.segmented_sort_pairs(keys, vals, offs)
        k2 = ss.segmented_sort(keys, offs, descending=True)
    rk, rv = ref_segmented(keys, vals, offs.cpu(), False)
    assert_equal(k.cpu(), rk, signed_zero=True)
    assert_equal(v.cpu(), rv)
    assert_equal(k2.cpu(), ref_segmented(keys, None, offs.cpu(), True)[0], signed_zero=True)


@pytest.mark.parametrize("dtype", [torch.int16, torch.float64, torch.bool], ids=str)
def test_segmented_sort_keys(dtype):
    lengths = [3, 0, 12, 1, 30]
    n = sum(lengths)
    keys = make_data("special" if dtype != torch.bool else "random", n, dtype, seed=2)
    offs = ragged_offsets(lengths).to(torch.int32)
    out = ss.segmented_sort(keys, offs)
    assert out.dtype == dtype
    assert_equal(out.cpu(), ref_segmented(keys, None, offs.cpu(), False)[0], signed_zero=True)


@pytest.mark.parametrize("descending", [False, True])
def test_segmented_sort_bool_keys_and_values(descending):
    """Bool keys sort as their bytes (False before True, stable), bool values travel with their keys, in
    both directions and through the operators (torch.sort takes bool keys)."""
    lengths = [5, 0, 17, 1, 40]
    n = sum(lengths)
    keys = make_data("random", n, torch.bool, seed=3)
    vals = make_data("random", n, torch.bool, seed=4)
    offs = ragged_offsets(lengths)
    rk, rv = ref_segmented(keys, vals, offs.cpu(), descending)
    k, v = ss.segmented_sort_pairs(keys, vals, offs, descending=descending)
    assert k.dtype == v.dtype == torch.bool
    assert_equal(k.cpu(), rk)
    assert_equal(v.cpu(), rv)
    k2, v2 = torch.ops.tritoncub.segmented_sort_pairs(keys, torch.arange(n, device=DEVICE), offs, descending)
    assert_equal(k2.cpu(), rk)
    assert_equal(v2.cpu(), ref_segmented(keys, torch.arange(n), offs.cpu(), descending)[1])   # (stable)
    assert_equal(torch.ops.tritoncub.segmented_sort(keys, offs, descending).cpu(), rk)


@pytest.mark.parametrize("pairs", [False, True])
def test_segmented_sort_autograd_and_end_offsets_op(pairs):
    """Gradients flow back through the segment permutation (keys and values); the operators take CUB's
    begin/end form too (items outside every segment pass through, gradients included)."""
    x = torch.randn(12, dtype=torch.float32, device=DEVICE)
    x[4] = x[5]   # a tie: the stable order decides where each gradient goes
    begin = torch.tensor([0, 6], device=DEVICE)
    end = torch.tensor([4, 11], device=DEVICE)
    g = torch.randn(12, device=DEVICE)
    xa = x.clone().requires_grad_()
    ref = xa.detach().clone().requires_grad_()
    ref_out = torch.cat([torch.sort(ref[0:4], descending=True, stable=True)[0], ref[4:6],
                         torch.sort(ref[6:11], descending=True, stable=True)[0], ref[11:]])
    if pairs:
        va = torch.randn(12, device=DEVICE, requires_grad=True)
        k, v = torch.ops.tritoncub.segmented_sort_pairs(xa, va, begin, True, end)
        ((k * g).sum() + (v * g).sum()).backward()
        perm = torch.ops.tritoncub.segmented_sort_pairs(x, torch.arange(12, device=DEVICE), begin, True, end)[1]
        assert_equal(v.detach().cpu(), va.detach()[perm].cpu())
        assert_equal(va.grad.cpu(), torch.zeros(12).scatter(0, perm.cpu(), g.cpu()))
    else:
        k = torch.ops.tritoncub.segmented_sort(xa, begin, True, end)
        (k * g).sum().backward()
    (ref_out * g).sum().backward()
    assert_equal(k.detach().cpu(), ref_out.detach().cpu())
    assert_equal(xa.grad.cpu(), ref.grad.cpu())


def test_segmented_sort_begin_end_and_gaps():
    keys = make_data("random", 20, torch.int32, seed=4)
    begin = torch.tensor([2, 10, 15], device=DEVICE)
    end = torch.tensor([7, 10, 19], device=DEVICE)
    out = ss.segmented_sort(keys, begin, end, descending=True)
    ref = keys.cpu().clone()
    for a, b in [(2, 7), (15, 19)]:
        ref[a:b] = torch.sort(keys[a:b].cpu(), descending=True, stable=True)[0]
    assert_equal(out.cpu(), ref)   # items outside every segment are passed through


def test_segmented_bad_input():
    keys = torch.zeros(10, device=DEVICE)
    with pytest.raises(ValueError, match="decrease"):
        ss.segmented_sort(keys, torch.tensor([0, 5, 3, 10], device=DEVICE))
    with pytest.raises(ValueError, match="out of range"):
        ss.segmented_sort(keys, torch.tensor([0, 11], device=DEVICE))
    with pytest.raises(ValueError, match="out of range"):
        ss.segmented_sort(keys, torch.tensor([-1, 5], device=DEVICE))
    with pytest.raises(ValueError, match="num_segments"):
        ss.segmented_sort(keys, torch.tensor([], dtype=torch.int64, device=DEVICE))
    with pytest.raises(TypeError, match="offsets"):
        ss.segmented_sort(keys, torch.tensor([0.0, 10.0], device=DEVICE))
    with pytest.raises(TypeError, match="dtype"):
        ss.segmented_sort(torch.zeros(4, dtype=torch.complex64, device=DEVICE), torch.tensor([0, 4], device=DEVICE))
    with pytest.raises(ValueError, match="values"):
        ss.segmented_sort_pairs(keys, torch.zeros(9, device=DEVICE), torch.tensor([0, 10], device=DEVICE))
    with pytest.raises(ValueError, match="dimension"):
        ss.segmented_sort(keys.view(2, 5), torch.tensor([0, 10], device=DEVICE))
    with pytest.raises(TypeError, match="dtype"):
        ss.sort_rows(torch.zeros(3, 3, dtype=torch.complex64, device=DEVICE))
    with pytest.raises(ValueError, match="overlap"):   # begin/end segments sharing items
        ss.segmented_sort(keys, torch.tensor([0, 2], device=DEVICE), torch.tensor([5, 7], device=DEVICE))
    with pytest.raises(ValueError, match="overlap"):   # (listed out of order)
        ss.segmented_sort(keys, torch.tensor([6, 0, 3], device=DEVICE), torch.tensor([9, 2, 7], device=DEVICE))
    # touching and empty segments do not overlap: accepted, each sorted on its own
    keys = torch.tensor([9., 1., 5., 8., 2., 7., 0., 3., 6., 4.], device=DEVICE)
    out = ss.segmented_sort(keys, torch.tensor([5, 0, 3, 3], device=DEVICE), torch.tensor([10, 3, 3, 5], device=DEVICE))
    assert out.cpu().tolist() == [1., 5., 9., 2., 8., 0., 3., 4., 6., 7.]


def test_segmented_sort_pairs_overlapping_then_apart():
    # values that start inside the keys' buffer, then (twice: on a GPU the second call of a problem
    # replays the first one's launches) the same problem with keys and values apart: every result
    # equals torch's (a replay recorded on overlapping buffers once sent the values' reads to the keys)
    n, step = 512 if DEVICE == "cpu" else 4096, 64
    offsets = torch.arange(0, n + 1, step, device=DEVICE)
    buf = make_data("random", n + 4, torch.float32)

    def check(k, v):
        kc, vc = k.cpu(), v.cpu()   # (copies: the call may sort keys and values that share memory)
        ok, ov = ss.segmented_sort_pairs(k, v, offsets)
        for a in range(0, n, step):
            r = torch.sort(kc[a:a + step], stable=True)
            assert_equal(ok[a:a + step].cpu(), r.values)
            assert_equal(ov[a:a + step].cpu(), vc[a:a + step][r.indices])

    check(buf[:n], buf[4:n + 4])
    for _ in range(2):
        check(make_data("random", n, torch.float32), make_data("random", n, torch.float32))


def _replays_on_the_cpu(monkeypatch) -> list:
    """Row and segment sorts remember and replay their launches here too (the interpreter runs the
    replays: helpers.interpreter_replays); returns the list of replay() calls."""
    if DEVICE == "cuda":
        pytest.skip("the GPU tests replay compiled launches (test_gpu_*_replayed)")
    return interpreter_replays(monkeypatch, ss, ("_ROWS_REPLAYS", "_SHORT_REPLAYS"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int16], ids=str)
def test_sort_rows_replays_run_the_recorded_launches(monkeypatch, dtype):
    """A repeated row sort replays the first call's launch on the new call's buffers (run by the
    interpreter here): fresh data each call, both directions; every result, checked after all the
    calls, is torch's stable sort."""
    replays = _replays_on_the_cpu(monkeypatch)
    results = []
    for rep, desc in enumerate((False, False, True, True)):
        x = make_data("special" if dtype.is_floating_point else "few_unique", 5 * 33, dtype, seed=rep).view(5, 33)
        results.append((x, desc, ss.sort_rows(x, desc)))
    assert len(replays) == 2   # (calls 1 and 3 replay calls 0 and 2)
    for x, desc, (v, i) in results:
        rv, ri = torch.sort(x, dim=-1, descending=desc, stable=True)
        assert_equal(i, ri, msg=f"indices descending={desc}")
        assert_equal(v, rv, signed_zero=True, msg=f"values descending={desc}")


def test_segmented_short_bins_replays_run_the_recorded_launches(monkeypatch):
    """Repeated segmented sorts replay their short segments' launches on the new call's buffers (run
    by the interpreter here): fresh data, values that are the keys themselves (their own launches),
    other offsets with the same bins; and a call whose values start inside the keys' buffer is not
    remembered (overlapping roots), so the same problem with keys and values apart plans afresh."""
    replays = _replays_on_the_cpu(monkeypatch)
    rng = np.random.default_rng(3)
    lens = rng.integers(2, 40, 12)
    n = int(lens.sum())
    offs = torch.as_tensor(np.concatenate([[0], np.cumsum(lens)]))
    perm = rng.permutation(len(lens))
    offs2 = torch.as_tensor(np.concatenate([[0], np.cumsum(lens[perm])]))   # (the same bins)
    results = []
    for rep in range(5):
        keys = make_data("special", n, torch.float32, seed=rep)
        vals = keys if rep == 2 else torch.arange(n, dtype=torch.int64) * 7
        o = offs2 if rep == 4 else offs
        results.append((keys.clone(), vals.clone(), o, ss.segmented_sort_pairs(keys, vals, o)))
    # (calls 1, 3 and 4 replay call 0's launches; call 2, whose values are its keys, is not remembered)
    assert len(replays) == 3
    for keys, vals, o, (k, v) in results:
        rk, rv = ref_segmented(keys, vals, o, False)
        assert_equal(k, rk, signed_zero=True)
        assert_equal(v, rv)
    # values starting inside the keys' buffer: not remembered; then apart, twice: planned, replayed
    buf = make_data("random", n + 4, torch.float32)
    before = len(replays)
    kc, vc = buf[:n].clone(), buf[4:n + 4].clone()
    k, v = ss.segmented_sort_pairs(buf[:n], buf[4:n + 4], offs)
    rk, rv = ref_segmented(kc, vc, offs, False)
    assert_equal(k, rk)
    assert_equal(v, rv)
    for rep in range(2):
        keys, vals = make_data("random", n, torch.float32, seed=20 + rep), make_data("random", n, torch.float32)
        k, v = ss.segmented_sort_pairs(keys, vals, offs)
        rk, rv = ref_segmented(keys, vals, offs, False)
        assert_equal(k, rk)
        assert_equal(v, rv)
    assert len(replays) - before == 1


def test_segmented_empty():
    out = ss.segmented_sort(torch.empty(0, device=DEVICE), torch.tensor([0, 0, 0], device=DEVICE))
    assert out.numel() == 0


def test_opcheck():
    keys = make_data("few_unique", 12, torch.float32, seed=9)
    offs = ragged_offsets([5, 0, 7])
    torch.library.opcheck(torch.ops.tritoncub.segmented_sort.default, (keys, offs, False))
    torch.library.opcheck(torch.ops.tritoncub.segmented_sort_pairs.default,
                          (keys, torch.arange(12, device=DEVICE), offs, True))
    torch.library.opcheck(torch.ops.tritoncub.sort_rows.default, (keys.view(3, 4), True))
    torch.library.opcheck(torch.ops.tritoncub.segmented_sort.default,
                          (keys, offs[:-1], True, torch.tensor([4, 5, 12], device=DEVICE)))
    # inputs that require grad: the backward (a segmented sort of positions) is traced too
    kg = keys.clone().requires_grad_()
    torch.library.opcheck(torch.ops.tritoncub.segmented_sort.default,
                          (kg, offs[:-1], True, torch.tensor([4, 5, 12], device=DEVICE)))
    torch.library.opcheck(torch.ops.tritoncub.segmented_sort_pairs.default,
                          (kg, torch.randn(12, device=DEVICE, requires_grad=True), offs, False))


def test_compile_segmented_sort_backward():
    """The segmented sort's backward under torch.compile (it once called the Python function, whose
    host-side offset read fails on the traced tensors): the gradient goes back to where each key came
    from, as in eager mode."""
    offs = ragged_offsets([5, 0, 7])
    w = torch.arange(12, dtype=torch.float32, device=DEVICE)

    def f(a):
        return (torch.ops.tritoncub.segmented_sort(a, offs, False, None) * w).sum()

    x = make_data("random", 12, torch.float32, seed=4)
    eager = x.clone().requires_grad_()
    f(eager).backward()
    comp = x.clone().requires_grad_()
    torch.compile(f, backend="aot_eager", fullgraph=True)(comp).backward()
    assert_equal(comp.grad.cpu(), eager.grad.cpu())


def test_compile_fullgraph():
    """The sort operators inside one compiled graph, a transposed input included (the fakes must give the
    contiguous results the operators return)."""
    x = make_data("random", 24, torch.float32, seed=3).view(4, 6)
    offs = ragged_offsets([5, 0, 19])
    ops = torch.ops.tritoncub

    def f(a):
        v, i = ops.sort(a.t(), -1, True, False)
        r, _ = ops.sort_rows(a, False)
        s = ops.segmented_sort(a.reshape(-1), offs, False)
        return v * 2, i, r + 1, s

    backend = "inductor" if DEVICE == "cuda" else "aot_eager"
    got = torch.compile(f, fullgraph=True, backend=backend)(x)
    ref = f(x)
    for a, b in zip(got, ref):
        assert_equal(a.cpu(), b.cpu())


# -- GPU: sizes of the benchmark ------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("rows,L", [(65536, 128), (4096, 1000), (100, 3000), (3, 70001), (1, 2048), (1, 3000),
                                    (2, 4096)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8], ids=str)
def test_gpu_sort_rows_large(rows, L, dtype):
    if dtype == torch.uint8:
        x = torch.randint(0, 256, (rows, L), device=DEVICE, dtype=torch.uint8)
    else:
        x = (torch.randn(rows, L, device=DEVICE) * 50).round().to(dtype)
        if dtype.is_floating_point:
            x[0, : L // 3] = float("nan")
            x[-1, ::3] = -0.0
    for desc in (False, True):
        v, i = ss.sort_rows(x, desc)
        rv, ri = torch.sort(x, dim=-1, descending=desc, stable=True)
        assert torch.equal(i, ri)
        assert torch.equal(v.view(torch.uint8) if dtype == torch.uint8 else v.view(-1).view(torch.uint8),
                           rv.view(torch.uint8) if dtype == torch.uint8 else rv.view(-1).view(torch.uint8))
        if rows <= 3:   # (the operator's own routing: one row as a 1-D tensor, a few rows as they are)
            v, i = torch.ops.tritoncub.sort(x[0] if rows == 1 else x, -1, desc)
            assert torch.equal(i.view(ri.shape), ri)
            assert torch.equal(v.view(rv.shape).view(-1).view(torch.uint8), rv.view(-1).view(torch.uint8))


@pytest.mark.gpu
def test_gpu_sort_rows_replayed(monkeypatch):
    # a repeated row sort replays its remembered launches on fresh buffers: fresh data, an unaligned
    # input, both directions, every tile strategy's sizes; earlier results stay intact; a policy
    # change plans afresh
    ss._ROWS_REPLAYS.clear()
    replays = count_calls(monkeypatch, ss, "replay")
    for rows, L in ((4096, 128), (300, 1000), (64, 4096), (7, 33)):
        for dtype in (torch.float32, torch.int16, torch.bool):
            before = len(replays)
            results = []
            for rep in range(3):
                base = make_data("special" if dtype.is_floating_point else "random", rows * L + 1, dtype)
                x = (base[1:] if rep == 1 else base[:-1]).view(rows, L)   # rep 1: not 16-byte aligned
                for desc in (False, True):
                    results.append((x, desc, ss.sort_rows(x, desc)))
            for x, desc, (v, i) in results:
                rv, ri = torch.sort(x.to(torch.uint8) if dtype == torch.bool else x, dim=-1, descending=desc,
                                    stable=True)
                assert torch.equal(i, ri), (rows, L, dtype, desc)
                assert torch.equal(v.view(-1).view(torch.uint8), x.gather(-1, ri).view(-1).view(torch.uint8))
            assert len(replays) > before, (rows, L, dtype)   # (rep 2 has rep 0's key)
    # a policy change (block radix sort or bitonic tiles, here) plans afresh, then replays
    x = make_data("random", 300 * 1000, torch.float32).view(300, 1000)
    r = torch.sort(x, dim=-1, stable=True)
    for cfg in ({"TILE_SORT": "bitonic"}, {}):
        with policy.override("segmented_sort", cfg):
            counts = []
            for _ in range(2):
                before = len(replays)
                v, i = ss.sort_rows(x)
                counts.append(len(replays) - before)
                assert torch.equal(i, r.indices) and torch.equal(v, r.values), cfg
            assert counts == [0, 1], (cfg, counts)


@pytest.mark.gpu
def test_gpu_segmented_power_law():
    rng = np.random.default_rng(0)
    w = rng.pareto(1.2, 20000) + 0.05
    lens = np.floor(w / w.sum() * (1 << 22)).astype(np.int64)
    offs = torch.as_tensor(np.concatenate([[0], np.cumsum(lens)]), device=DEVICE)
    n = int(lens.sum())
    keys = torch.randint(-1000, 1000, (n,), device=DEVICE).float()
    vals = torch.arange(n, device=DEVICE, dtype=torch.int32)
    seg = torch.repeat_interleave(torch.arange(len(lens), device=DEVICE), torch.as_tensor(lens, device=DEVICE))
    for desc in (False, True):
        k, v = ss.segmented_sort_pairs(keys, vals, offs, descending=desc)
        sk, p = torch.sort(keys, descending=desc, stable=True)
        _, q = torch.sort(seg[p], stable=True)
        assert torch.equal(k, sk[q]) and torch.equal(v, vals[p[q]])


@pytest.mark.gpu
def test_gpu_segmented_short_bins_replayed(monkeypatch):
    # repeated segmented sorts replay their short segments' launches on fresh buffers: fresh data, an
    # unaligned input, values that are the keys themselves, other offsets with the same bins
    ss._SHORT_REPLAYS.clear()
    replays = count_calls(monkeypatch, ss, "replay")
    rng = np.random.default_rng(1)
    lens = rng.integers(2, 3000, 400)
    lens[::50] = 5000   # (a few long segments too)
    n = int(lens.sum())
    offs = torch.as_tensor(np.concatenate([[0], np.cumsum(lens)]), device=DEVICE)
    for rep in range(4):
        x = make_data("special", n + 1, torch.float32, seed=rep)
        keys = x[1:] if rep == 2 else x[:n]     # rep 2: not 16-byte aligned
        vals = keys if rep == 3 else torch.arange(n, device=DEVICE, dtype=torch.int64) * 7
        for desc in (False, True):
            k, v = ss.segmented_sort_pairs(keys, vals, offs, descending=desc)
            rk, rv = ref_segmented(keys, vals, offs.cpu(), desc)
            assert_equal(k.cpu(), rk, signed_zero=True)
            assert_equal(v.cpu(), rv)
    assert len(replays) == 2   # (rep 1 replays rep 0; reps 2 and 3 differ in alignment, aliasing)
    perm = rng.permutation(len(lens))   # other offsets, the same bins
    offs2 = torch.as_tensor(np.concatenate([[0], np.cumsum(lens[perm])]), device=DEVICE)
    keys = make_data("random", n, torch.float32, seed=9)
    k, v = ss.segmented_sort_pairs(keys, torch.arange(n, device=DEVICE, dtype=torch.int64) * 7, offs2)
    rk, rv = ref_segmented(keys, torch.arange(n, dtype=torch.int64) * 7, offs2.cpu(), False)
    assert_equal(k.cpu(), rk)
    assert_equal(v.cpu(), rv)
    assert len(replays) == 3


def test_fakes_check_arguments_as_the_ops():
    """Under FakeTensorMode the segmented and row sorts refuse what the ops refuse."""
    ops = torch.ops.tritoncub
    with torch.device(DEVICE), torch._subclasses.fake_tensor.FakeTensorMode():
        offs = torch.zeros(3, dtype=torch.int64)
        with pytest.raises(ValueError, match="1 dimension"):
            ops.segmented_sort(torch.empty(2, 4), offs, False)
        with pytest.raises(TypeError):
            ops.segmented_sort(torch.empty(8, dtype=torch.complex64), offs, False)
        assert ops.segmented_sort(torch.empty(8, dtype=torch.bool), offs, False).dtype == torch.bool
        with pytest.raises(ValueError, match="values must be 1-D"):
            ops.segmented_sort_pairs(torch.empty(8), torch.empty(7), offs, False)
        with pytest.raises(ValueError, match="end_offsets"):
            ops.segmented_sort(torch.empty(8), offs, False, torch.zeros(2, dtype=torch.int64))
        with pytest.raises(TypeError, match="end_offsets"):
            ops.segmented_sort_pairs(torch.empty(8), torch.empty(8), offs, False, torch.zeros(3))
        with pytest.raises(TypeError):
            ops.sort_rows(torch.empty(2, 4, dtype=torch.complex64), False)
        v, i = ops.sort_rows(torch.empty(2, 4, dtype=torch.bool), False)   # (bool rows sort as their bytes)
        assert v.dtype == torch.bool and v.shape == (2, 4) and i.dtype == torch.int64
        assert ops.segmented_sort(torch.empty(8), offs, False).shape == (8,)
    # offsets on another device than the keys (a meta one sends the call to the fake): refused, never
    # an unwritten result
    keys = make_data("random", 8, torch.float32)
    offs = torch.tensor([0, 3, 8], device=DEVICE)
    for op_args in ((keys, offs.to("meta")), (keys, offs[:2], False, offs[1:].to("meta"))):
        with pytest.raises(ValueError, match="is on meta"):
            ops.segmented_sort(*op_args)
    with pytest.raises(ValueError, match="is on meta"):
        ops.segmented_sort_pairs(keys, torch.arange(8, device=DEVICE), offs.to("meta"))
    for flag in (None, 1):
        with pytest.raises(TypeError, match="descending must be a bool"):
            ss.segmented_sort(keys, offs, descending=flag)
        with pytest.raises(TypeError, match="descending must be a bool"):
            ss.sort_rows(keys.view(2, 4), flag)
