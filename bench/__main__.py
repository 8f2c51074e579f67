"""``python -m bench [families...] [--quick] [--report]``

Families are the ``bench/bench_<family>.py`` modules (``reduce``, ``scan``, ``sort``, ...); with none
named, all run. ``--quick`` uses small sizes (a smoke run, not saved). ``--report`` only rebuilds the markdown
report (and plots, where the report module exists) from ``bench/results/*.json``.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

import torch


def families() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("families", nargs="*", help=f"op families to run (default: all of {families()})")
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke run)")
    ap.add_argument("--report", action="store_true", help="rebuild the report from bench/results/*.json")
    ap.add_argument("--no-save", action="store_true", help="print only, write no results")
    args = ap.parse_args(argv)

    if args.report:
        try:
            report = importlib.import_module("bench.report")
        except ModuleNotFoundError:
            print("bench/report.py is not present", file=sys.stderr)
            return 1
        return report.main()

    from . import harness
    if not torch.cuda.is_available():
        print("python -m bench needs a CUDA GPU (timings under the interpreter mean nothing)", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    ctx = harness.Context(device=device, quick=args.quick,
                          l2_bytes=getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
                          or harness.L2_BYTES_DEFAULT)
    env = harness.environment(device)
    print(f"# {env['device']}  torch {env['torch']}  triton {env['triton']}  cupy {env.get('cupy', 'n/a')}")
    copy_gbs = harness.measure_copy_gbs(device)
    print(f"# copy bandwidth (read+write): {copy_gbs:.0f} GB/s")
    names = args.families or families()
    unknown = [f for f in names if f not in families()]
    if unknown:
        print(f"unknown families {unknown}; known: {families()}", file=sys.stderr)
        return 2
    for fam in names:
        print(f"## {fam}", flush=True)
        mod = importlib.import_module(f"bench.bench_{fam}")
        rows = harness.run_cases(mod.cases(ctx))
        torch.cuda.empty_cache()
        if not (args.no_save or args.quick):  # saved family by family: a run cut short keeps what it measured
            # (a --quick smoke run's small sizes never replace the results)
            path = harness.save(rows, env, copy_gbs)
            print(f"# wrote {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
