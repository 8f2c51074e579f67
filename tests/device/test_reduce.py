"""DeviceReduce (tritoncub.device.reduce) and its torch operators, against torch."""
import itertools
import math
import warnings

import pytest
import torch
import triton
import triton.language as tl

import tritoncub  # noqa: F401  (registers the ops)
from tritoncub import policy
from tritoncub.device import reduce as R
from helpers import DEVICE, UINT_DTYPES, assert_close, assert_equal, assert_sum_close, covering_sample, make_data

GPU = DEVICE == "cuda"
TILE = 64
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64]


def small_policy(**kw):
    vals = {"BLOCK_ITEMS": TILE, "PROGRAMS_PER_SM": 1, "GRID_MAPPING": "rake", "LOAD": "vectorize",
            "CACHE_MODIFIER": "", "EVICTION": ""}
    vals.update(kw)
    nw = vals.pop("num_warps", 2)
    ns = vals.pop("num_stages", 1)
    return policy.Policy("reduce", vals, nw, ns, "test")


def run_sum(x, pol=None):
    acc = R.acc_dtype(x.dtype)
    (r,) = R._launch("sum", 0, [R._storage_view(x.reshape(-1))], [acc], ident=0, pol=pol)
    return r.reshape(()).to(R.sum_dtype(x.dtype))


def run_minmax(x, op, pol=None):
    xs = R._storage_view(x.reshape(-1))
    acc = R._cmp_dtype(xs.dtype)
    (r,) = R._launch("minmax", R.OP_CODES[op], [xs], [acc], ident=R.identity(op, acc), pol=pol)
    r = r.reshape(())
    return r.view(torch.bool) if x.dtype == torch.bool else r.to(x.dtype)


def run_arg(x, op, pol=None):
    xs = R._storage_view(x.reshape(-1))
    acc = R._cmp_dtype(xs.dtype)
    _, i = R._launch("arg", R.OP_CODES[op], [xs], [acc, torch.int64], ident=R.identity(op, acc), pol=pol)
    return i.reshape(())


def ref_sum(x):
    if x.dtype.is_floating_point:
        return x.double().sum().to(x.dtype)
    return x.sum()


# edges of one tile, and 5 full tiles over 4 programs (q=1, r=1); ragged multi-tile sizes: test_policy_configs
SIZES = [1, TILE - 1, TILE, TILE + 1, 5 * TILE]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_sum_dtypes_sizes(dtype, n):
    x = make_data("random", n, dtype)
    out = run_sum(x, small_policy())
    ref = ref_sum(x)
    if dtype == torch.float32:
        # (against the float64 sum, within a float32 sum's rounding bound: a sum of 320 items of ~100 that
        # cancels missed atol=1e-4 in ~0.15% of draws; the bound, ~0.5 there, is far below an item's ~80:
        # a dropped, doubled or extra item fails)
        assert_sum_close(out, x)
    elif dtype.is_floating_point:
        tol = 2e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-5
        assert_close(out, ref, rtol=tol, atol=tol * 10)
    else:
        assert_equal(out, ref)


WIDE_UINTS = [d for d in UINT_DTYPES if d != torch.uint8]


def as_int64(x: torch.Tensor) -> torch.Tensor:
    """Unsigned items as torch.sum and torch.cumsum take them: int64 (uint64 wraps)."""
    return x.view(torch.int64) if x.dtype == getattr(torch, "uint64", None) else x.to(torch.int64)


@pytest.mark.parametrize("dtype", WIDE_UINTS, ids=str)
@pytest.mark.parametrize("n", [1, TILE + 1, 5 * TILE])
def test_sum_unsigned(dtype, n):
    # sums of uint16/32/64 are int64, as torch's; items past the signed range must not sign-extend
    x = make_data("special", n, dtype)
    ref = as_int64(x.cpu()).sum()
    assert_equal(run_sum(x, small_policy()), ref)
    out = R.sum(x)
    assert out.dtype == torch.int64
    assert_equal(out.cpu(), ref)
    x2 = make_data("special", 3 * n, dtype).reshape(3, n)
    for dim in ([1], [0], None):
        out = torch.ops.tritoncub.sum(x2, dim)
        ref = as_int64(x2.cpu()).sum(dim) if dim is not None else as_int64(x2.cpu()).sum()
        assert out.dtype == torch.int64
        assert_equal(out.cpu(), ref, msg=f"dim={dim}")
    # the other reductions refuse them, as torch's do on CUDA
    with pytest.raises(TypeError, match="supported dtypes are"):
        torch.ops.tritoncub.amax(x2)


ADVERSARIAL = [(d, k) for d in (torch.float32, torch.int32, torch.float16, torch.bool, torch.uint8, torch.int64,
                               torch.bfloat16, torch.float64, torch.int16)
               for k in ("special", "equal", "few_unique")] + [(torch.float32, "sorted"), (torch.int8, "reversed")]


