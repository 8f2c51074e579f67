"""DeviceSelect (tritoncub.device.select) and the masked_select / nonzero operators, against torch.

Under the interpreter 128-item tiles give several tiles (and ragged last tiles) with a few hundred
items; on the GPU the tuned policy runs and the ``gpu`` tests use large sizes.
"""
import contextlib
import math

import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE, assert_close, assert_equal, count_calls, interpreter_replays, make_data, plan_replays
from tritoncub import policy
from tritoncub._utils import Mailbox, interpreter_active
from tritoncub.device import run_length_encode as S_RLE
from tritoncub.device import select as S

TILE = 128
SIZES = [0, 1, TILE - 1, TILE + 1, 3 * TILE + 45] if interpreter_active() else \
    [0, 1, 4095, 4097, 100_003, (1 << 22) + 5]
DTYPES = [torch.int8, torch.int32, torch.int64, torch.uint8, torch.float16, torch.bfloat16, torch.float32,
          torch.float64, torch.bool]
ops = torch.ops.tritoncub


@pytest.fixture(autouse=True)
def small_policy():
    if interpreter_active():
        with policy.override("select", {"TILE": TILE, "num_warps": 4}):
            yield
    else:
        yield


@triton.jit
def _two_args(x, y):
    return x > y


@triton.jit
def positive(x):
    return x > 0


@triton.jit
def odd(x):
    return (x.to(tl.int32) & 1) != 0


@triton.jit
def bit1(x):   # a number, not a boolean: nonzero holds
    return x & 2


@triton.jit
def halved(x):   # a float tile: nonzero (NaN included) holds
    return x * 0.5


def _data(kind, n, dtype):
    if dtype == torch.bool:
        return torch.rand(n, device=DEVICE) > 0.5
    return make_data(kind, n, dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_flagged(n, dtype):
    x = _data("special", n, dtype)
    flags = (torch.rand(n, device=DEVICE) * 3).to(torch.int32) - 1  # -1, 0, 1: nonzero selects
    out, k = S.flagged(x, flags)
    ref = x.cpu()[flags.cpu() != 0]
    assert int(k) == ref.numel()
    assert_equal(out[: int(k)].cpu(), ref, signed_zero=True)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.float64])
def test_if_predicate(n, dtype):
    x = make_data("special", n, dtype)
    out, k = S.if_(x, positive)
    ref = x.cpu()[x.cpu() > 0]
    assert int(k) == ref.numel()
    assert_equal(out[: int(k)].cpu(), ref)


@pytest.mark.parametrize("passes", [1, 2])
def test_if_numeric_predicate_counts_nonzero(passes):
    """A predicate that returns numbers selects the items where it is nonzero (C++'s conversion to
    bool), in both the single- and the two-pass engine (the two-pass one once selected by the number's
    bits: ``x & 2`` selected nothing)."""
    xi = torch.tensor([1, 2, 3, 6, 7, 8, 0, -2], dtype=torch.int32, device=DEVICE)
    xf = torch.tensor([0.0, -0.0, 1.5, float("nan"), -3.0, 0.0], device=DEVICE)
    with policy.override("select", {"PASSES": passes}):
        for x, pred, keep in ((xi, bit1, (xi.cpu() & 2) != 0), (xf, halved, (xf.cpu() * 0.5) != 0)):
            out, k = S.if_(x, pred)
            assert int(k) == int(keep.sum())
            assert_equal(out[: int(k)].cpu(), x.cpu()[keep])


@pytest.mark.parametrize("kind", ["few_unique", "equal", "sorted", "special", "random"])
@pytest.mark.parametrize("dtype", [torch.int16, torch.float32, torch.bool])
def test_unique_first_of_runs(kind, dtype):
    n = 3 * TILE + 45 if interpreter_active() else 300_001
    x = _data(kind, n, dtype)
    out, k = S.unique(x)
    ref = torch.unique_consecutive(x.cpu())
    assert int(k) == ref.numel()
    assert_equal(out[: int(k)].cpu(), ref)


def test_unique_keeps_first_of_equal_zeros_and_splits_nans():
    x = torch.tensor([-0.0, 0.0, 0.0, math.nan, math.nan, 1.0, 1.0, -0.0], device=DEVICE)
    out, k = S.unique(x)
    got = out[: int(k)].cpu()
    assert int(k) == 5
    assert_equal(got, torch.tensor([-0.0, math.nan, math.nan, 1.0, -0.0]), signed_zero=True)


def test_unique_by_key():
    n = 2 * TILE + 9 if interpreter_active() else 100_000
    keys = torch.randint(0, 3, (n,), device=DEVICE)
    vals = torch.arange(n, device=DEVICE, dtype=torch.float32)
    ko, vo, k = S.unique_by_key(keys, vals)
    kc = keys.cpu()
    heads = torch.ones(n, dtype=torch.bool)
    heads[1:] = kc[1:] != kc[:-1]
    assert int(k) == int(heads.sum())
    assert_equal(ko[: int(k)].cpu(), kc[heads])
    assert_equal(vo[: int(k)].cpu(), vals.cpu()[heads])


def _count_at(monkeypatch, when):
    """Fix when two-pass plans see their host count at pass 2's launch: 'late' (not arrived yet: the
    worst-case buffer path, which the interpreter, running kernels at launch, never takes, nor a GPU up
    to ``S._WAIT_COUNT_MAX`` items), 'early' (waited for: the exact-output path, which a GPU takes up to
    that size, or when the host is behind), or as timed."""
    if when == "late":
        monkeypatch.setattr(S.Plan, "host_count_if_ready", lambda self: None)
    elif when == "early":
        monkeypatch.setattr(S.Plan, "host_count_if_ready", lambda self: self.host_count())


@pytest.mark.parametrize("form", ["two_pass", "two_pass_count_late", "two_pass_count_early", "single_pass"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 1.0])
def test_masked_select(n, density, form, monkeypatch):
    """Every form: the bitmask two-pass form (its count stored to the host by pass 1: exact outputs
    when it has arrived before pass 2 is launched, else a worst-case buffer), the single pass."""
    monkeypatch.setattr(S, "MASKED_SELECT_TWO_PASS", form != "single_pass")
    _count_at(monkeypatch, form.rpartition("_")[2])
    x = make_data("special", n, torch.float32)
    mask = torch.rand(n, device=DEVICE) < density
    assert_equal(ops.masked_select(x, mask).cpu(), torch.masked_select(x.cpu(), mask.cpu()), signed_zero=True)


