"""BlockRadixRank: stable digit ranks of a tile, the exclusive digit prefix, the seed's example."""
import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE
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
    assert _mixed_rank_constraints(slots).split(",") == ["=r"] * slots + ["r"] * slots
