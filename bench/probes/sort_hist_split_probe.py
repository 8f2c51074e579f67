"""Small sorts (the radix sort's ``small`` bucket): the upfront histogram with its programs splitting the
digit places between them (``HIST_SPLIT_PLACES``: up to that many programs per SM in all) against the
unsplit histogram, where each of a small input's few programs counts every place of its tiles.

Per dtype and size: the whole sort's GPU time per call and the histogram kernel's share (profiler), for
the shipped small bucket with overrides of its histogram values; every result checked against torch.sort first;
torch.sort's GPU time alongside; two interleaved rounds.

    PYTHONPATH=. python bench/probes/sort_hist_split_probe.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: F401,E402
from tritoncub import policy  # noqa: E402
from tritoncub.device import radix_sort as RS  # noqa: E402
from _timing import kernel_breakdown  # noqa: E402

ops = torch.ops.tritoncub
dev = torch.device("cuda")
g = torch.Generator(device="cuda").manual_seed(5)
print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
base = policy.select("radix_sort", dev, "small").as_dict()
print("small bucket:", base, flush=True)
# ("unsplit": the small bucket without the split, as shipped when the committed log ran, whose "shipped"
# column it is; the H200 file has turned the split on since)
CONFIGS = [("unsplit", {"HIST_SPLIT_PLACES": 0}),
           ("split1", {"HIST_SPLIT_PLACES": 1}),
           ("split2", {"HIST_SPLIT_PLACES": 2}),
           ("split1 mt1", {"HIST_SPLIT_PLACES": 1, "HIST_MIN_TILES": 1}),
           ("split2 mt1", {"HIST_SPLIT_PLACES": 2, "HIST_MIN_TILES": 1})]
CASES = [   # (label, dtype, call, torch's)
    ("sort int64", torch.int64, lambda x: ops.sort(x)[0], lambda x: torch.sort(x, stable=True)[0]),
    ("sort_keys int64", torch.int64, lambda x: RS.sort_keys(x), lambda x: torch.sort(x).values),
    ("sort fp32", torch.float32, lambda x: ops.sort(x)[1], lambda x: torch.sort(x, stable=True)[1]),
    ("sort_keys int32", torch.int32, lambda x: RS.sort_keys(x), lambda x: torch.sort(x).values),
    ("sort_pairs u16", torch.int16, lambda x: RS.sort_pairs(x, x.to(torch.int32))[1],
     lambda x: torch.sort(x, stable=True)[0].to(torch.int32)),
]
SIZES = [4096, 16384, 65536, 1 << 18, 1 << 20, 1 << 21]


def parts(fn):
    kb = kernel_breakdown(fn)
    return sum(us for _, us, _ in kb), sum(us for k, us, _ in kb if "histogram" in k)


for label, dtype, ours, theirs in CASES:
    for n in SIZES:
        if dtype.is_floating_point:
            x = torch.randn(n, device="cuda", generator=g).to(dtype)
        else:
            info = torch.iinfo(dtype)
            x = torch.randint(info.min, info.max, (n,), device="cuda", generator=g, dtype=dtype)
        ref = theirs(x)
        res = {name: [] for name, _ in CONFIGS}
        for _ in range(2):
            for name, cfg in CONFIGS:
                with policy.override("radix_sort", {**base, **cfg}, bucket="small"):
                    got = ours(x)
                    torch.cuda.synchronize()
                    assert torch.equal(got, ref), (label, n, name)
                    res[name].append(parts(lambda: ours(x)))
        t_torch = sum(us for _, us, _ in kernel_breakdown(lambda: theirs(x)))
        cells = " | ".join(f"{name} {min(a for a, _ in r):6.1f} (hist {min(h for _, h in r):5.1f})"
                           for name, r in res.items())
        print(f"{label:16s} n {n:8d}: {cells} | torch {t_torch:6.1f}", flush=True)
