"""BlockRadixSort: sort one tile of keys (or keys + values) in a program, over a bit range.

``block_radix_sort_keys`` / ``block_radix_sort_pairs`` run LSD radix passes of ``RADIX_BITS`` bits
over the ordered key bits ``[BEGIN_BIT, END_BIT)`` (``tritoncub.thread.radix_traits``: any key dtype,
torch's order, ``DESCENDING`` reverses it). Each pass ranks the tile by the digit with
:func:`~tritoncub.block.radix_rank.block_radix_rank` (stable), turns the ranks into a gather
permutation (a ``tl.sort`` of ``rank * TILE + index``, whose low bits are the source of every sorted
position) and gathers keys and values with ``tl.gather``. The result is stable.

Arrangement: the returned tile is *blocked* (position ``i`` holds the ``i``-th smallest key), or
*striped* with ``STRIPED=True``: viewed as ``[THREADS, ITEMS]`` rows (thread ``t``'s items), thread
``t`` holds ranks ``t, t + THREADS, ...`` -- CUB's ``SortBlockedToStriped``, which lets a store of
consecutive ranks be coalesced. In Triton a tile is a tensor whose register layout the compiler
picks, so "striped" is a permutation of the returned tile, not a register assignment.

Cost: per pass a one-hot rank (O(TILE x 2**RADIX_BITS)) and a bitonic ``tl.sort`` of the tile: meant
for tiles of up to a few thousand keys inside other kernels (segmented sorts of short rows, CPU
tests); the device-wide sort uses the onesweep kernels of ``tritoncub.device.radix_sort``.
"""
from __future__ import annotations

import triton
import triton.language as tl

from ..thread.radix_traits import extract_digit, to_ordered_bits
from .radix_rank import block_radix_rank


@triton.jit
def _gather_order(ranks, TILE: tl.constexpr):
    # source index of every sorted position: sort rank * TILE + index, keep the index bits
    idx = tl.arange(0, TILE)
    packed = ranks.to(tl.int64) * TILE + idx
    return (tl.sort(packed) % TILE).to(tl.int32)


@triton.jit
def _pass_order(bits, SHIFT: tl.constexpr, END_BIT: tl.constexpr, RADIX_BITS: tl.constexpr, TILE: tl.constexpr,
                valid=None):
    # gather order of one LSD pass over the digit [SHIFT, min(SHIFT + RADIX_BITS, END_BIT))
    WIDTH: tl.constexpr = RADIX_BITS if END_BIT - SHIFT > RADIX_BITS else END_BIT - SHIFT
    d = extract_digit(bits, SHIFT, RADIX_BITS) & ((1 << WIDTH) - 1)
    if valid is not None:
        # invalid items rank after every valid one, keeping their order
        d = tl.where(valid, d, 1 << WIDTH)
        ranks, _, _ = block_radix_rank(d, WIDTH + 1)
    else:
        ranks, _, _ = block_radix_rank(d, WIDTH)
    return _gather_order(ranks, TILE)


@triton.jit
def _to_striped(tile, THREADS: tl.constexpr, ITEMS: tl.constexpr):
    # blocked sorted tile -> thread t's items are ranks t, t + THREADS, ...
    return tl.reshape(tl.trans(tl.reshape(tile, (ITEMS, THREADS))), (THREADS * ITEMS,))


@triton.jit
def block_radix_sort_pairs(keys, values, BEGIN_BIT: tl.constexpr, END_BIT: tl.constexpr,
                           RADIX_BITS: tl.constexpr = 4, DESCENDING: tl.constexpr = False,
                           STRIPED: tl.constexpr = False, THREADS: tl.constexpr = 1, valid=None):
    """Stable sort of a 1-D tile of keys with values, by ordered key bits ``[BEGIN_BIT, END_BIT)``.

    ``valid`` (optional boolean tile): invalid items sort after all valid ones (their keys and
    values are moved there unchanged). ``STRIPED`` needs ``THREADS`` dividing the tile size.
    Returns ``(keys, values)``.
    """
    TILE: tl.constexpr = keys.shape[0]
    bits = to_ordered_bits(keys, DESCENDING)
    for p in tl.static_range((END_BIT - BEGIN_BIT + RADIX_BITS - 1) // RADIX_BITS):
        # the pass's shift goes to a helper as a constexpr argument: a ``tl.constexpr`` assigned in
        # the unrolled loop body would be re-assigned on the next pass, which the compiler refuses
        src = _pass_order(bits, BEGIN_BIT + p * RADIX_BITS, END_BIT, RADIX_BITS, TILE, valid)
        bits = tl.gather(bits, src, 0)
        keys = tl.gather(keys, src, 0)
        values = tl.gather(values, src, 0)
        if valid is not None:
            valid = tl.gather(valid.to(tl.int32), src, 0) != 0
    if STRIPED:
        keys = _to_striped(keys, THREADS, TILE // THREADS)
        values = _to_striped(values, THREADS, TILE // THREADS)
    return keys, values


@triton.jit
def block_radix_sort_keys(keys, BEGIN_BIT: tl.constexpr, END_BIT: tl.constexpr, RADIX_BITS: tl.constexpr = 4,
                          DESCENDING: tl.constexpr = False, STRIPED: tl.constexpr = False,
                          THREADS: tl.constexpr = 1, valid=None):
    """Keys-only :func:`block_radix_sort_pairs`."""
    out, _ = block_radix_sort_pairs(keys, keys, BEGIN_BIT, END_BIT, RADIX_BITS, DESCENDING, STRIPED, THREADS,
                                    valid)
    return out
