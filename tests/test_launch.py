"""tritoncub._launch.launch: a launch through the compiled-kernel table gives what ``kernel[grid]``
gives, for every specialisation Triton makes (pointer alignment, ints equal to 1, divisible by 16,
wider than 32 bits, constexprs by keyword and by position). On the GPU the second and later
launches of a key take the direct path; under the interpreter every launch goes through
``kernel[grid]``."""
import warnings

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.jit import JITFunction

from helpers import DEVICE, assert_equal, count_calls, interpreter_replays, plan_replays
from tritoncub import _launch, policy
from tritoncub._launch import launch


@triton.jit
def _affine_kernel(x_ptr, y_ptr, n, scale, offset, BLOCK: tl.constexpr, ADD: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x_ptr + i, mask=m, other=0)
    tl.store(y_ptr + i, v * scale + offset + ADD, mask=m)


def _expected(x, n, scale, offset, add):
    y = x.clone()
    y[:n] = x[:n] * scale + offset + add
    return y


@pytest.mark.parametrize("n", [1, 16, 17, 100, 1000])
@pytest.mark.parametrize("shift", [0, 1])        # an aligned pointer, then one 4 bytes off
def test_launch_matches_reference(n, shift):
    base = torch.arange(1100, dtype=torch.float32, device=DEVICE)
    x = base[shift:shift + 1050]
    for rep in range(3):          # the first launch fills the table, later ones use it
        for block, add in ((128, 0), (64, 3)):
            y = x.clone()
            scale = 1 if rep == 0 else 16 * (rep + 1)   # an int equal to 1, then divisible by 16
            launch(_affine_kernel, (triton.cdiv(n, block),), x, y, n, scale, 2.5, BLOCK=block, ADD=add)
            assert_equal(y, _expected(x, n, scale, 2.5, add))


def test_constexpr_by_position_and_wide_int():
    x = torch.arange(384, dtype=torch.float32, device=DEVICE)
    for add in (0, 7, 0):
        y = x.clone()
        launch(_affine_kernel, (3,), x, y, 300, 2, 1.0, 128, add)   # BLOCK, ADD by position
        assert_equal(y, _expected(x, 300, 2, 1.0, add))
    # an n that needs 64 bits (every lane of the 3 programs is below it): its own specialisation
    for n in (1 << 33, 384, 1 << 33):
        y = torch.full_like(x, -1.0)
        launch(_affine_kernel, (3,), x, y, n, 2, 0.0, BLOCK=128, ADD=0)
        assert_equal(y, x * 2)


@pytest.mark.gpu
def test_direct_path_is_taken_on_the_gpu():
    x = torch.arange(256, dtype=torch.float32, device=DEVICE)
    y = torch.empty_like(x)
    for _ in range(2):
        launch(_affine_kernel, (2,), x, y, 256, 3, 0.0, BLOCK=128, ADD=1)
    assert _launch._direct_ok()
    assert _launch._TABLES.get(_affine_kernel), "the first launch did not fill the table"
    assert_equal(y, x * 3 + 1)


@pytest.mark.gpu
def test_table_stays_bounded(monkeypatch):
    monkeypatch.setattr(_launch, "MAX_ENTRIES", 3)
    x = torch.arange(128, dtype=torch.float32, device=DEVICE)
    for add in range(8):
        for _ in range(2):
            y = torch.empty_like(x)
            launch(_affine_kernel, (1,), x, y, 128, 1, 0.0, BLOCK=128, ADD=add)
            assert_equal(y, x + add)
    assert 1 <= len(_launch._TABLES[_affine_kernel]) <= 3


