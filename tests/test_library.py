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
