"""Radix key traits: every key dtype <-> ordered unsigned bits (CUB's ``RadixSortTwiddle``/``Traits``).

This module is THE one place where key bits are transformed for radix algorithms (sort, select,
histogram, segmented sort). A key ``x`` of any supported dtype maps to an unsigned integer of the
same width (``bool`` -> ``uint8``) whose unsigned order is the order ``torch.sort`` uses:

* unsigned integers and ``bool``: the bits themselves;
* signed integers: the sign bit flipped;
* floats (fp16, bf16, fp32, fp64): ``-0.0`` is first made ``+0.0`` and every NaN the canonical
  positive quiet NaN; then negative values have all bits inverted and the others the sign bit set.
  So ``-inf < ... < -0.0 == +0.0 < ... < +inf < NaN``: NaNs last (ascending), all NaNs equal, and
  ``-0.0`` equal to ``+0.0``, which is how ``torch.sort`` compares them; a stable sort therefore
  keeps ``-0.0``/``+0.0`` and NaNs in input order, exactly like ``torch.sort(stable=True)`` on the
  CPU (torch's CUDA sort differs for a NaN with the sign bit set: it puts that one first).
  The canonicalisation makes :func:`from_ordered_bits` lossy for ``-0.0`` and NaN payloads: sorts
  move the original key bits, never keys rebuilt from ordered bits.
* ``DESCENDING``: the ordered bits inverted (NaN first, and a stable sort still keeps equal keys in
  input order, as ``torch.sort(descending=True, stable=True)`` does).

All helpers are ``@triton.jit`` element-wise code that builds no new tensors (no ``tl.full``/
``tl.arange``), so they can also be called from kernels with explicit layouts.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

#: key dtypes the radix algorithms accept, and their width in bits
KEY_DTYPES = tuple(d for d in (
    torch.bool, torch.uint8, torch.int8, torch.int16, getattr(torch, "uint16", None), torch.int32,
    getattr(torch, "uint32", None), torch.int64, getattr(torch, "uint64", None), torch.float16,
    torch.bfloat16, torch.float32, torch.float64) if d is not None)


def key_bits(dtype: torch.dtype) -> int:
    """Width in bits of the ordered form of a key dtype (``bool`` counts as 8)."""
    if dtype == torch.bool:
        return 8
    return dtype.itemsize * 8


@triton.jit
def unsigned_bits(x):
    """Bitcast ``x`` to the unsigned integer type of the same width (``int1``/bool -> ``uint8``)."""
    if x.dtype == tl.int1:
        return x.to(tl.uint8)
    elif x.dtype.primitive_bitwidth == 8:
        return x.to(tl.uint8, bitcast=True)
    elif x.dtype.primitive_bitwidth == 16:
        return x.to(tl.uint16, bitcast=True)
    elif x.dtype.primitive_bitwidth == 32:
        return x.to(tl.uint32, bitcast=True)
    else:
        return x.to(tl.uint64, bitcast=True)


@triton.jit
def _signed_bits(b):
    # b (unsigned) bitcast to the signed integer type of its width
    if b.dtype == tl.uint8:
        return b.to(tl.int8, bitcast=True)
    elif b.dtype == tl.uint16:
        return b.to(tl.int16, bitcast=True)
    elif b.dtype == tl.uint32:
        return b.to(tl.int32, bitcast=True)
    else:
        return b.to(tl.int64, bitcast=True)


@triton.jit
def _sign_bit(b):
    # the top bit of b's unsigned type, as a scalar of that type
    if b.dtype == tl.uint8:
        return tl.cast(0x80, tl.uint8)
    elif b.dtype == tl.uint16:
        return tl.cast(0x8000, tl.uint16)
    elif b.dtype == tl.uint32:
        return tl.cast(0x80000000, tl.uint32)
    else:
        return tl.cast(0x8000000000000000, tl.uint64)


@triton.jit
def _all_ones(b):
    # every bit set in b's unsigned type (``~b`` is ``b ^ _all_ones(b)``; the interpreter cannot
    # invert small unsigned types with ``~``)
    if b.dtype == tl.uint8:
        return tl.cast(0xFF, tl.uint8)
    elif b.dtype == tl.uint16:
        return tl.cast(0xFFFF, tl.uint16)
    elif b.dtype == tl.uint32:
        return tl.cast(0xFFFFFFFF, tl.uint32)
    else:
        return tl.cast(0xFFFFFFFFFFFFFFFF, tl.uint64)


@triton.jit
def _inf_bits(x):
    # bits of +inf of x's float type: a float is NaN iff its bits without the sign exceed these
    if x.dtype == tl.float16:
        return tl.cast(0x7C00, tl.uint16)
    elif x.dtype == tl.bfloat16:
        return tl.cast(0x7F80, tl.uint16)
    elif x.dtype == tl.float32:
        return tl.cast(0x7F800000, tl.uint32)
    else:
        return tl.cast(0x7FF0000000000000, tl.uint64)


@triton.jit
def _canonical_nan(x):
    # bits of the positive quiet NaN of x's float type, as a scalar of the unsigned type
    if x.dtype == tl.float16:
        return tl.cast(0x7E00, tl.uint16)
    elif x.dtype == tl.bfloat16:
        return tl.cast(0x7FC0, tl.uint16)
    elif x.dtype == tl.float32:
        return tl.cast(0x7FC00000, tl.uint32)
    else:
        return tl.cast(0x7FF8000000000000, tl.uint64)


@triton.jit
def is_special_float(x):
    """``x`` is ``-0.0`` or a NaN (of any sign or payload); False for non-float ``x``. Keys decoded
    from canonical ordered bits are these where they may differ from the input's bits."""
    if x.dtype.is_floating():
        b = unsigned_bits(x)
        sign = _sign_bit(b)
        out = (b == sign) | ((b & (sign ^ _all_ones(b))) > _inf_bits(x))
    else:
        out = x != x
    return out


