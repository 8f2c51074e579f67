"""The autotune tool's logic on the CPU: search, verification, resume, merge, file format.

The toy op (``autotune_toy_op.py``) runs for real under the Triton interpreter, so every output
check is real; only the timing is faked (no GPU here), by a timer computed from the config.
"""
import importlib.util
import json
import math
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

from helpers import DEVICE
from tritoncub import policy

HERE = Path(__file__).parent


def _toy():
    if "autotune_toy_op" not in sys.modules:
        spec = importlib.util.spec_from_file_location("autotune_toy_op", HERE / "autotune_toy_op.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["autotune_toy_op"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["autotune_toy_op"]


toy = _toy()
from autotune import policyfile  # noqa: E402
from autotune.search import Search, config_key, hamming, score  # noqa: E402
from autotune.state import State  # noqa: E402
from autotune.tuner import Tuner  # noqa: E402


class FakeTimer:
    """Runs the work once (so a crash still shows) and returns the config's made-up time."""

    def __init__(self, interrupt_after=None):
        self.calls = []
        self.interrupt_after = interrupt_after

    def __call__(self, fn, *, op, bucket, problem, config):
        if self.interrupt_after is not None and len(self.calls) >= self.interrupt_after:
            raise KeyboardInterrupt
        fn()
        self.calls.append((bucket, problem, config_key(config)))
        return toy.fake_time(config)


def make_tuner(tmp_path, timer, resume=False, budget=1e6, state_name="state.jsonl", **kw):
    state = State(tmp_path / state_name, "Triton interpreter (CPU)", "sm_test", resume=resume)
    return Tuner({toy.OP: toy.AUTOTUNE[0]}, device=torch.device(DEVICE), target="sm_test",
                 device_name="Triton interpreter (CPU)", out_dir=tmp_path / "policies", state=state,
                 timer=timer, budget_s=budget, **kw)


def valid_configs():
    return policy.op_policy(toy.OP).enumerate()


# --------------------------------------------------------------------------------------------------
def test_space_enumeration_respects_valid():
    cfgs = valid_configs()
    # 3 BLOCK x 2 BUG x 2 warps, minus BLOCK=16 with 2 warps (2 configs: BUG 0/1)
    assert len(cfgs) == 3 * 2 * 2 - 2
    assert all(not (c["BLOCK"] == 16 and c["num_warps"] == 2) for c in cfgs)
    assert len({config_key(c) for c in cfgs}) == len(cfgs)


def test_search_order_priority_then_everything_once():
    cfgs = valid_configs()
    fb = policy.op_policy(toy.OP).fallback
    other = {**fb, "BLOCK": 64}
    s = Search(cfgs, [fb, other, fb], keys=["BLOCK", "BUG", "num_warps", "num_stages"], seed=3)
    got = []
    while (c := s.next(fb)) is not None:
        got.append(config_key(c))
    assert got[0] == config_key(fb) and got[1] == config_key(other)
    assert sorted(got) == sorted(config_key(c) for c in cfgs)   # each exactly once
    assert len(s) == len(cfgs)


def test_search_visits_a_neighbour_of_the_best_early():
    cfgs = valid_configs()
    fb = policy.op_policy(toy.OP).fallback
    keys = ["BLOCK", "BUG", "num_warps", "num_stages"]
    s = Search(cfgs, [fb], keys=keys, seed=0)
    assert s.next(None) == fb
    nb = s.next(fb)                      # second pick alternates to the neighbourhood of the best
    assert sum(nb[k] != fb[k] for k in keys) == 1


def test_search_samples_a_space_too_large_to_list():
    space = {f"K{i}": list(range(10)) for i in range(10)}
    p = policy.OpPolicy("search_test_huge", {**space, "num_warps": [1, 2], "num_stages": [1]},
                        {**{k: 0 for k in space}, "num_warps": 1, "num_stages": 1},
                        valid=lambda c: (c["K0"] + c["K1"]) % 2 == 0)
    fb = p.fallback
    other = {**fb, "K5": 7, "K6": 3}
    s = Search(p, [fb, other], keys=list(p.space), seed=2, base=fb)
    assert 0.4 * p.raw_size() < len(s) < 0.6 * p.raw_size()
    got = [s.next(fb) for _ in range(60)]
    assert got[0] == fb and got[1] == other
    assert len({config_key(c) for c in got}) == len(got) and all(p.valid(c) for c in got)
    # after the priority configs, picks alternate between a neighbour of the best and a random draw
    assert all(hamming(c, fb, p.space) == 1 for c in got[2::2])
    assert sum(hamming(c, fb, p.space) > 2 for c in got[3::2]) >= 25


def test_score_geomean_and_failures():
    assert score({"a": 1.0, "b": 4.0}, {"a": 1.0, "b": 1.0}) == pytest.approx(2.0)
    assert score({"a": 2.0}, {"a": 2.0}) == pytest.approx(1.0)
    assert score({"a": None, "b": 1.0}, {"a": 1.0, "b": 1.0}) == math.inf


# --------------------------------------------------------------------------------------------------
def test_tuner_rejects_wrong_config_and_writes_policy_file(tmp_path):
    timer = FakeTimer()
    tuner = make_tuner(tmp_path, timer)
    res = tuner.run([toy.OP])
    for bucket in ("small", "big"):
        r = res[toy.OP][bucket]
        # BUG=1 configs are "fastest" by the fake timer, but give wrong output: all rejected
        assert r.winner["BUG"] == 0
        assert r.winner == {"BLOCK": 64, "BUG": 0, "num_warps": 1, "num_stages": 1}
        assert any("wrong output" in x["error"] for x in r.rejected)
        assert all(json.loads(x["config"])["BUG"] == 1 for x in r.rejected)
        assert r.timed == len(valid_configs())
        assert 1 / r.winner_score == pytest.approx(4.0)   # 1/16 -> 1/64 per item
    path = tmp_path / "policies" / "sm_test" / f"{toy.OP}.json"
    data = json.loads(path.read_text())
    policyfile.validate(data)
    assert data["op"] == toy.OP and data["target"] == "sm_test"
    assert data["tuned"]["big"] == {"BLOCK": 64, "BUG": 0, "num_warps": 1, "num_stages": 1}
    assert set(data["tuned"]["small"]) == {"BLOCK", "BUG", "num_warps", "num_stages"}  # only searched keys
    assert all(c["BUG"] == 0 for c in data["candidates"]["big"]) and len(data["candidates"]["big"]) <= 4
    log = data["log"]["autotune"]
    assert log["buckets"]["big"]["problems"][0]["problem"] == "float32 n=100"
    assert log["buckets"]["big"]["problems"][0]["speedup"] == pytest.approx(4.0)
    assert log["decisions"]["big"] == "new"
    assert log["buckets"]["big"]["n_rejected"] >= 1


def test_winner_rejected_on_fresh_inputs_falls_back_to_next(tmp_path, monkeypatch):
    """A config that is right on the tuning inputs but wrong on fresh ones is not accepted."""
    spec = toy.AUTOTUNE[0]
    orig_call = spec.call

    def call(x):
        y = orig_call(x)
        pol = policy.select(toy.OP, x.device, "big")
        if pol["BLOCK"] == 64 and x[0].item() != spec.problems["big"][0].make(x.device, 0)[0].item() \
                and x[0].item() != spec.problems["big"][1].make(x.device, 0)[0].item() \
                and x[0].item() != spec.problems["small"][0].make(x.device, 0)[0].item():
            y = y + 1                      # wrong only on data it was not tuned on
        return y

    monkeypatch.setattr(spec, "call", call)
    res = make_tuner(tmp_path, FakeTimer()).run([toy.OP])
    r = res[toy.OP]["big"]
    assert r.winner["BLOCK"] == 32 and r.winner["BUG"] == 0
    assert any("fresh" in x["error"] for x in r.rejected)


def test_budget_limits_search_but_fallback_is_timed(tmp_path):
    clock = {"now": 0.0}

    class SlowTimer(FakeTimer):
        def __call__(self, fn, **kw):
            clock["now"] += 10.0                      # every timing takes 10 "seconds"
            return super().__call__(fn, **kw)

    tuner = make_tuner(tmp_path, SlowTimer(), budget=5.0, clock=lambda: clock["now"])
    res = tuner.run([toy.OP])
    small, big = res[toy.OP]["small"], res[toy.OP]["big"]
    assert small.timed == 1 and small.winner == policy.op_policy(toy.OP).fallback   # past its share
    assert big.winner is None and "budget" in big.note                              # budget gone: skipped
    data = json.loads((tmp_path / "policies" / "sm_test" / f"{toy.OP}.json").read_text())
    assert "big" not in data["tuned"] and "small" in data["tuned"]


def test_zero_budget_writes_nothing(tmp_path):
    res = make_tuner(tmp_path, FakeTimer(), budget=0.0).run([toy.OP])
    assert all(r.winner is None for r in res[toy.OP].values())
    assert not (tmp_path / "policies" / "sm_test" / f"{toy.OP}.json").exists()


def test_resume_skips_what_was_measured(tmp_path):
    full = FakeTimer()
    ref = make_tuner(tmp_path / "a", full).run([toy.OP])
    n_full = len(full.calls)

    first = FakeTimer(interrupt_after=5)
    with pytest.raises(KeyboardInterrupt):
        make_tuner(tmp_path / "b", first).run([toy.OP])
    assert len(first.calls) == 5
    lines = (tmp_path / "b" / "state.jsonl").read_text().splitlines()
    assert sum(json.loads(l)["t"] == "time" for l in lines) >= 5

    second = FakeTimer()
    res = make_tuner(tmp_path / "b", second, resume=True).run([toy.OP])
    # exactly the timings of an uninterrupted run (its confirmation round included): nothing twice
    assert Counter(first.calls) + Counter(second.calls) == Counter(full.calls)
    assert len(first.calls) + len(second.calls) == n_full
    for b in ("small", "big"):
        assert res[toy.OP][b].winner == ref[toy.OP][b].winner

    third = FakeTimer()                                         # all buckets done: nothing re-timed
    res3 = make_tuner(tmp_path / "b", third, resume=True).run([toy.OP])
    assert third.calls == []
    assert res3[toy.OP]["big"].winner == ref[toy.OP]["big"].winner


def test_without_resume_state_starts_over(tmp_path):
    make_tuner(tmp_path, FakeTimer()).run([toy.OP])
    again = FakeTimer()
    make_tuner(tmp_path, again).run([toy.OP])
    assert len(again.calls) > 0


def test_state_refuses_another_device(tmp_path):
    State(tmp_path / "s.jsonl", "GPU A", "sm_90")
    with pytest.raises(ValueError, match="GPU A"):
        State(tmp_path / "s.jsonl", "GPU B", "sm_90", resume=True)


def test_state_ignores_torn_last_line(tmp_path):
    st = State(tmp_path / "s.jsonl", "GPU A", "sm_90")
    st.record_time("op", "b", "p", "{}", ms=1.0)
    with open(tmp_path / "s.jsonl", "a") as f:
        f.write('{"t": "time", "op": "op", "buck')
    st2 = State(tmp_path / "s.jsonl", "GPU A", "sm_90", resume=True)
    assert st2.timing("op", "b", "p", "{}")["ms"] == 1.0


# --------------------------------------------------------------------------------------------------
def _write_existing(tmp_path, tuned_big, log=None):
    p = policyfile.path_for(tmp_path / "policies", "sm_test", toy.OP)
    policyfile.write(p, {"op": toy.OP, "target": "sm_test", "device_name": "x",
                         "tuned": {"big": tuned_big, "extra": {"BLOCK": 32}},
                         "candidates": {}, "log": log or {"by": "an op's own sweep"}})
    return p


def test_merge_keeps_faster_existing_value_and_logs_both(tmp_path):
    # the existing value is "faster" than anything in the space, by a timer that knows it
    existing = {"BLOCK": 32, "BUG": 0, "num_warps": 2, "num_stages": 1}
    p = _write_existing(tmp_path, existing)

    class T(FakeTimer):
        def __call__(self, fn, *, op, bucket, problem, config):
            t = super().__call__(fn, op=op, bucket=bucket, problem=problem, config=config)
            return 0.001 if config == existing else t

    res = make_tuner(tmp_path, T()).run([toy.OP])
    data = json.loads(p.read_text())
    assert data["tuned"]["big"] == existing                    # kept
    assert data["tuned"]["extra"] == {"BLOCK": 32}             # untouched bucket kept
    assert data["log"]["autotune"]["decisions"]["small"] == "new"   # new bucket added
    assert data["tuned"]["small"] == existing                  # (the fake timer favours it everywhere)
    assert data["log"]["by"] == "an op's own sweep" and "previous" not in data["log"]   # hand notes stay
    b = data["log"]["autotune"]["buckets"]["big"]
    assert b["previous"] == existing and b["previous_score"] is not None
    assert res[toy.OP]["big"].winner == existing


def test_merge_replaces_slower_existing_value(tmp_path):
    p = _write_existing(tmp_path, {"BLOCK": 16, "BUG": 0, "num_warps": 1, "num_stages": 1})
    make_tuner(tmp_path, FakeTimer()).run([toy.OP])
    data = json.loads(p.read_text())
    assert data["tuned"]["big"]["BLOCK"] == 64
    assert "replaced" in data["log"]["autotune"]["decisions"]["big"]


def test_merge_margin_keeps_existing_within_noise(tmp_path):
    existing = {"BLOCK": 32, "BUG": 0, "num_warps": 1, "num_stages": 1}
    p = _write_existing(tmp_path, existing)
    make_tuner(tmp_path, FakeTimer(), margin=0.6).run([toy.OP])   # 64 is 2x faster: within a 60% margin
    assert json.loads(p.read_text())["tuned"]["big"] == existing


@pytest.mark.parametrize("stale", [{"BLOCK": 16, "BUG": 0, "num_warps": 2, "num_stages": 1},     # not valid
                                   {"BLOCK": 32, "OLD_KNOB": 3, "num_warps": 1, "num_stages": 1}],  # a removed knob
                         ids=["invalid", "unknown-key"])
def test_existing_file_with_a_stale_value_is_replaced(tmp_path, stale):
    """A file value the op no longer accepts (the library ignores it, with a warning telling the user to
    re-tune) is never trusted, and the run replaces it in the file."""
    p = _write_existing(tmp_path, stale)
    res = make_tuner(tmp_path, FakeTimer()).run([toy.OP])
    assert res[toy.OP]["big"].winner["BLOCK"] == 64
    data = json.loads(p.read_text())
    assert data["tuned"]["big"]["BLOCK"] == 64 and "OLD_KNOB" not in data["tuned"]["big"]
    assert data["log"]["autotune"]["decisions"]["big"].startswith("replaced")


def test_file_value_wrong_on_fresh_inputs_is_replaced(tmp_path, monkeypatch):
    """The file's value passes on the tuning inputs but fails the check on fresh ones: replaced."""
    spec = toy.AUTOTUNE[0]
    orig = spec.call
    first = []

    def call(x):
        y = orig(x)
        if not first:
            first.append(x[0].item())
        if policy.select(toy.OP, x.device, "big")["BLOCK"] == 64 and x[0].item() not in first:
            y = y + 1     # wrong on inputs other than the first ones only
        return y
    monkeypatch.setattr(spec, "call", call)
    p = _write_existing(tmp_path, {"BLOCK": 64, "BUG": 0, "num_warps": 1, "num_stages": 1})
    res = make_tuner(tmp_path, FakeTimer()).run([toy.OP])
    assert res[toy.OP]["big"].winner["BLOCK"] != 64
    data = json.loads(p.read_text())
    assert data["tuned"]["big"]["BLOCK"] != 64


def test_resumed_run_still_replaces_a_failing_file_value(tmp_path):
    """A bucket finished before an interruption keeps its verdict on resume: a file value with wrong
    output is replaced as in an uninterrupted run (its infinite score used to come back as 'not timed')."""
    p = policyfile.path_for(tmp_path / "policies", "sm_test", toy.OP)
    policyfile.write(p, {"op": toy.OP, "tuned": {"small": {"BLOCK": 64, "BUG": 1, "num_warps": 1, "num_stages": 1}}})

    class StopInBig(FakeTimer):
        def __call__(self, fn, *, op, bucket, problem, config):
            if bucket == "big":
                raise KeyboardInterrupt
            return super().__call__(fn, op=op, bucket=bucket, problem=problem, config=config)
    with pytest.raises(KeyboardInterrupt):
        make_tuner(tmp_path, StopInBig()).run([toy.OP])
    make_tuner(tmp_path, FakeTimer(), resume=True).run([toy.OP])
    data = json.loads(p.read_text())
    assert data["tuned"]["small"]["BUG"] == 0
    assert data["log"]["autotune"]["decisions"]["small"].startswith("replaced")


def test_policyfile_validate_rejects_bad_shapes(tmp_path):
    with pytest.raises(ValueError, match="tuned"):
        policyfile.validate({"op": "x"})
    with pytest.raises(ValueError, match="candidates"):
        policyfile.validate({"op": "x", "tuned": {}, "candidates": {"default": {}}})
    with pytest.raises(ValueError):
        policyfile.write(tmp_path / "a.json", {"op": "x", "tuned": {"b": 3}})
    assert not (tmp_path / "a.json").exists()


@pytest.mark.gpu
def test_real_timer_on_gpu(tmp_path):
    """On a GPU the real timer drives the search; wrong configs are still rejected."""
    from autotune.tuner import gpu_timer
    res = make_tuner(tmp_path, gpu_timer(warmup_ms=1, rep_ms=3)).run([toy.OP])
    for r in res[toy.OP].values():
        assert r.winner is not None and r.winner["BUG"] == 0
        assert all(json.loads(x["config"])["BUG"] == 1 for x in r.rejected)
        assert len(r.rejected) == 5 and r.timed == len(valid_configs())
    data = json.loads((tmp_path / "policies" / "sm_test" / f"{toy.OP}.json").read_text())
    assert all(p["tuned_ms"] > 0 for p in data["log"]["autotune"]["buckets"]["big"]["problems"])


def test_merge_writes_only_searched_keys():
    data = policyfile.merge(None, op="x", target="sm_90", device_name="d",
                            results={"b": {"winner": {"A": 1, "FIXED": 7, "num_warps": 4, "num_stages": 1},
                                           "winner_score": 0.5, "candidates": [{"A": 1, "FIXED": 7}]}},
                            run_log={}, keys={"A", "num_warps", "num_stages"})
    assert data["tuned"]["b"] == {"A": 1, "num_warps": 4, "num_stages": 1}
    assert data["candidates"]["b"] == [{"A": 1}]
    assert data["log"]["autotune"]["decisions"]["b"] == "new"


def test_merge_keeps_a_file_value_this_run_did_not_time():
    old = {"op": "x", "tuned": {"b": {"A": 2}}, "log": {"by": "hand"}}
    data = policyfile.merge(old, op="x", target="sm_90", device_name="d",
                            results={"b": {"winner": {"A": 1}, "winner_score": 0.5, "candidates": [],
                                           "previous_score": None}}, run_log={})
    assert data["tuned"]["b"] == {"A": 2}
    assert "not timed" in data["log"]["autotune"]["decisions"]["b"]
    assert data["log"]["by"] == "hand"


def test_resolve_buckets_asks_the_op():
    from autotune.spec import TuneSpec
    from autotune.tuner import resolve_buckets
    base = toy.AUTOTUNE[0]
    wrong = TuneSpec(op=toy.OP, problems={"small": base.problems["small"] + base.problems["big"][:1]},
                     call=base.call, reference=base.reference)
    logs = []
    groups = resolve_buckets(wrong, torch.device(DEVICE), log=logs.append)
    assert [p.label for p in groups["small"]] == ["float32 n=50"]
    assert [p.label for p in groups["big"]] == ["float32 n=100"]
    assert any("is in bucket 'big'" in m for m in logs)


def test_forced_config_not_used_is_caught():
    """If the op never asks for the bucket being tuned, the timing would be of another config."""
    from autotune.tuner import BucketMismatch, check_once
    spec = toy.AUTOTUNE[0]
    x = spec.problems["big"][0].make(torch.device(DEVICE), 0)
    pol = policy.Policy(toy.OP, {"BLOCK": 64, "BUG": 0}, 1, 1)
    check_once(spec, x, spec.reference(x), pol, "big", DEVICE)
    with pytest.raises(BucketMismatch, match="small"):
        check_once(spec, x, spec.reference(x), pol, "small", DEVICE)


def test_confirmation_round_undoes_a_lucky_measurement(tmp_path):
    lucky = {"BLOCK": 32, "BUG": 0, "num_warps": 1, "num_stages": 1}
    seen = set()

    class Lucky(FakeTimer):
        def __call__(self, fn, **kw):
            t = super().__call__(fn, **kw)
            k = (kw["bucket"], kw["problem"], config_key(kw["config"]))
            if kw["config"] == lucky and k not in seen:
                seen.add(k)
                return 0.01                           # one lucky run, below the best real time
            return t

    res = make_tuner(tmp_path / "a", Lucky()).run([toy.OP])
    assert res[toy.OP]["big"].winner["BLOCK"] == 64
    seen.clear()
    res = make_tuner(tmp_path / "b", Lucky(), confirm_top=0).run([toy.OP])
    assert res[toy.OP]["big"].winner == lucky        # what a single measurement would have picked


def test_gpu_timer_logic_with_a_mocked_device(monkeypatch):
    """The GPU timer's control flow (sleep calibration, queueing, median of event pairs), on the CPU."""
    from autotune.tuner import gpu_timer
    clock = {"t": 0.0}
    sleeps = []

    class Ev:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = clock["t"]

        def elapsed_time(self, other):
            return other.t - self.t

    def fake_sleep(cycles):
        sleeps.append(cycles)
        clock["t"] += cycles / 1e6                    # 1e6 cycles per ms

    real_empty = torch.empty
    monkeypatch.setattr(torch.cuda, "Event", Ev)
    monkeypatch.setattr(torch.cuda, "_sleep", fake_sleep)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d: type("P", (), {"L2_cache_size": 1024})())
    monkeypatch.setattr(torch, "empty", lambda *a, device=None, **k: real_empty(*a, **k))
    calls = {"n": 0}

    def work():                                       # 0.5 ms of "device time", every 7th call 5 ms
        calls["n"] += 1
        clock["t"] += 5.0 if calls["n"] % 7 == 0 else 0.5

    ms = gpu_timer(warmup_ms=1, rep_ms=10)(work)
    assert ms == pytest.approx(0.5)                   # the median ignores the outliers
    assert sleeps[1] == 5_000_000 and len(sleeps) == 4   # calibration (2), then two queueing sleeps
    assert calls["n"] >= 3 + 5