def test_specialisation_key_separates_what_triton_specialises_on():
    """The table key (pure Python, checked here on any machine) must differ wherever Triton compiles
    a different binary, or a launch would reuse a wrong one."""
    spec = _launch._spec
    base = torch.zeros(8, dtype=torch.float32)
    assert spec(base) != spec(base[1:])                                 # 16-byte alignment
    assert spec(base) != spec(base.view(torch.int32))                   # pointer dtype
    assert spec(1) != spec(2)                                           # ints equal to 1
    assert spec(16) != spec(17) and spec(32) == spec(48)                # divisibility by 16 only
    assert spec((1 << 31) - 1) != spec(1 << 31)                         # 32- vs 64-bit ints
    assert spec((1 << 63) - 1) != spec(1 << 63)                         # signed vs unsigned 64-bit
    assert spec(True) != spec(1) and spec(1.0) != spec(1)               # bool and float apart from int
    assert spec((base, 1)) != spec((base[1:], 1))                       # inside tuples too
    assert spec(np.int64(1)) != spec(np.int64(2)) and spec(np.int64(2)) != spec(2)   # numpy ints by value
    # the key needs the kernel's parameter list: a JITFunction (the interpreter's wrapper has none)
    kern = _affine_kernel if hasattr(_affine_kernel, "params") else JITFunction(_affine_kernel.fn)
    key = _launch._key(kern, 0, (base, base, 10, 1, 0.0), {"BLOCK": 128, "ADD": 0})
    assert key != _launch._key(kern, 0, (base, base, 10, 1, 0.0), {"BLOCK": 64, "ADD": 0})
    # constexprs given by position are keyed by value, not by their int properties
    k1 = _launch._key(kern, 0, (base, base, 10, 2, 0.0, 128, 0), {})
    k2 = _launch._key(kern, 0, (base, base, 10, 2, 0.0, 256, 0), {})
    k3 = _launch._key(kern, 0, (base, base, 10, 2, 0.0, 128, 16), {})
    assert len({k1, k2, k3}) == 3


def test_tensor_device_names_the_first_tensor_argument():
    """Launches go to the GPU of the first tensor argument (a plain one, or the first of a leading tuple)."""
    cpu = torch.zeros(2)
    assert _launch._tensor_device((3, cpu)) == -1          # a CPU tensor: no switch
    assert _launch._tensor_device((1, 2.0)) == -1          # no tensor at all
    assert _launch._tensor_device(((cpu, cpu), 5)) == -1
    if torch.cuda.is_available():
        g = torch.zeros(2, device="cuda")
        assert _launch._tensor_device((7, (g,), cpu)) == g.get_device()
        assert _launch._tensor_device((cpu, g)) == -1      # only the first tensor counts


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_ops_run_on_the_tensors_gpu_not_the_current_one():
    """Inputs on cuda:1 while cuda:0 is current: every result is right and on cuda:1 (Triton alone would
    launch on cuda:0), including the second call of each op (memoised launch plans)."""
    ops = torch.ops.tritoncub
    torch.cuda.set_device(0)
    x = torch.randn(3000, 70, device="cuda:1")
    for _ in range(2):
        assert torch.allclose(ops.sum(x, [1], False, None), x.sum(1), rtol=1e-4, atol=1e-4)
        assert torch.allclose(ops.sum(x.view(-1), None, False, None), x.sum(), rtol=1e-4)
        v, i = ops.sort(x, -1, False, True)
        rv, ri = torch.sort(x, dim=-1, stable=True)
        assert torch.equal(v, rv) and torch.equal(i, ri) and v.device == x.device
        tv, _ = ops.topk(x.view(-1), 10, -1, True, True)
        assert torch.equal(tv, torch.topk(x.view(-1), 10).values)
        assert torch.allclose(ops.cumsum(x, 1), torch.cumsum(x, 1), rtol=1e-4, atol=1e-3)
        m = x > 0
        assert torch.equal(ops.masked_select(x, m), torch.masked_select(x, m))
        assert torch.equal(ops.diff(x, 1, -1, None, None), torch.diff(x))
    assert torch.cuda.current_device() == 0


@triton.jit
def _max_fn(a, b):
    return tl.maximum(a, b)