@pytest.mark.parametrize("dtype,kind", ADVERSARIAL)
@pytest.mark.parametrize("op", ["min", "max", "argmin", "argmax"])
def test_minmax_arg_adversarial(dtype, kind, op):
    n = 3 * TILE + 7
    x = make_data(kind, n, dtype)
    if op in ("min", "max"):
        out = run_minmax(x, op, small_policy())
        ref = torch.amin(x) if op == "min" else torch.amax(x)
        assert_equal(out, ref)
    else:
        out = run_arg(x, op, small_policy())
        xr = x.to(torch.uint8) if dtype == torch.bool else x   # torch has no bool argmin
        ref = torch.argmin(xr) if op == "argmin" else torch.argmax(xr)
        assert_equal(out, ref)


@pytest.mark.parametrize("where", [0, TILE, 4 * TILE + 3])
def test_nan_positions(where):
    n = 4 * TILE + 5
    x = torch.randn(n, device=DEVICE)
    x[where] = math.nan
    x[(where + 7) % n] = math.nan
    assert_equal(run_minmax(x, "max", small_policy()), torch.amax(x))
    assert_equal(run_minmax(x, "min", small_policy()), torch.amin(x))
    assert_equal(run_arg(x, "argmax", small_policy()), torch.argmax(x))
    assert_equal(run_arg(x, "argmin", small_policy()), torch.argmin(x))
    assert math.isnan(float(run_sum(x, small_policy())))


def test_arg_ties_first_index():
    x = torch.zeros(6 * TILE + 3, device=DEVICE)
    x[[5, TILE + 5, 3 * TILE, 6 * TILE + 1]] = 4.0
    x[[7, 2 * TILE + 9]] = -4.0
    assert int(run_arg(x, "argmax", small_policy())) == 5
    assert int(run_arg(x, "argmin", small_policy())) == 7
    y = torch.full((5 * TILE,), -math.inf, device=DEVICE)
    assert int(run_arg(y, "argmax", small_policy())) == 0
    assert int(run_arg(-y, "argmin", small_policy())) == 0


CONFIGS = [dict(GRID_MAPPING=m, LOAD=ld, CACHE_MODIFIER=c, EVICTION=e, num_stages=s, PROGRAMS_PER_SM=p)
           for m, ld, c, e, s, p in itertools.product(["rake", "strip_mine"], ["vectorize", "direct"], ["", ".cg"],
                                                      ["", "evict_first"], [1, 3], [1, 2])]
CONFIGS = [c for c in CONFIGS if R._valid({"BLOCK_ITEMS": 4096, "num_warps": 8, **c})]
CONFIGS = covering_sample(CONFIGS)  # every value, and every pair of values, of the launch-relevant keys


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_policy_configs(cfg):
    n = 11 * TILE + 13   # 11 full tiles over 4 or 8 programs: uneven shares
    x = make_data("random", n, torch.float32)
    pol = small_policy(**cfg)
    assert_close(run_sum(x, pol), ref_sum(x), rtol=1e-5, atol=1e-3)
    assert_equal(run_arg(x, "argmax", pol), torch.argmax(x))
    assert_equal(run_minmax(x, "min", pol), torch.amin(x))


@pytest.mark.parametrize("block", [32, 128, 256])
def test_tile_sizes(block):
    n = 9 * block + 1
    x = make_data("special", n, torch.float32)
    x = torch.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0)
    pol = small_policy(BLOCK_ITEMS=block)
    # (against the float64 sum, within a float32 sum's rounding bound: a sum of 2305 items that cancels missed
    # atol=1e-3 in ~0.1% of draws; the bound, ~0.3 / 4 / 17 at 289 / 1153 / 2305 items, is below a random
    # item's ~80: a dropped or doubled tile fails, a dropped item unless it lies that close to zero)
    assert_sum_close(run_sum(x, pol), x)
    # (and exactly on the items rounded to integers: every partial sum is then exact in any order (|sum| < 2^24),
    # so any dropped, doubled or extra non-zero item fails)
    xi = x.round()
    assert_equal(run_sum(xi, pol), xi.double().sum().float())
    assert_equal(run_arg(x, "argmin", pol), torch.argmin(x))


def test_every_registered_policy_bucket_launches():
    # the built-in policy (fallback under the interpreter, tuned file on a GPU) for each bucket kind
    x = make_data("random", 1000, torch.float32)
    assert_close(R.sum(x), ref_sum(x), rtol=1e-5, atol=1e-3)
    assert_equal(R.max(x), torch.amax(x))
    assert_equal(R.argmin(x)[1], torch.argmin(x))
    for b in R.REDUCE_BUCKETS:
        p = policy.select("reduce", None if not GPU else x.device, b)
        assert R._valid(p.as_dict())


def test_device_api_results():
    x = make_data("random", 300, torch.float16)
    s = R.sum(x)
    assert s.dtype == torch.float16 and s.shape == ()
    assert_close(s, x.double().sum().half(), rtol=1e-2, atol=1e-1)
    assert R.sum(x, dtype=torch.float32).dtype == torch.float32
    xi = make_data("random", 300, torch.int32)
    assert_equal(R.sum(xi), xi.sum())
    assert_equal(R.sum(xi, dtype=torch.int32), xi.sum(dtype=torch.int32))
    xb = make_data("random", 300, torch.bool)
    assert_equal(R.sum(xb), xb.sum())
    assert_equal(R.max(xb), xb.amax())
    v, i = R.argmax(xi)
    assert_equal(i, torch.argmax(xi))
    assert int(v) == int(xi.max())
    assert_equal(R.sum(torch.empty(0, device=DEVICE)), torch.tensor(0.0, device=DEVICE))
    with pytest.raises(ValueError, match="empty"):
        R.min(torch.empty(0, device=DEVICE))
    with pytest.raises(ValueError, match="empty"):
        R.argmax(torch.empty(0, device=DEVICE))


