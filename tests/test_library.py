"""tritoncub._library.custom_op: operators defined through torch.library.Library behave like
torch.library.custom_op ones — defaults reach setup_context, gradients flow through
register_autograd, an op without a formula raises on backward, fake tensors and opcheck work."""
import pytest
import torch

from helpers import DEVICE, assert_close
from tritoncub._library import custom_op


@custom_op("tritoncub::_test_scale_add")
def _scale_add(x: torch.Tensor, y: torch.Tensor, scale: float = 2.0, add_y: bool = True) -> torch.Tensor:
    return x * scale + (y if add_y else 0)


@_scale_add.register_fake
def _(x, y, scale=2.0, add_y=True):
    return torch.empty_like(x)


_SEEN = []


def _setup(ctx, inputs, output):
    _SEEN.append(len(inputs))
    ctx.scale, ctx.add_y = inputs[2], inputs[3]


def _backward(ctx, grad):
    return grad * ctx.scale, (grad if ctx.add_y else None), None, None


_scale_add.register_autograd(_backward, setup_context=_setup)


@custom_op("tritoncub::_test_no_grad_formula")
def _no_formula(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@_no_formula.register_fake
def _(x):
    return torch.empty_like(x)


@custom_op("tritoncub::_test_not_differentiable", differentiable=False)
def _not_differentiable(x: torch.Tensor) -> torch.Tensor:
    return x * 3


@_not_differentiable.register_fake
def _(x):
    return torch.empty_like(x)


def _data(*shape):
    return torch.randn(*shape, dtype=torch.float64, device=DEVICE)


def test_forward_and_defaults():
    x, y = _data(5), _data(5)
    assert_close(torch.ops.tritoncub._test_scale_add(x, y), x * 2 + y)
    assert_close(_scale_add(x, y, 3.0, False), x * 3)
    assert_close(torch.ops.tritoncub._test_scale_add(x, y, add_y=False), x * 2)


def test_autograd_sees_every_input_and_matches_torch():
    x = _data(7).requires_grad_(True)
    y = _data(7).requires_grad_(True)
    _SEEN.clear()
    out = torch.ops.tritoncub._test_scale_add(x, y)      # trailing defaults left out by the caller
    assert _SEEN == [4]                                  # setup_context got all four inputs
    g = _data(7)
    out.backward(g)
    assert_close(x.grad, 2 * g)
    assert_close(y.grad, g)
    assert torch.autograd.gradcheck(lambda a, b: _scale_add(a, b, 1.5, True), (x.detach().requires_grad_(True),
                                                                             y.detach().requires_grad_(True)))


def test_no_formula_raises_on_backward_only():
    x = _data(3).requires_grad_(True)
    out = _no_formula(x)                                 # the forward works
    assert_close(out.detach(), x.detach() + 1)
    with pytest.raises(RuntimeError, match="no autograd formula"):
        out.sum().backward()


def test_not_differentiable_outputs_do_not_require_grad():
    # (as torch's non-differentiable operators, e.g. torch.histc)
    x = _data(3).requires_grad_(True)
    out = _not_differentiable(x)
    assert not out.requires_grad
    assert_close(out, x.detach() * 3)


def test_lazily_negated_views_reach_the_operators_materialised():
    # (z.conj().imag is a view with torch's negation bit: its memory holds the un-negated values; the
    # dispatcher's fallback materialises it, and on a GPU the direct call must not skip that)
    z = torch.randn(6, dtype=torch.complex64, device=DEVICE)
    v = z.conj().imag
    assert v.is_neg()
    assert_close(torch.ops.tritoncub.sum(v), torch.sum(v.resolve_neg()))
    assert_close(torch.ops.tritoncub.amax(v, [0]), torch.amax(v.resolve_neg(), 0))
    assert torch.ops.tritoncub.argmax(v).item() == torch.argmax(v.resolve_neg()).item()


def test_forward_mode_ad_is_refused_not_zero():
    # (no forward formulas: a tangent must not silently come out as zeros)
    import torch.autograd.forward_ad as fwAD
    x, t = _data(5), _data(5)
    with pytest.raises(NotImplementedError, match="forward-mode AD"):
        torch.func.jvp(lambda a: torch.ops.tritoncub._test_scale_add(a, a), (x,), (t,))
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="forward-mode AD"):
            torch.ops.tritoncub._test_scale_add(fwAD.make_dual(x, t), x)
        assert_close(torch.ops.tritoncub._test_scale_add(x, x), 3 * x)   # (no tangent: works)


