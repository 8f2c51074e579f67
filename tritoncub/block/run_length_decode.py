"""BlockRunLengthDecode: expand runs (value, length) into a window of decoded items (CUB's
``BlockRunLengthDecode``).

The runs are a tile of ``run_values`` and a tile of ``run_lengths`` (same shape, any, taken in item
order; lengths ``>= 0``, zero-length runs allowed). The decoded sequence is run 0's value repeated
``run_lengths[0]`` times, then run 1's, ... Like CUB, a call decodes one window of ``DECODED_ITEMS``
items starting at decoded offset ``from_decoded_offset`` (call again with a larger offset until the
total size is covered), and returns each item's offset within its run.

How: run starts are the exclusive sum of lengths; the number of runs starting at or before each
window slot is the prefix sum of a ``tl.histogram`` of run starts over the window (runs starting
before it count at slot 0), so each slot's run is found without a per-item binary search, then
values and starts are fetched with ``tl.gather``. Lengths are summed in int64.
"""
import triton
import triton.language as tl

from ..warp.scan import fill_like


@triton.jit
def block_run_length_decode(run_values, run_lengths, from_decoded_offset, DECODED_ITEMS: tl.constexpr,
                            fill=0):
    """Decode items ``[from_decoded_offset, from_decoded_offset + DECODED_ITEMS)``.

    Returns ``(decoded, relative_offsets, total_decoded_size)``: ``decoded[j]`` the value of the run
    covering item ``from_decoded_offset + j`` (``fill`` past the end), ``relative_offsets[j]`` (int64)
    that item's offset within its run (0 past the end), and the total decoded size (int64 scalar)."""
    R: tl.constexpr = run_values.numel
    values = tl.reshape(run_values, (R,))
    lengths = tl.reshape(run_lengths, (R,)).to(tl.int64)
    ends = tl.cumsum(lengths, 0)
    starts = ends - lengths
    total = tl.sum(lengths, 0)
    first = tl.cast(from_decoded_offset, tl.int64)
    rel = starts - first
    in_window = rel < DECODED_ITEMS
    slot = tl.where(rel > 0, rel, 0).to(tl.int32)
    started = tl.cumsum(tl.histogram(slot, DECODED_ITEMS, mask=in_window), 0)
    run = tl.minimum(tl.maximum(started - 1, 0), R - 1)
    pos = first + tl.arange(0, DECODED_ITEMS)
    valid = pos < total
    decoded = tl.gather(values, run, 0)
    decoded = tl.where(valid, decoded, fill_like(decoded, fill))
    relative = tl.where(valid, pos - tl.gather(starts, run, 0), 0)
    return decoded, relative, total
