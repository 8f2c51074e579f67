"""BlockRadixRank (CUB seed 004): rank the keys of a tile by one radix digit.

For each key of a tile, its *rank* is the number of keys of the tile whose digit is smaller, plus
the number of keys before it with the same digit: a stable counting-sort position. Optionally the
exclusive prefix of the tile's digit histogram is returned too (CUB's ``exclusive_digit_prefix``).

Two implementations:

* :func:`block_radix_rank` / :func:`block_radix_rank_keys` (``tl``, runs everywhere including the
  interpreter): a one-hot ``[TILE, 2**RADIX_BITS]`` ``tl.cumsum``. Its work grows with the number of
  bins (O(TILE x RADIX)), so it is the portable reference, not the fast path for 8-bit digits.
* the warp-synchronous fast path (NVIDIA sm_70+, compiled kernels only), used by the onesweep
  device sort through ``triton.experimental.gluon``: :func:`warp_match_rank` ranks one register
  slot of a *warp-striped* tile (warp ``w`` owns items ``[w*32*R, (w+1)*32*R)``, lane ``l`` of it
  the items ``w*32*R + s*32 + l``, ``s < R``) with ``match.any.sync`` over the lanes
  (:func:`warp_ballot_rank`: the same from one ballot per digit bit, which the onesweep sort uses:
  ``match.any`` measured slow on the H100), and the lowest
  lane of every group of equal digits adds the group's size to the warp's counter for that digit in
  shared memory (``atom.shared.add``) and broadcasts the old count (``shfl.sync``); the ballot form
  does without both: every lane reads its counter and the group's highest lane writes it back plus
  the group's size (the counters are the warp's own, one writer per word and slot). Called slot by
  slot, it leaves in the counters the warp's digit histogram and returns each key's rank among the
  warp's keys of the same digit; the caller scans the ``[WARPS, RADIX]`` counters to finish the
  tile ranking. This is CUB's ``BlockRadixRankMatch`` scheme; measurements in
  ``bench/probes/RADIX_RANK_NOTES.md``.

The shared-memory helpers address Triton's dynamic shared memory (``global_smem``) by 32-bit word
index: the caller allocates one buffer with ``gl.allocate_shared_memory`` as the kernel's first and
only explicit allocation, so it starts at offset 0 (Triton places its own scratch after it; the GPU
tests compare every fast-path kernel with the portable one, which would catch a change), and separates the accesses made here from its own with ``gl.thread_barrier()``.
"""
from __future__ import annotations

import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from ..thread.radix_traits import extract_digit, to_ordered_bits


# ----------------------------------------------------------------------------------------------
# Portable tl ranking
# ----------------------------------------------------------------------------------------------

@triton.jit
def block_radix_rank(digits, RADIX_BITS: tl.constexpr, valid=None):
    """Stable ranks of a 1-D tile of digits in ``[0, 2**RADIX_BITS)``.

    Returns ``(ranks, exclusive_digit_prefix, digit_counts)``: ``ranks`` int32 like ``digits``
    (the key's position in a stable sort of the tile by digit), the ``[2**RADIX_BITS]`` exclusive
    prefix of the digit histogram and the histogram itself. ``valid`` (optional boolean tile) leaves
    keys out: they are not counted, and their rank is meaningless.
    """
    RADIX: tl.constexpr = 1 << RADIX_BITS
    bins = tl.arange(0, RADIX)
    onehot = (digits[:, None] == bins[None, :])
    if valid is not None:
        onehot = onehot & valid[:, None]
    onehot = onehot.to(tl.int32)
    counts = tl.sum(onehot, 0)
    excl = tl.cumsum(counts, 0) - counts
    before = tl.cumsum(onehot, 0) - onehot          # equal digits before each key
    ranks = tl.sum(onehot * (before + excl[None, :]), 1)
    return ranks, excl, counts


