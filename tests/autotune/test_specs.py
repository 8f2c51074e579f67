"""The built-in TuneSpecs (autotune/specs.py) against the real ops, on their tiny problems.

Only the ops that run quickly under the interpreter are exercised here; each spec must build its
problems, run the op with the op's fallback config forced through ``policy.override``, and pass its
own check -- and its check must reject a wrong answer.
"""
import pytest
import torch

from autotune import specs as builtin
from autotune.spec import discover
from helpers import DEVICE
from tritoncub import policy

FAST = ("reduce", "histogram", "select")


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
    a, b, c = (pr.make(torch.device(DEVICE), k) for k in (0, 0, 1))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) and not torch.equal(a[0], c[0])


def test_discover_finds_builtin_specs_for_registered_ops():
    found = discover()
    for op, s in found.items():
        assert op in policy.registered_ops(), f"spec for unregistered op {op}"
        assert s.source
