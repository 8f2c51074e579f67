"""One sort of 2^26 uint32 keys, for a profiler to look at one onesweep pass (run under ncu)."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import torch
import tritoncub.device.radix_sort as rs
x = torch.randint(0, 2**31 - 1, (1 << 26,), device="cuda", dtype=torch.int32).view(torch.uint32)
for _ in range(2):
    rs.sort_keys(x)
torch.cuda.synchronize()
