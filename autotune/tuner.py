"""The tuning loop: for each op and bucket, time configs on the representative problems, verify the
best against the reference, and write the merged policy file.

Guarantees:

* a problem is tuned under the bucket the op itself asks the policy chain for (``policy.trace``),
  each config is forced for that bucket only, and a timing is discarded if the op did not use the
  forced config (``policy.override_hits``);
* every config that can win was checked against the reference on every problem of its bucket (the
  first output of each timed config is compared), and the winner is checked once more on *fresh*
  inputs before it is accepted; a config that gives a wrong answer is rejected, never written;
* the built-in fallback and the file's current value are always timed in the same run (even past
  the bucket's time share), so the reported speed-ups and the merge decision compare like with like;
* the best ``confirm_top`` configs, the fallback and the file's value are timed a second time and
  the two times averaged before the winner is chosen (one lucky run does not decide);
* a config whose time on a problem exceeds ``prune_factor`` times the best score so far is not timed
  on the rest of its bucket (its score is ``inf``);
* the time budget is shared out evenly over the (op, bucket) pairs still to do (what a bucket leaves
  unused goes to the next); once it is spent, the remaining buckets are skipped, not written;
* every timing is written to the resume file before the next one starts (see ``autotune.state``).

The timer is injected: on a GPU, :func:`gpu_timer` (GPU time from CUDA events, calls queued behind
a GPU sleep so host launch cost is not counted, L2 flushed before each call, the median); without
one, tests pass a fake (``timer(fn, op=, bucket=, problem=, config=) -> ms``) and the ops still run
(under the Triton interpreter) so that verification is real.
"""
from __future__ import annotations

import math
import statistics
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from tritoncub import policy

from . import policyfile
from .progress import Progress
from .search import Search, config_key, score
from .spec import Problem, TuneSpec
from .state import State

Timer = Callable[..., float]


def gpu_timer(warmup_ms: float = 5.0, rep_ms: float = 25.0, min_reps: int = 5, max_reps: int = 100,
              max_queue_ms: float = 100.0) -> Timer:
    """A timer for CUDA work: the median GPU time of one call, L2 flushed before each call.

    The host cost of a call (argument checks, allocation, Triton's launcher: tens of microseconds,
    the same for every config) must not be mistaken for kernel time, so the timed calls are queued
    behind a GPU sleep long enough for the host to enqueue all of them; the events around each call
    then see only the device work. (An op that waits on the device inside the call -- to size its
    output, say -- still pays that wait in its times.)"""
    state: dict = {}

    can_queue = hasattr(torch.cuda, "_sleep")

    def queue_behind_sleep(ms: float) -> None:
        if can_queue and ms > 0:
            torch.cuda._sleep(int(cycles_per_ms() * ms))

    def cycles_per_ms() -> float:
        if "cpm" not in state:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(1000)
            s.record()
            torch.cuda._sleep(5_000_000)
            e.record()
            torch.cuda.synchronize()
            state["cpm"] = 5_000_000 / max(s.elapsed_time(e), 1e-3)
        return state["cpm"]

    def timer(fn: Callable[[], Any], **_: Any) -> float:
        dev = torch.cuda.current_device()
        if ("flush", dev) not in state:
            l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or (64 << 20)
            state[("flush", dev)] = torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")
        buf = state[("flush", dev)]
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        host_ms = (time.perf_counter() - t0) * 1e3          # enqueue cost (upper bound of it)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        queue_behind_sleep(min(max_queue_ms, 3 * host_ms + 0.5))
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        est_ms = max(s.elapsed_time(e), 1e-3)
        for _ in range(max(1, min(20, int(warmup_ms / est_ms)))):
            fn()
        n = max(min_reps, min(max_reps, int(rep_ms / est_ms)))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        queue_behind_sleep(min(max_queue_ms, n * (1.5 * host_ms + 0.05) + 1.0))
        for i in range(n):
            buf.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return float(statistics.median(a.elapsed_time(b) for a, b in zip(starts, ends)))

    return timer


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _fatal(e: BaseException) -> bool:
    """Errors after which the CUDA context cannot be trusted (stop; resume in a fresh process)."""
    msg = str(e).lower()
    return any(s in msg for s in ("illegal memory access", "illegal address", "unspecified launch failure",
                                  "device-side assert", "misaligned address", "an illegal instruction"))


class FatalDeviceError(RuntimeError):
    pass


