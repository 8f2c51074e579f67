"""Row sorts of one tree of the package (``sort_rows`` of 4096x1024, 512x8192 and 65536x128 fp32):
do_bench median, host time per call (calls queued back to back) and GPU time per call, with
torch.sort(dim=-1) beside them; results checked against torch.sort first. Run it once per tree, in
separate processes, alternating, to compare a change's host time with the committed tree's.

    python bench/probes/rows_host_ab_probe.py TREE     # TREE holds a tritoncub package ('.' for this one)
"""
import sys, os
tree = sys.argv[1]
sys.path.insert(0, os.path.abspath(tree))
sys.path.insert(1, os.path.abspath("bench/probes"))
import torch
import tritoncub
from tritoncub.device import segmented_sort as ss
from _timing import bench_ms, gpu_us, host_ms
print("# tree", tree, tritoncub.__file__)
for shape in ((4096, 1024), (512, 8192), (65536, 128)):
    x = torch.randn(shape, device="cuda")
    v, i = ss.sort_rows(x)
    rv, ri = torch.sort(x, dim=-1, stable=True)
    assert torch.equal(i, ri) and torch.equal(v, rv)
    f = lambda: ss.sort_rows(x)
    t = lambda: torch.sort(x, dim=-1, stable=True)
    for r in range(2):
        print(f"{shape} ours do_bench {bench_ms(f)*1e3:.1f} us host {host_ms(f)*1e3:.1f} us gpu {gpu_us(f):.1f} | torch {bench_ms(t)*1e3:.1f} host {host_ms(t)*1e3:.1f}", flush=True)