@triton.jit
def block_radix_rank_keys(keys, begin_bit, RADIX_BITS: tl.constexpr, DESCENDING: tl.constexpr = False,
                          valid=None):
    """:func:`block_radix_rank` of the digit ``[begin_bit, begin_bit + RADIX_BITS)`` of keys of any
    supported dtype (ordered as torch orders them; ``DESCENDING`` reverses the order). The digit is
    taken from the ordered bits (``to_ordered_bits``), so the optional digit counts and exclusive digit
    prefix are indexed by that digit: with ``DESCENDING`` the complemented bits' digit, ``2**RADIX_BITS
    - 1 - d`` for a key whose ascending digit is ``d`` (CUB's BlockRadixRank flips that index back:
    read entry ``2**RADIX_BITS - 1 - d`` here where CUB code reads ``d``)."""
    d = extract_digit(to_ordered_bits(keys, DESCENDING), begin_bit, RADIX_BITS)
    return block_radix_rank(d, RADIX_BITS, valid)


# ----------------------------------------------------------------------------------------------
# Warp-synchronous fast path (compiled NVIDIA kernels only)
# ----------------------------------------------------------------------------------------------

# $1: the 32-bit word index (warp * RADIX + digit) of the warp's counter for this key's digit.
# Returns the number of keys of the same digit in this warp before this one (earlier slots, then
# lower lanes of this slot).
_MATCH_RANK_ASM = gl.constexpr("""{
.reg .b32 pe, lt, bl, ct, ad, ol, ll, tt;
.reg .pred p;
match.any.sync.b32 pe, $1, -1;
mov.u32 lt, %lanemask_lt;
and.b32 bl, pe, lt;
popc.b32 bl, bl;
popc.b32 ct, pe;
setp.eq.u32 p, bl, 0;
mov.u32 ad, global_smem;
shl.b32 tt, $1, 2;
add.u32 ad, ad, tt;
mov.u32 ol, 0;
@p atom.shared.add.u32 ol, [ad], ct;
neg.s32 tt, pe;
and.b32 tt, tt, pe;
bfind.u32 ll, tt;
shfl.sync.idx.b32 ol, ol, ll, 31, -1;
add.u32 $0, ol, bl;
}""")

def _smem_access_asm(access: str, shift: int = 2) -> str:
    """PTX of one element-wise ``global_smem`` access at byte ``$1 << shift`` (word ``$1``; 8-byte
    words with ``shift`` 3): ``access`` addresses it as ``[ad]``."""
    return "\n".join(["{", ".reg .b32 ad, tt;", "mov.u32 ad, global_smem;", f"shl.b32 tt, $1, {shift};",
                      "add.u32 ad, ad, tt;", access, "}"])


_LDS_ASM = gl.constexpr(_smem_access_asm("ld.shared.u32 $0, [ad];"))
_STS_ASM = gl.constexpr(_smem_access_asm("st.shared.u32 [ad], $2;\nmov.u32 $0, 0;"))
_LDS64_ASM = gl.constexpr(_smem_access_asm("ld.shared.u64 $0, [ad];", 3))
_STS64_ASM = gl.constexpr(_smem_access_asm("st.shared.u64 [ad], $2;\nmov.u32 $0, 0;", 3))
_COUNT_ASM = gl.constexpr(_smem_access_asm("red.shared.add.u32 [ad], 1;\nmov.u32 $0, 0;"))


def _red_if_asm(op: str, value: str, flag: str) -> str:
    """PTX of an element-wise ``red.shared.<op> [global_smem + 4 * $1], value`` where ``flag != 0``."""
    return "\n".join(["{", ".reg .b32 ad, tt;", ".reg .pred p;", f"setp.ne.u32 p, {flag}, 0;",
                      "mov.u32 ad, global_smem;", "shl.b32 tt, $1, 2;", "add.u32 ad, ad, tt;",
                      f"@p red.shared.{op} [ad], {value};", "mov.u32 $0, 0;", "}"])


_OR_IF_ASM = gl.constexpr(_red_if_asm("or.b32", "$2", "$3"))
_COUNT_IF_ASM = gl.constexpr(_red_if_asm("add.u32", "1", "$2"))