def _device_path_cases(dev: torch.device, seed: int = 5):
    """``(name, call, check)`` for every family's device-wide paths on ``dev``: the onesweep sort with
    its host read-back (2^25 keys), look-back scans and compactions, radix select, histograms,
    segmented ops, a user operator; ``check(call())`` compares with torch's results, all computed
    here, up front (so they stay allocated: no output of a later call can land in a freed reference's
    memory). ``seed`` draws the data; the sizes (segment lengths included) are the same for every seed."""
    from tritoncub.device import (histogram, partition, reduce as dreduce, reduce_by_key as rbk,
                                  run_length_encode as rle, scan, select)
    ops = torch.ops.tritoncub
    g = torch.Generator(device=dev).manual_seed(seed)
    big = torch.randn((1 << 25) + 3, device=dev, generator=g)
    x = torch.randn((1 << 20) + 7, device=dev, generator=g)
    k64 = torch.randint(-2**40, 2**40, ((1 << 20) + 5,), device=dev, generator=g)
    ints = torch.randint(0, 5000, ((1 << 20) + 9,), device=dev, generator=g, dtype=torch.int32)
    keys16 = torch.randint(0, 1 << 16, (ints.numel(),), device=dev, generator=g, dtype=torch.int32)
    vals = torch.randn(ints.numel(), device=dev, generator=g)
    runs = torch.sort(ints).values
    lengths = torch.randint(0, 3000, (700,), device=dev, generator=torch.Generator(device=dev).manual_seed(0))
    offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])
    bounds = list(zip(offsets[:-1].tolist(), offsets[1:].tolist()))
    seg = torch.randn(int(offsets[-1]), device=dev, generator=g)
    rows = torch.randn(6, 50000, device=dev, generator=g)
    m = x > 1.5
    ru, rcnt = torch.unique_consecutive(runs, return_counts=True)
    starts = torch.cat([rcnt.new_zeros(1), rcnt.cumsum(0)[:-1]])
    low_order = torch.sort(keys16 & 0x3FF, stable=True).indices   # (bits 0-9: many equal keys)
    ref = {
        "sort 2^25": tuple(torch.sort(big, stable=True)),
        "sort_keys int64": torch.sort(k64, descending=True).values,
        "sort_pairs bits": (keys16[low_order], vals[low_order]),
        "sort_rows": tuple(torch.sort(rows, dim=-1, stable=True)),
        "segmented_sort": torch.cat([torch.sort(seg[a:b]).values for a, b in bounds]),
        "topk": torch.topk(x, 3000).values,
        "segmented_topk": [torch.topk(seg[a:b], min(5, b - a), largest=False).values for a, b in bounds],
        "amax argmax": (x.amax(), x.argmax()),
        "segment_reduce": torch.segment_reduce(seg, "sum", offsets=offsets),
        "user reduce": x.max(),
        "cumsum": torch.cumsum(x, 0),
        "logcumsumexp": torch.logcumsumexp(x, 0),
        "sum by key": (torch.arange(runs.numel(), device=dev) + 1 - torch.repeat_interleave(starts, rcnt)).to(runs.dtype),
        "unique": tuple(torch.unique(ints, sorted=True, return_inverse=True, return_counts=True)),
        "masked_select": torch.masked_select(x, m),
        "nonzero": torch.nonzero(m),
        "rejected": x[~m],
        "histc": torch.histc(x, 256, -3, 3),
        "histogram_even": torch.bincount(ints // 80, minlength=64),   # (64 bins of exactly 80)
        "bincount": torch.bincount(ints),
        "diff": torch.diff(x),
    }

    def same(*pairs):
        for a, b in pairs:
            assert a.device == b.device == dev and torch.equal(a, b)

    def first(out, count, expected):
        count = int(count)
        assert count == expected.numel()
        same((out[:count], expected))

    def topk_check(r):
        same((r[0], ref["topk"]), (x[r[1]], r[0]))

    def seg_topk_check(r):   # (a segment shorter than k fills its first slots; the rest: 0 and index -1)
        for s, (a, b) in enumerate(bounds):
            want, k = ref["segmented_topk"][s], min(5, b - a)
            same((r[0][s, :k], want), (seg[r[1][s, :k]], want), (r[1][s, k:], torch.full_like(r[1][s, k:], -1)))

    def close(got, expected, rtol, atol):
        assert got.device == dev and torch.allclose(got, expected, rtol=rtol, atol=atol)

    return [
        ("sort 2^25", lambda: ops.sort(big, -1, False, True), lambda r: same(*zip(r, ref["sort 2^25"]))),
        ("sort_keys int64", lambda: ops.sort_keys(k64, True, 0, None), lambda r: same((r, ref["sort_keys int64"]))),
        ("sort_pairs bits", lambda: ops.sort_pairs(keys16, vals, False, 0, 10),
         lambda r: same(*zip(r, ref["sort_pairs bits"]))),
        ("sort_rows", lambda: ops.sort_rows(rows, False), lambda r: same(*zip(r, ref["sort_rows"]))),
        ("segmented_sort", lambda: ops.segmented_sort(seg, offsets, False, None),
         lambda r: same((r, ref["segmented_sort"]))),
        ("topk", lambda: ops.topk(x, 3000, -1, True, True), topk_check),
        ("segmented_topk", lambda: ops.segmented_topk(seg, offsets, 5, False), seg_topk_check),
        ("amax argmax", lambda: (ops.amax(x, None, False), ops.argmax(x, None, False)),
         lambda r: same(*zip(r, ref["amax argmax"]))),
        ("segment_reduce", lambda: ops.segment_reduce(seg, offsets, "sum"),
         lambda r: close(r, ref["segment_reduce"], 1e-4, 1e-3)),
        ("user reduce", lambda: dreduce.reduce(x, _max_fn, float("-inf")), lambda r: same((r, ref["user reduce"]))),
        ("cumsum", lambda: ops.cumsum(x, 0, None), lambda r: close(r, ref["cumsum"], 1e-4, 1e-2)),
        ("logcumsumexp", lambda: ops.logcumsumexp(x, 0), lambda r: close(r, ref["logcumsumexp"], 1e-4, 1e-4)),
        ("sum by key", lambda: scan.inclusive_sum_by_key(runs, torch.ones_like(runs)),
         lambda r: same((r, ref["sum by key"]))),
        ("unique", lambda: ops.unique(ints, True, True, True, None), lambda r: same(*zip(r, ref["unique"]))),
        ("unique_consecutive", lambda: ops.unique_consecutive(runs, False, True, None),
         lambda r: same((r[0], ru), (r[2], rcnt))),
        ("run-length encode", lambda: rle.encode(runs),
         lambda r: (first(r[0], r[2], ru), first(r[1].to(rcnt.dtype), r[2], rcnt))),
        ("reduce_by_key", lambda: rbk.reduce_by_key(runs, torch.ones_like(runs)),
         lambda r: (first(r[0], r[2], ru), first(r[1].to(rcnt.dtype), r[2], rcnt))),
        ("masked_select", lambda: ops.masked_select(x, m), lambda r: same((r, ref["masked_select"]))),
        ("nonzero", lambda: ops.nonzero(m), lambda r: same((r, ref["nonzero"]))),
        ("select.flagged", lambda: select.flagged(x, m), lambda r: first(r[0], r[1], ref["masked_select"])),
        ("partition.flagged", lambda: partition.flagged(x, m),   # (stable: the rejected items in order too)
         lambda r: (first(r[0], r[1], ref["masked_select"]), same((r[0][int(r[1]):], ref["rejected"])))),
        ("histc", lambda: ops.histc(x, 256, -3, 3), lambda r: same((r, ref["histc"]))),
        ("histogram_even", lambda: histogram.histogram_even(ints, 65, 0, 5120),
         lambda r: same((r.to(torch.int64), ref["histogram_even"]))),
        ("bincount", lambda: ops.bincount(ints, None, 0), lambda r: same((r, ref["bincount"]))),
        ("diff", lambda: ops.diff(x, 1, -1, None, None), lambda r: same((r, ref["diff"]))),
    ]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_device_paths_run_on_the_tensors_gpu_not_the_current_one():
    """Every family's device paths on cuda:1 while cuda:0 is current, twice each (the second call
    replays memoised launches): torch's results, on cuda:1, and nothing left allocated on cuda:0."""
    torch.cuda.set_device(0)
    before = torch.cuda.memory_allocated(0)
    torch.cuda.reset_peak_memory_stats(0)
    cases = _device_path_cases(torch.device("cuda:1"))
    for _ in range(2):
        for name, call, check in cases:
            check(call())
            assert torch.cuda.current_device() == 0, name
    assert torch.cuda.max_memory_allocated(0) == before, "scratch allocated on the current GPU, not the tensors'"


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_device_paths_run_on_the_current_stream_alone():
    """Every family's device paths called on a side stream while the default stream sleeps on the GPU:
    once the side stream alone is synchronised the results are torch's (no launch went to the default
    stream, which would still be queued behind the sleep; the warm-up calls ran on other data and the
    references stay allocated, so reused memory cannot hold the right result), and the default stream
    is still busy (no call, not even one reading a count back to the host, waited for it). A launch
    sent to the default stream can also hang the final synchronisation (a look-back waiting on the
    side stream's tiles): the GPU test runner's time limit then names the test."""
    dev = torch.device("cuda", torch.cuda.current_device())
    warm, cases = _device_path_cases(dev, seed=6), _device_path_cases(dev, seed=5)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):   # (compiles, and fills the caches kept per stream and problem; other data,
            for _, call, check in warm:   # so a launch left behind the sleep cannot find a right result)
                check(call())
    torch.cuda.synchronize()
    for name, call, check in cases:
        # (a busy host, e.g. other processes sharing it, can take longer than the sleep over one call: then
        # the sleep doubles and the call runs again; a call that waits for the default stream finds it
        # idle every time)
        for cycles in (400_000_000, 1_600_000_000, 6_400_000_000):
            torch.cuda._sleep(cycles)   # (0.2-0.4 s on the default stream at a 1-2 GHz clock, then longer)
            with torch.cuda.stream(side):
                out = call()
                side.synchronize()
                waited = torch.cuda.default_stream().query()
                check(out)
                side.synchronize()
            torch.cuda.synchronize()
            if not waited:
                break
            warnings.warn(f"{name}: the default stream was idle after the call (a sleep of {cycles} cycles)")
        assert not waited, f"{name} waited for the default stream"


