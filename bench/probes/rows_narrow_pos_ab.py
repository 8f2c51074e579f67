"""argmin/argmax of rows with the rows kernel's positions in int32 lanes (``ROWS_NARROW_POS``, the
default) against int64 ones, in one process: GPU time per call (profiler), torch's alongside. The
sweep had argmax of (16, 2^20) rows at 1.29x torch's GPU time, (4, 2^20) 1.10x, (4096, 1024) 1.11x
(``torch_sweep_probe-full-h200-20261202.log``).

    PYTHONPATH=. python bench/probes/rows_narrow_pos_ab.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us  # noqa: E402
import tritoncub  # noqa: E402,F401
from tritoncub.device import reduce as R, segmented_reduce as S  # noqa: E402

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(0)


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    for shape in ((16, 1 << 20), (4, 1 << 20), (4096, 1024), (1024, 4096), (65536, 128)):
        for dtype in (torch.float32, torch.bfloat16, torch.int32):
            x = (torch.randn(shape, device=d, generator=g).to(dtype) if dtype.is_floating_point else
                 torch.randint(0, 1 << 30, shape, device=d, generator=g, dtype=dtype))
            for op in ("argmax", "argmin"):
                ref = getattr(torch, op)(x, 1)
                line = f"{op} {str(dtype):15s} {str(shape):14s} torch {gpu_us(lambda: getattr(torch, op)(x, 1)):7.1f}"
                for narrow in (False, True):
                    S.ROWS_NARROW_POS = narrow
                    S._PLANS.clear()
                    R._DIMS_CALLS.clear()
                    ok = torch.equal(getattr(ops, op)(x, 1), ref)
                    us = gpu_us(lambda: getattr(ops, op)(x, 1))
                    line += f" | {'int32' if narrow else 'int64'} {us:7.1f}{'' if ok else ' DIFF'}"
                print(line + " us", flush=True)


if __name__ == "__main__":
    main()
