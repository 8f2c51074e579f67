"""BlockRadixRank: stable digit ranks of a tile, the exclusive digit prefix, the seed's example."""
import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE
from ptx_sim import run_warp_ptx as _run_warp_ptx
from tritoncub.block.radix_rank import block_radix_rank, block_radix_rank_keys


@triton.jit
def _rank_keys_kernel(k_ptr, r_ptr, p_ptr, n, BEGIN, RADIX_BITS: tl.constexpr, DESC: tl.constexpr,
                      TILE: tl.constexpr):
    o = tl.arange(0, TILE)
    m = o < n
    k = tl.load(k_ptr + o, mask=m)
    ranks, prefix, counts = block_radix_rank_keys(k, BEGIN, RADIX_BITS, DESC, valid=m)
    tl.store(r_ptr + o, ranks, mask=m)
    tl.store(p_ptr + tl.arange(0, 1 << RADIX_BITS), prefix)


@triton.jit
def _rank_digits_kernel(d_ptr, r_ptr, c_ptr, RADIX_BITS: tl.constexpr, TILE: tl.constexpr):
    o = tl.arange(0, TILE)
    ranks, prefix, counts = block_radix_rank(tl.load(d_ptr + o), RADIX_BITS)
    tl.store(r_ptr + o, ranks)
    tl.store(c_ptr + tl.arange(0, 1 << RADIX_BITS), counts)


def _ref_ranks(digits: torch.Tensor) -> torch.Tensor:
    order = torch.sort(digits, stable=True).indices
    r = torch.empty_like(order)
    r[order] = torch.arange(digits.numel())
    return r


def test_seed_example():
    # CUB's BlockRadixRank example: keys {16, 10, 9, 11}, lowest 5 bits -> ranks {3, 1, 0, 2}
    keys = torch.tensor([16, 10, 9, 11], dtype=torch.int32, device=DEVICE).view(torch.uint32) \
        if hasattr(torch, "uint32") else torch.tensor([16, 10, 9, 11], dtype=torch.int32, device=DEVICE)
    ranks = torch.full((4,), -1, dtype=torch.int32, device=DEVICE)
    prefix = torch.empty(32, dtype=torch.int32, device=DEVICE)
    _rank_keys_kernel[(1,)](keys, ranks, prefix, 4, 0, RADIX_BITS=5, DESC=False, TILE=4)
    assert ranks.cpu().tolist() == [3, 1, 0, 2]
    p = prefix.cpu()
    assert p[9] == 0 and p[10] == 1 and p[11] == 2 and p[12] == 3 and p[16] == 3 and p[17] == 4


@pytest.mark.parametrize("radix_bits", [1, 3, 5, 8])
def test_random_digits_stable(radix_bits):
    tile = 256
    d = torch.randint(0, 1 << radix_bits, (tile,), dtype=torch.int32)
    d[10:60] = d[10]  # a run of duplicates
    ranks = torch.empty(tile, dtype=torch.int32, device=DEVICE)
    counts = torch.empty(1 << radix_bits, dtype=torch.int32, device=DEVICE)
    _rank_digits_kernel[(1,)](d.to(DEVICE), ranks, counts, RADIX_BITS=radix_bits, TILE=tile)
    assert torch.equal(ranks.cpu().long(), _ref_ranks(d))
    assert torch.equal(counts.cpu().long(), torch.bincount(d.long(), minlength=1 << radix_bits))


@pytest.mark.parametrize("desc", [False, True])
def test_keys_bit_window_partial_tile(desc):
    n, tile = 45, 64
    keys = (torch.randn(n) * 100).to(torch.float32)
    keys[::7] = -0.0
    ranks = torch.full((tile,), -1, dtype=torch.int32, device=DEVICE)
    prefix = torch.empty(16, dtype=torch.int32, device=DEVICE)
    _rank_keys_kernel[(1,)](keys.to(DEVICE), ranks, prefix, n, 24, RADIX_BITS=4, DESC=desc, TILE=tile)
    bits = keys.view(torch.int32).long() & 0xFFFFFFFF
    bits = torch.where(bits == 0x80000000, 0, bits)
    ordered = torch.where(bits >= 0x80000000, bits ^ 0xFFFFFFFF, bits | 0x80000000)
    if desc:
        ordered = ordered ^ 0xFFFFFFFF
    digit = (ordered >> 24) & 15
    assert torch.equal(ranks[:n].cpu().long(), _ref_ranks(digit))
    cnt = torch.bincount(digit, minlength=16)
    assert torch.equal(prefix.cpu().long(), torch.cumsum(cnt, 0) - cnt)


