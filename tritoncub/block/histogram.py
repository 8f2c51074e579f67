"""BlockHistogram: count the samples of a tile per bin (CUB's ``BlockHistogram``).

Samples are integer bin indices (any integer dtype, any tile shape); a sample ``s`` counts in bin
``s`` when ``0 <= s < NUM_BINS`` and is ignored otherwise (CUB leaves out-of-range samples undefined;
here they are masked explicitly, since Triton's ``tl.histogram`` does not define them either).
``NUM_BINS`` is a power of two (pad with unused bins otherwise). Counts are int32.

CUB's two algorithms (BLOCK_HISTO_SORT: sort then count run lengths; BLOCK_HISTO_ATOMIC: shared
memory atomics) have one analogue here: ``tl.histogram``, lowered by Triton. Device histograms
accumulate tiles with :func:`block_histogram_composite` (CUB's ``Composite``) and merge programs'
counts with atomics or a second pass.

:func:`smem_count_halves_if` is the counting step of CUB's BLOCK_HISTO_ATOMIC with 16-bit counters (two
per 32-bit word of shared memory: twice the bins in the same space), for Gluon kernels that address
Triton's dynamic shared memory (``global_smem``) by word, as ``block/radix_rank.py``'s helpers do.
"""
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

_SPILL = 1 << 15
#: a 16-bit counter of :func:`smem_count_halves_if` gives this many counts back to its caller when it
#: reaches it (so a counter does not carry into its neighbour: that would take 2^15 more adds to it
#: between one thread's atomic and its correction, a few instructions later)
HALF_COUNTER_SPILL = gl.constexpr(_SPILL)


def count_halves_ptx() -> str:
    """PTX of :func:`smem_count_halves_if` (``$1`` the counter, ``$2`` the flag, ``$0`` the result)."""
    return "\n".join([
        "{", ".reg .b32 ad, tt, sh, inc, old;", ".reg .pred p, q;",
        "setp.ne.u32 p, $2, 0;",
        "shr.u32 tt, $1, 1;", "shl.b32 tt, tt, 2;", "mov.u32 ad, global_smem;", "add.u32 ad, ad, tt;",
        "and.b32 sh, $1, 1;", "shl.b32 sh, sh, 4;", "mov.u32 inc, 1;", "shl.b32 inc, inc, sh;",
        "mov.u32 old, 0;",
        "@p atom.shared.add.u32 old, [ad], inc;",
        # (the old count of this half: 0x7fff means this add took it to 0x8000, which it gives back)
        "shr.u32 tt, old, sh;", "and.b32 tt, tt, 65535;", f"setp.eq.u32 q, tt, {_SPILL - 1};",
        "shl.b32 inc, inc, 15;", "neg.s32 inc, inc;",
        "@q red.shared.add.u32 [ad], inc;",
        "mov.u32 $0, 0;", "@q mov.u32 $0, 1;",
        "}"])


_COUNT_HALVES_ASM = gl.constexpr(count_halves_ptx())


@gluon.jit
def smem_count_halves_if(counter, flag):
    """Add 1 to 16-bit counter ``counter`` of ``global_smem`` (the low half of word ``counter >> 1``
    for an even ``counter``, the high half for an odd one) where ``flag`` (int32) is non-zero, with a
    shared-memory atomic. Returns 1 (int32) where this add took the counter to
    :data:`HALF_COUNTER_SPILL`, which it then takes off the counter again: the caller adds that many to
    its own count of the bin (e.g. a global atomic), so a counter stays below 2^15 plus the adds in flight
    and never carries into the other half; 0 elsewhere. Exactly one add returns 1 each time a counter
    reaches the spill, whatever order the atomics of a warp or of several warps take. The counters of a
    histogram then hold its counts modulo the spill, the callers' adds the rest."""
    return gl.inline_asm_elementwise(_COUNT_HALVES_ASM, "=r,r,r", [counter, flag], dtype=gl.int32,
                                     is_pure=False, pack=1)


@triton.jit
def block_histogram(samples, NUM_BINS: tl.constexpr, valid_items=None):
    """Bin counts ``[NUM_BINS]`` (int32) of the tile's samples; with ``valid_items`` only the first
    ``valid_items`` samples in item order count (a ragged last tile)."""
    N: tl.constexpr = samples.numel
    flat = tl.reshape(samples, (N,))
    if flat.dtype.is_int_unsigned():
        inside = flat.to(tl.uint64) < NUM_BINS  # widened: NUM_BINS may not fit the sample type
    else:
        wide = flat.to(tl.int64)
        inside = (wide >= 0) & (wide < NUM_BINS)
    if valid_items is not None:
        inside = inside & (tl.arange(0, N) < valid_items)
    bins = tl.where(inside, flat, 0).to(tl.int32)
    return tl.histogram(bins, NUM_BINS, mask=inside)


@triton.jit
def block_histogram_composite(samples, histogram, NUM_BINS: tl.constexpr, valid_items=None):
    """``histogram`` (``[NUM_BINS]`` counts) plus the counts of this tile (CUB's ``Composite``)."""
    return histogram + block_histogram(samples, NUM_BINS, valid_items)
