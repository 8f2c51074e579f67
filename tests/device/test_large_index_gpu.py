"""Every op family past 2^31 items (marked ``gpu``; skipped under the interpreter): one-byte inputs of
``N = 2^31 + 2^20 + 7`` items, so item indices, tile offsets, counts and output positions need
64 bits, compared with torch (or with exact counts where torch's own op would need tens of GiB).

The items that matter sit past 2^31: a lone maximum, the selected items of a sparse mask, the top-k,
the run boundaries. Skipped when the GPU has less than 40 GiB free."""
import pytest
import torch

from helpers import DEVICE

N = (1 << 31) + (1 << 20) + 7
FAR = (1 << 31) + 12345                 # an index past 2^31


@pytest.fixture(scope="module")
def big():
    if DEVICE == "cpu" or not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    free, _ = torch.cuda.mem_get_info()
    if free < 40 * 2**30:
        pytest.skip("needs 40 GiB of free GPU memory")
    g = torch.Generator(device=DEVICE).manual_seed(7)
    x = torch.randint(-100, 100, (N,), device=DEVICE, dtype=torch.int8, generator=g)
    yield x
    del x
    torch.cuda.empty_cache()


def _ops():
    return torch.ops.tritoncub


@pytest.mark.gpu
def test_reductions_past_2_to_31(big):
    x = big.clone()
    x[FAR] = 127                         # the lone maximum, past 2^31
    x[N - 1] = -128                      # the lone minimum, the last item
    assert torch.equal(_ops().sum(x), x.sum())
    assert torch.equal(_ops().amax(x), x.amax()) and torch.equal(_ops().amin(x), x.amin())
    assert int(_ops().argmax(x)) == FAR and int(_ops().argmin(x)) == N - 1
    # a bool sum counts in int64: exactly N
    ones = torch.ones(N, device=DEVICE, dtype=torch.bool)
    assert int(_ops().sum(ones)) == N


@pytest.mark.gpu
def test_segment_reduce_segment_longer_than_2_to_31(big):
    # (float inputs only: max is exact; each segment's maximum placed past its 2^31-th item)
    x = big.to(torch.float16)
    x[FAR + 99] = 120.0
    x[7] = 110.0
    offsets = torch.tensor([0, 5, 6, FAR, N], device=DEVICE)
    out = _ops().segment_reduce(x, offsets, "max")
    ref = torch.stack([x[:5].amax(), x[5:6].amax(), x[6:FAR].amax(), x[FAR:].amax()])
    assert torch.equal(out, ref) and float(out[3]) == 120.0 and float(out[2]) == 110.0


@pytest.mark.gpu
def test_select_past_2_to_31(big):
    mask = torch.zeros(N, device=DEVICE, dtype=torch.bool)
    picks = torch.tensor([3, (1 << 31) - 1, 1 << 31, FAR, N - 1], device=DEVICE)
    mask[picks] = True
    mask[(1 << 30)::(1 << 20)] = True    # and one item per 2^20 from 2^30 on
    assert torch.equal(_ops().masked_select(big, mask), big[mask])
    nz = _ops().nonzero(mask)
    assert nz.dtype == torch.int64 and torch.equal(nz, torch.nonzero(mask))


@pytest.mark.gpu
def test_histogram_past_2_to_31(big):
    counts = _ops().bincount(big.to(torch.uint8))
    ref = torch.bincount(big.to(torch.uint8))
    assert torch.equal(counts, ref) and int(counts.sum()) == N


