"""Rows and segments of 64-bit keys: the shared-memory block radix sort with two words a key
(``segmented_sort.WIDE_KEYS_BLOCK_RADIX`` on) against the shipped paths (the tile sort up to
``WIDE_KEYS_MAX_BLOCK``, the device radix sort past it), in one process (the remembered launches cleared
between them); every result checked against torch first (a mismatch stops the probe); GPU time per call
(profiler), torch's alongside.

    PYTHONPATH=. python bench/probes/sort64_block_radix_probe.py [short]

``short``: rows of 129-512 keys and top-k of 64-bit rows instead of the long rows. "shipped" is the flag off
(the paths before it was turned on).
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us  # noqa: E402
from _switches import with_segmented_sort_value  # noqa: E402
import tritoncub  # noqa: E402,F401

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(2)


def with_flag(on, fn):
    return with_segmented_sort_value("WIDE_KEYS_BLOCK_RADIX", on, fn)


LONG_SHAPES = ((1, 1024), (1, 2048), (1, 4096), (1, 8192), (16, 3000), (132, 4096), (1024, 1024),
               (1024, 3000), (1024, 4096), (4096, 512), (16384, 700))
#: ``short``: rows of 129-512 keys, the shortest the block radix sort takes (RADIX_MIN_BLOCK 256), and top-k
SHORT_SHAPES = ((65536, 129), (65536, 200), (32768, 256), (16384, 300), (8192, 512), (1, 256), (1, 500))
TOPK = (((4096, 1000), 16), ((65536, 128), 100), ((16, 1 << 18), 1000), ((1024, 4096), 512), ((1, 1 << 20), 4000))


def rows(shape, dtype):
    return (torch.randn(shape, device=d, generator=g, dtype=dtype) if dtype.is_floating_point else
            torch.randint(-(1 << 62), 1 << 62, shape, device=d, generator=g, dtype=dtype))


def main():
    short = sys.argv[1:] == ["short"]
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    for dtype in (torch.int64, torch.float64):
        if short:
            for shape, k in TOPK:
                x = rows(shape, dtype)
                ref = torch.topk(x, k)[0]
                line = f"{str(dtype)[6:]:8s} {str(shape):13s} topk k={k}"
                for label, on in (("shipped", False), ("block radix", True)):
                    assert torch.equal(with_flag(on, lambda: ops.topk(x, k)[0]), ref), (dtype, shape, label)
                    line += f" | {label} {with_flag(on, lambda: gpu_us(lambda: ops.topk(x, k))):8.1f}"
                print(f"{line} | torch {gpu_us(lambda: torch.topk(x, k)):8.1f} us", flush=True)
        for shape in SHORT_SHAPES if short else LONG_SHAPES:
            x = rows(shape, dtype)
            ref = torch.sort(x, stable=True)
            line = f"{str(dtype)[6:]:8s} {str(shape):13s} sort"
            for label, on in (("shipped", False), ("block radix", True)):
                v, i = with_flag(on, lambda: ops.sort(x))
                assert torch.equal(v, ref[0]) and torch.equal(i, ref[1]), (dtype, shape, label)
                line += f" | {label} {with_flag(on, lambda: gpu_us(lambda: ops.sort(x))):8.1f}"
            print(f"{line} | torch {gpu_us(lambda: torch.sort(x, stable=True)):8.1f} us", flush=True)
        x = torch.randint(-(1 << 62), 1 << 62, (64 * 3000,), device=d, generator=g).to(dtype)
        offs = torch.arange(65, device=d) * 3000
        ref = torch.sort(x.view(64, 3000), stable=True)[0].view(-1)
        line = f"{str(dtype)[6:]:8s} segmented_sort 64 x 3000"
        for label, on in (("shipped", False), ("block radix", True)):
            assert torch.equal(with_flag(on, lambda: ops.segmented_sort(x, offs)), ref), label
            line += f" | {label} {with_flag(on, lambda: gpu_us(lambda: ops.segmented_sort(x, offs))):8.1f}"
        print(line + " us", flush=True)


if __name__ == "__main__":
    main()
