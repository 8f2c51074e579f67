"""Sorts and top-k of vocabulary logits, the shapes of LLM sampling (top-p sorts a batch of logit rows
descending; top-k keeps k of each row): tritoncub against torch on ``[batch, vocab]`` fp32 and bf16.

Per case: do_bench (ms), GPU time per call (us, profiler), host time of one call with the GPU idle (us),
for tritoncub and torch; every result is checked against torch first (sort: values and indices equal
torch's stable sort; top-k: values equal, indices pointing at them).

    PYTHONPATH=. python bench/probes/logits_probe.py [sort|topk ...]
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: F401,E402
from _timing import bench_ms, gpu_us, host_idle_us  # noqa: E402

ops = torch.ops.tritoncub
SHAPES = [(1, 32000), (1, 128256), (8, 32000), (32, 32000), (8, 128256), (64, 128256), (128, 151936)]


def _row(name, ours, theirs):
    a = (bench_ms(ours), gpu_us(ours), host_idle_us(ours, 50))
    b = (bench_ms(theirs), gpu_us(theirs), host_idle_us(theirs, 50))
    print(f"{name:<34} ours {a[0]:.4f} ms gpu {a[1]:7.1f} host {a[2]:6.1f} | torch {b[0]:.4f} ms gpu {b[1]:7.1f} "
          f"host {b[2]:6.1f} | {b[0] / a[0]:.2f}x (gpu {b[1] / a[1]:.2f}x)", flush=True)


def main(which):
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    for dtype in (torch.float32, torch.bfloat16):
        for b, v in SHAPES:
            x = (torch.randn(b, v, device="cuda") * 3).to(dtype)
            tag = f"{b}x{v} {str(dtype)[6:]}"
            if "sort" in which:
                got = ops.sort(x, -1, True, False)
                ref = torch.sort(x, dim=-1, descending=True, stable=True)
                assert torch.equal(got[0], ref[0]) and torch.equal(got[1], ref[1]), tag
                _row("sort desc " + tag, lambda: ops.sort(x, -1, True, False),
                     lambda: torch.sort(x, dim=-1, descending=True))
            if "topk" in which:
                k = 50
                got = ops.topk(x, k, -1, True, True)
                ref = torch.topk(x, k, dim=-1)
                assert torch.equal(got[0], ref[0]) and torch.equal(x.gather(-1, got[1]), got[0]), tag
                _row(f"topk k={k} " + tag, lambda: ops.topk(x, k, -1, True, True),
                     lambda: torch.topk(x, k, dim=-1))


if __name__ == "__main__":
    main(sys.argv[1:] or ["sort", "topk"])
