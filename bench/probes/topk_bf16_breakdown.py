"""Top-50 of batches of vocabulary logits in fp32, bf16 and fp16: the GPU time of each kernel of the
running k-best (filter rounds, final chunk) against torch.topk's GPU time, values checked against
torch.topk first. (Found: 16-bit keys took longer than fp32 in the filter kernel with the earlier
FILTER_CHUNK 8192 / FILTER_MAXNREG 64 policy; see SELECT_NOTES.md, round 20.)

    PYTHONPATH=. python bench/probes/topk_bf16_breakdown.py
"""
import sys
import torch
sys.path.insert(0, "bench/probes")
import tritoncub  # noqa
from _timing import kernel_breakdown, gpu_us
ops = torch.ops.tritoncub
torch.manual_seed(0)
for b, v in [(64, 128256), (128, 151936), (8, 128256)]:
    base = torch.randn(b, v, device="cuda") * 3
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        x = base.to(dt)
        f = lambda: ops.topk(x, 50, -1, True, True)
        g = lambda: torch.topk(x, 50, dim=-1)
        r = f(); t = g()
        assert torch.equal(r[0], t[0])
        kb = kernel_breakdown(f)
        print(f"{b}x{v} {dt}: ours {sum(u for _, u, _ in kb):.1f} us torch {gpu_us(g):.1f} us :: " +
              ", ".join(f"{n[:28]} {u:.1f} x{c}" for n, u, c in kb), flush=True)
