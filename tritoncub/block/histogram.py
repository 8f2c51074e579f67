"""BlockHistogram: count the samples of a tile per bin (CUB's ``BlockHistogram``).

Samples are integer bin indices (any integer dtype, any tile shape); a sample ``s`` counts in bin
``s`` when ``0 <= s < NUM_BINS`` and is ignored otherwise (CUB leaves out-of-range samples undefined;
here they are masked explicitly, since Triton's ``tl.histogram`` does not define them either).
``NUM_BINS`` is a power of two (pad with unused bins otherwise). Counts are int32.

CUB's two algorithms (BLOCK_HISTO_SORT: sort then count run lengths; BLOCK_HISTO_ATOMIC: shared
memory atomics) have one analogue here: ``tl.histogram``, lowered by Triton. Device histograms
accumulate tiles with :func:`block_histogram_composite` (CUB's ``Composite``) and merge programs'
counts with atomics or a second pass.
"""
import triton
import triton.language as tl


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
