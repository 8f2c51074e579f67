"""Validation helpers of tritoncub._utils: the errors users see for bad input."""
import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE
import tritoncub
from tritoncub import _utils


@triton.jit
def _two_or_three(a, b, C: tl.constexpr = 1):
    return a + b


@triton.jit
def _any_count(a, *rest):
    return a


def test_check_tensor_rejects_non_tensor_and_dtype():
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        _utils.check_tensor([1, 2], "x")
    with pytest.raises(TypeError, match="supported dtypes are float32"):
        _utils.check_tensor(torch.zeros(3, dtype=torch.int32, device=DEVICE), "x", (torch.float32,))
    with pytest.raises(ValueError, match="must have 2 dimension"):
        _utils.check_tensor(torch.zeros(3, device=DEVICE), "x", ndim=2)
    neg = torch._neg_view(torch.arange(3.0, device=DEVICE))   # (a lazily negated view: memory holds 0, 1, 2)
    with pytest.raises(ValueError, match="lazily negated view.*keys.resolve_neg"):
        _utils.check_tensor(neg, "keys")
    _utils.check_tensor(neg.resolve_neg(), "keys")


def test_cpu_tensor_without_interpreter(monkeypatch):
    monkeypatch.setattr(_utils, "_INTERPRETER", False)
    with pytest.raises(ValueError, match="TRITON_INTERPRET=1"):
        _utils.check_device(torch.zeros(3), "keys")


def test_meta_tensor_only_in_fake_implementations():
    # a meta tensor holds no data: a kernel given one reads and writes through null pointers (on a GPU,
    # an illegal-address fault); operators' fake implementations take them to compute shapes
    meta = torch.zeros(3, device="meta")
    with pytest.raises(ValueError, match="keys is on meta: a meta tensor holds no data"):
        _utils.check_device(meta, "keys")
    _utils.fake_impl(lambda t: _utils.check_device(t, "keys"))(meta)
    with pytest.raises(ValueError, match="keys is on meta"):   # (only while a fake implementation runs)
        _utils.check_device(meta, "keys")


@triton.jit
def _add(a, b):
    return a + b


@pytest.mark.parametrize("call", [
    lambda m: tritoncub.device.scan.inclusive_sum(m),
    lambda m: tritoncub.device.scan.inclusive_scan(m, _add),
    lambda m: tritoncub.device.reduce.reduce(m, _add, 0.0),
    lambda m: tritoncub.device.reduce.sum(m),
    lambda m: tritoncub.device.radix_sort.sort_keys(m),
    lambda m: tritoncub.device.adjacent_difference.subtract_left(m),
    lambda m: tritoncub.device.histogram.histogram_even(m, 5, 0, 10),
    lambda m: tritoncub.device.select.flagged(m, m > 0),
    lambda m: tritoncub.device.partition.flagged(m, m > 0),
    lambda m: tritoncub.device.run_length_encode.encode(m),
    lambda m: tritoncub.device.segmented_reduce.reduce_rows(m.view(2, 5)),
    lambda m: tritoncub.device.segmented_sort.sort_rows(m.view(2, 5)),
    lambda m: tritoncub.device.topk.topk(m, 2),
], ids=["inclusive_sum", "inclusive_scan", "reduce", "sum", "sort_keys", "subtract_left", "histogram_even",
        "select_flagged", "partition_flagged", "rle_encode", "reduce_rows", "sort_rows", "topk"])
def test_device_functions_refuse_meta_tensors(call):
    """The device functions launch kernels: a meta input is refused by name (it reached the launch, whose
    null pointers fault on a GPU and fail to copy under the interpreter); the operators still take meta
    tensors (their fake implementations give the result's shape)."""
    m = torch.arange(10.0, device="meta")
    with pytest.raises(ValueError, match="is on meta: a meta tensor holds no data"):
        call(m)
    assert torch.ops.tritoncub.cumsum(m, 0).device.type == "meta"
    assert torch.ops.tritoncub.sort(m)[1].shape == (10,)


def test_overlap_detection():
    base = torch.zeros(16)
    with pytest.raises(ValueError, match="overlap"):
        _utils.check_no_overlap(base[:8], base[4:12], "in", "out")
    _utils.check_no_overlap(base[:8], base[8:], "in", "out")
    _utils.check_no_overlap(base, torch.zeros(16), "in", "out")