@pytest.mark.parametrize("radix_bits, slots, or_every", [(8, 8, 0), (8, 8, 4), (6, 16, 3), (5, 1, 1), (7, 4, 2)])
def test_mixed_rank_asm_slots(radix_bits, slots, or_every):
    # the warp ranking's PTX (run by the GPU tests of the block radix sort): slot i finds its peers
    # through mask words exactly when or_every > 0 and i % or_every == 0, by radix_bits ballots
    # otherwise, and every slot reads its counter, writes it back from one lane and yields $i
    import re
    from tritoncub.block.radix_rank import _mixed_rank_asm, _mixed_rank_constraints
    ptx = _mixed_rank_asm(radix_bits, slots, or_every, 1024)
    # each slot starts with the address of its counter word, operand $(slots + i)
    starts = [(m.start(), int(m.group(1))) for m in re.finditer(r"shl\.b32 tt, \$(\d+), 2;", ptx)]
    assert [k for _, k in starts] == [slots + i for i in range(slots)]
    ends = [pos for pos, _ in starts[1:]] + [len(ptx)]
    for i, ((begin, _), end) in enumerate(zip(starts, ends)):
        part = ptx[begin:end]
        by_or = or_every > 0 and i % or_every == 0
        assert part.count("red.shared.or.b32") == int(by_or)
        assert part.count("vote.sync.ballot.b32") == (0 if by_or else radix_bits)
        assert part.count("ld.shared.u32 ol, [ad];") == 1 and part.count("@p st.shared.u32 [ad], tt;") == 1
        assert f"add.u32 ${i}, ol, bl;" in part
        # the warp barriers the simulation below does not model: after the counter's write-back (before
        # the next slot reads counters), and around the mask word (every lane's OR before any read)
        lines = [ln for ln in part.splitlines() if ln and ln != "}"]
        assert lines.index("bar.warp.sync -1;", lines.index("@p st.shared.u32 [ad], tt;")) > 0
        if by_or:
            k = lines.index("red.shared.or.b32 [ma], eq;")
            assert lines[k + 1:k + 3] == ["bar.warp.sync -1;", "ld.shared.b32 pe, [ma];"]
            assert lines[-2:] == ["@p st.shared.b32 [ma], 0;", "bar.warp.sync -1;"]
    assert _mixed_rank_constraints(slots).split(",") == ["=r"] * slots + ["r"] * slots


def _edge_slots(radix: int, g) -> list[list[int]]:
    """Digits of a warp's slots: all equal (the largest digit), all distinct, one lane alone at each
    end, then random slots alternating between 3 digits and all of them."""
    slots = [[radix - 1] * 32, [(7 * ln) % radix for ln in range(32)], [1] + [2] * 30 + [1],
             [0] * 31 + [radix - 1]]
    for i in range(4):
        slots.append(torch.randint(0, radix if i % 2 else 3, (32,), generator=g).tolist())
    return slots


def _expected_ranks(slots: list[list[int]], start: list[int]) -> tuple[list[list[int]], list[int]]:
    seen, ranks = list(start), []
    for ds in slots:
        ranks.append([])
        for d in ds:
            ranks[-1].append(seen[d])
            seen[d] += 1
    return ranks, seen


@pytest.mark.parametrize("radix_bits", [5, 6, 7, 8])
@pytest.mark.parametrize("store_words, extra_at", [(0, None), (1, None), (2, None), (1, 1 << 17), (2, 3 << 16)])
def test_ballot_rank_ptx_simulated(radix_bits, store_words, extra_at):
    # the PTX of the warp ranking by ballots (warp_ballot_rank[_store[64]], run only by the GPU tests
    # otherwise), slot after slot: each key's rank is its digit's counter plus the equal digits in
    # earlier slots and lower lanes, the counters end as start + the warp's histogram, and the store
    # variants write each key's value at word `rank` (two words: at 8-byte word `rank`, low word first;
    # counters start 256 apart: ranks are unique), and with extra_at one more value at word
    # extra_at + rank
    from tritoncub.block.radix_rank import _ballot_rank_asm
    store = store_words > 0
    ptx = _ballot_rank_asm(radix_bits, store, max(store_words, 1), extra_at)
    g = torch.Generator().manual_seed(radix_bits)
    radix, base_word = 1 << radix_bits, 1 << 18      # counters at words base_word + digit (past any store)
    start = [256 * d for d in range(radix)]
    smem = {4 * (base_word + d): c for d, c in enumerate(start)}
    slots = _edge_slots(radix, g)
    want, seen = _expected_ranks(slots, start)
    for digits, ranks in zip(slots, want):
        values = [torch.randint(0, 1 << 30, (32,), generator=g).tolist() for _ in range(store_words)]
        extra = [torch.randint(0, 1 << 30, (32,), generator=g).tolist()] if extra_at is not None else []
        out = _run_warp_ptx(ptx, [[base_word + d for d in digits]] + values + extra, 1, smem)
        assert out[0] == ranks, digits
        for j, vals in enumerate(values):
            assert [smem.get(4 * (store_words * rk + j)) for rk in ranks] == vals, (digits, j)
        if extra:
            assert [smem.get(4 * (extra_at + rk)) for rk in ranks] == extra[0], digits
    assert [smem[4 * (base_word + d)] for d in range(radix)] == seen


@pytest.mark.parametrize("radix_bits, or_every, mask_offset", [(8, 0, 1024), (8, 4, 1024), (6, 3, -1024),
                                                               (5, 1, 1024), (7, 2, -4096), (8, 1, -1024)])
def test_mixed_rank_ptx_simulated(radix_bits, or_every, mask_offset):
    # the PTX of the mixed ranking (ballots, or mask words ORed in shared memory every or_every-th
    # slot; the sort's odd passes put the mask words before the counters) over all of a thread's
    # slots at once: ranks in tile order, counters, and mask words zero again at the end
    from tritoncub.block.radix_rank import _mixed_rank_asm
    radix, base_word = 1 << radix_bits, 1 << 13
    g = torch.Generator().manual_seed(radix_bits + or_every)
    slots = _edge_slots(radix, g)
    ptx = _mixed_rank_asm(radix_bits, len(slots), or_every, mask_offset)
    start = [(5 * d) % 17 for d in range(radix)]
    smem = {4 * (base_word + d): c for d, c in enumerate(start)}
    out = _run_warp_ptx(ptx, [[base_word + d for d in ds] for ds in slots], len(slots), smem)
    want, seen = _expected_ranks(slots, start)
    assert out == want
    assert [smem[4 * (base_word + d)] for d in range(radix)] == seen
    assert all(smem.get(4 * (base_word + mask_offset + d), 0) == 0 for d in range(radix))
