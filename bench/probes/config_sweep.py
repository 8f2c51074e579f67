"""Correctness sweep of the policy spaces on a GPU: configs drawn at random from every op's space
(``OpPolicy.sample``), each forced on the op's autotune problems (``autotune/specs.py``, the sizes
``python -m autotune`` tunes on) and checked against the reference, as the tuner checks them.

A config of the space that gives a wrong answer is a kernel bug (or a combination ``valid`` must
exclude), even though the tuner would reject it; one that fails to compile or launch is a
combination ``valid`` should exclude. Each op runs in its own process (a fatal device error ends
only that op's process; the sweep restarts it past the failing config).

    PYTHONPATH=. python bench/probes/config_sweep.py OUT.jsonl [--ops a,b] [--per-op N] [--seconds S]
        [--jobs J] [--extra]

``--extra`` also forces each config on cases the specs do not cover (radix sort: sort with int64
positions, int64 pairs, a bit range; segmented sort: values; top-k: smallest).
Prints one line per config as the workers write them and a summary; writes every result to
OUT.jsonl. Workers still compiling 20 s past ``--seconds`` are stopped.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def _extras(op, small=False):
    """(label, make(device), call(inputs), reference(inputs)) cases beyond the spec's problems."""
    import torch
    import tritoncub.device.radix_sort as rs
    g = lambda: torch.Generator().manual_seed(11)  # noqa: E731
    sh = 8 if small else 0     # smaller cases under the interpreter
    if op == "radix_sort":
        def sort_fp32(d):
            return torch.randn((3 << 20) >> sh, generator=g()).to(d)

        def pairs64(d):
            k = torch.randint(-2 ** 62, 2 ** 62, ((1 << 21) >> sh,), generator=g()).to(d)
            return k, torch.arange(k.numel(), device=d)

        def bits(d):
            return torch.randint(0, 2 ** 31, ((1 << 21) >> sh,), generator=g(), dtype=torch.int64).to(torch.int32).to(d)

        def ref_bits(x):
            sub = (x.to(torch.int64) >> 3) & ((1 << 18) - 1)
            idx = torch.sort(sub, stable=True).indices
            return x[idx]
        return [
            ("sort float32 3*2^20 desc (values, int64 positions)", sort_fp32,
             lambda x: tuple(rs.sort(x, descending=True)),
             lambda x: tuple(torch.sort(x, descending=True, stable=True))),
            ("sort_pairs int64+int64 2^21", pairs64, lambda kv: tuple(rs.sort_pairs(*kv)),
             lambda kv: (torch.sort(kv[0], stable=True).values, kv[1][torch.sort(kv[0], stable=True).indices])),
            ("sort_keys int32 bits [3, 21) 2^21", bits, lambda x: rs.sort_keys(x, False, 3, 21), ref_bits),
        ]
    if op == "segmented_sort":
        def rows(d):
            return torch.randn(1000 >> sh, 700, generator=g()).to(d)
        return [("sort rows 1000x700 float32 (values, indices)", rows,
                 lambda x: tuple(torch.ops.tritoncub.sort(x, -1, False, True)),
                 lambda x: tuple(torch.sort(x, dim=-1, stable=True)))]
    if op == "topk":
        def rows(d):
            return torch.randn(3000 >> sh, 600, generator=g()).to(d)
        return [("topk k=20 smallest rows 3000x600", rows,
                 lambda x: torch.ops.tritoncub.topk(x, 20, -1, False, True)[0],
                 lambda x: torch.topk(x, 20, -1, False, True)[0])]
    return []


