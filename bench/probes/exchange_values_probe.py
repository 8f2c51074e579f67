"""Values through shared memory in the onesweep passes (policy ``EXCHANGE_VALUES``): 0, each pass
carrying values exchanges the tile's source positions and gathers keys and values back from global
memory (L1/L2 hits); 1, CUB's way: keys exchanged by their ranks, written out, then the values
loaded in input order, exchanged by the same ranks (kept in registers) and written to their keys'
destinations (each sorted slot's digit kept in a third part of the buffer). Each setting runs in its
own process, interleaved; the sm_90 policy file's default values otherwise. Every result is checked
against torch.sort first; do_bench medians (L2 flushed, as the benchmark) and GPU time per call, and
torch.sort of the same keys (values + indices) in the same process.

    python bench/probes/exchange_values_probe.py [--rounds 2] [--log 28] [SETTING ...]

A setting is ``KEY=VALUE;KEY=VALUE`` policy values over the file's (default settings:
``EXCHANGE_VALUES=0``, ``EXCHANGE_VALUES=1``, ``EXCHANGE_VALUES=1;MAXNREG_WIDE=96``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT = ["EXCHANGE_VALUES=0", "EXCHANGE_VALUES=1", "EXCHANGE_VALUES=1;MAXNREG_WIDE=96"]


def _policy(setting: str) -> dict:
    with open(os.path.join(ROOT, "tritoncub", "policies", "sm_90", "radix_sort.json")) as f:
        vals = dict(json.load(f)["tuned"]["default"])
    for kv in setting.split(";"):
        k, v = kv.split("=")
        vals[k] = int(v)
    return vals


def one(setting: str, lg: int, with_torch: bool) -> None:
    sys.path[:0] = [ROOT, os.path.dirname(os.path.abspath(__file__))]
    import torch

    from _timing import bench_ms, gpu_us
    from tritoncub.device import radix_sort as rs

    g = torch.Generator(device="cuda").manual_seed(1)
    n = 1 << lg

    def report(label, fn):
        ms = [bench_ms(fn) for _ in range(2)]
        print(f"{setting}: {label} 2^{lg}: do_bench {ms[0]:.3f} {ms[1]:.3f} ms, gpu {gpu_us(fn) / 1e3:.3f} ms",
              flush=True)

    from tritoncub import policy
    with policy.override("radix_sort", _policy(setting)):
        for kdt, vdt in ((torch.int64, torch.int64), (torch.float32, torch.int64), (torch.float32, torch.int32),
                         (torch.int64, None)):
            x = (torch.randn(n, device="cuda", generator=g).to(kdt) if kdt.is_floating_point else
                 torch.randint(-2**63, 2**63 - 1, (n,), device="cuda", generator=g, dtype=kdt))
            name = str(kdt)[6:]
            if vdt is None:   # torch's sort: values + int64 indices (64-bit keys: positions carried as values)
                v, i = rs.sort(x)
                assert torch.equal(i, torch.sort(x, stable=True).indices)
                del v, i
                report(f"sort {name} (values + int64 indices)", lambda x=x: rs.sort(x))
                if with_torch:
                    report(f"torch.sort {name}", lambda x=x: torch.sort(x))
            else:
                vals = torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", generator=g).to(vdt)
                k, v = rs.sort_pairs(x, vals)
                idx = torch.sort(x, stable=True).indices
                assert torch.equal(k, x[idx]) and torch.equal(v, vals[idx])
                del k, v, idx
                report(f"sort_pairs {name}+{str(vdt)[6:]}", lambda x=x, vals=vals: rs.sort_pairs(x, vals))
                del vals
            del x
            torch.cuda.empty_cache()


def main(argv: list[str]) -> None:
    lg = int(argv[argv.index("--log") + 1]) if "--log" in argv else 28
    if "--one" in argv:
        one(argv[argv.index("--one") + 1], lg, "--torch" in argv)
        return
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 2
    settings = [a for a in argv if "=" in a] or DEFAULT
    for r in range(rounds):
        for j, setting in enumerate(settings):
            subprocess.run([sys.executable, __file__, "--one", setting, "--log", str(lg)]
                           + (["--torch"] if r == 0 and j == 0 else []), check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
