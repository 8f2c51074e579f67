"""The built-in TuneSpecs (autotune/specs.py) against the real ops, on their tiny problems.

Only the ops that run quickly under the interpreter are exercised here; each spec must build its
problems, run the op with the op's fallback config forced through ``policy.override``, and pass its
own check -- and its check must reject a wrong answer.
"""
import json

import pytest
import torch

from autotune import specs as builtin
from autotune.spec import discover
from helpers import DEVICE
from tritoncub import policy

FAST = ("reduce", "histogram", "select", "reduce_by_key", "adjacent_difference")


def _spec(op):
    s = {s.op: s for s in builtin.builtin_specs()}.get(op)
    assert s is not None, f"autotune/specs.py has no spec for {op}"
    return s


@pytest.mark.parametrize("op", FAST)
def test_builtin_spec_runs_and_verifies_with_fallback(op):
    s = _spec(op)
    p = policy.op_policy(op)
    for bucket, probs in s.problem_set(quick=True).items():
        if op == "reduce" and bucket.startswith("arg"):
            continue                                   # argmax is slow under the interpreter
        with policy.override(op, p.fallback_for(bucket)):
            for pr in probs[:1]:
                x = pr.make(torch.device(DEVICE), 0)
                s.verify(s.call(x), s.reference(x))


def test_builtin_float_sum_check_rejects_wrong_sum():
    s = _spec("reduce")
    prob = s.quick_problems["sum_f4_small"][0].make(torch.device(DEVICE), 0)
    ref, x = s.reference(prob), prob[1]
    good = x.double().sum().float()
    s.verify(good, ref)
    with pytest.raises(AssertionError, match="tolerance"):
        s.verify(good + 0.05 * x.abs().sum(), ref)


def test_builtin_exact_check_rejects_wrong_count():
    s = _spec("histogram")
    x = s.quick_problems["default"][0].make(torch.device(DEVICE), 0)
    ref = s.reference(x)
    bad = ref.clone()
    bad[0] += 1
    with pytest.raises(AssertionError):
        s.verify(bad, ref)


def test_problems_are_reproducible_per_seed():
    s = _spec("select")
    pr = s.quick_problems["default"][0]
    (_, xa, ma), (_, xb, mb), (_, xc, _) = (pr.make(torch.device(DEVICE), k) for k in (0, 0, 1))
    assert torch.equal(xa, xb) and torch.equal(ma, mb) and not torch.equal(xa, xc)


def test_discover_finds_builtin_specs_for_registered_ops():
    found = discover()
    for op, s in found.items():
        assert op in policy.registered_ops(), f"spec for unregistered op {op}"
        assert s.source


def test_every_builtin_spec_builds():
    """builtin_specs() skips a spec whose builder raises (an op mid-rewrite must not stop the others):
    every one of ours must build, for the op its builder names."""
    assert [s.op for s in builtin.builtin_specs()] == [make.__name__[:-len("_spec")] for make in builtin.BUILTIN]
    assert set(discover()) >= {s.op for s in builtin.builtin_specs()}


def test_builtin_spec_buckets_are_declared_by_the_op():
    for s in builtin.builtin_specs():
        declared = set(policy.op_policy(s.op).buckets)
        for probs in (s.problems, s.quick_problems or {}):
            assert set(probs) <= declared, f"{s.op}: buckets {set(probs) - declared} not declared by the op"


@pytest.mark.parametrize("op", ["reduce_by_key", "adjacent_difference", "select"])
def test_new_spec_buckets_are_the_ones_the_op_asks_for(op):
    from autotune.tuner import resolve_buckets
    s = _spec(op)
    logs = []
    groups = resolve_buckets(s, torch.device(DEVICE), quick=True, log=logs.append)
    assert {b: [p.label for p in ps] for b, ps in groups.items()} == \
        {b: [p.label for p in ps] for b, ps in s.quick_problems.items()}
    assert not logs