def _match_rank_asm(pack: int) -> str:
    """PTX for ``pack`` consecutive slots at once: all matches first, then all counter atomics (in
    slot order: shared-memory atomics of one warp to one address complete in issue order), then all
    broadcasts, so the slots' latencies overlap instead of adding up."""
    P = pack
    lines = ["{", f".reg .b32 pe<{P}>, bl<{P}>, ct<{P}>, ad<{P}>, ol<{P}>, ll<{P}>, tt<{P}>, lt, bs;",
             f".reg .pred p<{P}>;", "mov.u32 lt, %lanemask_lt;", "mov.u32 bs, global_smem;"]
    for i in range(P):
        lines.append(f"match.any.sync.b32 pe{i}, ${P + i}, -1;")
    for i in range(P):
        lines += [f"and.b32 bl{i}, pe{i}, lt;", f"popc.b32 bl{i}, bl{i};", f"popc.b32 ct{i}, pe{i};",
                  f"setp.eq.u32 p{i}, bl{i}, 0;", f"shl.b32 tt{i}, ${P + i}, 2;", f"add.u32 ad{i}, bs, tt{i};",
                  f"mov.u32 ol{i}, 0;"]
    for i in range(P):
        lines.append(f"@p{i} atom.shared.add.u32 ol{i}, [ad{i}], ct{i};")
    for i in range(P):
        lines += [f"neg.s32 tt{i}, pe{i};", f"and.b32 tt{i}, tt{i}, pe{i};", f"bfind.u32 ll{i}, tt{i};"]
    for i in range(P):
        lines.append(f"shfl.sync.idx.b32 ol{i}, ol{i}, ll{i}, 31, -1;")
    for i in range(P):
        lines.append(f"add.u32 ${i}, ol{i}, bl{i};")
    lines.append("}")
    return "\n".join(lines)


@triton.constexpr_function
def _peers_by_ballots(word, bits):
    """PTX lines setting ``pe`` to the lanes whose ``word`` agrees with this lane's in bits
    ``0..bits-1`` (the words of one warp must agree above them): one ``vote.ballot`` per bit, inverted
    where this lane's bit is clear, and the ballots ANDed three at a time (``lop3``; ptxas keeps a
    chain of two-input ANDs as written). More instructions than one ``match.any``, but all of them
    full-rate (``match.any`` made the onesweep pass 1.5x slower on the H100).

    The ranking is bound by the integer ALU pipe (logic, compares, shifts; half a warp instruction
    per cycle per scheduler on sm_90), so the inversions are multiply-adds instead, ``~b = b * -1 +
    -1``, which issue to the FMA pipe: with ``-1`` read from a register ptxas cannot fold (``m1``,
    ``%lanemask_lt | %lanemask_ge``), as it turns a literal ``-1`` back into an ALU operation.
    Declares nothing: needs ``.reg .b32 v<bits>, m1``; uses ``tt``, ``p``."""
    lines = ["mov.u32 m1, %lanemask_lt;", "mov.u32 tt, %lanemask_ge;", "or.b32 m1, m1, tt;"]
    for i in range(bits):
        lines += [f"and.b32 tt, {word}, {1 << i};", "setp.ne.u32 p, tt, 0;", f"vote.sync.ballot.b32 v{i}, p, -1;",
                  f"@!p mad.lo.s32 v{i}, v{i}, m1, m1;"]
    if bits % 2 == 0:
        lines.append("and.b32 pe, v0, v1;")
    else:
        lines.append("mov.b32 pe, v0;")
    for i in range(2 - bits % 2, bits, 2):   # pe &= v_i & v_i+1 (ptxas folds the mov into the first)
        lines.append(f"lop3.b32 pe, pe, v{i}, v{i + 1}, 0x80;")
    return lines


@triton.constexpr_function
def _rank_from_peers(out):
    """PTX lines ranking a key among its warp's keys of one counter word (address ``ad``), given its
    peers ``pe`` in this slot: every lane reads the counter (one broadcast per distinct word),
    ``out`` = counter + the peers in lower lanes, and the group's highest lane writes back its own
    ``out + 1``, which is the counter plus the group's size (without a ``popc`` of the group). The
    counters are the warp's own, so no atomics (and no broadcast of an atomic's old value) are
    needed; the warp barrier orders the write before the next slot's reads. Needs ``lt`` and ``gt``
    (``%lanemask_lt``, ``%lanemask_gt``); uses ``bl``, ``ol``, ``tt``, ``p`` (true in the writing lane)."""
    return ["and.b32 bl, pe, lt;", "popc.b32 bl, bl;", "and.b32 tt, pe, gt;", "setp.eq.u32 p, tt, 0;",
            "ld.shared.u32 ol, [ad];", f"add.u32 {out}, ol, bl;", f"add.u32 tt, {out}, 1;",
            "@p st.shared.u32 [ad], tt;", "bar.warp.sync -1;"]