class BucketMismatch(RuntimeError):
    """The op never asked the policy chain for the bucket being tuned (so the config was not used)."""


def bind(spec: TuneSpec, x, pol, bucket: str):
    """(context, fn): ``fn()`` runs the op once on ``x`` with ``pol`` forced for ``bucket`` only."""
    import contextlib
    if spec.run is not None:
        return contextlib.nullcontext(), (lambda: spec.run(x, pol))
    return policy.override(spec.op, pol.as_dict(), bucket=bucket), (lambda: spec.call(x))


def check_once(spec: TuneSpec, x, ref, pol, bucket: str, device) -> None:
    """Run once with ``pol`` forced and compare with ``ref``; raises AssertionError (wrong output)
    or BucketMismatch (the op did not use the forced policy)."""
    ctx, fn = bind(spec, x, pol, bucket)
    with ctx:
        out = fn()
        if spec.run is None and policy.override_hits(spec.op, bucket) == 0:
            raise BucketMismatch(f"{spec.op} did not ask the policy chain for bucket {bucket!r} on this "
                                 f"problem, so the config was not used; fix the spec's bucket")
    _sync(torch.device(device))
    spec.verify(out, ref)


def resolve_buckets(spec: TuneSpec, device, *, quick: bool = False, seed: int = 0,
                    log: Callable[[str], None] = print) -> dict[str, list[Problem]]:
    """Group the spec's problems by the bucket the op actually asks for on each.

    Each problem runs once (current policy) under ``policy.trace()``. A problem whose op asks for
    the spec's bucket stays there; one that asks for exactly one other bucket moves to it (the
    op's bucketing rule changed, or the spec guessed); with several others, the most requested one.
    Specs with ``run`` (no policy lookup) and problems whose call fails keep the spec's bucket."""
    out: dict[str, list[Problem]] = {}
    for bucket, problems in spec.problem_set(quick).items():
        for pr in problems:
            b = bucket
            if spec.run is None:
                try:
                    x = pr.make(torch.device(device), seed)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        with policy.trace() as calls:
                            spec.call(x)
                    _sync(torch.device(device))
                    asked = [bb for (o, bb) in calls if o == spec.op]
                    if asked and bucket not in asked:
                        b = max(dict.fromkeys(asked), key=asked.count)
                        log(f"{spec.op}: problem {pr.label!r} is in bucket {b!r} (the spec said {bucket!r})")
                    del x
                except Exception as e:
                    if _fatal(e):
                        raise FatalDeviceError(str(e)) from e
            out.setdefault(b, []).append(pr)
    return out


@dataclass
class BucketResult:
    op: str
    bucket: str
    winner: dict | None
    winner_score: float
    fallback: dict
    problems: list[dict]
    timed: int
    space: int
    candidates: list[dict] = field(default_factory=list)
    previous: dict | None = None
    previous_score: float | None = None
    rejected: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""

    def as_json(self) -> dict:
        def fin(x):
            return None if x is None or not math.isfinite(x) else round(x, 5)
        return {"winner": self.winner, "winner_score": fin(self.winner_score), "fallback": self.fallback,
                "speedup_vs_fallback": fin(1 / self.winner_score) if self.winner_score and math.isfinite(
                    self.winner_score) else None,
                "problems": self.problems, "configs_timed": self.timed, "space": self.space,
                "previous": self.previous, "previous_score": fin(self.previous_score),
                # (an infinite previous score, written as None above: the file's value failed or is stale)
                "previous_failed": self.previous_score is not None and not math.isfinite(self.previous_score),
                "rejected": self.rejected[:10], "n_rejected": len(self.rejected),
                "candidates": self.candidates, "seconds": round(self.seconds, 1), "note": self.note}