@pytest.mark.gpu
def test_runs_past_2_to_31():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    free, _ = torch.cuda.mem_get_info()
    if free < 40 * 2**30:
        pytest.skip("needs 40 GiB of free GPU memory")
    # three runs, the middle one longer than 2^31 items; boundaries at 1000 and FAR
    x = torch.zeros(N, device=DEVICE, dtype=torch.uint8)
    x[1000:FAR] = 1
    x[FAR:] = 2
    vals, _, counts = _ops().unique_consecutive(x, False, True)
    assert vals.tolist() == [0, 1, 2] and counts.tolist() == [1000, FAR - 1000, N - FAR]
    # run-length encode and histograms with their default count dtypes: int64 past 2^31 items
    from tritoncub.device import histogram as H, run_length_encode as R
    u, lengths, k = R.encode(x)
    assert lengths.dtype == torch.int64 and int(k) == 3 and lengths[:3].tolist() == [1000, FAR - 1000, N - FAR]
    _, lengths, k = R.non_trivial_runs(x)
    assert lengths.dtype == torch.int64 and lengths[:int(k)].tolist() == [1000, FAR - 1000, N - FAR]
    h = H.histogram_even(x, 4, 0, 3)
    assert h.dtype == torch.int64 and h.tolist() == [1000, FAR - 1000, N - FAR]
    d = _ops().diff(x)
    assert d.numel() == N - 1
    nz = torch.nonzero(d).flatten().tolist()
    assert nz == [999, FAR - 1] and int(d[999]) == 1 and int(d[FAR - 1]) == 1



@pytest.mark.gpu
def test_diff_rows_past_2_to_31(big):
    """diff along rows of 2 items: the output (N/2 items) fits 32-bit indices, the input does not (the
    flattened way reads x at output index + row)."""
    rows = N // 2
    x = big[: 2 * rows].view(rows, 2)
    d = _ops().diff(x)
    assert d.shape == (rows, 1)
    ref = x[:, 1].to(torch.int16) - x[:, 0].to(torch.int16)   # (int8 differences wrap as torch's do)
    assert torch.equal(d[:, 0], ref.to(torch.int8))
    assert int(d[-1, 0]) == ((int(x[-1, 1]) - int(x[-1, 0]) + 128) % 256) - 128


@pytest.mark.gpu
def test_topk_past_2_to_31(big):
    x = big.clone()
    top = torch.tensor([FAR, N - 1, 1 << 31, 17], device=DEVICE)
    x[top] = 127
    x[x == 127] = 126
    x[top] = 127                         # exactly four maxima, three of them past 2^31
    v, i = _ops().topk(x, 4)
    assert v.tolist() == [127] * 4 and sorted(i.tolist()) == sorted(top.tolist())


@pytest.mark.gpu
def test_sort_keys_past_2_to_31(big):
    out = _ops().sort_keys(big)
    assert out.numel() == N
    assert bool((out[1:] >= out[:-1]).all())
    # same multiset: int8 -> uint8 with the sign bit flipped keeps the order
    flip = lambda t: t.view(torch.uint8) ^ 0x80  # noqa: E731
    assert torch.equal(torch.bincount(flip(out), minlength=256), torch.bincount(flip(big), minlength=256))


@pytest.mark.gpu
def test_unique_past_2_to_31(big):
    # (torch.unique refuses inputs this long: the reference is the histogram of the byte values)
    vals, _, counts = _ops().unique(big, True, False, True)
    hist = torch.bincount(big.view(torch.uint8) ^ 0x80, minlength=256)
    present = torch.nonzero(hist).flatten()
    assert torch.equal(vals, (present - 128).to(torch.int8)) and torch.equal(counts, hist[present])
    assert int(counts.sum()) == N


@pytest.mark.gpu
def test_sort_with_indices_past_2_to_31(big):
    # int64 indices past 2^31 (~17 GB each); checked without torch.sort's own ~40 GB: the values
    # are x at the indices, non-decreasing, and within each run of equal values the indices rise
    # (stable); with the counts per value equal, the indices are then a permutation
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    if free < 60 * 2**30:
        pytest.skip("needs 60 GiB of free GPU memory")
    v, i = _ops().sort(big, -1, False, True)
    assert i.dtype == torch.int64 and int(i.max()) == N - 1
    assert torch.equal(big[i], v)
    assert bool((v[1:] >= v[:-1]).all())
    assert bool(((i[1:] > i[:-1]) | (v[1:] != v[:-1])).all())
    flip = lambda t: t.view(torch.uint8) ^ 0x80  # noqa: E731
    assert torch.equal(torch.bincount(flip(v), minlength=256), torch.bincount(flip(big), minlength=256))