def test_install_takes_only_buckets_unchanged_since_the_run(tmp_path):
    src = {"op": "x", "tuned": {"a": {"T": 2}, "b": {"T": 4}, "c": {"T": 8}}, "candidates": {"a": [{"T": 2}]},
           "log": {"autotune": {"decisions": {"a": "replaced the file's value (measured slower)", "b": "new",
                                              "c": "kept the file's value (measured as fast or faster ...)"},
                                "buckets": {"a": {"previous": {"T": 1, "W": 4}}, "b": {"previous": None},
                                            "c": {"previous": {"T": 8}}}}}}
    dst = {"op": "x", "tuned": {"a": {"T": 1}, "b": {"T": 16}, "d": {"T": 3}}, "log": {"by": "sweep"}}
    out, msgs = policyfile.install(src, dst)
    assert out["tuned"]["a"] == {"T": 2} and out["candidates"]["a"] == [{"T": 2}]   # unchanged since: installed
    assert out["tuned"]["b"] == {"T": 16}                  # someone set b after the run: kept
    assert out["tuned"]["d"] == {"T": 3} and "c" not in out["tuned"]
    assert out["log"]["by"] == "sweep" and any("kept the current value" in m for m in msgs)
    new, msgs = policyfile.install(src, None)
    assert new is src and msgs == ["x: new file"]