@pytest.mark.parametrize("n,expected", [(0, 1), (1, 1), (2, 2), (3, 4), (1000, 1024), (1024, 1024)])
def test_next_power_of_2(n, expected):
    assert _utils.next_power_of_2(n) == expected


def test_cdiv():
    assert [_utils.cdiv(a, 4) for a in (0, 1, 4, 5)] == [0, 1, 1, 2]


@pytest.mark.parametrize("num_args,ok", [(1, False), (2, True), (3, True), (4, False)])
def test_check_jit_function_arity(num_args, ok):
    # parameters with defaults (constexprs) may be left out; too few or too many arguments are named
    if ok:
        _utils.check_jit_function(_two_or_three, "combine_fn", num_args)
    else:
        with pytest.raises(TypeError, match=f"combine_fn must take {num_args} positional argument.*takes 2 to 3"):
            _utils.check_jit_function(_two_or_three, "combine_fn", num_args, "what it gets")
    _utils.check_jit_function(_any_count, "f", num_args)   # (*args: any count of at least one)


def test_check_jit_function_type():
    with pytest.raises(TypeError, match="f must be a @triton.jit function, got function"):
        _utils.check_jit_function(lambda a: a, "f", 1)
    with pytest.raises(TypeError, match="got str"):
        _utils.check_jit_function("a + b", "f")


def test_device_constant_is_cached_from_the_second_call_of_a_key():
    cache = {}
    dev = torch.device(DEVICE)
    vals = [3, -1, 2 ** 40]
    a = _utils.device_constant(vals, torch.int64, dev, cache, "k")
    assert a.device.type == dev.type and a.tolist() == vals and cache == {"k": None}   # (seen, not kept)
    b = _utils.device_constant(vals, torch.int64, dev, cache, "k")
    assert b is not a and b.tolist() == vals and cache["k"] is b
    assert _utils.device_constant([9, 9, 9], torch.int64, dev, cache, "k") is b   # (by key: not rebuilt)
    c = _utils.device_constant([0.5], torch.float64, dev, cache, "other")
    assert c.dtype == torch.float64 and c.tolist() == [0.5]
    assert _utils.device_constant([1], torch.int32, dev).tolist() == [1]   # (no cache)


def test_cached_persistent_overflow_empties_the_cache():
    cache = {}
    dev = torch.device(DEVICE)
    for i in range(5):
        for _ in range(2):
            t = _utils.cached_persistent(cache, i, dev, lambda: torch.full((2,), i, device=dev), limit=3)
        assert t.tolist() == [i, i]
    assert len(cache) <= 3 and cache[4] is t


def test_capture_checks_outside_a_capture():
    dev = torch.device(DEVICE)
    assert not _utils.capturing(dev)
    _utils.refuse_capture(dev, "some_op")   # (nothing to refuse)


def test_persistent_allocates_and_reraises():
    dev = torch.device(DEVICE)
    t = _utils.persistent(dev, lambda: torch.full((5,), 7, dtype=torch.int32, device=dev))
    assert t.device.type == dev.type and t.tolist() == [7] * 5
    with pytest.raises(ValueError, match="from make"):   # (raised in the caller, whichever thread made it)
        _utils.persistent(dev, lambda: (_ for _ in ()).throw(ValueError("from make")))
    cache = {"a": t, "b": (t, t), "c": None}
    _utils.drop_persistent(cache)
    assert cache == {}


_ops = torch.ops.tritoncub


@pytest.mark.parametrize("call, python_class", [
    (lambda x: _ops.topk(x, 20), ValueError),                                    # k past the row
    (lambda x: _ops.sort(x.to(torch.complex64)), TypeError),                      # unsupported dtype
    (lambda x: _ops.histc(x, 0, 0.0, 1.0), ValueError),                          # bins <= 0
    (lambda x: _ops.bincount(torch.tensor([1, -1], device=x.device), None, 0), ValueError),  # negative
    (lambda x: _ops.masked_select(x, torch.ones(3, dtype=torch.bool, device=x.device)), ValueError),
    (lambda x: _ops.segment_reduce(x, torch.tensor([0, 7, 3], device=x.device), "sum"), ValueError),
    (lambda x: _ops.amax(x.to(torch.complex64)), TypeError),
    (lambda x: _ops.sort_keys(x, False, 0, 40), ValueError),                      # bit range past the key
], ids=["topk_k", "sort_dtype", "histc_bins", "bincount_negative", "mask_shape", "offsets_decreasing",
        "amax_complex", "end_bit"])
