"""BlockRadixSort: one tile sorted (keys or pairs), bit ranges, both directions, striped output."""
import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE, make_data
from tritoncub.block.radix_sort import block_radix_sort_keys, block_radix_sort_pairs


@triton.jit
def _sort_pairs_kernel(k_ptr, ok_ptr, ov_ptr, n, B: tl.constexpr, E: tl.constexpr, RB: tl.constexpr,
                       DESC: tl.constexpr, STRIPED: tl.constexpr, THREADS: tl.constexpr, TILE: tl.constexpr):
    o = tl.arange(0, TILE)
    m = o < n
    k = tl.load(k_ptr + o, mask=m)
    kk, vv = block_radix_sort_pairs(k, o, B, E, RB, DESC, STRIPED, THREADS, valid=m)
    tl.store(ok_ptr + o, kk)
    tl.store(ov_ptr + o, vv)


@triton.jit
def _sort_keys_kernel(k_ptr, ok_ptr, B: tl.constexpr, E: tl.constexpr, RB: tl.constexpr, DESC: tl.constexpr,
                      TILE: tl.constexpr):
    o = tl.arange(0, TILE)
    tl.store(ok_ptr + o, block_radix_sort_keys(tl.load(k_ptr + o), B, E, RB, DESC))


@pytest.mark.parametrize("dtype,desc", [(torch.int16, False), (torch.float16, True), (torch.uint8, False),
                                        (torch.int8, True), (torch.bfloat16, False), (torch.bool, True),
                                        (torch.int32, False), (torch.float32, True), (torch.int64, True),
                                        (torch.float64, False)], ids=str)
def test_pairs_full_width(dtype, desc):
    n, tile = 100, 128
    k = torch.cat([make_data("special", 50, dtype, device="cpu"), make_data("few_unique", 50, dtype, device="cpu")])
    ok = torch.empty(tile, dtype=dtype, device=DEVICE)
    ov = torch.empty(tile, dtype=torch.int32, device=DEVICE)
    bits = 8 * k.element_size()
    _sort_pairs_kernel[(1,)](k.to(DEVICE), ok, ov, n, 0, bits, 4, desc, False, 1, TILE=tile)
    ref = torch.sort(k, descending=desc, stable=True)
    assert torch.equal(ov[:n].cpu().long(), ref.indices)
    assert torch.equal(ok[:n].cpu()[~torch.isnan(ref.values.float())] if dtype.is_floating_point else ok[:n].cpu(),
                       ref.values[~torch.isnan(ref.values.float())] if dtype.is_floating_point else ref.values)
    assert ov[n:].cpu().tolist() == list(range(n, tile))  # invalid items after the valid ones, in order


def test_bit_range_and_radix_bits():
    tile = 64
    k = torch.randint(-2**31, 2**31 - 1, (tile,), dtype=torch.int32)
    for b, e, rb in ((4, 13, 3), (0, 8, 8), (28, 32, 2)):
        ok = torch.empty(tile, dtype=torch.int32, device=DEVICE)
        _sort_keys_kernel[(1,)](k.to(DEVICE), ok, b, e, rb, False, TILE=tile)
        ordered = (k.long() & 0xFFFFFFFF) ^ 0x80000000
        ref = k[torch.sort((ordered >> b) & ((1 << (e - b)) - 1), stable=True).indices]
        assert torch.equal(ok.cpu(), ref), (b, e, rb)


def test_striped_output():
    tile, threads = 64, 8
    k = torch.randint(0, 1000, (tile,), dtype=torch.int32)
    ok = torch.empty(tile, dtype=torch.int32, device=DEVICE)
    ov = torch.empty(tile, dtype=torch.int32, device=DEVICE)
    _sort_pairs_kernel[(1,)](k.to(DEVICE), ok, ov, tile, 0, 32, 4, False, True, threads, TILE=tile)
    ref = torch.sort(k, stable=True)
    items = tile // threads
    # thread t (row t of [threads, items]) holds ranks t, t + threads, ...
    expect = ref.values.view(items, threads).t().reshape(-1)
    assert torch.equal(ok.cpu(), expect)
    assert torch.equal(ov.cpu().long(), ref.indices.view(items, threads).t().reshape(-1))


def test_empty_bit_range_still_moves_invalid_items_last():
    # BEGIN_BIT == END_BIT runs no pass; a non-prefix valid mask must still put the invalid items last
    tile = 16
    k = torch.randint(-1000, 1000, (tile,), dtype=torch.int32)
    valid = torch.arange(tile) % 3 == 0
    ok = torch.empty(tile, dtype=torch.int32, device=DEVICE)
    ov = torch.empty(tile, dtype=torch.int32, device=DEVICE)
    _sort_pairs_valid_kernel[(1,)](k.to(DEVICE), valid.to(torch.int32).to(DEVICE), ok, ov, 5, 5, TILE=tile)
    order = torch.cat([torch.nonzero(valid).view(-1), torch.nonzero(~valid).view(-1)])
    assert torch.equal(ov.cpu().long(), order)
    assert torch.equal(ok.cpu(), k[order])


@triton.jit
def _sort_pairs_valid_kernel(k_ptr, valid_ptr, ok_ptr, ov_ptr, B: tl.constexpr, E: tl.constexpr, TILE: tl.constexpr):
    o = tl.arange(0, TILE)
    kk, vv = block_radix_sort_pairs(tl.load(k_ptr + o), o, B, E, valid=tl.load(valid_ptr + o) != 0)
    tl.store(ok_ptr + o, kk)
    tl.store(ov_ptr + o, vv)