def test_int_sum_no_overflow():
    x = torch.full((2 * TILE + 5,), 2**31 - 1, dtype=torch.int32, device=DEVICE)
    assert_equal(run_sum(x, small_policy()), x.sum())
    y = torch.full((300,), 2**62, dtype=torch.int64, device=DEVICE)   # wraps like torch
    assert_equal(R.sum(y), y.sum())


def test_non_contiguous_input():
    x = make_data("random", 40 * 10, torch.float32).reshape(40, 10).t()
    assert_close(R.sum(x), x.double().sum().float(), rtol=1e-5, atol=1e-3)
    assert_equal(R.argmax(x)[1], torch.argmax(x))


def test_deterministic():
    x = make_data("random", 7 * TILE + 3, torch.float32) * 1e3
    a = [run_sum(x, small_policy(PROGRAMS_PER_SM=2)) for _ in range(3)]
    assert all(torch.equal(a[0], b) for b in a)


# ---- user combine functions ----

@triton.jit
def add_fn(a, b):
    return a + b


@triton.jit
def mul_fn(a, b):
    return a * b


@triton.jit
def square_fn(x):
    return x * x


@triton.jit
def argmax_pair(a, ai, b, bi):
    take = (a > b) | ((a == b) & (ai < bi))
    return tl.where(take, a, b), tl.where(take, ai, bi)


@triton.jit
def minmax_pair(amin, amax, bmin, bmax):
    return tl.minimum(amin, bmin), tl.maximum(amax, bmax)


@triton.jit
def dup_fn(x):
    return x, x


# (4097 and 70001: several full tiles per program on a GPU as well -- the compiled multi-tile loop once
# failed to build -- and under the interpreter's 128-item tiles)
@pytest.mark.parametrize("n", [0, 1, 5, 127, 128, 129, 1000, 4097, 70001])
def test_user_reduce_init_applied_once(n):
    x = make_data("random", n, torch.float64)
    out = R.reduce(x, add_fn, 10.0)
    assert out.dtype == torch.float64
    assert_close(out, x.sum() + 10.0, rtol=1e-10, atol=1e-9)
    xi = make_data("random", n, torch.int64) % 7
    assert_equal(R.reduce(xi, add_fn, 3), xi.sum() + 3)


def test_user_reduce_init_must_fit_its_accumulator():
    """An init the accumulator cannot hold -- out of range, a fraction for an integer one -- is refused,
    not wrapped or truncated (an int64 sum with init 0.7 once gave the sum with init 0); a whole float
    is taken, and a bool accumulator takes any number."""
    xi = torch.tensor([-3, -2], device=DEVICE)
    with pytest.raises(ValueError, match="not an integer"):
        R.reduce(xi, add_fn, 0.7)
    with pytest.raises(ValueError, match="does not fit int8"):
        R.reduce(xi.to(torch.int8), add_fn, 300)
    with pytest.raises(ValueError, match="does not fit uint8"):   # (was wrapped to 255)
        R.reduce(torch.tensor([7, 2, 3], dtype=torch.uint8, device=DEVICE), add_fn, -1)
    assert_equal(R.reduce(xi, add_fn, 2.0), torch.tensor(-3))
    with pytest.raises(ValueError, match="not an integer"):
        R.transform_reduce(xi, None, add_fn, 1.5)
    # a one-item tensor init is checked the same way by its value (host tensors; a GPU tensor by its
    # dtype: tests/test_utils.py); it was cast unchecked (0.7 -> 0, 2**40 -> 0, NaN -> INT_MIN)
    with pytest.raises(ValueError, match="not an integer"):
        R.reduce(xi, add_fn, torch.tensor(0.7))
    with pytest.raises(ValueError, match="not an integer"):
        R.reduce(xi, add_fn, torch.tensor(float("nan")))
    with pytest.raises(ValueError, match="does not fit int32"):
        R.reduce(xi.to(torch.int32), add_fn, torch.tensor(2**40))
    with pytest.raises(ValueError, match="one-item tensor"):
        R.reduce(xi, add_fn, torch.tensor([1, 2]))
    with pytest.raises(TypeError, match="init must be a number"):
        R.reduce(xi, add_fn, "a")
    assert_equal(R.reduce(xi, add_fn, torch.tensor(2.0)), torch.tensor(-3))


def test_user_reduce_product_and_half_accumulator():
    x = torch.full((300,), 1.001, dtype=torch.float16, device=DEVICE)
    out = R.reduce(x, mul_fn, 1.0)
    assert out.dtype == torch.float32
    assert_close(out, x.float().prod(), rtol=1e-2)


