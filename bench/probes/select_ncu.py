"""One masked_select (2^26 fp32, 50%) and one unique_consecutive (2^26 int32, 2^20 sorted runs), for a
profiler to look at the single-pass compaction kernel (run under ncu)."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import torch  # noqa: E402
import tritoncub  # noqa: E402,F401
ops = torch.ops.tritoncub
n = 1 << 26
x = torch.randn(n, device="cuda")
m = torch.rand(n, device="cuda") < 0.5
runs = torch.sort(torch.randint(0, 1 << 20, (n,), device="cuda", dtype=torch.int32)).values
for _ in range(2):
    ops.masked_select(x, m)
    ops.unique_consecutive(runs)
torch.cuda.synchronize()
