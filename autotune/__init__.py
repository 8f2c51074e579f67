"""``python -m autotune``: tune tritoncub's ops for the GPU in this machine and write its policy files.

What it does, per op (or those named with ``--ops``) and per bucket of the op's policy:

1. builds the op's representative problems (a few sizes and dtypes per bucket, from its
   :class:`TuneSpec`);
2. times the built-in fallback, the config the policy chain picks today and the target file's
   current value, then searches the rest of the op's declared space (``policy.register(space=...)``,
   pruned by its ``valid``): alternately a neighbour of the best so far and a random config, within
   the op's share of ``--time-budget``;
3. checks every timed config's output against the reference, and the winner's once more on fresh
   inputs, before accepting it (a wrong config is rejected and logged, never written);
4. writes ``<out>/<target>/<op>.json`` (``tritoncub/policies/sm_90/reduce.json``, say), merged with
   a file already there: the new value replaces the old one only where it measured faster (by more
   than ``--margin``), and the file's ``log`` keeps both, with sizes, times and the time taken.

Progress shows one line (op, bucket, problem, config i/N, elapsed and time left). Every timing is
appended to a state file, so ``--resume`` after an interruption skips what was measured.
``--dry-run`` lists the ops, their spaces, buckets and problems without touching a GPU. ``--compare``
times the tuned policy against the untuned fallback for each op.

The protocol op modules implement (see :mod:`autotune.spec`)
-----------------------------------------------------------
A device op module (``tritoncub/device/<op>.py``) may define, at module level::

    from autotune.spec import Problem, TuneSpec   # only the dataclasses; cheap to import

    AUTOTUNE = [TuneSpec(
        op="reduce",                                   # the name given to policy.register
        problems={"4B": [Problem("float32 n=2^24", lambda dev, seed: make_x(dev, seed, 1 << 24),
                                 bytes_moved=4 << 24)],
                  "2B": [...]},                        # bucket -> representative problems
        call=lambda x: sum(x),                         # the public API; it must ask policy.select /
                                                       # policy.launch for its config on every call
        reference=lambda x: torch.sum(x, dtype=...),   # what the answer must be
        rtol=1e-4, atol=1e-3)]                         # float tolerance (ints compare exactly)

``AUTOTUNE`` may also be a dict ``{op: TuneSpec}`` or a zero-argument function returning either (to
import lazily). The bucket names in ``problems`` are a first guess: the tuner runs each problem once
under ``tritoncub.policy.trace()`` and files it under the bucket the op actually asks for. It then
forces each config for that bucket only, with ``tritoncub.policy.override(op, config, bucket=b)``
around ``call``, and rejects the measurement if the op never asked for ``b`` (so a timing always
belongs to the config it is filed under). An op that does not read its policy at call time gives
``run(inputs, policy)`` instead of ``call``, launching with exactly that policy. ``check(out, ref)`` replaces the default comparison
(for outputs with a documented freedom, e.g. the order of equal keys in an unstable sort). Specs in
an op's module win; :mod:`autotune.specs` holds specs for ops whose modules have none.

Problem sizes should be what the op is tuned for (large enough to reach memory bandwidth, plus a
launch-bound size where the op has a small-size path), and few: each config compiles once per dtype.
"""
from .spec import Problem, TuneSpec, compare, discover  # noqa: F401

__all__ = ["Problem", "TuneSpec", "compare", "discover"]