def test_user_reduce_tuples():
    x = make_data("random", 777, torch.float32)
    idx = torch.arange(777, device=DEVICE)
    v, i = R.reduce((x, idx), argmax_pair, (-math.inf, 0))
    assert_equal(i, torch.argmax(x))
    assert_equal(v, torch.amax(x))
    mn, mx = R.transform_reduce(x, dup_fn, minmax_pair, (math.inf, -math.inf), dtype=(torch.float32, torch.float32))
    assert_equal(mn, torch.amin(x))
    assert_equal(mx, torch.amax(x))


@triton.jit
def or_fn(a, b):
    return a | b


@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.bool], ids=str)
@pytest.mark.parametrize("n", [1, 3, 129, 1000])
def test_user_reduce_bool_accumulator(dtype, n):
    """A bool accumulator takes each item as ``item != 0`` (256, 0.5, -3 and NaN are true), as torch
    converts to bool, not its low 8 bits; the result is a bool tensor; a non-zero init is true."""
    gen = torch.Generator().manual_seed(n)
    vals = torch.tensor([0, 256, 0.5, -3, float("nan"), 512], dtype=torch.float64)
    idx = torch.randint(0, len(vals), (n,), generator=gen)
    for density in (0.0, 0.01, 1.0):   # all zero, one non-zero item in the middle, random
        x = torch.where(torch.rand(n, generator=gen) < density, vals[idx], 0.0)
        if density == 0.01:
            x[n // 2] = 256.0
        if dtype != torch.float32:
            x = torch.nan_to_num(x, nan=1024.0)
        x = x.to(dtype).to(DEVICE)
        out = R.reduce(x, or_fn, False, dtype=torch.bool)
        assert out.dtype == torch.bool and out.shape == ()
        assert bool(out) == bool((x.cpu().double() != 0).any()), (density, x.cpu().tolist()[:8])
        assert bool(R.reduce(x, or_fn, 256, dtype=torch.bool))   # init 256 is true, not 0


@pytest.mark.parametrize("n", [256, 512, 300])
def test_user_reduce_bool_accumulator_counting_combine(n):
    """``a + b`` over a bool accumulator is torch's bool sum (any True item: True), however many True
    items there are (held in uint8, 256 of them wrapped back to False)."""
    from tritoncub.device import segmented_reduce as S
    for x, dtype in ((torch.ones(n, dtype=torch.bool), None), (torch.ones(n), torch.bool)):
        x = x.to(DEVICE)
        out = R.reduce(x, add_fn, False, dtype=dtype)
        assert out.dtype == torch.bool and bool(out), (n, dtype)
        rows = S.reduce_rows(x.view(2, n // 2), "user", combine_fn=add_fn, init=False, dtype=dtype)
        assert rows.dtype == torch.bool and rows.cpu().tolist() == [True, True]
    x = torch.ones(n, dtype=torch.bool, device=DEVICE)
    assert bool(R.transform_reduce(x, None, add_fn, False))


def test_transform_reduce_sum_of_squares():
    x = make_data("random", 555, torch.float32)
    out = R.transform_reduce(x, square_fn, add_fn, 0.0)
    assert_close(out, (x.double() ** 2).sum().float(), rtol=1e-5)


def test_user_reduce_errors():
    x = make_data("random", 10, torch.float32)
    with pytest.raises(ValueError, match="differ in size"):
        R.reduce((x, x[:5]), argmax_pair, (0.0, 0))
    with pytest.raises(ValueError, match="operand"):
        R.reduce(x, add_fn, (0.0, 0.0))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
@pytest.mark.parametrize("shape,dim", [((3, TILE + 5), None), ((3, TILE + 5), [1]), ((3, TILE + 5), [0]),
                                       ((2, 3, 4), [0, 2]), ((), None)])
def test_sum_complex(dtype, shape, dim):
    # torch sums complex tensors: ours sums the real and imaginary parts as two float sums
    x = torch.randn(shape, dtype=dtype)
    if x.numel() > 3:
        x.view(-1)[1] = complex(math.nan, 1.0)   # NaN propagates into its part only
        x.view(-1)[2] = complex(math.inf, -0.0)
    xd = x.to(DEVICE)
    for keepdim in (False, True):
        out = torch.ops.tritoncub.sum(xd, dim, keepdim)
        ref = torch.sum(x, dim if dim is not None else (), keepdim=keepdim) if dim is not None or keepdim \
            else torch.sum(x)
        assert out.dtype == ref.dtype and out.shape == ref.shape
        assert_close(torch.view_as_real(out).cpu(), torch.view_as_real(ref), rtol=1e-5, atol=1e-5)
    assert_close(torch.view_as_real(R.sum(xd)).cpu(), torch.view_as_real(torch.sum(x)), rtol=1e-5, atol=1e-5)
    # a conjugate view is resolved first; a real dtype sums the real parts (torch casts x to it first)
    assert_close(torch.view_as_real(R.sum(xd.conj())).cpu(), torch.view_as_real(torch.sum(x.conj())),
                 rtol=1e-5, atol=1e-5)
    with warnings.catch_warnings():   # (torch's cast warns, once per process)
        warnings.simplefilter("ignore")
        out = torch.ops.tritoncub.sum(xd, dim, False, torch.float64)
    ref = torch.sum(x.real.double(), dim) if dim is not None else x.real.double().sum()
    assert out.dtype == torch.float64
    assert_close(out.cpu(), ref, rtol=1e-6, atol=1e-6)
    if x.dim():   # (opcheck's comparisons take no NaN)
        xf = torch.randn(shape, dtype=dtype, device=DEVICE, requires_grad=True)
        torch.library.opcheck(torch.ops.tritoncub.sum.default, (xf, dim, False, None))


def test_bad_dtype():
    x = torch.zeros(4, dtype=torch.complex32, device=DEVICE)
    with pytest.raises(TypeError, match="supported dtypes are"):
        R.sum(x)
    with pytest.raises(TypeError, match="supported dtypes are"):
        torch.ops.tritoncub.sum(x)
    if hasattr(torch, "uint16"):
        with pytest.raises(TypeError, match="supported dtypes are"):
            torch.ops.tritoncub.amax(x.real.to(torch.uint16))
    with pytest.raises(TypeError):
        R.sum([1, 2, 3])


def test_user_function_arity():
    # a user function of the wrong arity is named on the host, not left to fail inside Triton's compiler
    x = torch.ones(8, device=DEVICE)
    with pytest.raises(TypeError, match=r"combine_fn must take 2 positional arguments \(a, b\); square_fn takes 1"):
        R.reduce(x, square_fn, 0.0)
    with pytest.raises(TypeError, match="combine_fn must take 4 positional arguments"):
        R.reduce((x, x), add_fn, (0.0, 0.0))
    with pytest.raises(TypeError, match="transform_fn must take 1 positional argument .the item.; add_fn takes 2"):
        R.transform_reduce(x, add_fn, add_fn, 0.0)
    with pytest.raises(TypeError, match="must be a @triton.jit function"):
        R.reduce(x, lambda a, b: a + b, 0.0)
    assert R.reduce((x, x), minmax_pair, (5.0, -5.0)) is not None   # 4 arguments for k = 2: accepted


def test_cpu_tensor_without_interpreter(monkeypatch):
    from tritoncub import _utils
    monkeypatch.setattr(_utils, "_INTERPRETER", False)
    with pytest.raises(ValueError, match="CPU tensor"):
        R.sum(torch.ones(3))


# ---- torch operators ----

SHAPES_DIMS = [((5, 7), None), ((5, 7), [1]), ((5, 7), [0]), ((3, 4, 5), [0, 2]), ((3, 4, 5), [-1, 0]),
               ((3, 4, 5), [1]), ((2, 3, 4, 5), [1, 3]), ((6,), [0]), ((3, 4), []), ((), None), ((0, 3), [1]),
               ((4, 0), [1])]


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_op(shape, dim, keepdim):
    x = torch.randn(shape, device=DEVICE)
    out = torch.ops.tritoncub.sum(x, dim, keepdim)
    ref = torch.sum(x, dim=dim if dim is not None else (), keepdim=keepdim) if dim is not None else \
        (torch.sum(x) if not keepdim else torch.sum(x, dim=tuple(range(x.dim())), keepdim=True))
    assert_close(out, ref, rtol=1e-5, atol=1e-5)


def test_sum_op_dtypes():
    x = make_data("random", 60, torch.int16).reshape(6, 10)
    assert_equal(torch.ops.tritoncub.sum(x, [1]), x.sum(1))
    assert_equal(torch.ops.tritoncub.sum(x, [1], dtype=torch.int16), x.sum(1, dtype=torch.int16))
    h = make_data("random", 60, torch.bfloat16).reshape(6, 10)
    out = torch.ops.tritoncub.sum(h, [0], dtype=torch.float32)
    assert out.dtype == torch.float32
    assert_close(out, h.float().sum(0), rtol=1e-5, atol=1e-4)
    b = make_data("random", 60, torch.bool).reshape(3, 20)
    assert_equal(torch.ops.tritoncub.sum(b, [1]), b.sum(1))
    # dtype= casts the items first where the cast can change them (torch sums x.to(dtype))
    f = torch.tensor([7e4, -7e4, 1.0], device=DEVICE)
    i = torch.tensor([70000, -70000, 300, 4], dtype=torch.int32, device=DEVICE)
    for t, d, dim in [(f, torch.float16, None), (i, torch.float16, None), (i, torch.int8, None),
                      (f, torch.bool, None), (torch.zeros(4, device=DEVICE), torch.bool, [0]),
                      (x, torch.bool, [1]), (x.float(), torch.int32, [1]), (i, torch.float64, None)]:
        out = torch.ops.tritoncub.sum(t, dim, False, d)
        ref = torch.sum(t.cpu(), dim=dim if dim is not None else (), dtype=d)
        assert_equal(out.cpu(), ref, msg=f"{t.dtype} -> {d}")


def test_sum_op_dtype_cast_repeated():
    """A narrowing dtype= casts the items on every call (on a GPU the second call of a shape goes through
    the repeat-call memo, which must not skip the cast)."""
    x = torch.tensor([[2048.9, -2048.0], [1.5, 70000.0]], device=DEVICE)
    ref = torch.sum(x.cpu(), dim=1, dtype=torch.float16)
    for _ in range(3):
        assert_equal(torch.ops.tritoncub.sum(x, [1], False, torch.float16).cpu(), ref)


@pytest.mark.parametrize("items,dtype", [([1e5, -1e5, 1.0], torch.float16), ([2**24 + 1, -2**24], torch.float32),
                                         ([300, 1], torch.int8)], ids=str)
def test_device_sum_casts_a_narrowing_dtype_first(items, dtype):
    # R.sum, as torch.sum and the operator: the items are cast to dtype before the sum (1e5 -> inf in
    # fp16 gives NaN; 2^24 + 1 rounds to 2^24 in fp32; 300 wraps to 44 in int8), whatever the order
    x = torch.tensor(items, dtype=torch.float32 if isinstance(items[0], float) else torch.int32, device=DEVICE)
    ref = torch.sum(x.cpu(), dtype=dtype)
    assert_equal(R.sum(x, dtype=dtype).cpu(), ref)
    assert_equal(torch.ops.tritoncub.sum(x, None, False, dtype).cpu(), ref)
    with pytest.raises(TypeError, match="unsupported result dtype"):
        R.sum(x, dtype="float32")


@pytest.mark.parametrize("shape,dim", [s for s in SHAPES_DIMS if 0 not in s[0] and s[0] != ()])
@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_amin_op(shape, dim, op):
    x = make_data("special", math.prod(shape), torch.float32).reshape(shape)
    out = getattr(torch.ops.tritoncub, op)(x, dim, True)
    ref = getattr(torch, op)(x, dim=dim if dim is not None else (), keepdim=True)
    assert_equal(out, ref)


@pytest.mark.parametrize("shape,dim", [((5, 7), None), ((5, 7), 1), ((5, 7), 0), ((3, 4, 5), -2), ((6,), 0),
                                       ((), None), ((), 0)])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_arg_op(shape, dim, op, keepdim):
    x = make_data("few_unique", max(math.prod(shape), 1), torch.float32)[:math.prod(shape)].reshape(shape)
    if x.numel() > 3:
        x.view(-1)[2] = math.nan
    out = getattr(torch.ops.tritoncub, op)(x, dim, keepdim)
    ref = getattr(torch, op)(x, dim=dim, keepdim=keepdim)
    assert_equal(out, ref)


@pytest.mark.parametrize("shape,dim,route", [((6, 40), 0, "columns"), ((3, 5, 40), 1, "columns"), ((6, 40), 1, "rows"),
                                             ((3, 5, 7), [1, 2], "rows"), ((3, 5, 7), [0, 2], None)], ids=str)
@pytest.mark.parametrize("op", ["sum", "amax", "amin", "argmax", "argmin"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_ops_repeated_calls_take_the_remembered_route(shape, dim, route, op, keepdim):
    """A repeated call of a reduction over some dims (same op, shape, strides, dtype, dim, keepdim) takes
    the route its first call took (rows or columns of x in place) without the argument handling: results
    equal torch's on fresh data every call, fp16 sums included; reductions through a copy (dims that are
    neither trailing nor one run) are not remembered."""
    if op.startswith("arg") and isinstance(dim, list):   # (one dim: the first, not the last, of the list)
        dim, route = dim[0], "columns"
    fn = getattr(torch.ops.tritoncub, op)
    seen = dim if op.startswith("arg") or isinstance(dim, list) else [dim]   # (the schema's int[1] takes a list)
    for dtype in (torch.float32, torch.float16, torch.int32):
        if op == "sum" and dtype == torch.int32:
            continue
        R._DIMS_CALLS.clear()
        for _ in range(3):
            # (fp16 sums of random items: special ones would cancel large values, an order-dependent rounding)
            kind = "few_unique" if not dtype.is_floating_point else "random" if op == "sum" else "special"
            x = make_data(kind, math.prod(shape), dtype).reshape(shape)
            out = fn(x, dim, keepdim)
            ref = getattr(torch, op)(x, dim=dim, keepdim=keepdim)
            if op == "sum" and dtype != torch.float32:
                assert out.dtype == ref.dtype
                assert_close(out.float(), torch.sum(x.float(), dim=dim, keepdim=keepdim).to(dtype).float(),
                             rtol=2e-3, atol=2e-2)
            elif op == "sum":
                # (against the float64 sum, within a float32 sum's rounding bound, ~(m - 1) * u * sum|x| for
                # m items: a row whose items cancel defeats any fixed atol; the bound, ~0.01 at most for these
                # 5 to 40 items of ~100, is far below an item: a dropped or doubled one fails)
                assert out.dtype == ref.dtype
                assert_sum_close(out, x, dim=dim, keepdim=keepdim)
            else:
                assert_equal(out, ref)
        key = R._dims_call(op, x, seen, keepdim)
        assert (key in R._DIMS_CALLS) == (route is not None)
        if route is not None:
            assert R._DIMS_CALLS[key][0] == route


def test_remembered_columns_route_falls_back(monkeypatch):
    """A remembered columns route that no longer applies (the grid limit lowered: reduce_columns declines)
    is forgotten and the call takes the full path."""
    from tritoncub.device import segmented_reduce as S
    x = make_data("random", 3 * 4 * 40, torch.float32).reshape(3, 4, 40)
    R._DIMS_CALLS.clear()
    assert_equal(torch.ops.tritoncub.amax(x, [1]), x.amax(1))
    key = R._dims_call("amax", x, [1], False)
    assert R._DIMS_CALLS[key][0] == "columns"
    monkeypatch.setattr(S, "_GRID_X_MAX", 2)   # (3 outer extents of at least one column block each)
    assert_equal(torch.ops.tritoncub.amax(x, [1]), x.amax(1))
    assert key not in R._DIMS_CALLS


def test_ops_non_contiguous():
    x = torch.randn(6, 8, 5, device=DEVICE).permute(2, 0, 1)[:, ::2]
    assert_close(torch.ops.tritoncub.sum(x, [1]), x.sum(1), rtol=1e-5, atol=1e-5)
    assert_equal(torch.ops.tritoncub.amax(x, [0, 2]), x.amax((0, 2)))
    assert_equal(torch.ops.tritoncub.argmin(x, 2), x.argmin(2))


def test_empty_ops():
    e = torch.empty(0, 4, device=DEVICE)
    assert_equal(torch.ops.tritoncub.sum(e, [0]), e.sum(0))
    assert_equal(torch.ops.tritoncub.amax(e, [1]), e.amax(1))
    # torch's error types: a dim of size 0 named -> IndexError; an empty full reduction -> RuntimeError
    # for amax/amin, IndexError for argmax/argmin
    cases = [("amax", (e, [0])), ("amin", (e, [1, 0])), ("amax", (e, None)), ("amin", (e, [])),
             ("argmax", (torch.empty(0, device=DEVICE),)), ("argmin", (e, 0))]
    for name, args in cases:
        ref_args = [a.cpu() if isinstance(a, torch.Tensor) else a for a in args]
        if len(ref_args) > 1 and isinstance(ref_args[1], list) and not ref_args[1]:
            ref_args[1] = ()
        with pytest.raises(Exception) as ref:
            getattr(torch, name)(*[a for a in ref_args if a is not None])
        with pytest.raises(type(ref.value), match=r"Expected reduction dim"):
            getattr(torch.ops.tritoncub, name)(*args)


def test_autograd():
    x = torch.randn(4, 6, device=DEVICE, requires_grad=True)
    y = x.detach().clone().requires_grad_(True)
    (torch.ops.tritoncub.sum(x, [1]) * torch.arange(4.0, device=DEVICE)).sum().backward()
    (y.sum(1) * torch.arange(4.0, device=DEVICE)).sum().backward()
    assert_close(x.grad, y.grad)
    # ties share the gradient evenly, as torch
    base = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]], device=DEVICE)
    for op in ("amax", "amin"):
        a = base.clone().requires_grad_(True)
        b = base.clone().requires_grad_(True)
        getattr(torch.ops.tritoncub, op)(a, [1]).sum().backward()
        getattr(torch, op)(b, 1).sum().backward()
        assert_close(a.grad, b.grad)
        a.grad = None
        b.grad = None
        getattr(torch.ops.tritoncub, op)(a, None).backward()
        getattr(torch, op)(b).backward()
        assert_close(a.grad, b.grad)


@pytest.mark.parametrize("name,args", [
    ("sum", (torch.randn(3, 5), [1], False, None)), ("sum", (torch.randn(3, 5), None, True, torch.float64)),
    ("sum", (torch.arange(15).reshape(3, 5).to(UINT_DTYPES[-1]), [0], False, None)),
    ("amax", (torch.randn(3, 5), [0], False)), ("amin", (torch.randn(3, 5), None, True)),
    ("argmax", (torch.randn(3, 5), 1, False)), ("argmin", (torch.randn(3, 5), None, False)),
])
def test_opcheck(name, args):
    args = tuple(a.to(DEVICE) if isinstance(a, torch.Tensor) else a for a in args)
    if name in ("sum", "amax", "amin") and args[0].is_floating_point():
        args = (args[0].requires_grad_(True),) + args[1:]
    torch.library.opcheck(getattr(torch.ops.tritoncub, name).default, args)


def test_torch_compile_fullgraph():
    def f(x):
        return torch.ops.tritoncub.sum(x, [1]) + torch.ops.tritoncub.amax(x, [1]) + \
            torch.ops.tritoncub.argmax(x, 1).float()
    x = torch.randn(3, 8, device=DEVICE)
    cf = torch.compile(f, fullgraph=True, backend="eager" if not GPU else "inductor")
    assert_close(cf(x), x.sum(1) + x.amax(1) + x.argmax(1).float(), rtol=1e-5, atol=1e-5)


# ---- GPU: large sizes ----

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.float64])
def test_gpu_large_sum(dtype):
    n = (1 << 24) + 12345
    x = make_data("random", n, dtype)
    out = R.sum(x)
    ref = x.double().sum() if dtype.is_floating_point else x.sum()
    if dtype.is_floating_point:
        assert_close(out.double(), ref, rtol=1e-4 if dtype != torch.bfloat16 else 1e-2, atol=1.0)
    else:
        assert_equal(out, ref)


