"""CUDA graph capture of the operators (GPU only: there are no graphs under the interpreter).

Every operator whose output size does not depend on the data is captured once and replayed on
fresh inputs copied into the captured input buffers; each replay must equal torch on those inputs.
The operators that read a count back to the host (as torch's own do: masked_select, nonzero,
unique...) must refuse a capture with a clear error before queuing anything, and work again
afterwards. ``torch.compile(mode="reduce-overhead")`` (CUDA graphs under the hood) runs too.
"""
import pytest
import torch

import tritoncub  # noqa: F401  (registers torch.ops.tritoncub)
from helpers import DEVICE
from tritoncub.block.reduce import combine_max
from tritoncub.device import run_length_encode, select
from tritoncub.device.reduce import reduce as device_reduce

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(DEVICE != "cuda", reason="CUDA graphs need a GPU")]

ops = torch.ops.tritoncub


def _rand(shape, dtype, g):
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g, device="cuda", dtype=dtype)
    return torch.randint(-1000, 1000, shape, generator=g, device="cuda", dtype=dtype)


def _same(got, want) -> bool:
    """Equal dtype, shape and items (floats: NaN matches NaN, and -0.0 only -0.0)."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        if g.dtype != w.dtype or g.shape != w.shape:
            return False
        if not g.dtype.is_floating_point:
            if not torch.equal(g, w):
                return False
        elif not bool((((g == w) & (g.signbit() == w.signbit())) | (g.isnan() & w.isnan())).all()):
            return False
    return True


def _close(rtol, atol):
    def check(got, want, x):
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        return all(g.dtype == w.dtype and g.shape == w.shape and torch.allclose(g, w, rtol=rtol, atol=atol,
                                                                                equal_nan=True)
                   for g, w in zip(got, want, strict=True))
    return check


def _exact(got, want, x):
    return _same(got, want)


def _topk(got, want, x):
    """Values equal torch's; indices point at items holding them."""
    (gv, gi), (wv, _) = got, want
    return _same(gv, wv) and _same(torch.gather(x, -1, gi), gv)


def _selected(got, want, x):
    """A device-level selection (outputs with n slots, the count on the device) against torch's."""
    *outs, num = got
    k = int(num)
    want = want if isinstance(want, tuple) else (want,)
    return all(k == w.numel() and _same(o[:k].to(w.dtype), w) for o, w in zip(outs, want, strict=True))


_OFFSETS = torch.tensor([0, 0, 5, 300, 301, 4000, 9000, 9001])   # (empty, one-item and long segments)


