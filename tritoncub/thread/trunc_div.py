"""``trunc(a / d)`` with the quotient rounded as IEEE division rounds it (``div.rn``), fast.

Binning a float sample the way torch (and a CUDA C++ ``(int)(a / d)``) does needs the correctly
rounded quotient: an approximate division moves samples that sit on a bin edge into the next bin.
``div.rn.f32`` compiles to a reciprocal, a Newton step and a range check with a branch to a slow
path, once per item, recomputing the reciprocal, and the items' branch regions run one after the
other: in the shared-memory histogram kernel (sm_90 SASS) it was about a third of the instructions
per sample.

:func:`trunc_div_rn` computes ``q = a * inv`` with ``inv = div_rn(1, d)`` (one per program) and keeps
``trunc(q)`` unless ``q`` lies within ``|q| * 2^-21`` of an integer. The bound is safe: ``inv`` and the
product are each rounded once (relative error ``<= 2^-24`` each) and the exact quotient ``x`` rounds to
``div_rn(a, d)`` within ``2^-24 x``, so ``|q - div_rn(a, d)| <= 1.5 * 2^-23 q`` (normal numbers), and
no integer lies between the two unless ``q`` is that close to one. The few items that are close (or
not finite: ``q`` = inf or NaN) are divided exactly. On NVIDIA GPUs the check and the exact fallback
are PTX with one branch per four items (taken by a warp only when one of its items needs it);
elsewhere (``FAST=False``, or the interpreter) the helper is a plain ``div_rn``.

Callers choose ``FAST`` only where the bound holds: ``d`` a normal number whose reciprocal is normal
too (``2^-125 < |d| < 2^125``); :func:`fast_ok` checks that on the host.
"""
from __future__ import annotations

import triton
import triton.language as tl

_LO, _HI = 2.0 ** -100, 2.0 ** 100


def fast_ok(d: float) -> bool:
    """Whether ``FAST`` is exact for divisor ``d`` (a comfortable margin inside the normal range)."""
    return _LO <= abs(d) <= _HI


def _asm(pack: int) -> str:
    a = [f"${pack + i}" for i in range(pack)]
    d = [f"${2 * pack + i}" for i in range(pack)]
    inv = [f"${3 * pack + i}" for i in range(pack)]
    regs = ", ".join(f"q{i}, t{i}, c{i}" for i in range(pack))
    preds = ", ".join(f"u{i}" for i in range(pack))
    lines = ["{", f".reg .f32 {regs};", f".reg .pred {preds}, any;"]
    for i in range(pack):
        lines += [f"mul.rn.f32 q{i}, {a[i]}, {inv[i]};",
                  # nearest integer by the 1.5 * 2^23 trick (two adds, exact for |q| < 2^23; above
                  # it every float is an integer and the test below divides anyway)
                  f"add.rn.f32 t{i}, q{i}, 0f4B400000;",
                  f"sub.rn.f32 t{i}, t{i}, 0f4B400000;",
                  f"sub.rn.f32 t{i}, q{i}, t{i};",
                  f"abs.f32 t{i}, t{i};",
                  f"mul.f32 c{i}, q{i}, 0f35000000;",      # |q| * 2^-21
                  f"abs.f32 c{i}, c{i};",
                  f"setp.leu.f32 u{i}, t{i}, c{i};"]        # close to an integer, or NaN: divide
    lines.append("mov.pred any, u0;")
    for i in range(1, pack):
        lines.append(f"or.pred any, any, u{i};")
    lines.append("@!any bra DONE;")
    for i in range(pack):
        lines.append(f"div.rn.f32 q{i}, {a[i]}, {d[i]};")
    lines.append("DONE:")
    for i in range(pack):
        lines.append(f"cvt.rzi.s32.f32 ${i}, q{i};")
    lines.append("}")
    return "\n".join(lines)


_TRUNC_DIV_ASM4 = tl.constexpr(_asm(4))
_TRUNC_DIV_CONSTRAINTS4 = tl.constexpr(",".join(["=r"] * 4 + ["r"] * 12))


@triton.jit
def trunc_div_rn(a, d, inv, FAST: tl.constexpr):
    """``trunc(div_rn(a, d))`` as int32, for fp32 ``a`` and fp32 ``d``, ``inv = div_rn(1, d)`` (tensors
    or scalars broadcastable to ``a``). ``FAST`` (compiled for NVIDIA only): the check above, four
    items per asm block, so each thread must hold a multiple of four of ``a``'s items."""
    if FAST:
        return tl.inline_asm_elementwise(_TRUNC_DIV_ASM4, _TRUNC_DIV_CONSTRAINTS4, [a, d, inv],
                                         dtype=tl.int32, is_pure=True, pack=4)
    else:
        return tl.math.div_rn(a, d).to(tl.int32)