_OLD_RANKING = {"EARLY_COUNTS": 0, "RANK_MATCH": 0, "FUSED_EXCHANGE": 0, "RECOMPUTE_WORD": 0}
#: configs checked first: radix sort's three that the 2026-11-22 tuning run rejected as wrong (16 warps
#: with a look-back window), as they were then (match ranking) and with today's ranking
_SUSPECTS = {"radix_sort": [
    {**r, **v} for v in (
        {"COUNTS_COLUMNS": 1, "EXCHANGE_APART": 1, "HIST_ITEMS": 16, "ITEMS": 16, "MAXNREG": 64, "RANK_PACK": 1,
         "SMALL_N": 1024, "TL_TILE": 512, "WARPS": 16, "WINDOW": 8, "num_warps": 16},
        {"COUNTS_COLUMNS": 0, "EXCHANGE_APART": 1, "HIST_ITEMS": 8, "ITEMS": 8, "MAXNREG": 0, "RANK_PACK": 4,
         "SMALL_N": 0, "TL_TILE": 512, "WARPS": 16, "WINDOW": 16, "num_warps": 16},
        {"COUNTS_COLUMNS": 0, "EXCHANGE_APART": 1, "HIST_ITEMS": 16, "ITEMS": 16, "MAXNREG": 0, "RANK_PACK": 4,
         "SMALL_N": 4096, "TL_TILE": 128, "WARPS": 16, "WINDOW": 8, "num_warps": 16})
    for r in (_OLD_RANKING, {})]}


