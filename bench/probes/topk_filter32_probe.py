"""Top-k filter rounds on long rows: the threshold taken on the 32-bit ordered keys first
(``KEY_THRESHOLD``, ``_FILTER_KEY_THRESHOLD``) against the threshold on the packed 64-bit words only,
per ``FILTER_CHUNK`` and items per warp (``_FILTER_ITEMS_PER_WARP``: the program's warps are
``FILTER_CHUNK`` / it, at most 16). do_bench medians of the whole op (L2 flushed, as
``python -m bench``) and the filter kernel's GPU time (torch.profiler), torch in the same run; every
result is checked against torch.topk (values; indices point at them) first. Writes a JSON record
list to the path given (GPU name and versions included).

    PYTHONPATH=. python bench/probes/topk_filter32_probe.py [OUT.json]
"""
import json
import sys

import torch
import triton
import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import topk as T
from _timing import bench_ms, gpu_us

ops = torch.ops.tritoncub
g = torch.Generator(device="cuda").manual_seed(0)
shipped = policy.select("topk", torch.device("cuda"), "long")
base = {**shipped.values, "num_warps": shipped.num_warps, "num_stages": shipped.num_stages}
records = []
for shape, k, key_modes in (((16, 1 << 20), 8, (True, False)), ((16, 1 << 20), 64, (True,))):
    x = torch.randn(*shape, device="cuda", generator=g)
    ref = torch.topk(x, k).values
    torch_ms = bench_ms(lambda: torch.topk(x, k))
    row = [f"torch {torch_ms:.4f} ms"]
    for key_thr in key_modes:
        for chunk in (2048, 4096, 8192, 16384):
            for ipw in (256, 512):
                T._FILTER_KEY_THRESHOLD, T._FILTER_ITEMS_PER_WARP = key_thr, ipw
                with policy.override("topk", {**base, "FILTER": 1, "FILTER_CHUNK": chunk, "CAND_K_MAX": 256},
                                     bucket="long"):
                    v, i = ops.topk(x, k, -1, True, True)
                    assert torch.equal(v, ref) and torch.equal(torch.gather(x, -1, i), v), (shape, k)
                    fn = lambda: ops.topk(x, k, -1, True, True)   # noqa: E731
                    ms, fus = bench_ms(fn), gpu_us(fn, match="filter")
                name = f"{'keys' if key_thr else 'words'}/{chunk}/{min(16, chunk // ipw)}w"
                row.append(f"{name} {ms:.4f} ms (filter {fus:.0f} us)")
                records.append(dict(shape=list(shape), k=k, key_threshold=key_thr, filter_chunk=chunk,
                                    warps=min(16, chunk // ipw), ms=ms, filter_us=fus, torch_ms=torch_ms))
    print(f"{'x'.join(map(str, shape))} k={k}: " + ", ".join(row), flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
                       records=records), f, indent=1)