@triton.jit
def _canonical_float_bits(b, x):
    # b: the unsigned bits of the float x; -0.0 -> +0.0 and every NaN -> +qNaN (tested on the bits:
    # the interpreter's bf16 x != x misses NaNs)
    sign = _sign_bit(b)
    zero = b ^ b
    b = tl.where(b == sign, zero, b)
    return tl.where((b & (sign ^ _all_ones(b))) > _inf_bits(x), zero + _canonical_nan(x), b)


@triton.jit
def _twiddle(b, x, DESCENDING: tl.constexpr):
    # the bits b of the key x -> ordered bits (CUB's Twiddle-in)
    if x.dtype.is_floating():
        # negative: all bits inverted; otherwise the sign bit set. As one xor with a mask made by an
        # arithmetic shift of the sign (two operations instead of a compare and a select)
        b = b ^ ((_signed_bits(b) >> (b.dtype.primitive_bitwidth - 1)).to(b.dtype, bitcast=True) | _sign_bit(b))
    elif x.dtype.is_int_signed():
        b = b ^ _sign_bit(b)
    if DESCENDING:
        b = b ^ _all_ones(b)
    return b


@triton.jit
def to_ordered_bits(x, DESCENDING: tl.constexpr = False, CANONICAL: tl.constexpr = True):
    """Key -> unsigned bits of the same width whose unsigned order is torch's order of the keys.

    See the module docstring for floats (``-0.0`` -> ``+0.0``, NaNs canonical and last).
    ``CANONICAL=False`` skips that canonicalisation (CUB's plain flip): the same order for keys
    that hold no ``-0.0`` and no NaN other than the canonical ``+qNaN`` (see
    :func:`to_ordered_bits_noting_changes`), and three operations less per key.
    """
    b = unsigned_bits(x)
    if CANONICAL and x.dtype.is_floating():
        b = _canonical_float_bits(b, x)
    return _twiddle(b, x, DESCENDING)


@triton.jit
def to_ordered_bits_noting_changes(x, DESCENDING: tl.constexpr = False):
    """:func:`to_ordered_bits` (canonical), and whether the canonicalisation changed the key's bits:
    true exactly for ``-0.0`` and NaNs other than the canonical ``+qNaN`` (never for non-floats). Keys
    of which none is changed sort the same with ``CANONICAL=False``; the upfront histogram counts
    them for that (one compare per key, against the four of :func:`is_special_float`)."""
    raw = unsigned_bits(x)
    b = raw
    if x.dtype.is_floating():
        b = _canonical_float_bits(raw, x)
    return _twiddle(b, x, DESCENDING), b != raw


@triton.jit
def from_ordered_bits(b, KEY_DTYPE: tl.constexpr, DESCENDING: tl.constexpr = False):
    """Inverse of :func:`to_ordered_bits` (``-0.0`` comes back as ``+0.0``, NaNs as the canonical NaN)."""
    if DESCENDING:
        b = b ^ _all_ones(b)
    # one return per branch: the compiler still generates the code after a return inside an
    # ``if`` (a bitcast of uint8 to int1 would not compile), so bool keys take their own branch
    if KEY_DTYPE == tl.int1:
        out = b != (b ^ b)
    elif KEY_DTYPE.is_floating():
        sign = _sign_bit(b)
        zero = b ^ b
        out = tl.where((b & sign) != zero, b ^ sign, b ^ _all_ones(b)).to(KEY_DTYPE, bitcast=True)
    elif KEY_DTYPE.is_int_signed():
        out = (b ^ _sign_bit(b)).to(KEY_DTYPE, bitcast=True)
    else:
        out = b.to(KEY_DTYPE, bitcast=True)
    return out


@triton.jit
def pack_key_position(bits, position):
    """One uint64 word: ordered key bits (of at most 32 bits) above a 32-bit position. Words sort by
    the key over bits ``[32 + begin, 32 + end)``, and carry where the key came from."""
    return (bits.to(tl.uint64) << 32) | position.to(tl.uint64)


@triton.jit
def unpack_key_position(word, KEY_DTYPE: tl.constexpr, DESCENDING: tl.constexpr = False):
    """Inverse of :func:`pack_key_position` (with :func:`from_ordered_bits`): ``(key, position)``,
    the position as int64."""
    hi = word >> 32
    if KEY_DTYPE.primitive_bitwidth <= 8:
        b = hi.to(tl.uint8)
    elif KEY_DTYPE.primitive_bitwidth == 16:
        b = hi.to(tl.uint16)
    else:
        b = hi.to(tl.uint32)
    return from_ordered_bits(b, KEY_DTYPE, DESCENDING), (word & 0xFFFFFFFF).to(tl.int64)


@triton.jit
def extract_digit(b, shift, NUM_BITS: tl.constexpr):
    """``(b >> shift) & (2**NUM_BITS - 1)`` as int32 (``b`` ordered bits, ``shift`` may be a tensor)."""
    return ((b >> tl.cast(shift, b.dtype)) & ((1 << NUM_BITS) - 1)).to(tl.int32)


@triton.jit
def extract_digit_const(b, SHIFT: tl.constexpr, NUM_BITS: tl.constexpr):
    """Like :func:`extract_digit` for a compile-time shift."""
    return ((b >> SHIFT) & ((1 << NUM_BITS) - 1)).to(tl.int32)
