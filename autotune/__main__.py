"""``python -m autotune [--ops a,b] [--time-budget S] [--dry-run] [--resume] [--out DIR] [--target T]``

Tune tritoncub's ops on this GPU and write their policy files (see ``autotune/__init__.py``).

Examples::

    python -m autotune --dry-run                 # what would be searched (works without a GPU)
    python -m autotune                           # every op, default budget; writes policies/<arch>/
    python -m autotune --ops reduce,scan --time-budget 300
    python -m autotune --resume                  # continue an interrupted run
    python -m autotune --target device           # a file for this device name (nvidia-h200-...), not the arch
    python -m autotune --compare                 # tuned policy vs built-in fallback, per op
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import sys
import warnings
from pathlib import Path

DEFAULT_SECONDS_PER_OP = 90


def _default_out() -> Path:
    from tritoncub import policy
    user = os.environ.get(policy.USER_POLICY_DIR_ENV)
    if user:   # (the library reads it before the package's files: writing the package would be shadowed)
        return Path(user)
    d = policy.POLICY_DIR
    try:
        d.mkdir(parents=True, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    return _cache_dir() / "policies"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tritoncub"


def _select_ops(names: str | None, specs: dict, registered: list[str]) -> tuple[list[str], list[str]]:
    """(ops to tune, registered ops that have no spec)."""
    no_spec = [o for o in registered if o not in specs]
    tunable = [o for o in registered if o in specs]
    if names is None:
        return tunable, no_spec
    chosen = []
    pats = [s.strip() for s in names.split(",") if s.strip()]
    if not pats:
        raise SystemExit(f"--ops {names!r} names no op; registered: {', '.join(registered) or 'none'}")
    for pat in pats:
        hits = [o for o in registered if fnmatch.fnmatchcase(o, pat)]
        if not hits:
            raise SystemExit(f"--ops: no registered op matches {pat!r}; registered: {', '.join(registered) or 'none'}")
        for o in hits:
            if o not in specs:
                if pat == o:
                    raise SystemExit(f"--ops: {o!r} has a policy but no TuneSpec (no AUTOTUNE in its module and "
                                     f"none in autotune/specs.py), so it cannot be tuned")
                continue
            if o not in chosen:
                chosen.append(o)
    return chosen, [o for o in no_spec if any(fnmatch.fnmatchcase(o, p.strip()) for p in names.split(","))]


def _resolve_target(arg: str | None, arch: str, name: str) -> str:
    from tritoncub import policy
    if arg in (None, "", "arch"):
        return arch
    if arg == "device":
        return policy.device_slug(name)
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", arg) or ".." in arg:
        raise SystemExit(f"--target {arg!r} is not a target name (letters, digits, '_', '-', '.'; no path)")
    return arg


def dry_run(ops, no_spec, specs, quick, target, out_dir, device) -> int:
    from tritoncub import policy
    from .search import config_key
    print(f"target: {target}   output: {out_dir / target}/<op>.json")
    print(f"policy lookup order on this device: {', '.join(policy.lookup_order(device)) or 'interpreter (fallbacks)'}")
    total, estimated = 0, False
    for op in ops:
        p = policy.op_policy(op)
        spec = specs[op]
        raw = p.raw_size()
        n_valid = p.estimate_size()
        listed = raw <= p.ENUMERATE_LIMIT
        exact = listed or p.valid is None
        estimated = estimated or not exact
        total += n_valid
        print(f"\n{op}  (spec from {spec.source})")
        print(f"  space: {'' if exact else '~'}{n_valid} valid configs of {raw}"
              + ("" if exact else " (estimated from random draws)")
              + ("" if listed else " (searched by sampling, not listed)") + ": "
              + "; ".join(f"{k} in {v}" for k, v in p.space.items()))
        print(f"  fallback: {p.fallback}")
        for b, probs in spec.problem_set(quick).items():
            fb = p.fallback_for(b)
            print(f"  bucket {b!r} (as the spec says; a run checks it with the op): "
                  + ", ".join(pr.label for pr in probs)
                  + ("" if config_key(fb) == config_key(p.fallback) else f"  (fallback {fb})"))
    for op in no_spec:
        print(f"\n{op}: registered policy but no TuneSpec -> not tuned")
    print(f"\n{len(ops)} ops, {'~' if estimated else ''}{total} configs in their spaces (the search times as many as the budget allows)")
    return 0


def compare_run(ops, specs, device, quick, out_json, timer=None) -> int:
    """Time each op's selected (tuned) policy against its built-in fallback on the spec's problems.

    Both are checked against the reference first; times are GPU time (see ``tuner.gpu_timer``)."""
    import torch
    from tritoncub import policy
    from .tuner import bind, check_once, gpu_timer, resolve_buckets
    timer = timer or gpu_timer(warmup_ms=10, rep_ms=100)
    policy.clear_cache()
    rows = []
    print(f"{'op[bucket]':<30} {'problem':<38} {'fallback ms':>12} {'tuned ms':>10} {'speed-up':>9}  tuned from")
    for op in ops:
        spec = specs[op]
        p = policy.op_policy(op)
        for b, probs in resolve_buckets(spec, device, quick=quick).items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sel = policy.select(op, device, b)
            fb = p.fallback_for(b)
            for pr in probs:
                x = pr.make(device, 0)
                ref = spec.reference(x)
                res = {}
                for name, cfg in (("fallback", fb), ("tuned", sel.as_dict())):
                    pol = policy.Policy(op, {k: v for k, v in cfg.items() if k not in policy.LAUNCH_KEYS},
                                        cfg["num_warps"], cfg["num_stages"], name)
                    try:
                        check_once(spec, x, ref, pol, b, device)
                        ctx, fn = bind(spec, x, pol, b)
                        with ctx:
                            res[name] = float(timer(fn, op=op, bucket=b, problem=pr.label, config=cfg))
                    except Exception as e:
                        res[name] = None
                        print(f"  {op}[{b}] {name}: {type(e).__name__}: {str(e)[:200]}")
                f, t = res.get("fallback"), res.get("tuned")
                sp = f / t if f and t else None
                rows.append({"op": op, "bucket": b, "problem": pr.label, "fallback_ms": f, "tuned_ms": t,
                             "speedup": sp, "tuned_source": sel.source, "tuned": sel.as_dict(), "fallback": fb,
                             "bytes_moved": pr.bytes_moved})
                print(f"{op + '[' + b + ']':<30} {pr.label:<38} {f or float('nan'):12.4f} {t or float('nan'):10.4f} "
                      f"{(f'{sp:.2f}x' if sp else '-'):>9}  {sel.source}", flush=True)
                del x, ref
                if device.type == "cuda":
                    torch.cuda.empty_cache()
    if out_json:
        Path(out_json).parent.mkdir(parents=True, exist_ok=True)
        name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
        Path(out_json).write_text(json.dumps({"device": name, "rows": rows}, indent=1) + "\n")
        print(f"wrote {out_json}")
    return 0


def install_from(src_dir: Path, out_dir: Path) -> int:
    from . import policyfile
    files = sorted(Path(src_dir).glob("*/*.json"))
    if not files:
        print(f"no policy files under {src_dir}/<target>/", file=sys.stderr)
        return 1
    refused = 0
    for f in files:
        dst_path = Path(out_dir) / f.parent.name / f.name
        try:
            src = policyfile.read(f)
            # (the file must say it is this op's, for this target: lookup goes by the path alone)
            if src.get("op") != f.stem or src.get("target", f.parent.name) != f.parent.name:
                raise policyfile.PolicyFileError(
                    f"{f}: holds op {src.get('op')!r} for target {src.get('target')!r}, but its path says op "
                    f"{f.stem!r} for target {f.parent.name!r}")
            data, msgs = policyfile.install(src, policyfile.read(dst_path))
        except policyfile.PolicyFileError as e:
            print(f"not installed: {e}", file=sys.stderr)
            refused += 1
            continue
        policyfile.write(dst_path, data)
        for m in msgs:
            print(f"{f.parent.name}/{f.name}: {m}")
    return 1 if refused else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m autotune", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", help="comma-separated op names or globs (default: every op with a TuneSpec)")
    ap.add_argument("--time-budget", type=float, default=None,
                    help=f"seconds for the whole run (default {DEFAULT_SECONDS_PER_OP} per op)")
    ap.add_argument("--dry-run", action="store_true", help="list ops, spaces, buckets and problems; time nothing")
    ap.add_argument("--resume", action="store_true", help="continue from the state file of an interrupted run")
    ap.add_argument("--out", type=Path, default=None,
                    help="policy directory to write <target>/<op>.json into (default: $TRITONCUB_POLICY_DIR if "
                         "set, else the package's tritoncub/policies if writable, else "
                         "~/.cache/tritoncub/policies)")
    ap.add_argument("--target", default=None,
                    help="'arch' (default: sm_90...), 'device' (the device-name slug, e.g. nvidia-h100-80gb-hbm3) or a name")
    ap.add_argument("--state", type=Path, default=None, help="resume file (default: in ~/.cache/tritoncub)")
    ap.add_argument("--quick", action="store_true",
                    help="the specs' small problems (a smoke run: without --out its files go to "
                         "~/.cache/tritoncub/policies-quick, which the library does not read, and its state "
                         "file is its own)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--margin", type=float, default=0.02,
                    help="a new config replaces a file's value only when faster by more than this (default 2%%)")
    ap.add_argument("--compare", action="store_true", help="time tuned vs fallback policy per op; tune nothing")
    ap.add_argument("--json", type=Path, default=None, help="with --compare: write the rows here")
    ap.add_argument("--specs", default="",
                    help="extra comma-separated modules whose AUTOTUNE specs to use (ops outside tritoncub)")
    ap.add_argument("--install-from", type=Path, default=None, metavar="DIR",
                    help="merge the policy files under DIR/<target>/ (tuned on another machine) into --out "
                         "without undoing changes made there since; tunes nothing")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--fake-timer", action="store_true",
                    help="(testing the tool without a GPU only) run ops under the Triton interpreter and "
                         "use the wall time of one call as the 'time'")
    args = ap.parse_args(argv)
    for name, v in (("--time-budget", args.time_budget), ("--margin", args.margin)):
        if v is not None and not v >= 0:
            ap.error(f"{name} must be a non-negative number, got {v}")
    if args.json is not None and not args.compare:
        ap.error("--json writes --compare's results: pass --compare too")

    if args.install_from is not None:
        return install_from(args.install_from, args.out if args.out is not None else _default_out())

    import torch
    if args.fake_timer and torch.cuda.is_available():
        print("--fake-timer is only for machines without a GPU", file=sys.stderr)
        return 2
    if args.fake_timer:
        os.environ.setdefault("TRITON_INTERPRET", "1")

    from tritoncub import policy
    from .spec import discover
    specs = discover(tuple(m.strip() for m in args.specs.split(",") if m.strip()))
    registered = policy.registered_ops()
    ops, no_spec = _select_ops(args.ops, specs, registered)

    have_gpu = torch.cuda.is_available()
    device = torch.device("cuda", torch.cuda.current_device()) if have_gpu else torch.device("cpu")
    arch, name = policy.device_target(device if have_gpu else None)
    target = _resolve_target(args.target, arch, name)
    # (a --quick smoke run's winners, tuned on small problems, go where the library does not read them)
    out_dir = args.out if args.out is not None else (_cache_dir() / "policies-quick" if args.quick else _default_out())

    if args.dry_run:
        return dry_run(ops, no_spec, specs, args.quick, target, out_dir, device if have_gpu else None)
    if not ops:
        print("nothing to tune: no registered op has a TuneSpec" + (f" (ops without one: {', '.join(no_spec)})"
                                                                     if no_spec else ""), file=sys.stderr)
        return 1
    if args.compare:
        if not have_gpu:
            print("--compare needs a GPU", file=sys.stderr)
            return 2
        return compare_run(ops, specs, device, args.quick, args.json)
    if not have_gpu and not args.fake_timer:
        print("python -m autotune needs a GPU to time on (use --dry-run to see what it would search)",
              file=sys.stderr)
        return 2
    if target == policy.INTERPRETER_TARGET and args.target is None:
        target = "interpreter"

    from .progress import Progress
    from .state import State
    from . import policyfile
    from .tuner import FatalDeviceError, Tuner, format_summary, gpu_timer

    budget = args.time_budget if args.time_budget is not None else DEFAULT_SECONDS_PER_OP * len(ops)
    state_path = args.state or (_cache_dir() / f"autotune-state-{target}-{policy.device_slug(name)}"
                                                f"{'-quick' if args.quick else ''}.jsonl")
    try:
        state = State(state_path, name, target, resume=args.resume)
    except ValueError as e:
        print(str(e), file=sys.stderr)
        return 2
    if args.fake_timer:
        import time as _t

        def timer(fn, **_):
            t0 = _t.perf_counter()
            fn()
            return (_t.perf_counter() - t0) * 1e3
    else:
        timer = gpu_timer()
    progress = Progress(budget, enabled=not args.no_progress)
    print(f"# autotune on {name} ({arch}) -> {out_dir / target}/  ops: {', '.join(ops)}  budget {budget:.0f} s"
          f"  state {state_path}", flush=True)
    if no_spec:
        print(f"# not tuned (no TuneSpec): {', '.join(no_spec)}")
    tuner = Tuner(specs, device=device, target=target, device_name=name, out_dir=out_dir, state=state,
                  timer=timer, budget_s=budget, quick=args.quick, progress=progress, seed=args.seed,
                  margin=args.margin)
    try:
        results = tuner.run(ops)
    except policyfile.PolicyFileError as e:
        progress.close()
        print(f"\nstopped: {e}; fix or remove that file and run again", file=sys.stderr)
        return 2
    except FatalDeviceError as e:
        progress.close()
        print(f"\nstopped: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        progress.close()
        print(f"\ninterrupted; `python -m autotune --resume` continues from {state_path}", file=sys.stderr)
        return 130
    print(format_summary(results))
    searched = [str(d) for d in policy._policy_dirs()]
    if not any(Path(d).resolve() == Path(out_dir).resolve() for d in searched):
        print(f"# the policy chain does not search {out_dir}: export {policy.USER_POLICY_DIR_ENV}={out_dir}")
    print(f"# done in {tuner.clock() - tuner.start:.0f} s; `python -c \"import tritoncub; "
          f"print(tritoncub.describe())\"` shows what each op now uses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