@pytest.mark.gpu
def test_sort_pairs_past_2_to_31(big):
    # 32-bit keys and values through the passes' shared-memory exchange (keys, then values by the
    # keys' ranks), destinations past 2^31; the values are the input positions (wrapped to int32, so
    # read back as unsigned), checked as the indices test above: the keys at the positions, in order,
    # stable, and every key value as often as in the input
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    if free < 60 * 2**30:
        pytest.skip("needs 60 GiB of free GPU memory")
    spread = 65599   # (keys that differ in every byte)
    k, v = _ops().sort_pairs(big.to(torch.int32) * spread, torch.arange(N, device=DEVICE).to(torch.int32),
                             False, 0, None)
    pos = v.to(torch.int64) & 0xFFFFFFFF
    del v
    assert bool((k[1:] >= k[:-1]).all())
    assert torch.equal(big[pos].to(torch.int32) * spread, k)
    assert bool(((pos[1:] > pos[:-1]) | (k[1:] != k[:-1])).all())
    assert torch.equal(torch.bincount((k // spread + 128).to(torch.int64), minlength=256),
                       torch.bincount(big.view(torch.uint8) ^ 0x80, minlength=256))


@pytest.mark.gpu
def test_row_reductions_and_scans_past_2_to_31(big):
    # more than 2^31 rows reduced one each (the rows path's work items), and a scan down dim 0 of a
    # tensor with more than 2^31 columns (the strided scan's column index): both need 64 bits
    rows = (1 << 31) + 5
    x = torch.empty((rows, 2), device=DEVICE, dtype=torch.int8)
    x.view(-1)[: 2 * (N - 1) // 2].copy_(big[: 2 * (N - 1) // 2])  # (most of the items from big)
    x.view(-1)[2 * (N - 1) // 2:] = 3
    x[rows - 1] = torch.tensor([100, -7], dtype=torch.int8)          # the last row: its max 100
    out = _ops().amax(x, 1)
    assert out.shape == (rows,) and torch.equal(out, x.amax(1)) and int(out[-1]) == 100
    del out
    xt = x.t()                                                        # [2, rows]: scan down the 2
    y = _ops().cumsum(xt, 0, torch.int8)
    torch.cuda.synchronize()
    # (the reference by elementwise ops: torch.cumsum down dim 0 of this tensor fails to launch on
    # torch 2.11 with 'invalid argument')
    assert torch.equal(y[0], xt[0]) and torch.equal(y[1], xt[0] + xt[1]) and int(y[1, -1]) == 93
    del x, xt, y
    torch.cuda.empty_cache()


@pytest.mark.gpu
def test_logcumsumexp_past_2_to_31(big):
    # float16 items, all -inf but 0 at the first and 1 past 2^31: every output is known exactly (forward:
    # 0 up to FAR, log(1 + e) after; reverse: log(1 + e) up to the first, 1 up to FAR, -inf after), in both
    # directions (the reverse scan reads the row's tiles from its end)
    import math
    from tritoncub.device import scan as S
    assert big.numel() == N   # (the fixture: a GPU with the memory, about 9 GiB here)
    x = torch.full((N,), -math.inf, device=DEVICE, dtype=torch.float16)
    x[0] = 0.0
    x[FAR] = 1.0
    both = torch.tensor(1.0 + math.log1p(math.exp(-1.0)), dtype=torch.float32).half().item()
    y = _ops().logcumsumexp(x, 0)
    assert bool((y[:FAR] == 0).all()) and bool((y[FAR:] == both).all())
    del y
    y = S.logcumsumexp(x, 0, reverse=True)
    assert float(y[0]) == both and bool((y[1:FAR + 1] == 1.0).all()) and bool((y[FAR + 1:] == -math.inf).all())
    del x, y
    torch.cuda.empty_cache()


@pytest.mark.gpu
def test_topk_bucket_past_2_to_31(big):
    # one 8-bit digit holds more than 2^31 keys, the one the k-th key is in: its count needs 64 bits
    x = torch.zeros_like(big)
    x[FAR] = 1
    v, i = _ops().topk(x, 3)
    assert v.tolist() == [1, 0, 0] and int(i[0]) == FAR
    assert len(set(i.tolist())) == 3 and torch.equal(x[i], v)
    del x
    torch.cuda.empty_cache()