def test_masked_select_broadcast_and_dtypes():
    x = torch.randn(5, 1, 7, device=DEVICE)
    mask = torch.rand(3, 7, device=DEVICE) > 0.3
    assert_equal(ops.masked_select(x, mask).cpu(), torch.masked_select(x.cpu(), mask.cpu()))
    xi = torch.randint(-5, 5, (4, 33), device=DEVICE, dtype=torch.int8)
    m = xi > 0
    assert_equal(ops.masked_select(xi, m).cpu(), torch.masked_select(xi.cpu(), m.cpu()))
    xt = torch.randn(33, 4, device=DEVICE).t()  # not contiguous
    mt = xt > 0
    assert_equal(ops.masked_select(xt, mt).cpu(), torch.masked_select(xt.cpu(), mt.cpu()))


@pytest.mark.parametrize("x_shape,mask_shape", [((5, 1, 7), (3, 7)), ((3, 7), (3, 7)), ((7,), (4, 7)), ((), (5,))],
                         ids=str)
def test_masked_select_autograd(x_shape, mask_shape):
    """Gradients flow back to the selected items of x (summed over the dimensions x was broadcast
    along), as torch's."""
    x = torch.randn(x_shape, device=DEVICE, dtype=torch.float64)
    mask = torch.rand(mask_shape, device=DEVICE) > 0.4
    xa, xb = x.clone().requires_grad_(), x.cpu().requires_grad_()
    out = ops.masked_select(xa, mask)
    g = torch.randn(out.shape, dtype=out.dtype)
    out.backward(g.to(out.device))
    torch.masked_select(xb, mask.cpu()).backward(g)
    if tuple(x_shape) == torch.broadcast_shapes(x_shape, mask_shape):
        assert_equal(xa.grad.cpu(), xb.grad)
    else:   # (summed over the broadcast dims by torch on each device, in each device's order: last bits)
        assert_close(xa.grad.cpu(), xb.grad, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_masked_select_nonzero_complex(dtype):
    # torch takes complex tensors: the selected (real, imaginary) pairs; nonzero if either part is
    x = torch.randn(5, 67, dtype=dtype)
    x[0, :10] = 0
    x[1, 3] = complex(0.0, 2.0)
    x[1, 4] = complex(-0.0, -0.0)
    x[2, 5] = complex(math.nan, 0.0)
    xd = x.to(DEVICE)
    for mask in (x.real > 0, (x.imag > 0)[0]):   # (the second broadcast over the rows)
        out = ops.masked_select(xd, mask.to(DEVICE))
        assert out.dtype == dtype
        assert_equal(torch.view_as_real(out).cpu(), torch.view_as_real(torch.masked_select(x, mask)))
    assert_equal(ops.nonzero(xd).cpu(), torch.nonzero(x))
    torch.library.opcheck(ops.masked_select, (xd, xd.real > 0))
    torch.library.opcheck(ops.nonzero, (xd,))
    with pytest.raises(ValueError, match="broadcast"):
        ops.masked_select(xd, torch.ones(3, dtype=torch.bool, device=DEVICE))
    assert_equal(ops.nonzero(xd.conj()).cpu(), torch.nonzero(x))   # (a conjugate view: resolved first)
    out = ops.masked_select(xd.conj(), xd.real > 0)
    assert_equal(torch.view_as_real(out).cpu(), torch.view_as_real(torch.masked_select(x.conj(), x.real > 0)
                                                                   .resolve_conj()))
    # complex32 is refused by the ops and their fakes alike
    half = torch.zeros(4, dtype=torch.complex32, device=DEVICE)
    for fake in (False, True):
        with torch._subclasses.fake_tensor.FakeTensorMode() if fake else contextlib.nullcontext():
            t = torch.empty(4, dtype=torch.complex32) if fake else half
            # (the message names what is taken: complex64 and complex128 too)
            with pytest.raises(TypeError, match="supported dtypes.*complex64, complex128"):
                ops.masked_select(t, torch.ones(4, dtype=torch.bool, device=t.device))
            with pytest.raises(TypeError, match="supported dtypes.*complex64, complex128"):
                ops.nonzero(t)


def test_select_bad_input():
    x = torch.randn(10, device=DEVICE)
    with pytest.raises(TypeError, match="mask"):
        ops.masked_select(x, torch.ones(10, dtype=torch.int32, device=DEVICE))
    with pytest.raises(ValueError, match="broadcast"):
        ops.masked_select(x, torch.ones(11, dtype=torch.bool, device=DEVICE))
    with pytest.raises(ValueError, match=r"flags has shape \(9,\)"):
        S.flagged(x, torch.ones(9, device=DEVICE))
    with pytest.raises(ValueError, match="not broadcast"):   # same items, other shape
        S.flagged(x, torch.ones(2, 5, device=DEVICE))
    with pytest.raises(TypeError, match="triton.jit"):
        S.if_(x, lambda v: v > 0)
    with pytest.raises(TypeError, match=r"pred must take 1 positional argument \(the tile of items\)"):
        S.if_(x, _two_args)
    with pytest.raises(TypeError, match="dtype"):
        S.flagged(torch.zeros(3, dtype=torch.complex64, device=DEVICE), torch.ones(3, device=DEVICE))


@pytest.mark.parametrize("count", ["as_timed", "late", "early"])
@pytest.mark.parametrize("shape", [(0,), (1,), (300,), (7, 9, 11), (2, 1, 3, 40), ()])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_nonzero(shape, dtype, count, monkeypatch):
    _count_at(monkeypatch, count)
    x = (torch.rand(shape, device=DEVICE) * 3).floor().to(dtype)
    if dtype == torch.float32 and x.numel() > 2:
        x.view(-1)[0] = math.nan   # NaN is nonzero
        x.view(-1)[1] = -0.0       # -0.0 is zero
    assert_equal(ops.nonzero(x).cpu(), torch.nonzero(x.cpu()))


@pytest.mark.parametrize("tile", [1024, 4096, 16384])
def test_policy_tiles(tile):
    n = 3 * tile + 17 if not interpreter_active() else tile + 17
    x = torch.randn(n, device=DEVICE)
    mask = x > 0.3
    with policy.override("select", {"TILE": tile}):
        assert_equal(ops.masked_select(x, mask).cpu(), torch.masked_select(x.cpu(), mask.cpu()))
        keys = torch.sort(torch.randint(0, 50, (n,), device=DEVICE)).values
        out, k = S.unique(keys)
        ref = torch.unique_consecutive(keys.cpu())
        assert int(k) == ref.numel() and torch.equal(out[: int(k)].cpu(), ref)


ENGINES = [  # (name, policy values, module limit forced to 0, or (module constant, value), or a list of those)
    ("two-pass", {"PASSES": 2}, None),
    ("two-pass-count4", {"PASSES": 2, "COUNT_TILES": 4}, None),
    ("two-pass-words", {"PASSES": 2}, ("_SPARSE_DIV", 0)),          # every tile scattered word by word
    ("two-pass-items", {"PASSES": 2}, ("_SPARSE_DIV", 1 << 20)),    # every tile with a selection item by item
    ("two-pass-group4", {"PASSES": 2, "SCATTER_TILES": 4}, None),      # scatter: 4 tiles per program (2 past the end)
    ("two-pass-group4-maxnreg80", {"PASSES": 2, "SCATTER_TILES": 4, "SCATTER_MAXNREG": 80}, None),  # (capped, spills)
    ("two-pass-heads-load", {"PASSES": 2, "HEADS_SHIFT": 0}, None),   # run heads' predecessors by a shifted load
    # run heads' first items per word stored by the count pass, read by the scatter's first round (and
    # with HEADS_SHIFT 0 not stored: a scatter reading them word by word would read an unwritten buffer)
    ("two-pass-word-keys", {"PASSES": 2, "WORD_KEYS": 1}, None),
    ("two-pass-word-keys-group4-words", {"PASSES": 2, "WORD_KEYS": 1, "SCATTER_TILES": 4, "SPARSE_SCATTER_TILES": 4},
     ("_SPARSE_DIV", 0)),
    ("two-pass-word-keys-heads-load-words", {"PASSES": 2, "WORD_KEYS": 1, "HEADS_SHIFT": 0}, ("_SPARSE_DIV", 0)),
    # the count scan over several programs, publishing their block sums or re-summing earlier blocks
    ("two-pass-scan-programs", {"PASSES": 2}, [("_SCAN_MIN_BLOCK", 2), ("_SCAN_PROGRAMS", 4)]),
    ("two-pass-scan-programs-resum", {"PASSES": 2},
     [("_SCAN_MIN_BLOCK", 2), ("_SCAN_PROGRAMS", 4), ("_SCAN_PUBLISH", False)]),
    ("two-pass-group4-words", {"PASSES": 2, "SCATTER_TILES": 4}, ("_SPARSE_DIV", 0)),
    ("two-pass-group2-items", {"PASSES": 2, "SCATTER_TILES": 2}, ("_SPARSE_DIV", 1 << 20)),
    # (when the host knows a sparse count: masked_select's exact path, sparse run heads)
    ("two-pass-sparse-group4", {"PASSES": 2, "SPARSE_SCATTER_TILES": 4}, None),
    ("two-pass-sparse-group1", {"PASSES": 2, "SPARSE_SCATTER_TILES": 1}, None),
    ("single-pass", {"PASSES": 1, "WARP_SYNC": 0}, None),
    ("single-pass-count64", {"PASSES": 1, "WARP_SYNC": 0}, "_COUNT32_LIMIT"),
    ("warp-sync", {"PASSES": 1, "WARP_SYNC": 1}, None),
    ("warp-sync-index64", {"PASSES": 1, "WARP_SYNC": 1}, "_INDEX32_LIMIT"),
]
if not interpreter_active():   # the warp-synchronous kernel at other items per thread (2 .. 32)
    ENGINES += [(f"warp-sync-T{t}-w{w}-vec{v}", {"PASSES": 1, "WARP_SYNC": 1, "TILE": t, "num_warps": w, "VEC": v},
                 None)
                for t, w, v in ((1024, 16, 1), (1024, 4, 4), (2048, 8, 4), (4096, 4, 1), (4096, 4, 16), (8192, 8, 16))]
    ENGINES += [("warp-sync-window32-spin", {"PASSES": 1, "WARP_SYNC": 1, "LOOKBACK_WINDOW": 32, "LOOKBACK_SLEEP": 0},
                 None),
                ("warp-sync-window256-w4", {"PASSES": 1, "WARP_SYNC": 1, "LOOKBACK_WINDOW": 256, "num_warps": 4}, None),
                ("warp-sync-anchored", {"PASSES": 1, "WARP_SYNC": 1, "ANCHORED": 1}, None),
                ("warp-sync-anchored-window32-spin", {"PASSES": 1, "WARP_SYNC": 1, "ANCHORED": 1, "LOOKBACK_WINDOW": 32,
                                                      "LOOKBACK_SLEEP": 0}, None),
                ("warp-sync-anchored-index64", {"PASSES": 1, "WARP_SYNC": 1, "ANCHORED": 1}, "_INDEX32_LIMIT")]


@pytest.mark.parametrize("count", ["late", "early"])
@pytest.mark.parametrize("levels", [(2.0, -0.5), (-0.5, 2.0)])
def test_scatter_group_guess(levels, count, monkeypatch):
    """masked_select's scatter groups its tiles by the last count of the same size (late count) or
    by its own (early): a dense selection after a sparse one, and a sparse one after a dense one."""
    _count_at(monkeypatch, count)
    tile = TILE if interpreter_active() else 2048
    n = 5 * tile + 45 if interpreter_active() else 37 * tile + 45
    x = torch.randn(n, device=DEVICE)
    with policy.override("select", {"PASSES": 2, "TILE": tile, "SPARSE_SCATTER_TILES": 4}):
        for level in levels:
            assert_equal(ops.masked_select(x, x > level).cpu(), x.cpu()[x.cpu() > level])
            assert S._LAST_SPARSE[(n, S.SELECT_FLAGGED, False)] == (level > 0)


@pytest.mark.parametrize("name,cfg,limit", ENGINES, ids=[e[0] for e in ENGINES])
def test_engine_paths(name, cfg, limit, monkeypatch):
    """Every compaction engine (the single pass's int64 counts and positions forced too) on every
    selection mode and output the device ops write: several tiles, a ragged last one. (Under the
    interpreter the warp-synchronous kernel is not available: those cases run the portable single
    pass, which is what the plan picks there.)"""
    from tritoncub.device import run_length_encode as RLE
    for lim in (limit if isinstance(limit, list) else [limit] if limit else []):
        name_, value = lim if isinstance(lim, tuple) else (lim, 0)
        monkeypatch.setattr(S, name_, value)
    tile = cfg.get("TILE", 4096)
    n = 5 * TILE + 45 if interpreter_active() else 37 * tile + 45   # (6 tiles: count4's 2nd program has 2)
    x = torch.randn(n, device=DEVICE)
    runs = torch.sort(torch.randint(0, n // 5, (n,), device=DEVICE)).values
    with policy.override("select", {**cfg, **({"TILE": TILE} if interpreter_active() else {})}):
        out, k = S.flagged(x, x > 0.2)
        assert_equal(out[:int(k)].cpu(), x.cpu()[x.cpu() > 0.2])
        out, k = S.flagged(x[1:], x[:-1] > 0.2)   # inputs not 16-byte aligned: no vector loads
        assert_equal(out[:int(k)].cpu(), x.cpu()[1:][x.cpu()[:-1] > 0.2])
        out, k = S.if_(x, positive)
        assert_equal(out[:int(k)].cpu(), x.cpu()[x.cpu() > 0])
        for level in (2.0, 0.2):   # (a sparse and a dense selection: the op's scatter groups differ)
            assert_equal(ops.masked_select(x, x > level).cpu(), x.cpu()[x.cpu() > level])
        vals = torch.arange(n, device=DEVICE)
        ko, vo, k = S.unique_by_key(runs, vals)
        ref_k, inv, cnt = torch.unique_consecutive(runs.cpu(), return_inverse=True, return_counts=True)
        first = torch.cat([torch.zeros(1, dtype=torch.int64), cnt.cumsum(0)[:-1]])
        assert_equal(ko[:int(k)].cpu(), ref_k)
        assert_equal(vo[:int(k)].cpu(), first)
        got = ops.unique_consecutive(runs, True, True)
        assert_equal(got[0].cpu(), ref_k)
        assert_equal(got[1].cpu(), inv)
        assert_equal(got[2].cpu(), cnt)
        u, lengths, k = RLE.encode(runs)
        assert_equal(lengths[:int(k)].cpu().long(), cnt)
        u, lengths, k = RLE.encode(runs.to(torch.int32))   # (32- and 64-bit keys: either form of HEADS_SHIFT)
        assert_equal(u[:int(k)].cpu(), ref_k.to(torch.int32))
        assert_equal(lengths[:int(k)].cpu().long(), cnt)
        # 32-bit keys (the first items per word of WORD_KEYS): sparser runs, float keys with -0.0 beside
        # +0.0 and NaNs, with values and without lengths
        runs32 = torch.sort(torch.randint(0, max(1, n // 40), (n,), device=DEVICE)).values.to(torch.int32)
        fruns = (runs32 - n // 80).to(torch.float32)
        fruns[fruns == 0] = -0.0
        fruns[(torch.arange(n, device=DEVICE) % 3 == 0) & (fruns == 0)] = 0.0
        fruns[torch.arange(n, device=DEVICE) % 53 == 7] = float("nan")
        for keys32 in (runs32, fruns):
            kc = keys32.cpu()
            heads = torch.ones(n, dtype=torch.bool)
            heads[1:] = kc[1:] != kc[:-1]
            ko, vo, k = S.unique_by_key(keys32, vals)
            assert_equal(ko[:int(k)].cpu().view(torch.int32), kc[heads].view(torch.int32))
            assert_equal(vo[:int(k)].cpu(), torch.nonzero(heads).view(-1))
            uo, k = S.unique(keys32)
            assert_equal(uo[:int(k)].cpu().view(torch.int32), kc[heads].view(torch.int32))
        offs, lengths, k = RLE.non_trivial_runs(runs)
        starts = first[cnt > 1]
        assert_equal(offs[:int(k)].cpu(), starts)
        assert_equal(lengths[:int(k)].cpu().long(), cnt[cnt > 1])
        assert_equal(ops.masked_select(x, x < 0).cpu(), x.cpu()[x.cpu() < 0])
        # sparse in all (the scatter groups its tiles) with one dense tile (that group goes tile by tile)
        t = TILE if interpreter_active() else tile
        clustered = torch.zeros(n, dtype=torch.bool, device=DEVICE)
        clustered[t + 3:t + 3 + t // 2] = True
        clustered[-2] = True
        assert_equal(ops.masked_select(x, clustered).cpu(), x.cpu()[clustered.cpu()])
        m3 = (x[:n - n % 6] > 1.2).reshape(-1, 2, 3)     # sparse (about 11%), coordinates
        assert_equal(ops.nonzero(m3).cpu(), torch.nonzero(m3.cpu()))
        from tritoncub.device import partition as P
        out, k = P.flagged(x, x > 0.2)
        xc = x.cpu()
        assert_equal(out.cpu(), torch.cat([xc[xc > 0.2], xc[~(xc > 0.2)]]))
        assert int(k) == int((xc > 0.2).sum())


@pytest.mark.parametrize("from_starts", [False, True])
def test_finish_lengths_kernel(from_starts):
    """Run lengths from stored ends, or (heads mode of the warp-synchronous kernel) from the next
    run's start and ``n`` for the last run; slots past the runs are left alone."""
    n, starts = 1000, torch.tensor([0, 3, 4, 10, 500, 999], device=DEVICE)
    ends = torch.tensor([3, 4, 10, 500, 999, 1000], device=DEVICE)
    lengths = ends.clone() if not from_starts else torch.full_like(ends, -7)
    lengths = torch.cat([lengths, torch.full((3,), -7, device=DEVICE)])
    total = torch.tensor([starts.numel()], device=DEVICE)
    S._finish_lengths_kernel[(1,)](lengths, starts, total, n, BLOCK=4, FROM_STARTS=from_starts)   # two strides
    assert_equal(lengths.cpu(), torch.tensor([3, 1, 6, 490, 499, 1, -7, -7, -7]))


@pytest.mark.parametrize("publish", [False, True], ids=["resum", "publish"])
@pytest.mark.parametrize("to_host", [False, True])
@pytest.mark.parametrize("num_tiles", [1, 8, 37, 100])   # (100: programs re-sum 4 blocks a step, ragged)
def test_scan_counts_kernel(num_tiles, to_host, publish):
    """The bitmask form's count scan with several programs (each re-sums the blocks before its own)
    and a ragged last block: exclusive int64 offsets and the total (``TO_HOST``: in the host's
    mailbox too, pinned host memory the kernel stores to on a GPU); with ``PREV``, the last tile
    before each tile with a non-zero count (-1: none); the programs either re-sum the counts before
    their block or publish their block's sum and read the earlier ones' (``PUBLISH``)."""
    counts = torch.randint(0, 1000, (num_tiles,), device=DEVICE, dtype=torch.int32)
    counts[torch.randperm(num_tiles)[:num_tiles // 2].to(DEVICE)] = 0
    offsets = torch.full((num_tiles,), -7, device=DEVICE, dtype=torch.int64)
    prev = torch.full((num_tiles,), -7, device=DEVICE, dtype=torch.int32)
    totals = torch.full((3,), -7, device=DEVICE, dtype=torch.int64)
    box = Mailbox.take(totals.device)
    programs = triton.cdiv(num_tiles, 8)
    npub = triton.next_power_of_2(programs) if publish else 0
    status = torch.zeros(max(4 * npub, 1), device=DEVICE, dtype=torch.int64)
    S._scan_counts_kernel[(programs,)](counts, offsets, totals, box.tensor if to_host else totals, prev, status,
                                       num_tiles, BLOCK=8, TO_HOST=to_host, PREV=True, PUBLISH=npub)
    c = counts.cpu().long()
    ref = torch.cumsum(c, 0)
    assert_equal(offsets.cpu(), ref - c)
    nonempty = torch.where(c > 0, torch.arange(num_tiles), -1)
    assert_equal(prev.cpu().long(), torch.cummax(torch.cat([torch.tensor([-1]), nonempty[:-1]]), 0).values)
    assert int(totals[0]) == int(ref[-1]) and int(totals[1]) == -7
    if to_host:
        assert box.read() == int(ref[-1])
    else:
        box.set(5)   # (an unused mailbox still reads what the host stored)
        assert box.read() == 5


def test_count_pass_zeroes_scan_status():
    """Program 0 of the bitmask count pass zeroes the scan's status words (their flags and the ticket
    must start clear: the publishing scan waits on them), and only those."""
    n = 3 * 128 + 5
    x = torch.randn(n, device=DEVICE)
    bits = torch.full((4 * 4,), -7, device=DEVICE, dtype=torch.int32)
    counts = torch.full((4,), -7, device=DEVICE, dtype=torch.int32)
    status = torch.full((16 + 3,), -7, device=DEVICE, dtype=torch.int64)
    S._count_bits_kernel[(2,)](x, x, bits, counts, status, bits, n, 4, MODE=S.SELECT_FLAGGED, PRED=S._never,
                               LOAD_X=True, TILE=128, TILES=2, ZERO_STATUS=16)
    assert bool((status[:16] == 0).all()) and bool((status[16:] == -7).all())
    ref = (x.cpu() != 0).view(-1)
    assert int(counts.sum()) == int(ref.sum())


def _run_keys(n, dtype, gen):
    """Sorted keys in runs (short and long, whole tiles of one key); floats with -0.0/+0.0 side by side,
    NaNs, and infinities."""
    k = torch.sort(torch.randint(0, max(1, n // 6), (n,), generator=gen)).values
    k[: n // 4] = 3
    if dtype.is_floating_point:
        x = k.to(dtype) - 2
        x[x == 0] = -0.0
        x[(torch.arange(n) % 5 == 0) & (x == -0.0)] = 0.0   # (-0.0 == +0.0: no head between them)
        x[torch.arange(n) % 17 == 3] = float("nan")          # (NaN != NaN: every NaN a head)
        if n > 8:
            x[-3:] = float("inf")
            x[:2] = float("-inf")
        return x
    return k.to(dtype)


@pytest.mark.parametrize("mode", ["heads", "heads_word_keys", "nontrivial"])
@pytest.mark.parametrize("heads_shift", [0, 1])
@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32", "int64", "float64", "int16"])
@pytest.mark.parametrize("n", [1, 2, 33, 127, 128, 2 * 128 + 37])
@pytest.mark.parametrize("offset", [0, 1], ids=["aligned", "offset"])
@pytest.mark.parametrize("kind", ["runs", "zeros"])
def test_count_pass_runs(n, dtype, heads_shift, offset, mode, kind):
    """Pass 1 of run heads (bit ``i % 32`` of word ``i // 32`` set when item ``i`` starts a run; each
    tile's count) and of non-trivial runs (bits of the first items of runs longer than one, and a second
    bitmask of their last items), in both forms of finding an item's neighbours (``HEADS_SHIFT`` 1: from
    registers, for 32- and 64-bit items; 0 or other widths: shifted loads), against torch on fresh keys, with
    ragged tails, several programs (runs across them) and a base that is not 16-byte aligned; poisoned
    outputs. ``zeros``: one run of zeros (what a masked load past the end may read: the last item must
    still end its run). ``heads_word_keys``: run heads that also store each word's first head item."""
    gen = torch.Generator().manual_seed(n * 7 + offset)
    store = torch.int32 if dtype == "uint32" else getattr(torch, dtype)
    keys = _run_keys(n + offset, store, gen) if kind == "runs" else torch.zeros(n + offset, dtype=store)
    k = keys[offset:]
    heads = torch.ones(n, dtype=torch.bool)
    heads[1:] = k[1:] != k[:-1]
    nxt_differs = torch.ones(n, dtype=torch.bool)   # (the last item has no next)
    nxt_differs[:-1] = k[1:] != k[:-1]
    x = keys.to(DEVICE)[offset:]
    if dtype == "uint32":
        x = x.view(torch.uint32)
    TILE, TILES = 64, 2
    nt = triton.cdiv(n, TILE)
    programs = triton.cdiv(nt, TILES)
    bits = torch.full((2 * programs * TILES * TILE // 32,), -7, device=DEVICE, dtype=torch.int32)
    counts = torch.full((programs * TILES,), -7, device=DEVICE, dtype=torch.int32)
    word_keys = torch.full((programs * TILES * TILE // 32,), -7, device=DEVICE, dtype=store)
    S._count_bits_kernel[(programs,)](x, x, bits, counts, bits, word_keys.view(x.dtype), n, nt,
                                      MODE=S.SELECT_NONTRIVIAL if mode == "nontrivial" else S.SELECT_HEADS,
                                      PRED=S._never, LOAD_X=True, TILE=TILE, TILES=TILES, HEADS_SHIFT=heads_shift,
                                      WORD_KEYS=int(mode == "heads_word_keys"))
    bits = bits.cpu()
    nw = nt * TILE // 32
    word_keys = word_keys.cpu()
    stores_keys = mode == "heads_word_keys" and heads_shift == 1 and x.element_size() in (4, 8)
    if stores_keys:
        # (a word without a head stores whatever; the words of tiles past the last are not written;
        # only the register form of 32- and 64-bit heads stores them)
        for w in range(nw):
            found = torch.nonzero(heads[32 * w:32 * (w + 1)])
            if len(found):
                assert_equal(word_keys[w:w + 1], k[32 * w + int(found[0]):][:1])
    assert bool((word_keys[nw:] == -7).all())
    if mode != "nontrivial":
        assert bool((word_keys[:nw] == -7).all()) == (not stores_keys)

    def packed(flags):
        padded = torch.zeros(nt * TILE, dtype=torch.int64)
        padded[:n] = flags.long()
        words = (padded.view(-1, 32) << torch.arange(32)).sum(1)
        return torch.where(words >= 2 ** 31, words - 2 ** 32, words).to(torch.int32), padded

    sel = heads & ~nxt_differs if mode == "nontrivial" else heads
    words, padded = packed(sel)
    assert_equal(bits[:nw], words)
    assert_equal(counts[:nt].cpu(), padded.view(nt, TILE).sum(1).to(torch.int32))
    assert bool((counts[nt:] == -7).all())
    if mode != "nontrivial":
        assert bool((bits[nw:] == -7).all())
    else:
        assert_equal(bits[nw:2 * nw], packed(nxt_differs & ~heads)[0])
        assert bool((bits[2 * nw:] == -7).all())


_WORD_KEYS_POLICIES: dict = {}


def _word_keys_policy():
    """The two-pass policy in force with ``WORD_KEYS`` 1, one object per policy in force (the plans
    remember their launches per policy object)."""
    base = policy.select("select", torch.device(DEVICE), "two_pass")
    hit = _WORD_KEYS_POLICIES.get(id(base))
    if hit is None or hit[0] is not base:
        hit = _WORD_KEYS_POLICIES[id(base)] = (base, policy.Policy(
            "select", {**base.values, "WORD_KEYS": 1, "HEADS_SHIFT": 1}, base.num_warps, base.num_stages, base.source))
    return hit[1]


def _bitmask_plan(n, mode):
    """A bitmask plan (pass 1 queued) over fresh data, and the selection it must find (and the keys:
    ``heads_word_keys`` has int32 keys, and each word's first head key kept)."""
    if mode == "flagged":
        x = torch.randn(n, device=DEVICE)
        sel = torch.rand(n, device=DEVICE) < 0.3
        return S.Plan(x, sel, S.SELECT_FLAGGED, load_x=False, two_pass=True), sel, x
    x = torch.sort(torch.randint(0, max(1, n // 40), (n,), device=DEVICE)).values
    x[: n // 3] = 7   # (whole tiles without a head)
    sel = torch.ones(n, dtype=torch.bool, device=DEVICE)
    sel[1:] = x[1:] != x[:-1]
    if mode == "heads_word_keys":
        x = x.to(torch.int32)
        return S.Plan(x, None, S.SELECT_HEADS, two_pass=True, pol=_word_keys_policy()), sel, x
    return S.Plan(x, None, S.SELECT_HEADS, two_pass=True, run_lengths=mode == "heads_run_lengths"), sel, x


@pytest.mark.parametrize("publish", [False, True], ids=["resum", "publish"])
@pytest.mark.parametrize("mode", ["flagged", "heads", "heads_run_lengths", "heads_word_keys"])
@pytest.mark.parametrize("n", [1, TILE - 1, 5 * TILE + 37] if interpreter_active() else [1, 4095, 1_000_003])
def test_bitmask_plan_parts(n, mode, publish, monkeypatch):
    """The bitmask plan keeps its parts in one buffer (the launches take their addresses) and makes a
    part into a view only when a caller asks for it: the parts lie apart, 16-byte aligned, inside the
    buffer, and hold pass 1's results (one bit per item, the exclusive offsets of the tile counts, the
    total, with run lengths the last tile with a head before each tile, with ``WORD_KEYS`` each word's
    first head key) — on the call that records
    its launches and on the repeat that replays them with the parts' addresses (under the interpreter
    through helpers.interpreter_replays)."""
    monkeypatch.setattr(S, "_SCAN_PUBLISH", publish)
    monkeypatch.setattr(S, "_SCAN_MIN_BLOCK", 2)   # (several scan programs)
    monkeypatch.setattr(S, "_SCAN_PROGRAMS", 2)
    monkeypatch.setattr(S, "_BITS_PLANS", {})
    if interpreter_active():
        interpreter_replays(monkeypatch, plans=True)
    replayed = plan_replays(monkeypatch)
    for rep in range(2):
        replayed.clear()
        plan, sel, x = _bitmask_plan(n, mode)
        # (the first call records its two launches, the repeat replays them)
        assert replayed == [rep == 1] * 2
        assert plan.bitmask
        lay, ws, tile, nt = plan._layout, plan._ws, plan.tile, plan.num_tiles
        assert ws.numel() == lay.words == sum(lay.sizes) and ws.data_ptr() % 16 == 0
        spans = sorted((lay.starts[i], lay.starts[i] + lay.sizes[i]) for i in range(7) if lay.sizes[i])
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])) and spans[-1][1] <= lay.words
        assert all(st % 2 == 0 for st in lay.starts)
        assert (lay.publish > 0) == publish and lay.sizes[5] == (plan.has_prev_heads and lay.sizes[1])
        assert plan.word_keys == (mode == "heads_word_keys") and (lay.sizes[6] > 0) == plan.word_keys
        # the views callers read, each in its place of the buffer
        for name, part in S._BITMASK_VIEWS.items():
            view = getattr(plan, name)
            if name == "prev_heads" and mode != "heads_run_lengths":
                assert view is None
                continue
            if name == "first_items" and not plan.word_keys:
                continue
            assert view.untyped_storage().data_ptr() == ws.untyped_storage().data_ptr()
            assert view.data_ptr() == ws.data_ptr() + 8 * lay.starts[part]
        s = sel.cpu()
        padded = torch.zeros(nt * tile, dtype=torch.bool)
        padded[:n] = s
        ref_words = (padded.view(-1, 32).long() << torch.arange(32)).sum(1)
        assert plan.bits.numel() == lay.bit_words == nt * tile // 32
        assert_equal(plan.bits.cpu().long() & 0xFFFFFFFF, ref_words)
        tile_counts = padded.view(nt, tile).sum(1)
        assert_equal(plan.offsets.cpu(), torch.cumsum(tile_counts, 0) - tile_counts)
        assert plan.offsets2 is plan.offsets and int(plan.num_selected) == int(s.sum())
        if mode == "heads_run_lengths":
            has = torch.where(tile_counts > 0, torch.arange(nt), -1)
            before = torch.cummax(torch.cat([torch.tensor([-1]), has[:-1]]), 0).values
            assert_equal(plan.prev_heads[:nt].cpu().long(), before)
        if mode == "heads_word_keys":
            # each word's first head key (words without a head: whatever)
            assert plan.first_items.dtype == torch.int32 and plan.first_items.numel() == lay.bit_words
            words = padded.view(-1, 32)
            has_head = words.any(1)
            first = torch.argmax(words.to(torch.int8), 1)
            at = torch.arange(words.shape[0]) * 32 + first
            xp = torch.zeros(nt * tile, dtype=torch.int32)
            xp[:n] = x.cpu()
            assert_equal(plan.first_items.cpu()[has_head], xp[at[has_head]])


def _template_inputs(n, rep, density, off):
    """Fresh inputs of the template test, at new addresses (``off``: items 4 bytes off alignment)."""
    x = torch.empty(n + off, dtype=torch.float32, device=DEVICE)[off:]
    m = torch.empty(n + off, dtype=torch.bool, device=DEVICE)[off:]
    x.copy_(make_data("random", n, torch.float32, seed=rep).to(DEVICE))   # (normal, scale 100)
    m.copy_((torch.rand(n, generator=torch.Generator().manual_seed(100 + rep)) < density).to(DEVICE))
    return x, m, torch.sort((x / 8).round().int())[0]


_TEMPLATE_OPS = {
    "masked_select": lambda x, m, runs: ops.masked_select(x, m),
    "nonzero": lambda x, m, runs: ops.nonzero(m),
    "nonzero 2-D": lambda x, m, runs: ops.nonzero(m[:m.numel() // 2 * 2].view(-1, 2)),
    "nonzero 2-D transposed": lambda x, m, runs: ops.nonzero(m[:m.numel() // 2 * 2].view(2, -1)),
    "unique_consecutive": lambda x, m, runs: ops.unique_consecutive(runs),
    "unique_consecutive +inverse +counts": lambda x, m, runs: ops.unique_consecutive(runs, True, True),
    "run-length encode": lambda x, m, runs: S_RLE.encode(runs),
}


def _template_reference(name, x, m, runs):
    x, m, runs = x.cpu(), m.cpu(), runs.cpu()
    if name == "masked_select":
        return torch.masked_select(x, m)
    if name.startswith("nonzero"):
        h = m[:m.numel() // 2 * 2]
        return torch.nonzero(m if name == "nonzero" else h.view(-1, 2) if name == "nonzero 2-D" else h.view(2, -1))
    if name == "unique_consecutive":
        return (torch.unique_consecutive(runs),)
    if name.startswith("unique_consecutive"):
        return torch.unique_consecutive(runs, return_inverse=True, return_counts=True)
    return torch.unique_consecutive(runs, return_counts=True)


def _check_template_result(name, got, ref):
    if name == "run-length encode":
        k = int(got[2])
        assert k == ref[0].numel(), name
        assert_equal(got[0][:k].cpu(), ref[0], msg=name)
        assert_equal(got[1][:k].cpu().long(), ref[1], msg=name)
    elif isinstance(ref, tuple):
        for i, r in zip((0, 1, 2) if len(ref) == 3 else (0,), ref):
            assert_equal(got[i].cpu(), r, msg=f"{name} output {i}")
    else:
        assert_equal(got.cpu(), ref, msg=name)


@pytest.mark.parametrize("n", [3 * TILE + 45] if interpreter_active() else [100_003, (1 << 22) + 5])
def test_bitmask_plans_replay_their_templates(n, monkeypatch):
    """The syncing selections (masked_select, nonzero, unique_consecutive) and run-length encoding make
    a repeated problem's plan from its remembered template and replay its count pass and scatter on the
    new call's buffers. First a mixed sequence: fresh inputs at new addresses every call (all kept
    alive), densities 0 to 1 (both scatter groupings, empty results), inputs 4 bytes off alignment twice
    (a template of their own, replayed), two calls under another policy (other tiles: the template is
    made again, and no scatter remembered under the old one may replay on it). Then each op alone,
    three calls of one problem: the last two record nothing and replay exactly their count pass and
    scatter. Every result is torch's, checked after all the calls (a replay that wrote into a recorded
    call's buffers would show there). Under the interpreter through helpers.interpreter_replays."""
    if interpreter_active():
        replays = interpreter_replays(monkeypatch, S, ("_PLAN_TEMPLATES", "_SCATTER_REPLAYS"))
    else:
        monkeypatch.setattr(S, "_PLAN_TEMPLATES", {})
        monkeypatch.setattr(S, "_SCATTER_REPLAYS", {})
        replays = count_calls(monkeypatch, S, "replay")
    records = count_calls(monkeypatch, S, "record_launches")
    other_tiles = {"TILE": 2 * TILE if interpreter_active() else 1024}
    results = []
    for rep, (off, density, other) in enumerate(((0, 0.01, False), (0, 0.5, False), (1, 0.3, False), (1, 0.99, False),
                                                 (0, 0.0, True), (0, 0.2, True), (0, 1.0, False), (0, 0.02, False))):
        inputs = _template_inputs(n, rep, density, off)
        with policy.override("select", other_tiles) if other else contextlib.nullcontext():
            results += [(name, inputs, op(*inputs)) for name, op in _TEMPLATE_OPS.items()]
    assert replays and any(v is not None for v in S._SCATTER_REPLAYS.values())
    for name, op in _TEMPLATE_OPS.items():
        for rep in range(3):
            inputs = _template_inputs(n, 50 + rep, 0.05, 0)
            if rep == 1:
                records.clear()
                replays.clear()
            results.append((name, inputs, op(*inputs)))
        assert not records and len(replays) == 4, f"{name}: {len(records)} recordings, {len(replays)} replays"
    for name, inputs, got in results:
        _check_template_result(name, got, _template_reference(name, *inputs))


def test_bitmask_plan_of_overlapping_roots_plans_afresh(monkeypatch):
    """A selection whose mask is another view of the items' storage cannot be relocated: it is
    remembered as such, so a repeat plans afresh without recording (and both give torch's result)."""
    if interpreter_active():
        interpreter_replays(monkeypatch, S, ("_PLAN_TEMPLATES", "_SCATTER_REPLAYS"))
    else:
        monkeypatch.setattr(S, "_PLAN_TEMPLATES", {})
        monkeypatch.setattr(S, "_SCATTER_REPLAYS", {})
    records = count_calls(monkeypatch, S, "record_launches")
    for rep in range(3):
        b = (make_data("random", 2 * (TILE + 7), torch.float32, seed=rep) > 0).view(2, -1).to(DEVICE)
        assert_equal(ops.masked_select(b, b).cpu(), torch.masked_select(b.cpu(), b.cpu()))
    assert len(records) == 1 and [v[1] for v in S._PLAN_TEMPLATES.values()] == [None]


@pytest.mark.parametrize("n", [TILE + 1, 3 * TILE] if interpreter_active() else [4097, 1 << 22, (1 << 22) + 1])
def test_small_plans_wait_for_their_count(n, monkeypatch):
    """A plan with its count sent to the host gives the count for sizing outputs at once when pass 1
    has stored it; a plan of at most ``_WAIT_COUNT_MAX`` items waits for it even when it has not (here:
    a mailbox whose poll never sees it), a larger one does not (the worst-case buffer path)."""
    x = torch.randn(n, device=DEVICE)
    m = torch.rand(n, device=DEVICE) < 0.5
    monkeypatch.setattr(Mailbox, "poll", lambda self: None)
    limit = S._WAIT_COUNT_MAX if not interpreter_active() else 2 * TILE
    monkeypatch.setattr(S, "_WAIT_COUNT_MAX", limit)
    plan = S.Plan(x, m, S.SELECT_FLAGGED, load_x=False, two_pass=True, count_to_host=True)
    k = plan.host_count_if_ready()
    if n <= limit:
        assert k == int(m.sum())
    else:
        assert k is None and plan.host_count() == int(m.sum())
    assert_equal(ops.masked_select(x, m), torch.masked_select(x, m))


@triton.jit
def _bit_helpers_kernel(words_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    w = tl.load(words_ptr + i).to(tl.uint32, bitcast=True)
    low, index = S.lowest_set_bit(w)
    tl.store(out_ptr + i, S.popcount32(w).to(tl.int32))
    tl.store(out_ptr + N + i, low.to(tl.int32, bitcast=True))
    tl.store(out_ptr + 2 * N + i, index)
    tl.store(out_ptr + 3 * N + i, S.highest_set_bit(w))


def test_bit_helpers():
    """popcount32, lowest_set_bit and highest_set_bit (the GPU's popc/clz when compiled for NVIDIA,
    shifts and masks under the interpreter) against Python, on 0, single bits, the top bit, all ones
    and random words."""
    special = [0, 1, 2, 0x80000000, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000001, 0x00010000]
    words = special + torch.randint(0, 2**32, (64 - len(special),), dtype=torch.int64).tolist()
    as_i32 = torch.tensor(words, dtype=torch.int64).to(torch.int32)   # (the same 32 bits)
    out = torch.full((4 * 64,), -7, dtype=torch.int32, device=DEVICE)
    _bit_helpers_kernel[(1,)](as_i32.to(DEVICE), out, N=64)
    got = out.cpu().view(4, 64).tolist()
    for j, w in enumerate(words):
        low = w & -w
        assert got[0][j] == bin(w).count("1")
        assert got[1][j] & 0xFFFFFFFF == low
        assert got[2][j] == (low.bit_length() - 1 if w else 32)
        assert got[3][j] == w.bit_length() - 1


def test_mailbox_raises_when_nothing_arrives():
    """A read whose kernel never stores (here: none was launched) raises once the stream is idle,
    instead of waiting forever (on a GPU); the interpreter runs kernels at launch, so there the
    empty word is read at once and raises too."""
    box = Mailbox.take(torch.device(DEVICE))
    with pytest.raises(RuntimeError, match="mailbox"):
        box.read()
    box = Mailbox.take(torch.device(DEVICE))
    assert box.poll() is None      # (nothing stored yet: no wait)
    box.set(3)
    assert box.poll() == 3


def test_opcheck():
    x = torch.randn(300, device=DEVICE)
    torch.library.opcheck(ops.masked_select, (x, x > 0))
    torch.library.opcheck(ops.nonzero, (x.view(30, 10) > 0,))


@pytest.mark.gpu
@pytest.mark.parametrize("form", ["two_pass", "two_pass_count_late", "two_pass_count_early", "single_pass"])
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 0.99])
def test_masked_select_large_gpu(density, form, monkeypatch):
    monkeypatch.setattr(S, "MASKED_SELECT_TWO_PASS", form != "single_pass")
    _count_at(monkeypatch, form.rpartition("_")[2])
    x = torch.randn(1 << 24, device="cuda")
    mask = torch.rand(1 << 24, device="cuda") < density
    for _ in range(3):
        assert torch.equal(ops.masked_select(x, mask), torch.masked_select(x, mask))


@pytest.mark.gpu
def test_repeated_selections_replay_their_launch():
    """Repeated selections of one size re-launch a remembered kernel: fresh data every call, and
    inputs 4 bytes off alignment (a launch of its own), give torch's results each time."""
    n = (1 << 20) + 3
    base = torch.empty(n + 1, device="cuda")
    mbase = torch.empty(n + 1, dtype=torch.bool, device="cuda")
    for rep, off in enumerate((0, 0, 1, 1, 0)):
        x, m = base[off:off + n], mbase[off:off + n]
        x.normal_()
        m.copy_(torch.rand(n, device="cuda") < (0.01, 0.5, 0.99, 0.3, 0.0)[rep])
        assert torch.equal(ops.masked_select(x, m), torch.masked_select(x, m)), f"call {rep}"
        s = torch.sort((x * 30).round().int())[0]
        for got, ref in zip(ops.unique_consecutive(s, True, True), torch.unique_consecutive(s, True, True)):
            assert torch.equal(got, ref), f"call {rep}"
        # the bitmask two-pass form (nonzero, partition, and every selection under the override)
        assert torch.equal(ops.nonzero(m.reshape(-1, 1)), torch.nonzero(m.reshape(-1, 1))), f"call {rep}"
        with policy.override("select", {"PASSES": 2}):
            assert torch.equal(ops.masked_select(x, m), torch.masked_select(x, m)), f"call {rep}"
            ko, vo, k = S.unique_by_key(s, x)
            ref_k, cnt = torch.unique_consecutive(s, return_counts=True)
            first = torch.cumsum(cnt, 0) - cnt
            assert torch.equal(ko[:int(k)], ref_k) and torch.equal(vo[:int(k)], x[first]), f"call {rep}"



def test_torch_compile_data_dependent_sizes():
    """The fake implementations give data-dependent sizes (unbacked symbols): a whole graph with
    masked_select -> unique -> arithmetic on the results compiles without graph breaks."""
    def f(x, m):
        y = ops.masked_select(x, m)
        vals, _, counts = ops.unique((y * 4).round().long(), True, False, True)
        nz = ops.nonzero(m.view(-1, 10))
        return y * 2, vals + 1, counts, nz, ops.diff(x)

    g = torch.compile(f, fullgraph=True, backend="aot_eager")
    x = torch.randn(500, device=DEVICE)
    m = x > 0.2
    for got, ref in zip(g(x, m), f(x, m)):
        assert_equal(got.cpu(), ref.cpu())


def test_torch_compile_histograms_and_unique_dim():
    """histc, bincount (size from the data), unique_consecutive and unique over slices in one compiled
    graph (inductor on a GPU)."""
    def f(x, i):
        h = ops.histc(x, 10, -2.0, 2.0)
        b = ops.bincount(i, None, 0)
        v, inv, c = ops.unique_consecutive(torch.sort(i).values, True, True)
        rows, rinv, rc = ops.unique((i.view(-1, 2) % 3), True, True, True, 0)
        return h * 2, b + 1, v, inv, c, rows, rinv, rc

    backend = "inductor" if DEVICE == "cuda" else "aot_eager"
    g = torch.compile(f, fullgraph=True, backend=backend)
    x = torch.randn(300, device=DEVICE)
    i = torch.randint(0, 40, (300,), device=DEVICE)
    for got, ref in zip(g(x, i), f(x, i)):
        assert_equal(got.cpu(), ref.cpu())
