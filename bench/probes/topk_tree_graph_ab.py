"""Top-k's long-row cases for an A/B of two source trees (as ``topk_tree_ab.py``), timed apart from the
host: GPU span per call from a CUDA graph of 10 calls replayed (kernels and the gaps between them,
no launch cost), and host time per call with the GPU idle before it (median of 200):

    PYTHONPATH=old python bench/probes/topk_tree_graph_ab.py old; PYTHONPATH=. python bench/probes/topk_tree_graph_ab.py new
"""
import sys

import torch

import tritoncub  # noqa: F401  (registers torch.ops.tritoncub)
sys.path.insert(0, "bench/probes")
from _timing import host_idle_us

ops = torch.ops.tritoncub
print(sys.argv[1], tritoncub.__file__, flush=True)
g = torch.Generator(device="cuda").manual_seed(0)
for shape, k, mk in (((1 << 26,), 10000, torch.randn), ((16, 1 << 20), 1000, torch.randn),
                     ((1 << 26,), 10000, torch.rand), ((16, 1 << 20), 1000, torch.rand)):
    x = mk(shape, device="cuda", generator=g)
    f = lambda: ops.topk(x, k, -1, True, True)  # noqa: E731
    v, i = f()
    assert torch.equal(v, torch.topk(x, k).values) and torch.equal(x.gather(-1, i), v)
    f()
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        for _ in range(10):
            f()
    torch.cuda.synchronize()
    spans = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        spans.append((a, b))
    torch.cuda.synchronize()
    span = sorted(a.elapsed_time(b) for a, b in spans)[10] * 100   # us per call (10 calls a replay)
    print(f"{sys.argv[1]} {mk.__name__} {shape} k={k}: GPU span {span:.1f} us, host {host_idle_us(f, 200):.1f} us",
          flush=True)