def _case(name):
    """``(input shapes and dtypes, our call, torch's call, check)`` of case ``name``; calls take the inputs."""
    f32, i32 = torch.float32, torch.int32
    big = (1 << 25) + 5   # a sort this long reads its digit counts back outside a capture
    offsets = _OFFSETS.cuda()
    lengths = offsets.diff()
    table = {
        "sum": ([((1 << 20) + 3,), f32], lambda x: ops.sum(x), lambda x: x.sum(), _close(1e-4, 1e-3)),
        "sum_rows": ([(1000, 77), f32], lambda x: ops.sum(x, [-1]), lambda x: x.sum(-1), _close(1e-4, 1e-4)),
        "sum_int": ([(70001,), i32], lambda x: ops.sum(x), lambda x: x.sum(), _exact),
        "amax": ([(3, 50001), f32], lambda x: ops.amax(x, [1]), lambda x: x.amax(1), _exact),
        "argmin": ([(65536 * 3 + 1,), f32], lambda x: ops.argmin(x), lambda x: x.argmin(), _exact),
        "segment_reduce": ([(9001,), f32], lambda x: ops.segment_reduce(x, offsets, "sum"),
                           lambda x: torch.segment_reduce(x, "sum", lengths=lengths, unsafe=True),
                           _close(1e-4, 1e-4)),
        "cumsum": ([((1 << 20) + 7,), f32], lambda x: ops.cumsum(x, 0), lambda x: x.cumsum(0), _close(1e-3, 1e-2)),
        "cumsum_int": ([(5, 30001), i32], lambda x: ops.cumsum(x, 1), lambda x: x.cumsum(1), _exact),
        "cummax": ([(100003,), f32], lambda x: ops.cummax(x, 0), lambda x: tuple(torch.cummax(x, 0)), _exact),
        "logcumsumexp": ([(4, 5000), f32], lambda x: ops.logcumsumexp(x, 1), lambda x: x.logcumsumexp(1),
                         _close(1e-4, 1e-4)),
        "diff": ([(7, 3001), f32], lambda x: ops.diff(x), lambda x: x.diff(), _exact),
        "histc": ([(100001,), f32], lambda x: ops.histc(x, 64, -2.0, 2.0),
                  lambda x: torch.histc(x, 64, -2.0, 2.0), _exact),
        "sort_small": ([(1000,), f32], lambda x: ops.sort(x, stable=True),
                       lambda x: tuple(torch.sort(x, stable=True)), _exact),
        "sort": ([((1 << 16) + 3,), f32], lambda x: ops.sort(x, stable=True),
                 lambda x: tuple(torch.sort(x, stable=True)), _exact),
        "sort_big": ([(big,), i32], lambda x: ops.sort(x, descending=True, stable=True),
                     lambda x: tuple(torch.sort(x, descending=True, stable=True)), _exact),
        "sort_dim0": ([(300, 7), f32], lambda x: ops.sort(x, 0, stable=True),
                      lambda x: tuple(torch.sort(x, dim=0, stable=True)), _exact),
        "sort_long_rows": ([(8, 50001), f32], lambda x: ops.sort(x, stable=True),
                           lambda x: tuple(torch.sort(x, stable=True)), _exact),
        "argsort": ([(100003,), i32], lambda x: ops.argsort(x, stable=True),
                    lambda x: torch.argsort(x, stable=True), _exact),
        "sort_keys_bits": ([(200001,), i32], lambda x: ops.sort_keys(x & 0xFFFF, end_bit=16),
                           lambda x: torch.sort(x & 0xFFFF).values, _exact),
        "sort_pairs": ([(200001,), f32], lambda x: ops.sort_pairs(x, torch.arange(x.numel(), device=x.device)),
                       lambda x: tuple(torch.sort(x, stable=True)), _exact),
        "sort_rows": ([(1024, 128), f32], lambda x: ops.sort_rows(x), lambda x: tuple(torch.sort(x, stable=True)),
                      _exact),
        "select_flagged": ([(100003,), f32], lambda x: select.flagged(x, x > 0),
                           lambda x: torch.masked_select(x, x > 0), _selected),
        "rle_encode": ([(100003,), i32], lambda x: run_length_encode.encode(torch.sort(x // 16).values),
                       lambda x: tuple(torch.unique_consecutive(torch.sort(x // 16).values, return_counts=True)),
                       _selected),
        "topk_rows": ([(4096, 128), f32], lambda x: ops.topk(x, 8), lambda x: tuple(torch.topk(x, 8)), _topk),
        "topk_long_rows": ([(4, 300001), f32], lambda x: ops.topk(x, 8), lambda x: tuple(torch.topk(x, 8)), _topk),
        "topk_select": ([((1 << 21) + 1,), f32], lambda x: ops.topk(x, 300, largest=False),
                        lambda x: tuple(torch.topk(x, 300, largest=False)), _topk),
        "topk_select_big_k": ([((1 << 21) + 1,), f32], lambda x: ops.topk(x, 20000),
                              lambda x: tuple(torch.topk(x, 20000)), _topk),
    }
    return table[name]


_CAPTURED = ["sum", "sum_rows", "sum_int", "amax", "argmin", "segment_reduce", "cumsum", "cumsum_int",
             "cummax", "logcumsumexp", "diff", "histc", "sort_small", "sort", "sort_big", "sort_dim0",
             "sort_long_rows", "argsort", "sort_keys_bits", "sort_pairs", "sort_rows", "select_flagged",
             "rle_encode", "topk_rows", "topk_long_rows", "topk_select", "topk_select_big_k"]


@pytest.mark.parametrize("name", _CAPTURED)
def test_capture_and_replay(name):
    (shape, dtype), ours, theirs, check = _case(name)
    g = torch.Generator(device="cuda").manual_seed(hash(name) & 0xFFFF)
    x = torch.full(shape, float("nan") if dtype.is_floating_point else -1, dtype=dtype, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):   # (warm-up on a side stream, as torch asks: compiles, fills caches)
        x.copy_(_rand(shape, dtype, g))
        for _ in range(2):
            assert check(ours(x), theirs(x), x), f"{name}: eager result differs from torch"
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = ours(x)
    for _ in range(3):
        x.copy_(_rand(shape, dtype, g))
        if dtype.is_floating_point:
            x.view(-1)[:: 997] = torch.tensor([float("nan"), -0.0, 0.0, float("inf")], device="cuda").repeat(
                x.numel() // 997 // 4 + 1)[: x.view(-1)[:: 997].numel()]
        graph.replay()
        torch.cuda.synchronize()
        assert check(out, theirs(x), x), f"{name}: the graph's replay differs from torch on fresh input"
    # the eager path still right after the capture (no cache filled with captured-only contents)
    x.copy_(_rand(shape, dtype, g))
    assert check(ours(x), theirs(x), x), f"{name}: eager result after the capture differs from torch"


def test_capture_first_call_of_a_problem():
    # sizes and parameters never seen before the capture: nothing may be copied from pageable memory,
    # and what is built during the capture must not be kept for eager calls (its contents exist only
    # when the graph runs)
    g = torch.Generator(device="cuda").manual_seed(7)
    x = _rand((100003,), torch.float32, g)
    ops.histc(x, 37, -1.5, 2.5)   # (kernels compiled; these bounds are new below)
    ops.sort(x[:77777])
    torch.cuda.synchronize()
    device_reduce(x, combine_max, -5.0)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        h = ops.histc(x, 37, -1.25, 2.75)
        v, i = ops.sort(x[:77773])
        m = device_reduce(x, combine_max, 7.0)   # (an init value made into a device constant)
    for _ in range(2):
        x.copy_(_rand((100003,), torch.float32, g))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(h, torch.histc(x, 37, -1.25, 2.75))
        assert float(m) == max(7.0, float(x.max()))
        wv, wi = torch.sort(x[:77773], stable=True)
        assert torch.equal(v, wv) and torch.equal(i, wi)
    x.copy_(_rand((100003,), torch.float32, g))
    assert torch.equal(ops.histc(x, 37, -1.25, 2.75), torch.histc(x, 37, -1.25, 2.75))
    wv, wi = torch.sort(x[:77773], stable=True)
    v2, i2 = ops.sort(x[:77773])
    assert torch.equal(v2, wv) and torch.equal(i2, wi)


def test_capture_of_remembered_row_scans():
    # the device-level exclusive sum remembers its short-row launch, with the init it reads: one
    # first made during a capture (init in the graph's memory, written only by a replay) must not be
    # remembered for eager calls, and one remembered before a capture and dropped afterwards must
    # stay readable by the graph
    from tritoncub.device import scan
    g = torch.Generator(device="cuda").manual_seed(13)
    x = _rand((37, 129), torch.float32, g)
    y = _rand((41, 77), torch.float32, g)
    scan.exclusive_sum(x[:5])   # (kernel compiled, under another shape)
    scan.exclusive_sum(y)       # (y's launch remembered before the capture)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        ex = scan.exclusive_sum(x)   # first call of x's shape
        ey = scan.exclusive_sum(y)   # a remembered launch
    scan._ROWS_MEMO.clear()
    junk = [torch.full((4096,), float("nan"), device="cuda") for _ in range(64)]
    for _ in range(2):
        x.copy_(_rand((37, 129), torch.float32, g))
        y.copy_(_rand((41, 77), torch.float32, g))
        graph.replay()
        torch.cuda.synchronize()
        for got, src in ((ex, x), (ey, y)):
            want = torch.cumsum(src, -1) - src
            assert torch.allclose(got, want, rtol=1e-5, atol=1e-5) and bool((got[:, 0] == 0).all())
    for _ in range(2):   # eager calls of x's shape after the capture
        x.copy_(_rand((37, 129), torch.float32, g))
        got = scan.exclusive_sum(x)
        assert torch.allclose(got, torch.cumsum(x, -1) - x, rtol=1e-5, atol=1e-5) and bool((got[:, 0] == 0).all())
    del junk


def test_capture_of_many_long_rows():
    # more than 256 rows longer than a radix sort tile: the segmented sort, whose tables are copied
    # from pinned memory the graph keeps
    g = torch.Generator(device="cuda").manual_seed(17)
    x = _rand((300, 4100), torch.float32, g)
    ops.sort(x)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        v, i = ops.sort(x)
    junk = [torch.full((1 << 16,), float("nan"), device="cuda") for _ in range(16)]
    for _ in range(2):
        x.copy_(_rand((300, 4100), torch.float32, g))
        graph.replay()
        torch.cuda.synchronize()
        wv, wi = torch.sort(x, dim=-1, stable=True)
        assert torch.equal(v, wv) and torch.equal(i, wi)
    del junk


_CUDA_OFFSETS = []


def _offsets():
    """``_OFFSETS`` on the GPU, made once outside any capture (a copy from pageable memory would break it)."""
    if not _CUDA_OFFSETS:
        _CUDA_OFFSETS.append(_OFFSETS.cuda())
    return _CUDA_OFFSETS[0]


def _segments_sorted(x):
    o = _OFFSETS.tolist()
    return torch.cat([x[o[i]:o[i + 1]].sort(stable=True).values for i in range(len(o) - 1)])


#: operators whose output size depends on the data: (our call, torch's result for the same input)
_REFUSED = {
    "masked_select": (lambda x: ops.masked_select(x, x > 0), lambda x: torch.masked_select(x, x > 0)),
    "nonzero": (lambda x: ops.nonzero(x > 0), lambda x: torch.nonzero(x > 0)),
    "unique": (lambda x: ops.unique(x)[0], lambda x: torch.unique(x)),
    "unique_consecutive": (lambda x: ops.unique_consecutive(x)[0], lambda x: torch.unique_consecutive(x)),
    "segmented_sort": (lambda x: ops.segmented_sort(x, _offsets()), _segments_sorted),
    "segmented_topk": (lambda x: ops.segmented_topk(x, _offsets(), 3)[0][4],
                       lambda x: torch.topk(x[301:4000], 3).values),
    "bincount": (lambda x: ops.bincount((x > 0).long()), lambda x: torch.bincount((x > 0).long())),
    "histc": (lambda x: ops.histc(x, 10), lambda x: torch.histc(x, 10)),
}


@pytest.mark.parametrize("name", sorted(_REFUSED))
def test_data_dependent_sizes_refuse_capture(name):
    call, ref = _REFUSED[name]
    x = torch.randn(9001, device="cuda")
    assert _same(call(x), ref(x))   # (compiled and cached before the capture)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="cannot be captured in a CUDA graph"):
        with torch.cuda.graph(graph):
            call(x)
    # nothing left broken: the same call works eagerly afterwards, on fresh data
    x = torch.randn(9001, device="cuda")
    assert _same(call(x), ref(x))


def test_compile_reduce_overhead():
    # torch.compile's CUDA-graph mode over a function of several operators, on fresh inputs each call
    def f(x):
        v, i = ops.sort(x, stable=True)
        return ops.cumsum(v, 0), i, ops.amax(x, [0])

    cf = torch.compile(f, mode="reduce-overhead", fullgraph=True)
    g = torch.Generator(device="cuda").manual_seed(3)
    for _ in range(4):
        x = _rand((50001,), torch.float32, g)
        c, i, m = cf(x)
        wv, wi = torch.sort(x, stable=True)
        assert torch.equal(i, wi) and torch.equal(m, x.amax(0))
        # (fp32 partial sums of sorted data reach about n * 0.8 before they fall back: an absolute
        # tolerance on that scale)
        assert torch.allclose(c.double(), wv.double().cumsum(0), rtol=0, atol=1e-6 * float(wv.abs().sum()))


def test_capture_keeps_what_it_used():
    # a capture that used a cached constant (histc's parameters) and a long sort: the cache then
    # overflows and drops its entries, and the graph still reads its own; the sort made under the
    # capture (which skips no digit place) is not remembered for eager calls
    from tritoncub.device import radix_sort
    g = torch.Generator(device="cuda").manual_seed(11)
    x = _rand((100003,), torch.float32, g)
    keys = _rand(((1 << 25) + 7,), torch.int32, g)
    for _ in range(3):
        ops.histc(x, 64, -2.0, 2.0)
        ops.sort(keys)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        h = ops.histc(x, 64, -2.0, 2.0)
        v, i = ops.sort(keys)
    assert not any(k[0] == keys.numel() for k in radix_sort._SORT_REPLAYS)
    for j in range(300):   # (new ranges, each twice: the parameter cache overflows and is emptied)
        for _ in range(2):
            ops.histc(x, 64, -2.0 - j / 1000, 2.0)
    junk = [torch.full((64 * 4,), float("nan"), dtype=torch.float64, device="cuda") for _ in range(300)]
    x.copy_(_rand((100003,), torch.float32, g))
    keys.copy_(_rand(((1 << 25) + 7,), torch.int32, g) >> 8)   # (shared top digits)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(h, torch.histc(x, 64, -2.0, 2.0))
    wv, wi = torch.sort(keys, stable=True)
    assert torch.equal(v, wv) and torch.equal(i, wi)
    del junk


@pytest.mark.skipif(tritoncub._library.CUDAGRAPH_UNSAFE is None, reason="this torch has no cudagraph_unsafe tag")
def test_compile_reduce_overhead_with_host_reads():
    # operators that read data back are tagged so torch.compile's CUDA-graph mode keeps them out of
    # its graphs (the rest of the function still runs)
    offsets = _offsets()

    def f(x):
        s = ops.segmented_sort(x, offsets)
        return s, ops.histc(x, 16), ops.cumsum(s, 0)

    cf = torch.compile(f, mode="reduce-overhead")
    g = torch.Generator(device="cuda").manual_seed(5)
    for _ in range(3):
        x = _rand((9001,), torch.float32, g)
        s, h, c = cf(x)
        ws = _segments_sorted(x)
        assert _same(s, ws) and _same(h, torch.histc(x, 16))
        assert torch.allclose(c.double(), ws.double().cumsum(0), rtol=0, atol=1e-6 * float(ws.abs().sum()))