def test_install_new_bucket_of_a_file_with_a_default():
    """A bucket the file had no value for was tuned against the file's "default" value (its previous):
    installed while that default is unchanged (it was once always kept as "changed since the run"),
    kept when the default changed."""
    existing = {"op": "x", "tuned": {"default": {"T": 2048, "W": 8}}}
    prev = {"T": 2048, "V": 4, "W": 8}   # (the default completed by the fallback, as the tuner records it)
    src = policyfile.merge(existing, op="x", target="sm_90", device_name="X",
                           results={"small": {"winner": {"T": 1024, "V": 4, "W": 4}, "winner_score": 1.0,
                                              "candidates": [], "previous_score": 2.0}},
                           run_log={"buckets": {"small": {"previous": prev}}})
    assert src["log"]["autotune"]["decisions"] == {"small": "new"}
    out, msgs = policyfile.install(src, existing)
    assert out["tuned"]["small"] == {"T": 1024, "V": 4, "W": 4} and out["tuned"]["default"] == {"T": 2048, "W": 8}
    assert msgs == ["x[small]: installed (new)"]
    changed = {"op": "x", "tuned": {"default": {"T": 4096, "W": 8}}}
    out, msgs = policyfile.install(src, changed)
    assert "small" not in out["tuned"] and "kept the current value" in msgs[0]