class Tuner:
    def __init__(self, specs: dict[str, TuneSpec], *, device: torch.device, target: str, device_name: str,
                 out_dir: Path | str, state: State, timer: Timer, budget_s: float, quick: bool = False,
                 progress: Progress | None = None, seed: int = 0, margin: float = 0.02, top_k: int = 4,
                 prune_factor: float = 3.0, confirm_top: int = 3, clock: Callable[[], float] = time.monotonic,
                 log: Callable[[str], None] | None = None):
        self.specs, self.device, self.target, self.device_name = specs, torch.device(device), target, device_name
        self.out_dir, self.state, self.timer = Path(out_dir), state, timer
        self.budget_s, self.quick, self.seed = float(budget_s), quick, seed
        self.margin, self.top_k, self.prune_factor, self.clock = margin, top_k, prune_factor, clock
        self.confirm_top = confirm_top
        self.progress = progress or Progress(budget_s, enabled=False, clock=clock)
        self.log = log or self.progress.message
        self.start = clock()

    # ------------------------------------------------------------------------------------------
    def time_left(self) -> float:
        return self.budget_s - (self.clock() - self.start)

    def run(self, ops: list[str]) -> dict[str, dict[str, BucketResult]]:
        """Tune ``ops`` (in order); write each op's file as soon as its buckets are done."""
        groups = {op: resolve_buckets(self.specs[op], self.device, quick=self.quick, seed=self.seed, log=self.log)
                  for op in ops}
        work = sum(len(g) for g in groups.values())
        results: dict[str, dict[str, BucketResult]] = {}
        done_items = 0
        for op in ops:
            spec = self.specs[op]
            results[op] = {}
            for bucket, problems in groups[op].items():
                left = self.time_left()
                if left <= 0 and self.state.finished(op, bucket) is None:
                    self.log(f"{op}[{bucket}]: skipped, the time budget is spent (nothing written for it)")
                    results[op][bucket] = BucketResult(op, bucket, None, math.inf, {}, [], 0, 0,
                                                       note="skipped: time budget spent")
                else:
                    share = max(0.0, left) / max(1, work - done_items)
                    results[op][bucket] = self.tune_bucket(spec, bucket, share, problems)
                done_items += 1
            self.write(op, results[op])
        self.progress.close()
        return results

    # ------------------------------------------------------------------------------------------
    def _space(self, op: str, bucket: str):
        """(the op's policy, whose configs the search lists or draws, its keys, the bucket's fallback)."""
        p = policy.op_policy(op)
        return p, list(p.space), p.fallback_for(bucket)

    def _complete(self, op: str, bucket: str, cfg: dict | None) -> dict | None:
        """``cfg`` merged over the fallback, or None when it has unknown keys or is not valid."""
        if not cfg:
            return None
        p = policy.op_policy(op)
        full = {**p.fallback_for(bucket), **cfg}
        if set(full) - set(p.fallback) - set(p.space):
            return None
        if p.valid is not None and not p.valid(full):
            return None
        return full

    def existing_file(self, op: str) -> dict | None:
        return policyfile.read(policyfile.path_for(self.out_dir, self.target, op))

    def priority_configs(self, op: str, bucket: str, fallback: dict) -> tuple[list[dict], dict | None, bool]:
        """(configs timed first: the fallback, the target file's current value, the chain's current
        choice, the file's shortlist; the file's current value for the bucket or None; whether the
        file holds a value for the bucket that the op no longer accepts: a stale value, which the
        library ignores, so this run must replace it)."""
        pri = [fallback]
        existing = self.existing_file(op)
        prev, stale = None, False
        if existing:
            tuned = existing.get("tuned", {})
            raw = tuned.get(bucket, tuned.get("default"))
            prev = self._complete(op, bucket, raw)
            stale = raw is not None and prev is None
            if prev is not None:
                pri.append(prev)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")      # "no tuned policy": that is why we are here
                pri.append(policy.select(op, self.device, bucket).as_dict())
        except Exception:
            pass
        if existing:
            cands = existing.get("candidates", {})
            for c in cands.get(bucket, cands.get("default", [])):
                c = self._complete(op, bucket, c)
                if c is not None:
                    pri.append(c)
        return [c for c in (self._complete(op, bucket, c) for c in pri) if c is not None], prev, stale

    # ------------------------------------------------------------------------------------------
    def tune_bucket(self, spec: TuneSpec, bucket: str, share_s: float,
                    problems: list[Problem] | None = None) -> BucketResult:
        op = spec.op
        t_start = self.clock()
        space, keys, fallback = self._space(op, bucket)
        if problems is None:
            problems = spec.problem_set(self.quick)[bucket]
        prev_result = self.state.finished(op, bucket)
        if prev_result is not None:
            self.log(f"{op}[{bucket}]: finished in an earlier run (resume), reusing its result")
            r = BucketResult(op, bucket, prev_result.get("winner"), prev_result.get("winner_score") or math.inf,
                             prev_result.get("fallback", fallback), prev_result.get("problems", []),
                             prev_result.get("configs_timed", 0), prev_result.get("space", 0),
                             prev_result.get("candidates", []), prev_result.get("previous"),
                             math.inf if prev_result.get("previous_failed") else prev_result.get("previous_score"),
                             prev_result.get("rejected", []),
                             prev_result.get("seconds", 0.0), "resumed")
            if r.winner_score is None:
                r.winner_score = math.inf
            return r
        priority, prev, prev_stale = self.priority_configs(op, bucket, fallback)
        search = Search(space, priority, keys, seed=self.seed, base=fallback)
        n_total = len(search)
        deadline = t_start + share_s
        inputs: dict[str, Any] = {}
        refs: dict[str, Any] = {}
        times: dict[str, dict[str, float | None]] = {}   # config key -> problem -> ms
        scores: dict[str, float] = {}
        rejected: list[dict] = []
        fb_key = config_key(fallback)
        baseline: dict[str, float | None] = {}
        best_cfg, best_score = None, math.inf
        i = 0

        def get(problem: Problem, fresh: bool = False):
            if fresh:
                x = problem.make(self.device, self.seed + 7919)
                return x, spec.reference(x)
            if problem.label not in inputs:
                inputs[problem.label] = problem.make(self.device, self.seed)
                refs[problem.label] = spec.reference(inputs[problem.label])
            return inputs[problem.label], refs[problem.label]

        while True:
            mandatory = [fallback] + ([prev] if prev is not None else [])
            pending = any(config_key(c) not in search.done for c in mandatory)
            if not pending and self.clock() >= deadline:
                break
            cfg = search.next(best_cfg)
            if cfg is None:
                break
            i += 1
            key = config_key(cfg)
            pol = policy.Policy(op, {k: v for k, v in cfg.items() if k not in policy.LAUNCH_KEYS},
                                cfg["num_warps"], cfg["num_stages"], "autotune")
            t: dict[str, float | None] = {}
            for problem in problems:
                self.progress.update(op, bucket, problem.label, i, n_total)
                ms = self._time_one(spec, bucket, problem, key, pol, get, rejected)
                t[problem.label] = ms
                if ms is None:
                    break
                if key == fb_key:
                    baseline[problem.label] = ms
                b = baseline.get(problem.label)
                if b and math.isfinite(best_score) and ms / b > self.prune_factor * best_score:
                    t = {p.label: t.get(p.label) for p in problems}  # missing -> inf
                    break
            times[key] = t
            s = score({p.label: t.get(p.label) for p in problems}, baseline)
            scores[key] = s
            if s < best_score:
                best_cfg, best_score = cfg, s

        by_key = {config_key(c): c for c in search.all.values()}
        # confirmation: time the contenders once more (fallback and file value too) and average, so
        # that one lucky measurement does not pick the winner or inflate its speed-up
        ranked = sorted((s, k) for k, s in scores.items() if math.isfinite(s))
        contenders = [k for _, k in ranked[: self.confirm_top]]
        for c in (fallback, prev):
            if c is not None and config_key(c) in scores and math.isfinite(scores[config_key(c)]) \
                    and config_key(c) not in contenders:
                contenders.append(config_key(c))
        if self.confirm_top > 0:
            for k in contenders:
                cfg = by_key[k]
                pol = policy.Policy(op, {kk: v for kk, v in cfg.items() if kk not in policy.LAUNCH_KEYS},
                                    cfg["num_warps"], cfg["num_stages"], "autotune")
                for problem in problems:
                    self.progress.update(op, bucket, problem.label + " (confirm)", i, n_total)
                    ms2 = self._time_one(spec, bucket, problem, k, pol, get, rejected, round_="|confirm")
                    ms1 = times[k].get(problem.label)
                    times[k][problem.label] = (ms1 + ms2) / 2 if (ms1 is not None and ms2 is not None) else None
            baseline = {p.label: times.get(fb_key, {}).get(p.label) for p in problems}
            scores = {k: score({p.label: t.get(p.label) for p in problems}, baseline) for k, t in times.items()}
        ranked = sorted((s, k) for k, s in scores.items() if math.isfinite(s))
        prev_key = config_key(prev) if prev is not None else None
        prev_score = scores.get(prev_key, math.inf) if prev_key else None

        winner, winner_score = None, math.inf
        for s, k in ranked:
            if self._verify_fresh(spec, bucket, problems, k, by_key[k], get, rejected):
                winner, winner_score = by_key[k], s
                break
        if prev_stale or (prev_key is not None and any(r["config"] == prev_key for r in rejected)):
            # the file's value is one the library ignores, or it gave wrong results: never keep it
            prev_score = math.inf
        note = ""
        if (winner is not None and prev is not None and prev_score is not None and math.isfinite(prev_score)
                and config_key(winner) != prev_key and winner_score > prev_score * (1 - self.margin)):
            if self._verify_fresh(spec, bucket, problems, prev_key, prev, get, rejected):
                note = (f"kept the file's value: the best new config was within {self.margin:.0%} of it "
                        f"({winner_score:.3f} vs {prev_score:.3f})")
                winner, winner_score = prev, prev_score
        shortlist = [by_key[k] for s, k in ranked if not any(r["config"] == k for r in rejected)][: self.top_k]
        if winner is not None and winner not in shortlist:
            shortlist = [winner] + shortlist[: self.top_k - 1]
        wkey = config_key(winner) if winner is not None else None
        probs = []
        for p in problems:
            fb_ms = times.get(fb_key, {}).get(p.label)
            w_ms = times.get(wkey, {}).get(p.label) if wkey else None
            row = {"problem": p.label, "fallback_ms": _r(fb_ms), "tuned_ms": _r(w_ms)}
            if p.bytes_moved and w_ms:
                row["tuned_gbs"] = round(p.bytes_moved / w_ms / 1e6, 1)
            if fb_ms and w_ms:
                row["speedup"] = round(fb_ms / w_ms, 3)
            probs.append(row)
        res = BucketResult(op, bucket, winner, winner_score, fallback, probs, len(times), n_total, shortlist,
                           prev, prev_score, rejected, self.clock() - t_start, note)
        self.state.record_done(op, bucket, res.as_json())
        if winner is None:
            self.log(f"{op}[{bucket}]: no config passed verification; nothing written for this bucket")
        return res

    def _time_one(self, spec, bucket, problem, key, pol, get, rejected, round_: str = "") -> float | None:
        """Time ``pol`` on ``problem`` (checking its output first); ``round_`` names a repeat timing."""
        op = spec.op
        label = problem.label + round_
        rec = self.state.timing(op, bucket, label, key)
        if rec is not None:
            if rec.get("error"):
                if not any(r["config"] == key for r in rejected):
                    rejected.append({"config": key, "problem": problem.label, "error": rec["error"]})
                return None
            return rec["ms"]
        try:
            x, ref = get(problem)
            if self.state.verification(op, bucket, key + "|" + problem.label) is None:
                self._check(spec, x, ref, pol, bucket)
                self.state.record_verify(op, bucket, key + "|" + problem.label, True)
            ctx, fn = self._bind(spec, x, pol, bucket)
            with ctx:
                ms = float(self.timer(fn, op=op, bucket=bucket, problem=problem.label, config=pol.as_dict()))
                if spec.run is None and policy.override_hits(op, bucket) == 0:
                    raise BucketMismatch(f"{op} did not ask for bucket {bucket!r} while timed")
        except AssertionError as e:
            msg = f"wrong output: {str(e)[:300]}"
            self.state.record_verify(op, bucket, key + "|" + problem.label, False, msg)
            self.state.record_time(op, bucket, problem.label, key, error=msg)
            rejected.append({"config": key, "problem": problem.label, "error": msg})
            return None
        except Exception as e:
            if _fatal(e):
                self.state.record_time(op, bucket, problem.label, key, error=f"fatal: {type(e).__name__}: {e}"[:300])
                raise FatalDeviceError(f"{op}[{bucket}] config {key} broke the device context ({e}); "
                                       f"rerun with --resume (the config is recorded as failed)") from e
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
            self.state.record_time(op, bucket, problem.label, key, error=msg)
            rejected.append({"config": key, "problem": problem.label, "error": msg})
            return None
        self.state.record_time(op, bucket, label, key, ms=ms)
        return ms

    def _bind(self, spec: TuneSpec, x, pol, bucket: str):
        return bind(spec, x, pol, bucket)

    def _check(self, spec: TuneSpec, x, ref, pol, bucket: str) -> None:
        check_once(spec, x, ref, pol, bucket, self.device)

    def _verify_fresh(self, spec, bucket, problems, key, cfg, get, rejected) -> bool:
        """Check ``cfg`` once more on fresh inputs of every problem (the acceptance check)."""
        rec = self.state.verification(spec.op, bucket, key + "|fresh")
        if rec is not None:
            return rec["ok"]
        pol = policy.Policy(spec.op, {k: v for k, v in cfg.items() if k not in policy.LAUNCH_KEYS},
                            cfg["num_warps"], cfg["num_stages"], "autotune")
        try:
            for p in problems:
                x, ref = get(p, fresh=True)
                self._check(spec, x, ref, pol, bucket)
        except Exception as e:
            if _fatal(e):
                raise FatalDeviceError(str(e)) from e
            msg = f"rejected on fresh inputs: {type(e).__name__}: {str(e)[:300]}"
            self.state.record_verify(spec.op, bucket, key + "|fresh", False, msg)
            rejected.append({"config": key, "problem": "fresh inputs", "error": msg})
            self.log(f"{spec.op}[{bucket}]: a winning config failed verification and was rejected: {msg}")
            return False
        self.state.record_verify(spec.op, bucket, key + "|fresh", True)
        return True

    # ------------------------------------------------------------------------------------------
    def write(self, op: str, results: dict[str, BucketResult]) -> Path | None:
        if not any(r.winner is not None for r in results.values()):
            return None
        path = policyfile.path_for(self.out_dir, self.target, op)
        existing = policyfile.read(path)
        run_log = {
            "tool": "python -m autotune",
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "device": self.device_name,
            "torch": torch.__version__,
            "triton": __import__("triton").__version__,
            "budget_s": round(self.budget_s),
            "seconds": round(sum(r.seconds for r in results.values()), 1),
            "buckets": {b: r.as_json() for b, r in results.items()},
        }
        merged = policyfile.merge(existing, op=op, target=self.target, device_name=self.device_name,
                                  results={b: {"winner": r.winner, "winner_score": r.winner_score,
                                               "candidates": r.candidates,
                                               "previous_score": r.previous_score} for b, r in results.items()},
                                  run_log=run_log,
                                  keys=set(policy.op_policy(op).space) | set(policy.LAUNCH_KEYS))
        policyfile.write(path, merged)
        policy.clear_cache()
        self.log(f"wrote {path}")
        self._warn_if_shadowed(op, [b for b, r in results.items() if r.winner is not None])
        return path

    def _warn_if_shadowed(self, op: str, buckets: list[str]) -> None:
        """Say so when a file earlier along this device's policy chain (e.g. a device-name file over the
        architecture file just written) still decides a bucket just tuned: the new values would be unused."""
        written = f"policies/{self.target}/{op}.json"
        order = policy.lookup_order(self.device)
        if not order:   # (the interpreter reads no files)
            return
        if self.target not in order:
            self.log(f"note: {self.target} is not among the targets this device reads ({', '.join(order)}); "
                     f"the file just written is for another device")
            return
        for b in buckets:
            src = policy.select(op, self.device, b).source
            if src.startswith("policies/") and not src.startswith(written):
                self.log(f"warning: {op}[{b}] on this device is still decided by {src}, which comes before "
                         f"{self.target} in the lookup order ({', '.join(policy.lookup_order(self.device))}); "
                         f"the values just written are not used here. Tune with --target "
                         f"{policy.lookup_order(self.device)[0]} (or --target device), or remove that file.")


def _r(x):
    return None if x is None else round(float(x), 5)


def format_summary(results: dict[str, dict[str, BucketResult]]) -> str:
    lines = [f"{'op[bucket]':<34} {'space':>10} {'timed':>6} {'rejected':>8} {'speed-up vs fallback':>21}  winner"]
    for op, bres in results.items():
        for b, r in bres.items():
            sp = f"{1 / r.winner_score:.2f}x" if r.winner is not None and math.isfinite(r.winner_score) else "-"
            win = ", ".join(f"{k}={v}" for k, v in (r.winner or {}).items()) or "(none verified)"
            lines.append(f"{op + '[' + b + ']':<34} {r.space:>10} {r.timed:>6} {len(r.rejected):>8} {sp:>21}  {win}")
            for p in r.problems:
                lines.append(f"    {p['problem']:<40} fallback {_ms(p['fallback_ms'])}  tuned {_ms(p['tuned_ms'])}"
                             + (f"  ({p['tuned_gbs']} GB/s)" if p.get("tuned_gbs") else ""))
            if r.note:
                lines.append(f"    note: {r.note}")
    return "\n".join(lines)


def _ms(x) -> str:
    return f"{x:9.4f} ms" if x is not None else "        - ms"