def test_bad_input_is_also_a_runtime_error(call, python_class):
    # torch raises RuntimeError for these mistakes: ours are ValueError / TypeError and RuntimeError
    x = torch.randn(10, device=DEVICE)
    with pytest.raises(python_class) as info:
        call(x)
    assert isinstance(info.value, RuntimeError), type(info.value)
    assert type(info.value) in (_utils.InputValueError, _utils.InputTypeError)


def test_check_init_value_of_tensors():
    """A one-item tensor init: on the host by its value; elsewhere (a GPU; 'meta' here) by its dtype, which
    the accumulator must hold without loss (no device sync); a bool accumulator takes any."""
    check = _utils.check_init_value
    check(torch.tensor(3.0), torch.int32)
    with pytest.raises(ValueError, match="not an integer"):
        check(torch.tensor(3.5), torch.int32)
    check(torch.tensor(3, dtype=torch.int32, device="meta"), torch.int64)
    check(torch.tensor(0.5, dtype=torch.float16, device="meta"), torch.float32)
    check(torch.tensor(0.5, device="meta"), torch.bool)
    for dtype, acc in ((torch.float32, torch.int32), (torch.int64, torch.int32), (torch.float64, torch.float32)):
        with pytest.raises(TypeError, match=f"{str(dtype)[6:]} does not fit {str(acc)[6:]}"):
            check(torch.zeros((), dtype=dtype, device="meta"), acc)
    with pytest.raises(ValueError, match="one-item tensor"):
        check(torch.zeros(2), torch.float32)
    with pytest.raises(TypeError, match="must be a number"):
        check(None, torch.float32)
    # a finite number past a float dtype's range is refused (it would become inf); inf itself is kept
    for v, acc in ((1e40, torch.float32), (1e6, torch.float16), (-1e39, torch.bfloat16),
                   (torch.tensor(1e40, dtype=torch.float64), torch.float32)):
        with pytest.raises(ValueError, match="does not fit"):
            check(v, acc)
    check(float("inf"), torch.float16)
    check(-float("inf"), torch.float32)
    check(65504.0, torch.float16)
    # a negative init of an unsigned accumulator is refused (torch.tensor wraps -1 into uint8 as 255)
    for v, acc in [(-1, torch.uint8), (-5, getattr(torch, "uint16", None)), (torch.tensor(-1), torch.uint8)]:
        if acc is not None:
            with pytest.raises(ValueError, match="does not fit"):
                check(v, acc)
    check(255, torch.uint8)
    check(-1, torch.int8)


def test_integer_arguments_as_torch_takes_them():
    # numpy integers and 0-d integer tensors count as ints (torch.topk and torch.sort take them); bool,
    # float and bool tensors do not
    import numpy as np
    assert _utils.as_int(np.int64(3), "k") == 3 and type(_utils.as_int(np.int32(3), "k")) is int
    assert _utils.as_int(torch.tensor(-2), "dim") == -2 and _utils.wrap_dim(np.int64(-1), 2) == 1
    for bad in (True, 2.0, torch.tensor(True), torch.tensor(2.0), "2", None):
        with pytest.raises(TypeError, match="must be an int"):
            _utils.as_int(bad, "k")


def test_count_dtype():
    """Counts default to int32 (CUB's) below 2^31 items and to int64 from there; a request is kept."""
    assert _utils.count_dtype(0) == torch.int32 and _utils.count_dtype(2 ** 31 - 1) == torch.int32
    assert _utils.count_dtype(2 ** 31) == torch.int64
    assert _utils.count_dtype(5, torch.int64) == torch.int64 and _utils.count_dtype(2 ** 40, torch.int32) == torch.int32
    with pytest.raises(TypeError, match="length_dtype must be int32 or int64"):
        _utils.count_dtype(5, torch.float32, "length_dtype")