@triton.constexpr_function
def _ballot_rank_asm(bits, store=False, store_words=1, extra_at=None):
    """The ranking of :data:`_MATCH_RANK_ASM` with the peer mask built from ballots
    (:func:`_peers_by_ballots` over bits ``0..bits-1`` of ``$1``) and the warp's counter read and
    written back by the group's highest lane instead of an atomic (:func:`_rank_from_peers`).
    ``store``: then write ``$2`` at word ``$0`` of ``global_smem`` (``store_words`` 2: ``$2, $3`` at
    words ``2 * $0`` and ``2 * $0 + 1``, one 8-byte store); ``extra_at``: and the next operand at word
    ``extra_at + $0``."""
    lines = ["{", ".reg .b32 pe, lt, gt, bl, ad, ol, tt, m1;", f".reg .b32 v<{bits}>;", ".reg .pred p;",
             "mov.u32 lt, %lanemask_lt;",
             "mov.u32 gt, %lanemask_gt;", "mov.u32 ad, global_smem;", "shl.b32 tt, $1, 2;", "add.u32 ad, ad, tt;"]
    lines += _peers_by_ballots("$1", bits) + _rank_from_peers("$0")
    if store and store_words == 2:
        lines += ["shl.b32 tt, $0, 3;", "mov.u32 ad, global_smem;", "add.u32 ad, ad, tt;",
                  "st.shared.v2.u32 [ad], {$2, $3};"]
    elif store:
        lines += ["shl.b32 tt, $0, 2;", "mov.u32 ad, global_smem;", "add.u32 ad, ad, tt;", "st.shared.u32 [ad], $2;"]
    if store and extra_at is not None:
        lines += ["shl.b32 tt, $0, 2;", "mov.u32 ad, global_smem;", "add.u32 ad, ad, tt;",
                  f"st.shared.u32 [ad+{4 * extra_at}], ${2 + store_words};"]
    lines.append("}")
    return "\n".join(lines)


@triton.constexpr_function
def _mixed_rank_asm(radix_bits, slots, or_every, mask_offset):
    """PTX ranking ``slots`` consecutive register slots in one block (slot after slot, in tile
    order): slot ``i`` finds its peers by ballots (as :func:`_ballot_rank_asm`) unless
    ``i % or_every == 0`` (``or_every`` > 0), where it finds them in shared memory instead (CUB's
    ``WARP_MATCH_ATOMIC_OR``): every lane ORs its lane bit into the warp's mask word for its digit
    (word ``$k + mask_offset``, ``$k`` the slot's counter word), reads it back after a warp barrier,
    and the group's highest lane resets it to zero after the counter update. The mask words must be
    zero before the call (any lane of the warp may have zeroed them) and are zero again after it.

    Ballots cost instructions (per 8-bit digit 8 bit tests, 8 votes, up to 8 inversions and 4 ANDs),
    the mask words shared-memory traffic and latency; measured on the H100 (with the counters then
    updated by an atomic) every mix was slower than ballots alone
    (``bench/probes/RADIX_RANK_NOTES.md``, round 12), so the policies keep ``or_every`` 0."""
    lines = ["{", ".reg .b32 pe, lt, gt, eq, bl, ad, ma, ol, tt, m1, base;", f".reg .b32 v<{radix_bits}>;",
             ".reg .pred p;",
             "mov.u32 lt, %lanemask_lt;", "mov.u32 gt, %lanemask_gt;", "mov.u32 eq, %lanemask_eq;",
             "mov.u32 base, global_smem;"]
    uses_or = or_every > 0
    if uses_or:
        lines.append("bar.warp.sync -1;")   # (other lanes' zeroing of the mask words, before any OR)
    for i in range(slots):
        word = f"${slots + i}"
        by_or = uses_or and i % or_every == 0
        lines += [f"shl.b32 tt, {word}, 2;", "add.u32 ad, base, tt;"]
        if by_or:
            lines += [f"add.s32 ma, ad, {4 * mask_offset};", "red.shared.or.b32 [ma], eq;", "bar.warp.sync -1;",
                      "ld.shared.b32 pe, [ma];"]
        else:
            lines += _peers_by_ballots(word, radix_bits)
        lines += _rank_from_peers(f"${i}")
        if by_or:   # (after the counter's write-back, whose warp barrier ordered every lane's mask read)
            lines += ["@p st.shared.b32 [ma], 0;", "bar.warp.sync -1;"]
    lines.append("}")
    return "\n".join(lines)


