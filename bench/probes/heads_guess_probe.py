"""Run-head ops (unique_consecutive, with counts, run-length encode) at 2^26 sorted int32 keys in
2^20 runs, with the bitmask scatter's group guessed from the last count of the same selection
('guess') and without it ('no guess': SCATTER_TILES), interleaved and repeated: do_bench medians and
GPU time per call, to tell a change from run-to-run spread.

    PYTHONPATH=. python bench/probes/heads_guess_probe.py
"""
import torch

import tritoncub  # noqa: F401  (registers the ops)
from bench.harness import rotating
from tritoncub.device import run_length_encode as RLE
from tritoncub.device import select as S
from _timing import bench_ms, kernel_breakdown

ops = torch.ops.tritoncub


class _Forget(dict):
    def __setitem__(self, key, value):
        pass


n = 1 << 26
g = torch.Generator(device="cuda").manual_seed(0)
xs = [torch.sort(torch.randint(0, 1 << 20, (n,), device="cuda", generator=g, dtype=torch.int32)).values
      for _ in range(2)]
cases = {"unique_consecutive": lambda x: ops.unique_consecutive(x, False, False),
         "unique_consecutive+counts": lambda x: ops.unique_consecutive(x, False, True),
         "rle_encode": lambda x: RLE.encode(x),
         "torch unique_consecutive": lambda x: torch.unique_consecutive(x),
         "torch unique_consecutive+counts": lambda x: torch.unique_consecutive(x, return_counts=True)}
memory = S._LAST_SPARSE
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
for rep in range(3):
    for variant in ("guess", "no guess"):
        S._LAST_SPARSE = memory if variant == "guess" else _Forget()
        for name, body in cases.items():
            if name.startswith("torch") and variant != "guess":
                continue
            fn = rotating(xs, body)
            ms = bench_ms(fn)
            gpu = sum(u for _, u, _ in kernel_breakdown(fn, reps=5)) if rep == 0 else float("nan")
            print(f"rep {rep} {variant:8s} {name:32s} {ms:.4f} ms  gpu {gpu:.1f} us", flush=True)