@pytest.mark.gpu
def test_gpu_deterministic_and_large_arg():
    n = (1 << 26) + 7
    x = torch.randn(n, device="cuda") * 1e4
    a = R.sum(x)
    for _ in range(5):
        assert torch.equal(R.sum(x), a)
    x[n - 3] = 1e9
    x[1234567] = 1e9
    assert int(R.argmax(x)[1]) == 1234567
    x[99] = math.nan
    assert int(R.argmax(x)[1]) == 99 and int(R.argmin(x)[1]) == 99


@pytest.mark.gpu
def test_gpu_many_streams_counter():
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    x = torch.randn(1 << 22, device="cuda")
    ref = R.sum(x)
    outs = []
    torch.cuda.synchronize()
    for _ in range(10):
        with torch.cuda.stream(s1):
            outs.append(R.sum(x))
        with torch.cuda.stream(s2):
            outs.append(R.sum(x))
    torch.cuda.synchronize()
    assert all(torch.equal(o, ref) for o in outs)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.bool], ids=str)
def test_gpu_builtin_plan_reuse(dtype):
    """Repeated device-wide reductions of one size reuse a recorded launch: fresh data each call,
    earlier results poisoned, an unaligned view (another plan), another stream (its own counter and
    partials), a policy override in between."""
    rtol = 1e-2 if dtype == torch.bfloat16 else 2e-3
    n = (1 << 20) + 3
    for trial in range(3):
        base = torch.randn(n + 4, device="cuda") * 100
        buf = base > 0 if dtype == torch.bool else base.to(dtype)
        x = buf[trial % 2: trial % 2 + n]
        for fn, ref in ((R.sum, torch.sum), (R.max, torch.max), (R.min, torch.min)):
            got = fn(x)
            want = ref(x)
            if dtype.is_floating_point:
                torch.testing.assert_close(got.double().cpu(), want.double().cpu(), rtol=rtol, atol=1e-1)
            else:
                assert int(got) == int(want)
            got.fill_(0)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = (torch.randn(n, device="cuda") * 10).to(dtype) if dtype != torch.bool else torch.rand(n, device="cuda") > .5
        got = R.sum(y)
    s.synchronize()
    assert torch.allclose(got.double().cpu(), torch.sum(y).double().cpu(), rtol=rtol, atol=1e-1)
    with policy.override("reduce", {"BLOCK_ITEMS": 256, "num_warps": 4}):
        before = policy.override_hits("reduce")
        assert torch.allclose(R.sum(y).double().cpu(), torch.sum(y).double().cpu(), rtol=rtol, atol=1e-1)
        assert policy.override_hits("reduce") > before