@triton.constexpr_function
def _mixed_rank_constraints(slots):
    return ",".join(["=r"] * slots + ["r"] * slots)


_MATCH_RANK_ASM2 = gl.constexpr(_match_rank_asm(2))
_MATCH_RANK_ASM4 = gl.constexpr(_match_rank_asm(4))


@gluon.jit
def warp_match_rank_packed(word, PACK: gl.constexpr):
    """:func:`warp_match_rank` over ``PACK`` (1, 2 or 4) consecutive register slots per asm block."""
    if PACK == 4:
        return gl.inline_asm_elementwise(_MATCH_RANK_ASM4, "=r,=r,=r,=r,r,r,r,r", [word], dtype=gl.int32,
                                         is_pure=False, pack=4)
    elif PACK == 2:
        return gl.inline_asm_elementwise(_MATCH_RANK_ASM2, "=r,=r,r,r", [word], dtype=gl.int32,
                                         is_pure=False, pack=2)
    else:
        return gl.inline_asm_elementwise(_MATCH_RANK_ASM, "=r,r", [word], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def warp_ballot_rank(word, RADIX_BITS: gl.constexpr):
    """:func:`warp_match_rank` with the peers found by ballots over the ``RADIX_BITS`` low bits of
    ``word`` (the digit: every word of a warp must have the same bits above it) instead of
    ``match.any``."""
    return gl.inline_asm_elementwise(_ballot_rank_asm(RADIX_BITS), "=r,r", [word], dtype=gl.int32, is_pure=False,
                                     pack=1)


@gluon.jit
def warp_mixed_rank(word, RADIX_BITS: gl.constexpr, SLOTS: gl.constexpr, OR_EVERY: gl.constexpr,
                    MASK_OFFSET: gl.constexpr):
    """:func:`warp_ballot_rank` of a tile with ``SLOTS`` register slots per thread in one asm block
    (:func:`_mixed_rank_asm`): every ``OR_EVERY``-th slot (0: none) finds its peers through the warp's
    zeroed mask word ``word + MASK_OFFSET`` in ``global_smem`` instead of ballots."""
    return gl.inline_asm_elementwise(_mixed_rank_asm(RADIX_BITS, SLOTS, OR_EVERY, MASK_OFFSET),
                                     _mixed_rank_constraints(SLOTS), [word], dtype=gl.int32, is_pure=False,
                                     pack=SLOTS)


@gluon.jit
def warp_ballot_rank_store(word, value, RADIX_BITS: gl.constexpr):
    """:func:`warp_ballot_rank`, then each key writes int32 ``value`` at word ``rank`` of
    ``global_smem`` in the same asm block (slot by slot: the ranks need not be kept in registers).
    Returns the ranks."""
    return gl.inline_asm_elementwise(_ballot_rank_asm(RADIX_BITS, True), "=r,r,r", [word, value], dtype=gl.int32,
                                     is_pure=False, pack=1)


@gluon.jit
def _low_high_words(value):
    """The low and high 32 bits of a 64-bit ``value``, as int32."""
    bits = value.to(gl.uint64, bitcast=True)
    lo = (bits & 0xFFFFFFFF).to(gl.uint32).to(gl.int32, bitcast=True)
    return lo, (bits >> 32).to(gl.uint32).to(gl.int32, bitcast=True)


@gluon.jit
def warp_ballot_rank_store64(word, value, RADIX_BITS: gl.constexpr):
    """:func:`warp_ballot_rank_store` of a 64-bit ``value``: written at bytes ``8 * rank`` of
    ``global_smem`` (its low word first). Returns the ranks."""
    lo, hi = _low_high_words(value)
    return gl.inline_asm_elementwise(_ballot_rank_asm(RADIX_BITS, True, 2), "=r,r,r,r", [word, lo, hi],
                                     dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def warp_ballot_rank_store_with(word, value, extra, RADIX_BITS: gl.constexpr, EXTRA_AT: gl.constexpr):
    """:func:`warp_ballot_rank_store` (32-bit ``value``) or :func:`warp_ballot_rank_store64` (64-bit),
    and int32 ``extra`` written at word ``EXTRA_AT + rank`` in the same asm block. Returns the ranks."""
    if value.dtype.primitive_bitwidth == 64:
        lo, hi = _low_high_words(value)
        return gl.inline_asm_elementwise(_ballot_rank_asm(RADIX_BITS, True, 2, EXTRA_AT), "=r,r,r,r,r",
                                         [word, lo, hi, extra], dtype=gl.int32, is_pure=False, pack=1)
    else:
        return gl.inline_asm_elementwise(_ballot_rank_asm(RADIX_BITS, True, 1, EXTRA_AT), "=r,r,r,r",
                                         [word, value.to(gl.int32, bitcast=True), extra], dtype=gl.int32,
                                         is_pure=False, pack=1)


@gluon.jit
def warp_match_rank(word):
    """Per key: rank among the warp's earlier keys of the same counter word (see module doc).
    Must be called on a warp-striped tile, whole warps converged; bumps the counters."""
    return gl.inline_asm_elementwise(_MATCH_RANK_ASM, "=r,r", [word], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def smem_load_words(word):
    """``global_smem`` as int32 words, read at ``word`` (element-wise gather)."""
    return gl.inline_asm_elementwise(_LDS_ASM, "=r,r", [word], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def smem_store_words(word, value):
    """Write int32 ``value`` at word ``word`` of ``global_smem`` (element-wise scatter); returns zeros
    (use them, e.g. ``gl.sum(ret, 0) * 0``, only if an ordering dependency is needed)."""
    return gl.inline_asm_elementwise(_STS_ASM, "=r,r,r", [word, value], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def smem_load_dwords(index):
    """``global_smem`` as 64-bit words (int64), read at ``index`` (byte ``8 * index``)."""
    return gl.inline_asm_elementwise(_LDS64_ASM, "=l,r", [index], dtype=gl.int64, is_pure=False, pack=1)


@gluon.jit
def smem_store_dwords(index, value):
    """Write 64-bit ``value`` at byte ``8 * index`` of ``global_smem``; returns zeros (int32)."""
    return gl.inline_asm_elementwise(_STS64_ASM, "=r,r,l", [index, value.to(gl.int64, bitcast=True)],
                                     dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def smem_count_words(word):
    """Add 1 to word ``word`` of ``global_smem`` (``red.shared.add``); returns zeros."""
    return gl.inline_asm_elementwise(_COUNT_ASM, "=r,r", [word], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def smem_or_words_if(word, bits, flag):
    """OR int32 ``bits`` into word ``word`` of ``global_smem`` where ``flag`` (int32) is non-zero
    (``red.shared.or``: a shared-memory bitmap); returns zeros."""
    return gl.inline_asm_elementwise(_OR_IF_ASM, "=r,r,r,r", [word, bits, flag], dtype=gl.int32, is_pure=False,
                                     pack=1)


@gluon.jit
def smem_count_words_if(word, flag):
    """Add 1 to word ``word`` of ``global_smem`` where ``flag`` (int32) is non-zero; returns zeros."""
    return gl.inline_asm_elementwise(_COUNT_IF_ASM, "=r,r,r", [word, flag], dtype=gl.int32, is_pure=False,
                                     pack=1)
