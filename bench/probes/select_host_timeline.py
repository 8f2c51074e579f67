"""Where the wall time of a sync-bound selection goes: masked_select of 2^26 fp32 at 1% and 50%,
and unique_consecutive of 2^26 sorted int32, timed as ``python -m bench`` does (do_bench: L2 flushed
before each call), next to the GPU time of their kernels (torch.profiler) and the host time of each
step of the call (perf_counter around the steps of ``_masked_select_impl``, synchronised before
and after: steps that launch work are timed including their GPU part only for the sync step).

    PYTHONPATH=. python bench/probes/select_host_timeline.py
"""
import time

import torch

import tritoncub  # noqa: F401
from tritoncub.device import select as S
from _timing import bench_ms, gpu_us
from _inputs import select_inputs

ops = torch.ops.tritoncub
n = 1 << 26
_, (x,), masks, (runs,) = select_inputs(n, (0.01, 0.5))
masks = {d: m[0] for d, m in masks.items()}


def steps(mask, reps=50):
    names = ["checks+flatten", "Plan()", "torch.empty", "scatter (launch)", ".item() (waits for the GPU)",
             "shrink"]
    acc = [0.0] * len(names)
    for _ in range(reps):
        torch.cuda.synchronize()
        t = [time.perf_counter()]
        S.check_tensor(x, "x", S.SELECTABLE_DTYPES)
        S.check_tensor(mask, "mask", (torch.bool,))
        xf, mf = S.flat_input(x), S.flat_input(mask)
        t.append(time.perf_counter())
        plan = S.Plan(xf, mf, S.SELECT_FLAGGED, load_x=False)
        t.append(time.perf_counter())
        buf = torch.empty(xf.numel(), dtype=x.dtype, device=x.device)
        t.append(time.perf_counter())
        plan.scatter(out=buf)
        t.append(time.perf_counter())
        k = int(plan.num_selected.item())
        t.append(time.perf_counter())
        S.shrink(buf, k)
        t.append(time.perf_counter())
        for i in range(len(names)):
            acc[i] += (t[i + 1] - t[i]) / reps * 1e6
    return ", ".join(f"{nm} {us:.1f}" for nm, us in zip(names, acc))


for d, m in masks.items():
    print(f"masked_select {d}: bench {bench_ms(lambda: ops.masked_select(x, m)) * 1e3:.1f} us, "
          f"torch {bench_ms(lambda: torch.masked_select(x, m)) * 1e3:.1f} us, "
          f"GPU {gpu_us(lambda: ops.masked_select(x, m), 10):.1f} us (torch GPU "
          f"{gpu_us(lambda: torch.masked_select(x, m), 10):.1f})", flush=True)
    print(f"  steps (us): {steps(m)}", flush=True)
print(f"unique_consecutive: bench {bench_ms(lambda: ops.unique_consecutive(runs)) * 1e3:.1f} us, "
      f"torch {bench_ms(lambda: torch.unique_consecutive(runs)) * 1e3:.1f} us, "
      f"GPU {gpu_us(lambda: ops.unique_consecutive(runs), 10):.1f} us (torch GPU "
      f"{gpu_us(lambda: torch.unique_consecutive(runs), 10):.1f})", flush=True)