@triton.jit
def _other_kernel(x_ptr, y_ptr, n):
    tl.store(y_ptr, tl.load(x_ptr) + n)


def _plan_call(memo, key, x, y, n, scale, tag=None, blocks=((128, 0), (64, 3))):
    """Two launches through one LaunchPlan: y = x*scale + offset + ADD over n items, twice."""
    plan = _launch.LaunchPlan(memo, key, tag=tag)
    for block, add in blocks:
        plan(_affine_kernel, (triton.cdiv(n, block),), x, y, n, scale, 1.5, BLOCK=block, ADD=add)
    plan.done()


def test_replays_ok_needs_a_gpu_tensor_direct_launches_and_unchanged_helpers(monkeypatch):
    """replays_ok: a GPU tensor, direct launches, and every (current, original) pair the same object."""
    import types
    on_gpu, on_cpu = types.SimpleNamespace(is_cuda=True), types.SimpleNamespace(is_cuda=False)
    monkeypatch.setattr(_launch, "_direct_ok", lambda: True)
    assert _launch.replays_ok(on_gpu, (launch, launch), (len, len))
    assert not _launch.replays_ok(on_gpu, (launch, launch), (len, abs))   # (a stand-in for a helper)
    assert not _launch.replays_ok(on_cpu, (launch, launch))
    monkeypatch.setattr(_launch, "_direct_ok", lambda: False)             # (the interpreter, a launch hook)
    assert not _launch.replays_ok(on_gpu, (launch, launch))


