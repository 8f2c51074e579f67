"""The tuning protocol: what an op tells ``python -m autotune`` so that its policy can be searched.

A :class:`TuneSpec` names one *policy op* (the name given to ``tritoncub.policy.register``) and says

* which **problems** represent each of the op's buckets (a few sizes and dtypes per bucket, built
  lazily by :class:`Problem` factories so that ``--dry-run`` allocates nothing);
* how to **call** the op on a problem's inputs through its normal public API. The tuner wraps the
  call in ``tritoncub.policy.override(op, config)``, so an op whose launcher asks
  ``policy.select``/``policy.launch`` for its config at call time needs nothing else. An op that
  does not (or that wants a cheaper path) gives ``run(inputs, policy)`` instead, which must launch
  with exactly the given :class:`tritoncub.policy.Policy`;
* the **reference** result (torch or numpy) and how to **check** an output against it (default:
  exact for integer/bool tensors, ``torch.testing.assert_close`` with the spec's tolerances for
  floats, NaN equal to NaN; tuples/lists element-wise).

Where specs come from (:func:`discover`): each module of ``tritoncub.device`` may define a
module-level ``AUTOTUNE`` -- a list of ``TuneSpec``, a dict ``{op: TuneSpec}``, or a function
returning either. Those win; ``autotune.specs`` supplies specs for ops whose modules define none.
"""
from __future__ import annotations

import importlib
import math
import pkgutil
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import torch


@dataclass(frozen=True)
class Problem:
    """One representative input of a bucket.

    ``make(device, seed)`` returns the inputs (any object the spec's ``call``/``reference``
    understand); equal seeds must give equal inputs, different seeds different data.
    ``bytes_moved`` (optional) is the fewest bytes the op must read and write, for GB/s in the log.
    """

    label: str
    make: Callable[[torch.device, int], Any]
    bytes_moved: int = 0


@dataclass
class TuneSpec:
    """How to tune one policy op; see the module docstring for the contract of each field."""

    op: str
    problems: dict[str, list[Problem]]
    reference: Callable[[Any], Any]
    call: Callable[[Any], Any] | None = None
    run: Callable[[Any, Any], Any] | None = None
    check: Callable[[Any, Any], None] | None = None
    rtol: float = 1e-5
    atol: float = 1e-5
    #: smaller problems for a smoke run (``--quick``) and for CPU tests; defaults to ``problems``
    quick_problems: dict[str, list[Problem]] | None = None
    doc: str = ""
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if (self.call is None) == (self.run is None):
            raise ValueError(f"TuneSpec {self.op!r}: give exactly one of call(inputs) or run(inputs, policy)")
        if not self.problems or not all(self.problems.values()):
            raise ValueError(f"TuneSpec {self.op!r}: every bucket needs at least one problem")

    def problem_set(self, quick: bool = False) -> dict[str, list[Problem]]:
        return self.quick_problems if (quick and self.quick_problems) else self.problems

    def execute(self, inputs: Any, pol) -> Any:
        """Run the op once on ``inputs`` with policy ``pol`` (forced through ``policy.override``)."""
        from tritoncub import policy
        if self.run is not None:
            return self.run(inputs, pol)
        with policy.override(self.op, pol.as_dict()):
            return self.call(inputs)

    def verify(self, out: Any, ref: Any) -> None:
        """Raise ``AssertionError`` when ``out`` does not match ``ref``."""
        if self.check is not None:
            self.check(out, ref)
        else:
            compare(out, ref, rtol=self.rtol, atol=self.atol)


def compare(out: Any, ref: Any, *, rtol: float = 1e-5, atol: float = 1e-5, path: str = "out") -> None:
    """Default output check: structure equal; integer/bool tensors exact, float tensors close."""
    if isinstance(ref, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(ref):
            raise AssertionError(f"{path}: expected a sequence of {len(ref)} items, got {type(out).__name__}")
        for i, (o, r) in enumerate(zip(out, ref)):
            compare(o, r, rtol=rtol, atol=atol, path=f"{path}[{i}]")
        return
    if isinstance(ref, torch.Tensor):
        if not isinstance(out, torch.Tensor):
            raise AssertionError(f"{path}: expected a tensor, got {type(out).__name__}")
        if out.shape != ref.shape:
            raise AssertionError(f"{path}: shape {tuple(out.shape)} != expected {tuple(ref.shape)}")
        if out.dtype != ref.dtype:
            raise AssertionError(f"{path}: dtype {out.dtype} != expected {ref.dtype}")
        o, r = out.detach(), ref.detach()
        if o.device != r.device:
            o, r = o.cpu(), r.cpu()
        if r.dtype.is_floating_point or r.dtype.is_complex:
            try:
                torch.testing.assert_close(o, r, rtol=rtol, atol=atol, equal_nan=True)
            except AssertionError as e:
                raise AssertionError(f"{path}: {e}") from None
        elif not torch.equal(o, r):
            bad = (o != r).nonzero()
            raise AssertionError(f"{path}: {bad.shape[0]} of {r.numel()} items differ "
                                 f"(first at {tuple(bad[0].tolist())})")
        return
    if isinstance(ref, float) and isinstance(out, (int, float)):
        if not (math.isclose(out, ref, rel_tol=rtol, abs_tol=atol) or (math.isnan(out) and math.isnan(ref))):
            raise AssertionError(f"{path}: {out} != {ref}")
        return
    if out != ref:
        raise AssertionError(f"{path}: {out!r} != {ref!r}")


def _as_list(obj: Any, where: str) -> list[TuneSpec]:
    if callable(obj) and not isinstance(obj, TuneSpec):
        obj = obj()
    if isinstance(obj, TuneSpec):
        obj = [obj]
    if isinstance(obj, dict):
        obj = list(obj.values())
    out = []
    for s in obj or ():
        if not isinstance(s, TuneSpec):
            raise TypeError(f"{where}: AUTOTUNE holds {type(s).__name__}, expected autotune.TuneSpec")
        out.append(s)
    return out


def discover(extra_modules: tuple[str, ...] = ()) -> dict[str, TuneSpec]:
    """Every TuneSpec available: op modules' ``AUTOTUNE`` first, then ``autotune.specs`` for the rest.

    A module that fails to import or whose ``AUTOTUNE`` is malformed is skipped with a warning (one
    broken op must not stop the tuning of the others).
    """
    import tritoncub  # noqa: F401  (registers every op's policy)
    from tritoncub import device as device_pkg

    found: dict[str, TuneSpec] = {}
    modules = [f"tritoncub.device.{m.name}" for m in pkgutil.iter_modules(device_pkg.__path__)
               if not m.name.startswith("_")] + list(extra_modules)
    for name in modules:
        try:
            mod = importlib.import_module(name)
            specs = _as_list(getattr(mod, "AUTOTUNE", None), name)
        except Exception as e:  # pragma: no cover - depends on other modules' state
            warnings.warn(f"autotune: skipping {name}: {type(e).__name__}: {e}")
            continue
        for s in specs:
            s.source = s.source or name
            found.setdefault(s.op, s)
    try:
        from . import specs as builtin
        for s in builtin.builtin_specs():
            s.source = s.source or "autotune.specs"
            found.setdefault(s.op, s)
    except Exception as e:  # pragma: no cover
        warnings.warn(f"autotune: built-in specs unavailable: {type(e).__name__}: {e}")
    return found
