"""bf16 (and fp32) sums of 2^28 items under a few DeviceReduce policies, with the loads' L2 eviction
hint on and off, against torch.sum in the same run (do_bench medians, L2 flushed as ``python -m bench``
does, three interleaved repeats). Why: after the flush L2 holds ~50 MB of dirty lines, and a read that
evicts them pays their write-back; loads marked ``evict_first`` should evict each other instead.

    PYTHONPATH=. python bench/probes/reduce_evict_probe.py [--sweep]

``--sweep``: bf16 only, tiles of 8192 and 16384 items around the best of the first run; ``--check``:
that sweep's best against the shipped policy at 2^23..2^28 items (bf16) and for fp16.
"""
import torch

from tritoncub import policy
from tritoncub.device import reduce as R
from _timing import bench_ms

CONFIGS = {
    "tuned": None,
    "tuned+evict_first": {"EVICTION": "evict_first"},
    "2048/8 per SM/strip/4w evict_first": {"BLOCK_ITEMS": 2048, "PROGRAMS_PER_SM": 8, "GRID_MAPPING": "strip_mine",
                                           "LOAD": "vectorize", "CACHE_MODIFIER": "", "EVICTION": "evict_first",
                                           "num_warps": 4, "num_stages": 2},
    "8192/4 per SM/rake/8w": {"BLOCK_ITEMS": 8192, "PROGRAMS_PER_SM": 4, "GRID_MAPPING": "rake", "LOAD": "vectorize",
                              "CACHE_MODIFIER": "", "EVICTION": "", "num_warps": 8, "num_stages": 2},
    "8192/4 per SM/rake/8w evict_first": {"BLOCK_ITEMS": 8192, "PROGRAMS_PER_SM": 4, "GRID_MAPPING": "rake",
                                          "LOAD": "vectorize", "CACHE_MODIFIER": "", "EVICTION": "evict_first",
                                          "num_warps": 8, "num_stages": 2},
    "4096/4 per SM/rake/8w .cg": {"CACHE_MODIFIER": ".cg", "EVICTION": ""},
}


def around_8192():
    """bf16: tiles of 8192 and 16384 items (32-64 bytes per thread and load), warps, programs, stages."""
    out = {}
    for items in (8192, 16384):
        for warps in (8, 16):
            for per_sm in (2, 4):
                for stages in (2, 3):
                    if items // (32 * warps) > 64:
                        continue
                    out[f"{items}/{per_sm} per SM/rake/{warps}w/{stages}st"] = {
                        "BLOCK_ITEMS": items, "PROGRAMS_PER_SM": per_sm, "GRID_MAPPING": "rake", "LOAD": "vectorize",
                        "CACHE_MODIFIER": "", "EVICTION": "", "num_warps": warps, "num_stages": stages}
    return out


#: ``--check``: the sweep's best against the shipped policy at every large size
CANDIDATE = {"BLOCK_ITEMS": 16384, "PROGRAMS_PER_SM": 4, "GRID_MAPPING": "rake", "LOAD": "vectorize",
             "CACHE_MODIFIER": "", "EVICTION": "", "num_warps": 8, "num_stages": 2}


def main(mode=""):
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    dev = torch.device("cuda")
    g = torch.Generator(device="cuda").manual_seed(0)
    cases = {"": [(torch.bfloat16, 28), (torch.float32, 28)], "--sweep": [(torch.bfloat16, 28)],
             "--check": [(torch.bfloat16, lg) for lg in (23, 24, 26, 28)] + [(torch.float16, 28)]}[mode]
    for dtype, lg in cases:
        configs = {"": CONFIGS, "--sweep": {"tuned": None, **around_8192()},
                   "--check": {"shipped": None, "candidate": CANDIDATE,
                               "8192/4/rake/8w": {**CANDIDATE, "BLOCK_ITEMS": 8192},
                               "8192/2/rake/16w": {**CANDIDATE, "BLOCK_ITEMS": 8192, "PROGRAMS_PER_SM": 2,
                                                   "num_warps": 16}}}[mode]
        n = 1 << lg
        x = torch.randn(n, device="cuda", generator=g).to(dtype)
        ref = torch.sum(x, dtype=torch.float32)
        bucket = R.reduce_bucket("sum", dtype, n)
        tuned = policy.select("reduce", dev, bucket)
        base = {**tuned.values, "num_warps": tuned.num_warps, "num_stages": tuned.num_stages}
        times = {name: [] for name in list(configs) + ["torch"]}
        for name, cfg in configs.items():   # (each checked once before timing)
            with policy.override("reduce", {**base, **(cfg or {})}, bucket=bucket):
                got = R.sum(x).float()
                assert torch.allclose(got, ref, rtol=8e-3, atol=1.0), (name, got, ref)   # (bf16 result: 8 bits)
        for _ in range(3):
            for name, cfg in configs.items():
                with policy.override("reduce", {**base, **(cfg or {})}, bucket=bucket):
                    times[name].append(bench_ms(lambda: R.sum(x)) * 1e3)
            times["torch"].append(bench_ms(lambda: torch.sum(x)) * 1e3)
        print(f"sum {dtype} 2^{lg} (bucket {bucket}, tuned {base})", flush=True)
        for name, ts in times.items():
            print(f"  {name:<40} {' '.join(f'{t:.1f}' for t in ts)} us", flush=True)


if __name__ == "__main__":
    import sys
    main(sys.argv[1] if len(sys.argv) > 1 else "")