def test_ops_take_a_bare_int_dim_and_bool_sum_dtype():
    """``dim`` may be an int as in torch (schema ``int[1]?``); a bool-dtype sum is a logical or, also
    over every dim."""
    x = make_data("random", 60, torch.float32).view(3, 4, 5)
    # (against the float64 sums, within a float32 sum's rounding bound: sums of 4 items of ~100 round by up to
    # ~1e-5, a fixed atol's size, so an order other than torch's (a GPU's tree) can fail a sum near zero; the
    # bound, ~6e-5, is far below an item's ~80: a dropped or doubled item fails)
    assert_sum_close(torch.ops.tritoncub.sum(x, 1), x, dim=1)
    assert_equal(torch.ops.tritoncub.amax(x, -1, True), x.amax(-1, True))
    assert_equal(torch.ops.tritoncub.amin(x, 0), x.amin(0))
    b = torch.tensor([[True, False], [False, False]], device=DEVICE)
    for dim in (None, [1], 0):
        ref = torch.sum(b, dtype=torch.bool) if dim is None else torch.sum(b, dim, dtype=torch.bool)
        assert_equal(torch.ops.tritoncub.sum(b, dim, False, torch.bool), ref)
    assert_equal(torch.ops.tritoncub.sum(torch.tensor([256, 0], device=DEVICE, dtype=torch.int32), None, False,
                                         torch.bool), torch.tensor(True))


def test_fakes_check_arguments_as_the_ops():
    """Under FakeTensorMode (torch.compile's tracing) the operators refuse what the real ones refuse."""
    ops = torch.ops.tritoncub
    with torch.device(DEVICE), torch._subclasses.fake_tensor.FakeTensorMode():   # (fakes of GPU tensors on a GPU)
        with pytest.raises(RuntimeError, match="Expected reduction dim"):
            ops.amax(torch.empty(0, 3))
        with pytest.raises(IndexError, match="non-zero size"):
            ops.amin(torch.empty(0, 3), [0])
        with pytest.raises(RuntimeError, match="bool"):
            ops.argmax(torch.ones(3, dtype=torch.bool))
        with pytest.raises(IndexError, match="Expected reduction dim"):
            ops.argmin(torch.empty(0))
        with pytest.raises(TypeError, match="supported dtypes"):
            ops.sum(torch.empty(3, dtype=torch.complex32))
        assert ops.sum(torch.empty(3, dtype=torch.complex64), None, False, torch.float32).dtype == torch.float32
        assert ops.sum(torch.empty(3), None, False, torch.complex64).dtype == torch.complex64
        assert ops.sum(torch.empty(3, 4), 1).shape == (3,)