def test_cli_install_from(tmp_path, capsys):
    from autotune.__main__ import main
    src = tmp_path / "ret" / "sm_90"
    policyfile.write(src / "x.json", {"op": "x", "tuned": {"a": {"T": 2}},
                                      "log": {"autotune": {"decisions": {"a": "new"}, "buckets": {"a": {}}}}})
    assert main(["--install-from", str(tmp_path / "ret"), "--out", str(tmp_path / "pkg")]) == 0
    assert json.loads((tmp_path / "pkg" / "sm_90" / "x.json").read_text())["tuned"] == {"a": {"T": 2}}
    assert "new file" in capsys.readouterr().out


def test_cli_install_from_refuses_files_that_are_not_what_their_path_says(tmp_path, capsys):
    # lookup goes by <target>/<op>.json alone: a file of another op or target, or one that is not a
    # policy file, is named and left out (exit 1), and the others are installed
    from autotune.__main__ import main
    ret = tmp_path / "ret"
    policyfile.write(ret / "sm_90" / "x.json", {"op": "x", "tuned": {"a": {"T": 2}}})
    policyfile.write(ret / "sm_90" / "reduce.json", {"op": "adjacent_difference", "tuned": {}})
    policyfile.write(ret / "sm_90" / "scan.json", {"op": "scan", "target": "interpreter", "tuned": {}})
    (ret / "sm_90" / "histogram.json").write_text("{broken")
    assert main(["--install-from", str(ret), "--out", str(tmp_path / "pkg")]) == 1
    err = capsys.readouterr().err
    assert "'adjacent_difference'" in err and "'interpreter'" in err and "histogram.json: not a JSON policy file" in err
    assert sorted(p.name for p in (tmp_path / "pkg" / "sm_90").iterdir()) == ["x.json"]


def test_read_names_the_file_it_cannot_read(tmp_path):
    bad = tmp_path / "sm_90" / "reduce.json"
    bad.parent.mkdir()
    bad.write_text('{"op": "reduce", "tuned": [')
    with pytest.raises(policyfile.PolicyFileError, match="reduce.json: not a JSON policy file"):
        policyfile.read(bad)
    bad.write_text('{"op": "reduce", "tuned": {"default": 4}}')
    with pytest.raises(policyfile.PolicyFileError, match=r"tuned\['default'\] must be an object"):
        policyfile.read(bad)
