"""tritoncub quick start: sort, sum and scan a tensor with torch.ops.tritoncub.*, check against torch.

    python examples/quickstart.py

On a GPU it also prints timings next to torch's. Without one it runs the same code on the CPU
through Triton's interpreter (slowly, on a small tensor) and says so.
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # must be set before triton is imported

import tritoncub  # noqa: E402  (registers torch.ops.tritoncub.*)

on_gpu = torch.cuda.is_available()
device = "cuda" if on_gpu else "cpu"
n = 1 << 24 if on_gpu else 3000
if not on_gpu:
    print("no GPU found: running the kernels on the CPU through the Triton interpreter (slow, small n)")

x = torch.randn(n, device=device)
ops = torch.ops.tritoncub

total = ops.sum(x)
print(f"sum      : {total.item():.6f}   torch: {torch.sum(x).item():.6f}")
torch.testing.assert_close(total, torch.sum(x), rtol=1e-4, atol=1e-3)

prefix = ops.cumsum(x, 0)
torch.testing.assert_close(prefix, torch.cumsum(x, 0), rtol=1e-4, atol=1e-2)
print(f"cumsum   : last = {prefix[-1].item():.6f}   torch: {torch.cumsum(x, 0)[-1].item():.6f}")

values, indices = ops.sort(x)
ref_values, ref_indices = torch.sort(x, stable=True)
assert torch.equal(values, ref_values) and torch.equal(indices, ref_indices)
print(f"sort     : first {values[:3].tolist()} ... same values and indices as torch.sort(stable=True)")

keys = torch.randint(0, 1 << 16, (n,), device=device, dtype=torch.int32)
sorted_keys = ops.sort_keys(keys, end_bit=16)  # CUB-style: keys only, 16 significant bits
assert torch.equal(sorted_keys, torch.sort(keys)[0])
print("sort_keys: keys-only sort of 16-bit keys matches torch")

print(tritoncub.describe("reduce", x.device))

if on_gpu:
    from triton.testing import do_bench
    for name, ours, theirs in [("sum", lambda: ops.sum(x), lambda: torch.sum(x)),
                               ("cumsum", lambda: ops.cumsum(x, 0), lambda: torch.cumsum(x, 0)),
                               ("sort", lambda: ops.sort(x), lambda: torch.sort(x, stable=True))]:
        a, b = do_bench(ours, return_mode="median"), do_bench(theirs, return_mode="median")
        print(f"{name:<7} n=2^24: tritoncub {a * 1e3:8.1f} us   torch {b * 1e3:8.1f} us   ({b / a:.2f}x)")