def test_reduce_by_key_check_rejects_wrong_count_keys_and_sums():
    s = _spec("reduce_by_key")
    keys, vals = s.quick_problems["default"][0].make(torch.device(DEVICE), 0)
    ref = s.reference((keys, vals))
    uniq, exact, _ = ref
    r = uniq.numel()
    assert 1 < r < keys.numel() and torch.all(uniq[1:] > uniq[:-1])
    n = keys.numel()
    out_k = torch.zeros(n, dtype=keys.dtype, device=keys.device)
    out_v = torch.full((n,), float("nan"), device=keys.device)   # slots past num_runs are not looked at
    out_k[:r], out_v[:r] = uniq, exact.float()
    num = torch.tensor(r, dtype=torch.int64, device=keys.device)
    s.verify((out_k, out_v, num), ref)
    with pytest.raises(AssertionError, match="num_runs"):
        s.verify((out_k, out_v, num - 1), ref)
    bad_k = out_k.clone()
    bad_k[r // 2] += 1
    with pytest.raises(AssertionError, match="unique_keys"):
        s.verify((bad_k, out_v, num), ref)
    bad_v = out_v.clone()
    bad_v[r // 2] += 0.05 * vals.abs().sum()
    with pytest.raises(AssertionError, match="tolerance"):
        s.verify((out_k, bad_v, num), ref)


def test_adjacent_difference_check_is_exact():
    s = _spec("adjacent_difference")
    probs = s.quick_problems["default"]
    assert [p.label.split()[0] for p in probs] == ["subtract_left", "subtract_left", "diff"]
    for prob in probs:
        inputs = prob.make(torch.device(DEVICE), 0)
        kind, x = inputs
        ref = s.reference(inputs)
        good = torch.diff(x) if kind == "diff" else torch.cat([x[:1], torch.diff(x)])
        s.verify(s.call(inputs), ref)   # the op itself passes its own check
        s.verify(good, ref)
        if x.dtype.is_floating_point:
            bad = good.clone()
            bad[7] = torch.nextafter(bad[7], torch.tensor(float("inf"), device=bad.device))   # one ulp off
        else:
            bad = good.clone()
            bad[7] += 1
        with pytest.raises(AssertionError):
            s.verify(bad, ref)
        with pytest.raises(AssertionError):   # diff's output is one item shorter than subtract_left's
            s.verify(good[1:] if kind == "subtract_left" else torch.cat([x[:1], good]), ref)


class _FakeTimer:
    """Runs the op once (the tuner checks that the forced config was used) and returns a made-up
    time: smaller tiles and fewer warps "faster", so the winner is not the fallback."""

    def __init__(self):
        self.calls = []

    def __call__(self, fn, *, op, bucket, problem, config):
        fn()
        self.calls.append((op, bucket, problem))
        return config["TILE"] / 1024 * (1 + 0.1 * config["num_warps"]) * (1 + 0.01 * config["num_stages"])


def _tuner(tmp_path, op, timer, budget, clock=None):
    from autotune.state import State
    from autotune.tuner import Tuner
    state = State(tmp_path / "state.jsonl", "Triton interpreter (CPU)", "sm_test")
    kw = {"clock": clock} if clock else {}
    return Tuner({op: _spec(op)}, device=torch.device(DEVICE), target="sm_test",
                 device_name="Triton interpreter (CPU)", out_dir=tmp_path / "policies", state=state,
                 timer=timer, budget_s=budget, quick=True, **kw)


def _written(tmp_path, op):
    from autotune import policyfile
    data = json.loads((tmp_path / "policies" / "sm_test" / f"{op}.json").read_text())
    policyfile.validate(data)
    return data


def test_tuner_searches_adjacent_difference_on_quick_problems(tmp_path):
    op = "adjacent_difference"
    timer = _FakeTimer()
    res = _tuner(tmp_path, op, timer, budget=1e6).run([op])
    r = res[op]["default"]
    assert r.timed == len(policy.op_policy(op).enumerate()) and not r.rejected
    assert r.winner == {"TILE": 1024, "num_warps": 4, "num_stages": 1}
    assert {p for _, _, p in timer.calls} == {p.label for p in _spec(op).quick_problems["default"]}
    assert _written(tmp_path, op)["tuned"]["default"] == r.winner


def test_tuner_times_reduce_by_key_fallback_on_quick_problem(tmp_path):
    # each run takes seconds under the interpreter: a budget that only lets the fallback be timed
    op = "reduce_by_key"
    clock = {"now": 0.0}

    class Slow(_FakeTimer):
        def __call__(self, fn, **kw):
            clock["now"] += 10.0
            return super().__call__(fn, **kw)

    tuner = _tuner(tmp_path, op, Slow(), budget=5.0, clock=lambda: clock["now"])
    tuner.confirm_top = 0
    r = tuner.run([op])[op]["default"]
    assert r.timed == 1 and not r.rejected
    assert r.winner == policy.op_policy(op).fallback
    assert _written(tmp_path, op)["tuned"]["default"] == r.winner


@pytest.mark.parametrize("bucket", ["default", "heads", "runs"])
def test_select_check_rejects_a_wrong_item(bucket):
    """The select spec's check of the device select (items), run-length encoding (values and lengths)
    and non-trivial runs (offsets and lengths): right results pass, one changed item fails."""
    s = _spec("select")
    x = s.quick_problems[bucket][0].make(torch.device(DEVICE), 0)
    out = list(s.call(x))
    s.verify(tuple(out), s.reference(x))
    out[0] = out[0].clone()
    out[0][0] += 1
    with pytest.raises(AssertionError):
        s.verify(tuple(out), s.reference(x))


def test_radix_sort_spec_times_the_wide_passes_and_checks_sort():
    # besides 32-bit keys-only sorts, the tuner times 64-bit keys and torch's sort (packed key-position
    # words; for int64 keys, positions carried as values), so the policy values of the wide passes
    # (EXCHANGE_WIDE, EXCHANGE_SRC, MAXNREG_WIDE) and of the value exchange (EXCHANGE_VALUES) are
    # measured; the "sort" problems' check compares values and positions
    s = _spec("radix_sort")
    labels = [p.label for p in s.problems["default"]]
    assert {"sort_keys int64 n=2^24", "sort float32 n=2^26", "sort int64 n=2^24"} <= set(labels), labels
    x = torch.randn(300, device=DEVICE)
    x[::7] = x[3]    # (ties: positions must be the stable ones)
    ref = s.reference((x, "sort"))
    out = s.call((x, "sort"))
    s.verify(out, ref)
    with pytest.raises(AssertionError, match="out\\[1\\]"):
        s.verify((out[0], out[1].flip(0)), ref)
    keys = torch.randint(-2**63, 2**63 - 1, (257,), dtype=torch.int64, device=DEVICE)
    s.verify(s.call((keys, "sort_keys")), s.reference((keys, "sort_keys")))
    keys[::5] = keys[2]
    out = s.call((keys, "sort"))
    s.verify(out, s.reference((keys, "sort")))
    with pytest.raises(AssertionError, match="out\\[1\\]"):
        s.verify((out[0], out[1].flip(0)), s.reference((keys, "sort")))
