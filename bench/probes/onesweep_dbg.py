"""Small fast-path sanity run (use under CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer)."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import torch
import tritoncub.device.radix_sort as rs
ok = True
for n in (5000, 100003):
    for dt in (torch.int32, torch.int64, torch.float32):
        x = (torch.randn(n, device="cuda") * 1000).to(dt)
        for desc in (False, True):
            r = torch.sort(x, descending=desc, stable=True)
            k = rs.sort_keys(x, desc); torch.cuda.synchronize()
            v, i = rs.sort(x, descending=desc); torch.cuda.synchronize()
            good = torch.equal(k, r.values) and torch.equal(v, r.values) and torch.equal(i, r.indices)
            ok &= good
            print(n, dt, desc, "ok" if good else "WRONG", flush=True)
sys.exit(0 if ok else 1)
