"""Sorts of rows of 64-bit keys around the tile sort's limit for them (segmented_sort.WIDE_KEYS_MAX_BLOCK):
GPU time per call (profiler) of the sort operator, a segmented sort and top-k, with torch's in the same
run. Run once per tree to compare (PYTHONPATH=<old tree>:. for the one before the limit).

    PYTHONPATH=. python bench/probes/sort64_limit_ab.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us  # noqa: E402
import tritoncub  # noqa: E402,F401

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(0)


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, tritoncub.__file__, flush=True)
    for dtype in (torch.int64,):
        for shape in ((1, 1024), (1, 2048), (1, 3000), (1, 4096), (16, 2048), (16, 3000), (132, 4096),
                      (1024, 3000), (1024, 4096)):
            x = (torch.randn(shape, device=d, generator=g, dtype=dtype) if dtype.is_floating_point else
                 torch.randint(-(1 << 62), 1 << 62, shape, device=d, generator=g, dtype=dtype))
            ref = torch.sort(x, stable=True)
            v, i = ops.sort(x)
            ok = torch.equal(v, ref[0]) and torch.equal(i, ref[1])
            print(f"sort {str(dtype):14s} {str(shape):13s} ours {gpu_us(lambda: ops.sort(x)):8.1f} "
                  f"torch {gpu_us(lambda: torch.sort(x, stable=True)):8.1f} us{'' if ok else ' DIFF'}", flush=True)
    x = torch.randint(-(1 << 62), 1 << 62, (64 * 3000,), device=d, generator=g)
    offs = torch.arange(65, device=d) * 3000
    ref = torch.sort(x.view(64, 3000), stable=True)[0].view(-1)
    ok = torch.equal(ops.segmented_sort(x, offs), ref)
    print(f"segmented_sort int64 64 x 3000 ours {gpu_us(lambda: ops.segmented_sort(x, offs)):8.1f} us"
          f"{'' if ok else ' DIFF'}", flush=True)
    r = torch.randint(-(1 << 62), 1 << 62, (64, 32000), device=d, generator=g)
    ref = torch.topk(r, 3000)[0]
    ok = torch.equal(ops.topk(r, 3000)[0], ref)
    print(f"topk int64 (64, 32000) k=3000 ours {gpu_us(lambda: ops.topk(r, 3000)):8.1f} "
          f"torch {gpu_us(lambda: torch.topk(r, 3000)):8.1f} us{'' if ok else ' DIFF'}", flush=True)


if __name__ == "__main__":
    main()