def worker(op: str, part_file: str, per_op: int, seconds: float, extra: bool, seed: int, quick: bool) -> None:
    import torch
    from autotune import spec as specmod
    from autotune.spec import compare
    from autotune.tuner import BucketMismatch, check_once, resolve_buckets, _fatal
    from tritoncub import policy

    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")   # cpu: under the interpreter
    specs = specmod.discover()
    sp = specs[op]
    p = policy.op_policy(op)
    buckets = resolve_buckets(sp, dev, quick=quick, log=lambda s: None)
    extras = _extras(op, quick) if extra else []
    t_end = time.time() + seconds
    # a restart after a fatal device error: skip every config the part file already holds, and the
    # one after the last of them (the config that was running when the process died)
    skip: set = set()
    if os.path.exists(part_file):
        done = [json.loads(line) for line in open(part_file).read().splitlines()]
        skip = {(r["bucket"], r["index"]) for r in done}
        if done:
            skip.add((done[-1]["bucket"], done[-1]["index"] + 1))
    cache: dict = {}
    for b, probs in buckets.items():
        fb = p.fallback_for(b)
        sus = [{**fb, **c} for c in _SUSPECTS.get(op, [])]
        sus = [c for c in sus if p.valid is None or p.valid(c)]
        configs = [fb] + sus + [c for c in p.sample(per_op, seed=seed, base=fb) if c != fb]
        for i, cfg in enumerate(configs):
            if (b, i) in skip or time.time() > t_end:
                continue
            pol = policy.Policy(op, {k: v for k, v in cfg.items() if k not in policy.LAUNCH_KEYS},
                                cfg["num_warps"], cfg["num_stages"], "sweep")
            row = {"op": op, "bucket": b, "index": i, "config": cfg, "results": []}
            fatal = None
            for pr in probs:
                if pr.label not in cache:
                    x = pr.make(dev, 0)
                    cache[pr.label] = (x, sp.reference(x))
                x, ref = cache[pr.label]
                try:
                    check_once(sp, x, ref, pol, b, dev)
                    row["results"].append([pr.label, "ok"])
                except BucketMismatch as e:
                    row["results"].append([pr.label, "bucket: " + str(e)[:120]])
                except AssertionError as e:
                    row["results"].append([pr.label, "WRONG: " + str(e).splitlines()[0][:200]])
                except Exception as e:
                    row["results"].append([pr.label, f"error: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"])
                    if _fatal(e):
                        fatal = e
                        break
            if fatal is None:
                for label, make, call, reference in extras:
                    if label not in cache:
                        x = make(dev)
                        cache[label] = (x, reference(x))
                    x, ref = cache[label]
                    try:
                        with policy.override(op, cfg):
                            out = call(x)
                        if dev.type == "cuda":
                            torch.cuda.synchronize()
                        compare(out, ref, rtol=0, atol=0)
                        row["results"].append([label, "ok"])
                    except AssertionError as e:
                        row["results"].append([label, "WRONG: " + str(e).splitlines()[0][:200]])
                    except Exception as e:
                        row["results"].append([label, f"error: {type(e).__name__}: {str(e).splitlines()[0][:200]}"])
                        if _fatal(e):
                            fatal = e
                            break
            with open(part_file, "a") as f:
                f.write(json.dumps(row) + "\n")
            if fatal is not None:
                print(f"FATAL {op} {b} {i}", flush=True)
                sys.exit(3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ops", default="")
    ap.add_argument("--per-op", type=int, default=12)
    ap.add_argument("--seconds", type=float, default=400)
    ap.add_argument("--jobs", type=int, default=10)
    ap.add_argument("--extra", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", default="")
    ap.add_argument("--quick", action="store_true", help="the specs' tiny problems (a check of this script)")
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.out, a.per_op, a.seconds, a.extra, a.seed, a.quick)
        return
    import torch
    from autotune import spec as specmod
    ops = [o for o in (a.ops.split(",") if a.ops else sorted(specmod.discover()))]
    name = torch.cuda.get_device_name() if torch.cuda.is_available() else "interpreter"
    print(f"# {name} torch {torch.__version__}; ops {ops}", flush=True)
    t_end = time.time() + a.seconds
    procs: dict = {}
    rows: list = []

    def start(op):
        args = [sys.executable, __file__, f"{a.out}.{op}.part", "--worker", op, "--per-op", str(a.per_op),
                "--seconds", str(max(5.0, t_end - time.time())), "--seed", str(a.seed)] + (["--extra"] if a.extra else []) + (["--quick"] if a.quick else [])
        procs[op] = subprocess.Popen(args, stdout=open(f"{a.out}.{op}.stdout", "w"), stderr=subprocess.STDOUT,
                                     env={**os.environ, "PYTHONWARNINGS": "ignore"})

    queue = list(ops)
    seen_rows: dict = {op: 0 for op in ops}

    def collect(op):
        """Print the rows a worker has written so far (its part file)."""
        part = f"{a.out}.{op}.part"
        if not os.path.exists(part):
            return
        lines = open(part).read().splitlines()
        for line in lines[seen_rows[op]:]:
            r = json.loads(line)
            rows.append(r)
            bad = [x for x in r["results"] if x[1] != "ok"]
            print(f"{op}[{r['bucket']}] #{r['index']} {'ok' if not bad else bad} {json.dumps(r['config'], sort_keys=True)}",
                  flush=True)
        seen_rows[op] = len(lines)

    while queue or procs:
        while queue and len(procs) < a.jobs and time.time() < t_end:
            op = queue.pop(0)
            start(op)
        if not procs and time.time() >= t_end:
            break
        for op, pr in list(procs.items()):
            collect(op)
            if pr.poll() is None:
                if time.time() > t_end + 20:       # a compile or a hang past the limit: stop it
                    pr.kill()
                    pr.wait()
                    print(f"{op}: stopped at the time limit", flush=True)
                    del procs[op]
                continue
            out = open(f"{a.out}.{op}.stdout").read()
            collect(op)
            del procs[op]
            if pr.returncode == 3 and time.time() < t_end:
                queue.append(op)
            elif pr.returncode not in (0, 3):
                print(f"{op}: worker exited {pr.returncode}:\n{out[-3000:]}", flush=True)
        time.sleep(0.5)
    with open(a.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    for op in ops:
        for ext in ("part", "stdout"):
            if os.path.exists(f"{a.out}.{op}.{ext}"):
                os.remove(f"{a.out}.{op}.{ext}")
    n_bad = sum(any(x[1] != "ok" for x in r["results"]) for r in rows)
    print(f"# {len(rows)} configs checked, {n_bad} with a failure")
    for op in ops:
        rs_ = [r for r in rows if r["op"] == op]
        wrong = [r for r in rs_ if any(x[1].startswith("WRONG") for x in r["results"])]
        err = [r for r in rs_ if any(x[1].startswith("error") for x in r["results"])]
        print(f"# {op}: {len(rs_)} configs, {len(wrong)} wrong, {len(err)} errors")


if __name__ == "__main__":
    main()
