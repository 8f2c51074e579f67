"""Let ``@triton.jit`` helpers pass a combine function they received as an argument on to
``tl.reduce`` / ``tl.associative_scan``.

Triton 3.6's compiler wraps a ``@triton.jit`` function passed as an argument in ``tl.constexpr``;
calling it directly works, but ``tl.reduce(x, axis, COMBINE)`` hands the wrapper to
``CodeGenerator.call_JitFunction``, which fails with "'constexpr' object has no attribute 'fn'".
The interpreter passes the function itself, so CPU tests do not see this. Every
``block_reduce(tile, COMBINE)``-style helper of CUB's design needs it, so on import we unwrap a
constexpr function there. The change is idempotent and a no-op for callers that already pass a
plain function; it does not alter generated code.
"""
from triton.compiler import code_generator as _cg
from triton.language.core import constexpr as _constexpr

_original = _cg.CodeGenerator.call_JitFunction

if not getattr(_original, "_tritoncub_unwraps_constexpr", False):
    def _call_jit_function(self, fn, args, kwargs, caller_context=None):
        if isinstance(fn, _constexpr):
            fn = fn.value
        return _original(self, fn, args, kwargs, caller_context=caller_context)

    _call_jit_function._tritoncub_unwraps_constexpr = True
    _cg.CodeGenerator.call_JitFunction = _call_jit_function
