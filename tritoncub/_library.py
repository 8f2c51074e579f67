"""Registration of the torch operators (``torch.ops.tritoncub.*``) at a low cost per call.

:func:`custom_op` is used like ``torch.library.custom_op`` (the schema is inferred from the type
hints; ``register_fake`` and ``register_autograd(backward, setup_context=...)`` have the same
meaning), but the op is defined through ``torch.library.Library``: a CPU and a CUDA kernel (the
implementation), a Meta/fake kernel, and one Autograd kernel. ``torch.library.custom_op`` wraps
every call in Python layers (dynamo-disable, an autograd.Function, alias checks) that cost about
60-80 us of host time per call on an H100 host, more than many of our kernels take on the GPU;
through this module a call costs the dispatcher's few microseconds.

The Autograd kernel:

* an input requires grad (and grad mode is on): an ``autograd.Function`` runs the op below autograd
  and records ``backward`` (an op without ``register_autograd`` raises on backward, as
  ``custom_op`` does);
* every tensor argument is a plain ``torch.Tensor`` on a GPU (not a lazily negated view, and none
  that requires grad while grad mode is on: that is an op without gradients, whose implementation
  must not record a graph) and no dispatch mode is active: the implementation is called directly
  (there is nothing below autograd to do);
* otherwise (fake tensors under ``torch.compile``, meta tensors, CPU tensors, tensor subclasses,
  dispatch modes): the call is re-dispatched below autograd, so every other key sees it.
"""
from __future__ import annotations

import inspect
from typing import Callable

import torch
import torch.autograd.forward_ad as _fwAD
from torch.utils._python_dispatch import _get_current_dispatch_mode

NAMESPACE = "tritoncub"
_LIB = torch.library.Library(NAMESPACE, "FRAGMENT")


def _tensors(args):
    for a in args:
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, torch.Tensor):
                    yield b


class Op:
    """A ``tritoncub`` operator: callable (through the dispatcher), with ``register_fake`` and
    ``register_autograd`` as on the object ``torch.library.custom_op`` returns."""

    def __init__(self, name: str, impl: Callable, schema: str, tags: tuple = (), differentiable: bool = True):
        self.name = name
        self._differentiable = differentiable
        self.qualname = f"{NAMESPACE}::{name}"
        self._impl = impl
        _LIB.define(name + schema, tags=tags)
        for key in ("CPU", "CUDA"):
            _LIB.impl(name, impl, key)
        self._opoverload = getattr(getattr(torch.ops, NAMESPACE), name).default
        sig = inspect.signature(impl)
        self._defaults = [p.default for p in sig.parameters.values()]
        self._backward: Callable | None = None
        self._setup: Callable | None = None
        self._fn = self._autograd_function()
        _LIB.impl(name, self._autograd_kernel, "Autograd")

    # the callable returned by the decorator calls the registered op
    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_fake(self, fn: Callable) -> Callable:
        from ._utils import fake_impl
        torch.library.register_fake(self.qualname, fake_impl(fn), lib=_LIB)
        return fn

    def register_autograd(self, backward: Callable, *, setup_context: Callable | None = None) -> None:
        self._backward = backward
        self._setup = setup_context

    # ------------------------------------------------------------------------------------------
    def _full_args(self, args: tuple) -> tuple:
        """``args`` with trailing defaults filled in (the dispatcher drops arguments equal to their
        default; ``setup_context`` and ``backward`` see every input, as with ``custom_op``)."""
        if len(args) >= len(self._defaults):
            return args
        return tuple(args) + tuple(self._defaults[len(args):])

    def _autograd_function(self):
        op = self

        class _Fn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *args):
                with torch._C._AutoDispatchBelowAutograd():
                    out = op._opoverload(*args)
                if op._setup is not None:
                    op._setup(ctx, args, out)
                return out

            @staticmethod
            def backward(ctx, *grads):
                if op._backward is None:
                    raise RuntimeError(f"Trying to backward through {op.qualname} but no autograd formula was "
                                       f"registered for it")
                g = op._backward(ctx, *grads)
                return g if isinstance(g, tuple) else (g,)

        _Fn.__name__ = _Fn.__qualname__ = f"{self.name}_backward_fn"
        return _Fn

    def _autograd_kernel(self, *args, **kwargs):
        # (an input carrying a forward-mode tangent would be treated as a constant: zero tangents out)
        if _fwAD._current_level >= 0 and any(_fwAD.unpack_dual(t).tangent is not None for t in _tensors(args)):
            raise NotImplementedError(f"{self.qualname}: forward-mode AD (torch.func.jvp, torch.autograd.forward_ad) "
                                      "is not supported; reverse mode through backward() is")
        grad_on = torch.is_grad_enabled()
        if self._differentiable and grad_on and any(t.requires_grad for t in _tensors(args)):
            if kwargs:
                raise TypeError(f"{self.qualname}: keyword-only arguments are not supported with autograd")
            return self._fn.apply(*self._full_args(args))
        if _get_current_dispatch_mode() is None:
            plain = True
            for t in _tensors(args):
                # (a lazily negated view goes through the dispatcher, whose fallback materialises it; an
                # input that requires grad here with grad mode on belongs to an op without gradients,
                # whose implementation must run below autograd so that torch operations inside it do not
                # record a graph)
                if type(t) is not torch.Tensor or not t.is_cuda or t.is_neg() or (grad_on and t.requires_grad):
                    plain = False
                    break
            if plain:
                return self._impl(*args, **kwargs)
        with torch._C._AutoDispatchBelowAutograd():
            return self._opoverload(*args, **kwargs)


#: the tag that keeps an operator out of torch.compile's CUDA graphs (None on a torch without it)
CUDAGRAPH_UNSAFE = getattr(torch.Tag, "cudagraph_unsafe", None)


def custom_op(qualname: str, *, mutates_args=(), schema: str | None = None,
              cudagraph_unsafe: bool = False, differentiable: bool = True) -> Callable[[Callable], Op]:
    """Decorator: define ``qualname`` (``"tritoncub::name"``) with the decorated function as its
    implementation; the schema is inferred from the type hints unless given. ``cudagraph_unsafe``: the
    operator reads data back to the host (it refuses a CUDA graph capture), so torch.compile's
    CUDA-graph mode leaves it out of its graphs (torch's ``cudagraph_unsafe`` tag, where torch has it).
    ``differentiable=False``: outputs never require grad, as torch's non-differentiable operators'
    (``torch.histc``); otherwise an input that requires grad makes the outputs require it, and a
    backward without a registered formula raises."""
    ns, name = qualname.split("::")
    if ns != NAMESPACE:
        raise ValueError(f"operators live in the {NAMESPACE!r} namespace, got {qualname!r}")
    if mutates_args:
        raise ValueError("tritoncub operators are functional (mutates_args must be empty)")

    def wrap(fn: Callable) -> Op:
        s = schema if schema is not None else torch.library.infer_schema(fn, mutates_args=())
        return Op(name, fn, s, (CUDAGRAPH_UNSAFE,) if cudagraph_unsafe and CUDAGRAPH_UNSAFE is not None else (),
                  differentiable)
    return wrap