def test_fake_tensors_and_opcheck():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a = torch.empty(4, 3)
        r = torch.ops.tritoncub._test_scale_add(a, a)
        assert r.shape == (4, 3)
    x, y = _data(4), _data(4)
    torch.library.opcheck(torch.ops.tritoncub._test_scale_add.default, (x, y, 0.5, True))
    torch.library.opcheck(torch.ops.tritoncub._test_no_grad_formula.default, (x,))


def test_rejects_other_namespaces_and_mutation():
    with pytest.raises(ValueError, match="namespace"):
        custom_op("other::f")
    with pytest.raises(ValueError, match="functional"):
        custom_op("tritoncub::_test_mut", mutates_args=("x",))


def _op_calls():
    """One call of every operator, as a function of ``(x, i, offs)``: 8 floats, 8 ints, offsets."""
    import tritoncub  # noqa: F401  (registers the operators)
    ops = torch.ops.tritoncub
    return {
        "sum": lambda x, i, offs: ops.sum(x), "amax": lambda x, i, offs: ops.amax(x),
        "amin": lambda x, i, offs: ops.amin(x), "argmax": lambda x, i, offs: ops.argmax(x),
        "argmin": lambda x, i, offs: ops.argmin(x),
        "segment_reduce": lambda x, i, offs: ops.segment_reduce(x, offs, "sum"),
        "cumsum": lambda x, i, offs: ops.cumsum(x, 0), "cumprod": lambda x, i, offs: ops.cumprod(x, 0),
        "cummax": lambda x, i, offs: ops.cummax(x, 0), "cummin": lambda x, i, offs: ops.cummin(x, 0),
        "logcumsumexp": lambda x, i, offs: ops.logcumsumexp(x, 0), "sort": lambda x, i, offs: ops.sort(x),
        "argsort": lambda x, i, offs: ops.argsort(x), "sort_keys": lambda x, i, offs: ops.sort_keys(i),
        "sort_pairs": lambda x, i, offs: ops.sort_pairs(i, x), "sort_rows": lambda x, i, offs: ops.sort_rows(x.view(2, 4)),
        "segmented_sort": lambda x, i, offs: ops.segmented_sort(x, offs),
        "segmented_sort_pairs": lambda x, i, offs: ops.segmented_sort_pairs(x, i, offs),
        "topk": lambda x, i, offs: ops.topk(x, 2), "segmented_topk": lambda x, i, offs: ops.segmented_topk(x, offs, 2),
        "masked_select": lambda x, i, offs: ops.masked_select(x, x > 0), "nonzero": lambda x, i, offs: ops.nonzero(x),
        "unique": lambda x, i, offs: ops.unique(i), "unique_consecutive": lambda x, i, offs: ops.unique_consecutive(i),
        "diff": lambda x, i, offs: ops.diff(x), "histc": lambda x, i, offs: ops.histc(x),
        "bincount": lambda x, i, offs: ops.bincount(i),
    }


def _op_args(device):
    return torch.randn(8, device=device), torch.randint(0, 5, (8,), device=device), torch.tensor([0, 3, 8], device=device)


def test_every_operator_names_a_cpu_tensor_without_the_interpreter(monkeypatch):
    """Every registered operator, given CPU tensors with the interpreter off, raises the clear error
    (never a crash inside Triton); the list covers every operator in the namespace."""
    from tritoncub import _utils
    calls = _op_calls()
    registered = {n.split("::")[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names()
                  if n.startswith("tritoncub::") and not n.startswith("tritoncub::_")}   # (_: backward helpers)
    assert registered <= set(calls), f"operators without a case here: {sorted(registered - set(calls))}"
    monkeypatch.setattr(_utils, "_INTERPRETER", False)
    args = _op_args("cpu")
    for name, call in calls.items():
        with pytest.raises(ValueError, match="CPU tensor, but tritoncub kernels need a GPU tensor"):
            call(*args)


@pytest.mark.parametrize("name", sorted(_op_calls()))
def test_every_operator_compiles_fullgraph(name):
    """Every operator traces in one graph under torch.compile(fullgraph=True) (its fake implementation,
    data-dependent sizes included) and gives the eager result."""
    call = _op_calls()[name]
    args = _op_args(DEVICE)
    torch._dynamo.reset()
    compiled = torch.compile(call, fullgraph=True, backend="aot_eager")
    got, ref = compiled(*args), call(*args)
    got, ref = (got, ref) if isinstance(ref, tuple) else ((got,), (ref,))
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.dtype == r.dtype and g.shape == r.shape, name
        assert torch.equal(g.cpu(), r.cpu()), name
