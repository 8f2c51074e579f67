"""The onesweep passes' exchange: ``EXCHANGE_WIDE`` 0 (64-bit keys and packed key-position words:
the tile's source indices go through shared memory and each key is gathered back from global memory,
L1/L2 hits) or 1 (the keys themselves, 8 bytes each); ``EXCHANGE_SRC`` 0 (passes that need each key's
source position -- values, generated positions, segments -- exchange positions alone and gather the
keys back) or 1 (keys and positions). Each setting ``WIDE,SRC`` runs in its own process, interleaved;
the sm_90 policy file's default values otherwise. Every result is checked against torch.sort first;
do_bench medians (L2 flushed, as the benchmark) and GPU time per call.

    python bench/probes/wide_exchange_probe.py [--rounds 2] [--log 26] [--only-wide] [SETTING ...]
    python bench/probes/wide_exchange_probe.py --one SETTING [--log 26] [--only-wide]

A setting is ``WIDE,SRC`` (default settings: 0,0 1,0 1,1) or ``KEY=VALUE;KEY=VALUE`` policy values
over the file's (e.g. ``WARPS=16;ITEMS=8;num_warps=16;MAXNREG_WIDE=64``). ``--only-wide``: only the
sorts whose passes move 64-bit words (int64 keys, and torch's sort of fp32 keys with indices).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _policy(setting: str) -> dict:
    with open(os.path.join(ROOT, "tritoncub", "policies", "sm_90", "radix_sort.json")) as f:
        vals = dict(json.load(f)["tuned"]["default"])
    if "=" in setting:
        for kv in setting.split(";"):
            k, v = kv.split("=")
            vals[k] = int(v)
    else:
        vals["EXCHANGE_WIDE"], vals["EXCHANGE_SRC"] = (int(v) for v in setting.split(","))
    return vals


def one(setting: str, lg: int, only_wide: bool = False) -> None:
    sys.path[:0] = [ROOT, os.path.dirname(os.path.abspath(__file__))]
    import torch

    from _timing import bench_ms, gpu_us
    from tritoncub import policy
    from tritoncub.device import radix_sort as rs

    g = torch.Generator(device="cuda").manual_seed(1)
    n = 1 << lg

    def report(label, fn):
        ms = [bench_ms(fn) for _ in range(2)]
        print(f"{setting}: {label} 2^{lg}: do_bench {ms[0]:.3f} {ms[1]:.3f} ms, gpu {gpu_us(fn) / 1e3:.3f} ms",
              flush=True)

    with policy.override("radix_sort", _policy(setting)):
        x = torch.randint(-2**63, 2**63 - 1, (n,), device="cuda", generator=g, dtype=torch.int64)
        ref = torch.sort(x).values
        assert torch.equal(rs.sort_keys(x), ref)
        report("sort_keys int64", lambda: rs.sort_keys(x))
        v = torch.arange(n, device="cuda")
        k2, v2 = rs.sort_pairs(x, v)
        assert torch.equal(k2, ref) and torch.equal(x[v2], ref)
        del k2, v2, ref
        if not only_wide:
            report("sort_pairs int64+int64", lambda x=x, v=v: rs.sort_pairs(x, v))
            vals, idx = rs.sort(x)
            assert torch.equal(idx, torch.sort(x, stable=True).indices)
            del vals, idx
            report("sort int64 (values + int64 indices)", lambda x=x: rs.sort(x))
        del x, v
        for dtype in ((torch.float32,) if only_wide else (torch.float32, torch.int32)):
            x = (torch.randn(n, device="cuda", generator=g) if dtype == torch.float32 else
                 torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", generator=g, dtype=torch.int32))
            vals, idx = rs.sort(x)
            r = torch.sort(x, stable=True)
            assert torch.equal(vals, r.values) and torch.equal(idx, r.indices)
            del vals, idx, r
            report(f"sort {str(dtype)[6:]} (values + int64 indices)", lambda: rs.sort(x))
        if only_wide:
            return
        k = rs.sort_keys(x)
        assert torch.equal(k, torch.sort(x).values)
        report("sort_keys int32 (control: 32-bit keys, unchanged)", lambda: rs.sort_keys(x))
        del x, k
        x = torch.randn(n, device="cuda", generator=g, dtype=torch.float64)
        assert torch.equal(rs.sort_keys(x), torch.sort(x).values)
        report("sort_keys float64", lambda: rs.sort_keys(x))


def main(argv: list[str]) -> None:
    lg = int(argv[argv.index("--log") + 1]) if "--log" in argv else 26
    only_wide = "--only-wide" in argv
    if "--one" in argv:
        one(argv[argv.index("--one") + 1], lg, only_wide)
        return
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 2
    settings = [a for a in argv if "," in a or "=" in a] or ["0,0", "1,0", "1,1"]
    for _ in range(rounds):
        for setting in settings:
            subprocess.run([sys.executable, __file__, "--one", setting, "--log", str(lg)]
                           + (["--only-wide"] if only_wide else []), check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