def test_launch_plans_replay_under_the_interpreter(monkeypatch):
    """The ops whose launches go through LaunchPlan (the bitmask selections, partitions, run-length
    encodes and nonzero, unique's dense path, top-k's radix select) remember them on a GPU and replay them on a repeated
    problem; here the interpreter replays them (helpers.interpreter_replays with plans): the same
    sizes three times on fresh data, every result torch's, and the later calls replayed plan steps
    (a key that does not fix its sequence fails with a mismatch instead)."""
    if DEVICE == "cuda":
        pytest.skip("on a GPU every test runs the plans")
    from tritoncub.device import partition as P
    from tritoncub.device import select as S
    from tritoncub.device import topk as tk
    from tritoncub.device import unique as U
    interpreter_replays(monkeypatch, plans=True)
    for name in ("_BITS_PLANS", "_SCATTER_PLANS"):   # (this test's plans only)
        monkeypatch.setattr(S, name, {})
    monkeypatch.setattr(tk, "_PLANS", {})
    monkeypatch.setattr(U, "_DENSE_PLANS", {})
    monkeypatch.setattr(U, "UNIQUE_TILE_MAX", 0)   # (2000 keys: the dense path, not the one program)
    taken = count_calls(monkeypatch, U, "_dense_path")
    replayed = plan_replays(monkeypatch)
    ops = torch.ops.tritoncub
    g = torch.Generator().manual_seed(3)
    for n in (3000, 3000, 20000, 20000):   # (each size twice, the larger over several tiles: a plan keyed
        # without its size would replay the smaller grid)
        x = torch.randn(n, generator=g)
        m = torch.rand(n, generator=g) < 0.3
        assert_equal(ops.masked_select(x, m), x[m])
        assert_equal(ops.nonzero(m.view(-1, 50)), torch.nonzero(m.view(-1, 50)))
        keys = torch.sort(torch.randint(0, 40, (2000,), generator=g))[0]
        u, _, counts = ops.unique_consecutive(keys, return_counts=True)
        ru, rc = torch.unique_consecutive(keys, return_counts=True)
        assert_equal(u, ru)
        assert_equal(counts, rc)
        shuffled = keys[torch.randperm(keys.numel(), generator=g)]
        for ri, rc_ in ((False, False), (True, True)):   # (the dense path: marks, counts, ranks)
            got_u = ops.unique(shuffled, True, ri, rc_)
            want = torch.unique(shuffled, return_inverse=True, return_counts=True)
            assert_equal(got_u[0], want[0])
            if ri:
                assert_equal(got_u[1], want[1])
                assert_equal(got_u[2], want[2])
        got, n_sel = P.flagged(x, m)
        assert int(n_sel) == int(m.sum())
        assert_equal(got, torch.cat([x[m], x[~m]]))   # (stable: the rejected items in order too)
        rows = torch.randn(3, n // 25, generator=g)
        with policy.override("topk", dict(ROW_MAX_BLOCK=16, CHUNK=32, CAND_K_MAX=1, RS_BLOCK=32, RS_TILES=2)):
            v, _ = tk.topk(rows, 7)   # (the radix select)
        assert_equal(v, torch.topk(rows, 7).values)
    # (the first call of each size records its plans, the second replays them)
    assert 0.4 * len(replayed) <= sum(replayed) <= 0.6 * len(replayed), (sum(replayed), len(replayed))
    assert len(taken) == 8   # (unique went the dense path every time)


@pytest.mark.parametrize("direct", [False, True])
def test_launch_plan_records_then_replays_with_new_arguments(monkeypatch, direct):
    """The first call with a key records bound launches, later calls replay them with their new
    arguments (results as launch() gives). ``direct`` False: the table path is off (as under the
    interpreter): every call launches. True: the direct path is stood in for by a binder that relaunches
    through launch() with the recorded grid and constexprs, which checks the plan's bookkeeping."""
    bound = []
    monkeypatch.setattr(_launch, "_direct_ok", lambda: direct)
    if direct:

        def fake_bind(kernel, grid, *args, **kwargs):
            bound.append(kernel)
            kernel[grid](*args, **kwargs)
            return lambda *new_args: kernel[grid](*new_args, **kwargs)
        monkeypatch.setattr(_launch, "bind", fake_bind)
    memo, tag = {}, object()
    for rep in range(3):
        x = torch.randn(300, device=DEVICE)
        y = torch.full_like(x, float("nan"))
        _plan_call(memo, ("k", 300), x, y, 300, 2, tag=tag)
        assert_equal(y, x * 2 + 1.5 + 3)   # (the second launch overwrites the first)
    assert len(bound) == (2 if direct else 0), "only the first call records"
    assert bool(memo) == direct
    if direct:
        # another tag (e.g. a policy override) records again
        x = torch.randn(300, device=DEVICE)
        y = torch.empty_like(x)
        _plan_call(memo, ("k", 300), x, y, 300, 2, tag=object())
        assert len(bound) == 4
        assert_equal(y, x * 2 + 1.5 + 3)
        # a key that does not fix the sequence is an error, not a silent partial replay
        # a key that does not fix the sequence (fewer launches, more, another kernel) is an error, not
        # a silent wrong replay, and the sequence is forgotten (the next call records afresh)
        for blocks in (((128, 0),), ((128, 0), (64, 3), (32, 1))):
            with pytest.raises(RuntimeError, match="does not match"):
                _plan_call(memo, ("k", 300), x, y, 300, 2, tag=memo[("k", 300)][0], blocks=blocks)
            assert ("k", 300) not in memo
            _plan_call(memo, ("k", 300), x, y, 300, 2, tag=tag)   # (records again)
        plan = _launch.LaunchPlan(memo, ("k", 300), tag=tag)
        with pytest.raises(RuntimeError, match="does not match"):
            plan(_other_kernel, (1,), x, y, 300)
        assert ("k", 300) not in memo
        # inside a caller's recording nothing is replayed: the launches go through launch(), which
        # the recording sees (a replayed step would be missing from the caller's record)
        _plan_call(memo, ("k", 300), x, y, 300, 2, tag=tag)   # (records again)
        n_bound = len(bound)
        y3 = torch.full_like(x, float("nan"))
        with _launch.record_launches() as rec:
            _plan_call(memo, ("k", 300), x, y3, 300, 2, tag=tag)
        assert len(rec) == 2 and len(bound) == n_bound + 2 and ("k", 300) in memo
        assert_equal(y3, x * 2 + 1.5 + 3)
        # so is a launch on another grid (a size the key left out): refused before it runs
        x2 = torch.randn(600, device=DEVICE)
        y2 = torch.full_like(x2, float("nan"))
        with pytest.raises(RuntimeError, match="does not match"):
            _plan_call(memo, ("k", 300), x2, y2, 600, 2, tag=tag)
        assert ("k", 300) not in memo and torch.isnan(y2).all()


def test_launch_plan_without_key_launches():
    memo = {}
    x = torch.randn(70, device=DEVICE)
    y = torch.empty_like(x)
    _plan_call(memo, None, x, y, 70, 16)
    assert_equal(y, x * 16 + 1.5 + 3)
    assert not memo


@pytest.mark.gpu
def test_launch_plan_replays_on_the_gpu():
    memo = {}
    for n in (300, 300, 300):
        x = torch.randn(n, device=DEVICE)
        y = torch.empty_like(x)
        _plan_call(memo, ("gpu", n), x, y, n, 2)
        assert_equal(y, x * 2 + 1.5 + 3)
    assert memo and all(bound is not None for _, bound, _ in memo[("gpu", 300)][1])


def test_relocatable_maps_tensor_arguments_to_roots():
    """relocatable() keeps each tensor argument as (root, byte offset) and everything else as it is;
    replay() passes the new roots' addresses plus those offsets. A launch that was not bound, or a
    tensor in no root, gives None (the caller launches normally then)."""
    a = torch.zeros(100)
    b = torch.zeros(50, dtype=torch.int64)
    calls = []
    fn = lambda *args: calls.append(args)   # noqa: E731
    plan = _launch.relocatable([(fn, (a[10:], 7, b, 2.5)), (fn, (b[49:], a))], (a, b))
    assert plan is not None
    _launch.replay(plan, (1000, 5000))
    assert calls == [(1040, 7, 5000, 2.5), (5000 + 49 * 8, 1000)]
    assert _launch.relocatable([(fn, (torch.zeros(3),))], (a, b)) is None   # (in no root)
    assert _launch.relocatable([(None, (a,))], (a, b)) is None              # (not bound)
    assert _launch.relocatable([], (a, b)) is None
    # overlapping roots (e.g. values starting inside the keys' buffer): a pointer inside both could be
    # recorded against the wrong one, and a later call whose roots lie apart would replay into the
    # wrong buffer, so nothing is replayable
    buf = torch.zeros(64)
    keys, vals = buf[:40], buf[4:44]
    assert _launch.relocatable([(fn, (keys, vals))], (keys, vals)) is None
    assert _launch.relocatable([(fn, (vals, 3))], (keys, vals)) is None
    assert _launch.relocatable([(fn, (keys,))], (keys, keys)) is None          # (the same tensor twice)
    assert _launch.relocatable([(fn, (buf[40:],))], (buf[:40], buf[40:])) is not None   # (adjacent: apart)


@triton.jit
def _count_kernel(c_ptr):
    tl.atomic_add(c_ptr, 1)


def test_record_launches_records_each_launch_once():
    x = torch.randn(300, device=DEVICE)
    y = torch.full_like(x, float("nan"))
    c = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    with _launch.record_launches() as rec:
        launch(_affine_kernel, (triton.cdiv(300, 128),), x, y, 300, 2, 1.5, BLOCK=128, ADD=3)
        launch(_count_kernel, (1,), c)
    assert_equal(y, x * 2 + 1.5 + 3)   # (the launch ran)
    assert int(c.item()) == 1, "a recorded launch ran more than once"
    assert len(rec) == 2 and rec[0][1] == (x, y, 300, 2, 1.5)
    assert all((fn is None) == (DEVICE != "cuda") for fn, _ in rec)   # (bound on the GPU only)
    launch(_affine_kernel, (1,), x, y, 10, 1, 0.0, BLOCK=128, ADD=0)   # (outside: not recorded)
    assert len(rec) == 2
    # nested recordings: an inner one (even an empty one) leaves the outer one recording
    with _launch.record_launches() as outer:
        with _launch.record_launches() as inner:
            pass
        launch(_count_kernel, (1,), c)
    assert len(outer) == 1 and not inner and int(c.item()) == 2
    launch(_count_kernel, (1,), c)   # (no recording left active)
    assert len(outer) == 1 and not getattr(_launch._RECORDING, "stack", [])


@pytest.mark.gpu
def test_recorded_launches_replay_on_new_buffers_gpu():
    x = torch.randn(1000, device=DEVICE)
    y = torch.empty_like(x)
    with _launch.record_launches() as rec:
        launch(_affine_kernel, (triton.cdiv(1000, 128),), x, y, 1000, 2, 1.5, BLOCK=128, ADD=3)
    plan = _launch.relocatable(rec, (x, y))
    assert plan is not None
    x2 = torch.randn(1000, device=DEVICE)
    y2 = torch.full_like(x2, float("nan"))
    _launch.replay(plan, (x2.data_ptr(), y2.data_ptr()))
    assert_equal(y2, x2 * 2 + 1.5 + 3)
    assert_equal(y, x * 2 + 1.5 + 3)   # (the recorded call's buffers untouched)


@triton.jit
def _undefined_name(a, b):
    return a - not_defined_anywhere  # noqa: F821


@triton.jit
def _undefined_pred(a):
    return a > not_defined_anywhere  # noqa: F821


@triton.jit
def _first_of_pair(a0, a1, b0, b1):
    return a0 + b0   # (a pair operator must return two values)


def _user_fn_cases():
    from tritoncub.device import adjacent_difference, reduce, reduce_by_key, scan, select
    x = torch.randn(300, device=DEVICE)
    keys = torch.tensor([0, 0, 1, 1, 2], dtype=torch.int32, device=DEVICE)
    vals = torch.ones(5, device=DEVICE)
    return {
        "scan": ("_undefined_name", "NameError", lambda: scan.inclusive_scan(x, _undefined_name)),
        "scan pair": ("_first_of_pair", "", lambda: scan.inclusive_scan((x, x), _first_of_pair)),
        "scan by key": ("_undefined_name", "NameError", lambda: scan.inclusive_scan_by_key(keys, vals, _undefined_name)),
        "reduce": ("_undefined_name", "NameError", lambda: reduce.reduce(x, _undefined_name, 0.0)),
        "reduce by key": ("_undefined_name", "NameError", lambda: reduce_by_key.reduce_by_key(keys, vals, _undefined_name)),
        "select if": ("_undefined_pred", "NameError", lambda: select.if_(x, _undefined_pred)),
        "subtract_left": ("_undefined_name", "NameError", lambda: adjacent_difference.subtract_left(x, _undefined_name)),
    }


@pytest.mark.parametrize("case", ["scan", "scan pair", "scan by key", "reduce", "reduce by key", "select if",
                                  "subtract_left"])
def test_user_function_errors_name_the_function(case):
    """A user operator of the right arity whose body fails (an undefined name, too few return values)
    is reported as a ValueError naming it and the kernel, with Triton's error chained, not as an error
    from inside Triton."""
    name, inner, call = _user_fn_cases()[case]
    with pytest.raises(ValueError, match=f"failed with the user function {name} ") as info:
        call()
    assert inner in str(info.value)
    assert info.value.__cause__ is not None


def test_user_function_lookup_sees_through_bound_wrappers():
    from tritoncub.agent.lookback import segmented_combine
    from tritoncub.device.scan import combine_add
    wrapped = segmented_combine(_undefined_name, 1)
    assert _launch._user_functions({"OP": wrapped, "X": 3}) == [_undefined_name]
    assert _launch._user_functions({"OP": segmented_combine(combine_add, 1)}) == []   # (ours only)


def _plain_fn(a):
    return a


def _other_fn(a):
    return a + 1


def _takes_anything(x_ptr, n, f, BLOCK: tl.constexpr):
    pass


def test_specialisation_key_covers_constexpr_like_runtime_arguments():
    """Triton compiles a jit function, a ``tl.constexpr`` or a pointer that is not a torch tensor
    (``triton.reinterpret``) passed to a parameter not annotated constexpr into the kernel (the
    function's source, the value, the pointer's dtype and alignment): launches differing only in
    them must not share a table entry. Checked against Triton's own specialisation (its binder)."""
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.runtime.jit import compute_cache_key, create_function_from_signature
    kern = JITFunction(_takes_anything)
    binder = create_function_from_signature(kern.signature, kern.params, CUDABackend)
    t = torch.zeros(64)
    pairs = [(JITFunction(_plain_fn), JITFunction(_other_fn)), (tl.constexpr(4), tl.constexpr(8)),
             (triton.reinterpret(t, tl.int32), triton.reinterpret(t, tl.float16)),
             (triton.reinterpret(t, tl.int32), triton.reinterpret(t[1:], tl.int32))]
    for a, b in pairs:
        for pos in (0, 2):
            args_a, args_b = [t, 5, 1.0], [t, 5, 1.0]
            args_a[pos], args_b[pos] = a, b
            triton_a = compute_cache_key({}, binder(*args_a, BLOCK=64)[1], {})
            triton_b = compute_cache_key({}, binder(*args_b, BLOCK=64)[1], {})
            assert triton_a != triton_b   # (Triton compiles two kernels)
            assert _launch._key(kern, 0, tuple(args_a), {"BLOCK": 64}) != _launch._key(kern, 0, tuple(args_b), {"BLOCK": 64}), (a, b)


def test_direct_path_off_in_triton_debug_or_instrumentation_mode(monkeypatch):
    """Triton builds other kernels in its debug mode and under an instrumentation mode (it reads both at
    every launch): the direct path, whose table holds the kernels built before, stands aside then."""
    from triton import knobs
    monkeypatch.setattr(_launch, "_DIRECT", [True])   # (as on a GPU)
    assert _launch._direct_ok()
    monkeypatch.setattr(knobs.runtime, "debug", True)
    assert not _launch._direct_ok()
    monkeypatch.setattr(knobs.runtime, "debug", False)
    monkeypatch.setattr(knobs.compilation, "instrumentation_mode", "consan")
    assert not _launch._direct_ok()
    monkeypatch.setattr(knobs.compilation, "instrumentation_mode", "")
    assert _launch._direct_ok()
