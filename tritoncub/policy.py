"""The policy chain: per-architecture tuning for every device op (CUB's ``ChainedPolicy``).

A *policy* is a named set of tuning values for one op on one GPU architecture: the tile shape
(``block_threads``/``items_per_thread`` or a tile size), ``num_warps``, ``num_stages``, the load
algorithm, the cache modifier, the grid mapping, radix bits... An op declares, in its own module:

* its **space**: every tunable value with its candidate settings (what ``python -m autotune``
  searches), plus an optional ``valid`` predicate that prunes combinations;
* its **fallback**: the value set used where no data file says otherwise (also under the interpreter).

Tuned values are **data files**, not code: ``tritoncub/policies/<target>/<op>.json``. ``<target>`` is
an architecture name (``sm_80``, ``sm_90``, ``sm_100``, ``gfx942``...) or a device-name slug
(``nvidia-h100-80gb-hbm3``, the full name) for two GPUs that share an architecture but not their speed. Lookup for a device
walks, in order:

1. the device-name slug's file,
2. the device's architecture, then each lower architecture of the same vendor
   (``sm_90 → sm_89 → sm_87 → sm_86 → sm_80 → sm_75 → sm_70``; ``gfx950 → gfx942 → gfx941 → gfx940 →
   gfx90a → gfx908``; an NVIDIA architecture newer than the table, then every known one below it),
3. the op's built-in fallback.

Within a file, values are keyed by a *bucket* that the op computes from the problem (for example
``"4B"`` for 4-byte items or ``"rows"``). The walk is per bucket: the first file along the chain that
holds the bucket gives its values (so a device file tuned for some buckets leaves the others to the
architecture's file); where no file holds it, the first ``"default"`` along the chain (the op's
built-in values where no file has one either). A file that cannot be
read as a policy file (bad JSON, wrong shape) is skipped with a warning naming it. Under the
interpreter (no GPU to tune for) the fallback is always used. ``describe(op, device)`` says what
was chosen and why. ``TRITONCUB_AUTOTUNE=1`` makes :func:`launch` run ``triton.autotune`` over the
file's candidate list (else the whole space where it is small, or the fallback and a fixed random
sample of it where it is not) instead of the fixed choice.

File format (written by ``python -m autotune``)::

    {"op": "reduce", "target": "sm_90", "device_name": "NVIDIA H100 80GB HBM3",
     "tuned": {"default": {"BLOCK_ITEMS": 4096, ..., "num_warps": 8, "num_stages": 2},
               "2B": {...}},
     "candidates": {"default": [{...}, {...}]},
     "log": {...free-form summary of the tuning run...}}
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import os
import random
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
import triton

from ._launch import _compile_and_launch, _tensor_device
from ._utils import interpreter_active

POLICY_DIR = Path(__file__).parent / "policies"
#: extra directory searched first (``autotune`` writes here when the package dir is read-only)
USER_POLICY_DIR_ENV = "TRITONCUB_POLICY_DIR"

NVIDIA_CHAIN = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_103",
                "sm_110", "sm_120", "sm_121"]
AMD_CHAIN = ["gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1100", "gfx1200"]
LAUNCH_KEYS = ("num_warps", "num_stages")
INTERPRETER_TARGET = "interpreter"


@dataclass(frozen=True)
class Policy:
    """One chosen set of tuning values. ``values`` are the kernel's ``tl.constexpr`` meta-parameters."""

    op: str
    values: dict
    num_warps: int = 4
    num_stages: int = 2
    source: str = "built-in fallback"

    def __getitem__(self, key: str) -> Any:
        if key == "num_warps":
            return self.num_warps
        if key == "num_stages":
            return self.num_stages
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def as_dict(self) -> dict:
        return {**self.values, "num_warps": self.num_warps, "num_stages": self.num_stages}

    def launch_kwargs(self) -> dict:
        """Keyword arguments for ``kernel[grid](..., **policy.launch_kwargs())``."""
        return self.as_dict()

    def config(self) -> triton.Config:
        return triton.Config(dict(self.values), num_warps=self.num_warps, num_stages=self.num_stages)


@dataclass
class OpPolicy:
    """What an op declares about its tuning: the search space and the built-in fallback."""

    op: str
    space: dict[str, list]
    fallback: dict
    valid: Callable[[dict], bool] | None = None
    buckets: tuple[str, ...] = ("default",)
    doc: str = ""
    bucket_fallbacks: dict[str, dict] = field(default_factory=dict)

    #: spaces of more raw combinations than this are drawn from at random (:meth:`draw`), never listed
    ENUMERATE_LIMIT = 100_000

    def raw_size(self) -> int:
        """The number of combinations of the space's values, before ``valid`` prunes them."""
        return math.prod(len(v) for v in self.space.values())

    def enumerate(self, base: dict | None = None) -> list[dict]:
        """Every valid combination of the space, each merged over ``base`` (default: the fallback).

        Only for spaces of at most :attr:`ENUMERATE_LIMIT` raw combinations (a ValueError names the
        size otherwise): larger ones are searched through :meth:`draw` and :meth:`neighbours`."""
        raw = self.raw_size()
        if raw > self.ENUMERATE_LIMIT:
            raise ValueError(f"policy {self.op!r}: its space has {raw} combinations, more than "
                             f"{self.ENUMERATE_LIMIT} to list; draw configs from it with draw()/sample()")
        base = self.fallback if base is None else base
        names = list(self.space)
        out = []
        for combo in itertools.product(*(self.space[n] for n in names)):
            full = {**base, **dict(zip(names, combo))}
            if self.valid is None or self.valid(full):
                out.append(full)
        return out

    def draw(self, rng: random.Random, base: dict | None = None, max_misses: int | None = None):
        """Distinct valid configs of the space in random order (a generator), merged over ``base``.

        A small space is listed and shuffled, so the generator ends after every valid config. A large
        one is sampled uniformly over the raw combinations, dropping invalid ones and repeats; the
        generator ends after ``max_misses`` draws in a row found nothing new (default: 50 times the
        draws a valid config takes on average, at least 20,000, at most 5,000,000; a space whose valid
        part is that rare, or already drawn, ends there)."""
        if self.raw_size() <= self.ENUMERATE_LIMIT:
            configs = self.enumerate(base)
            rng.shuffle(configs)
            yield from configs
            return
        if max_misses is None:
            frac = self.estimate_size() / self.raw_size()
            max_misses = 5_000_000 if frac == 0 else min(5_000_000, max(20_000, int(50 / frac)))
        base = self.fallback if base is None else base
        names = list(self.space)
        seen: set = set()
        misses = 0
        while misses < max_misses:
            combo = tuple(rng.choice(self.space[n]) for n in names)
            full = {**base, **dict(zip(names, combo))}
            if combo in seen or (self.valid is not None and not self.valid(full)):
                misses += 1
                continue
            seen.add(combo)
            misses = 0
            yield full

    def sample(self, k: int, seed: int = 0, base: dict | None = None) -> list[dict]:
        """Up to ``k`` distinct valid configs drawn at random (:meth:`draw` with a seeded generator)."""
        return list(itertools.islice(self.draw(random.Random(seed), base), k))

    def neighbours(self, cfg: dict) -> list[dict]:
        """The valid configs that differ from ``cfg`` in exactly one value of the space (the local
        search's moves), in the order of the space's keys and values."""
        out = []
        for name, values in self.space.items():
            for v in values:
                if v == cfg.get(name):
                    continue
                nb = {**cfg, name: v}
                if self.valid is None or self.valid(nb):
                    out.append(nb)
        return out

    def estimate_size(self, draws: int = 4000, seed: int = 0) -> int:
        """The number of valid configs: exact for a space :meth:`enumerate` lists, else estimated from
        the fraction of ``draws`` random combinations that ``valid`` accepts."""
        raw = self.raw_size()
        if raw <= self.ENUMERATE_LIMIT:
            return len(self.enumerate())
        if self.valid is None:
            return raw
        rng = random.Random(seed)
        names = list(self.space)
        ok = sum(bool(self.valid({**self.fallback, **{n: rng.choice(self.space[n]) for n in names}}))
                 for _ in range(draws))
        return round(raw * ok / draws)

    def fallback_for(self, bucket: str) -> dict:
        return {**self.fallback, **self.bucket_fallbacks.get(bucket, {})}


_REGISTRY: dict[str, OpPolicy] = {}


def register(op: str, *, space: dict[str, list], fallback: dict, valid: Callable[[dict], bool] | None = None,
             buckets: tuple[str, ...] = ("default",), bucket_fallbacks: dict[str, dict] | None = None,
             doc: str = "") -> OpPolicy:
    """Declare an op's tuning space and fallback. Called once at import by the op's module."""
    for k in LAUNCH_KEYS:
        if k not in fallback:
            raise ValueError(f"policy {op!r}: fallback must set {k}")
    for k, values in space.items():
        if k not in fallback:
            raise ValueError(f"policy {op!r}: fallback must set {k} (a key of the space)")
        if len(set(map(repr, values))) != len(values) or not values:
            raise ValueError(f"policy {op!r}: the space's values for {k} must be distinct and not empty")
    p = OpPolicy(op, dict(space), dict(fallback), valid, tuple(buckets), doc, dict(bucket_fallbacks or {}))
    if p.valid is not None:
        for b in p.buckets:
            if not p.valid(p.fallback_for(b)):
                raise ValueError(f"policy {op!r}: fallback for bucket {b!r} is not valid")
    _REGISTRY[op] = p
    return p


def registered_ops() -> list[str]:
    return sorted(_REGISTRY)


def op_policy(op: str) -> OpPolicy:
    try:
        return _REGISTRY[op]
    except KeyError:
        raise KeyError(f"no policy registered for op {op!r}; known: {', '.join(registered_ops())}") from None


# ----------------------------------------------------------------------------------------------
# Targets: which data files apply to a device, in order
# ----------------------------------------------------------------------------------------------

def device_slug(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3' (a file-name-safe device name)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@functools.lru_cache(maxsize=None)
def _cuda_target(index: int) -> tuple[str, str]:
    props = torch.cuda.get_device_properties(index)
    arch = getattr(props, "gcnArchName", None)
    if torch.version.hip is not None and arch:
        return arch.split(":")[0], props.name
    return f"sm_{props.major}{props.minor}", props.name


def device_target(device: torch.device | str | None = None) -> tuple[str, str]:
    """(architecture, device name) of a device: ('sm_90', 'NVIDIA H100 80GB HBM3')."""
    device = torch.device(device) if device is not None else None
    if device is None:
        if interpreter_active() or not torch.cuda.is_available():
            return INTERPRETER_TARGET, "Triton interpreter (CPU)"
        device = torch.device("cuda", torch.cuda.current_device())
    if device.type != "cuda":
        return INTERPRETER_TARGET, "Triton interpreter (CPU)"
    return _cuda_target(device.index if device.index is not None else torch.cuda.current_device())


def arch_chain(arch: str) -> list[str]:
    """``arch`` followed by every lower architecture of the same vendor, nearest first."""
    for chain in (NVIDIA_CHAIN, AMD_CHAIN):
        if arch in chain:
            return list(reversed(chain[: chain.index(arch) + 1]))
    m = re.fullmatch(r"sm_(\d+)", arch)
    if m:  # an architecture newer than the table: all known lower ones
        num = int(m.group(1))
        return [arch] + [a for a in reversed(NVIDIA_CHAIN) if int(a[3:]) < num]
    return [arch]


def _policy_dirs() -> list[Path]:
    dirs = []
    extra = os.environ.get(USER_POLICY_DIR_ENV)
    if extra:
        dirs.append(Path(extra))
    dirs.append(POLICY_DIR)
    return dirs


def _file_problem(data) -> str | None:
    """Why ``data`` (a parsed file) is not a policy file, or None."""
    if not isinstance(data, dict):
        return "not a JSON object"
    tuned = data.get("tuned", {})
    if not isinstance(tuned, dict) or not all(isinstance(v, dict) for v in tuned.values()):
        return "'tuned' is not an object of bucket objects"
    cands = data.get("candidates", {})
    if not isinstance(cands, dict) or not all(isinstance(v, list) and all(isinstance(c, dict) for c in v)
                                              for v in cands.values()):
        return "'candidates' is not an object of lists of objects"
    return None


@functools.lru_cache(maxsize=None)
def _load_file(path: str) -> dict | None:
    """The parsed policy file at ``path``; None when there is none, or (with a warning naming it, once)
    when it cannot be read as one: such a file is skipped, never allowed to break an op."""
    p = Path(path)
    if not p.is_file():
        return None
    try:
        with open(p) as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        problem = f"{type(e).__name__}: {e}"
    else:
        problem = _file_problem(data)
        if problem is None:
            # (a file moved or copied under another op's or target's name would serve the wrong kernels)
            op, target = data.get("op"), data.get("target")
            if op is not None and op != p.stem:
                problem = f"it says it holds op {op!r}, not {p.stem!r}"
            elif target is not None and target != p.parent.name:
                problem = f"it says it was written for target {target!r}, not {p.parent.name!r}"
            else:
                return data
    warnings.warn(f"tritoncub: ignoring policy file {p} ({problem}); the next file along the policy chain, "
                  f"or the built-in defaults, are used instead.", stacklevel=2)
    return None


def clear_cache() -> None:
    """Forget loaded policy files and the choices made from them (after ``autotune`` wrote a new
    file, or ``TRITONCUB_POLICY_DIR`` changed: both are read once and kept), and the runtime
    autotuners built from their shortlists."""
    _load_file.cache_clear()
    _select_cached.cache_clear()
    _AUTOTUNED.clear()


def lookup_order(device=None) -> list[str]:
    """The targets whose files are consulted for ``device``, first match wins."""
    arch, name = device_target(device)
    if arch == INTERPRETER_TARGET:
        return []
    return [device_slug(name)] + arch_chain(arch)


def policy_files(op: str, device=None) -> list[tuple[str, dict]]:
    """Every readable data file for ``op`` along the device's chain, in lookup order, as (target,
    contents) (per target, the user directory's file, then the package's)."""
    out = []
    for target in lookup_order(device):
        for d in _policy_dirs():
            data = _load_file(str(d / target / f"{op}.json"))
            if data is not None:
                out.append((target, data))
    return out


def find_policy_file(op: str, device=None) -> tuple[str, dict] | None:
    """The first data file for ``op`` along the device's chain, as (target, contents)."""
    files = policy_files(op, device)
    return files[0] if files else None


def find_policy_entry(op: str, device=None, bucket: str = "default", section: str = "tuned"):
    """Where ``op``'s ``section`` (``"tuned"`` or ``"candidates"``) for ``bucket`` comes from on
    ``device``: the first file along the chain that holds the bucket, else the first that holds
    ``"default"``, as (target, contents, key); where files exist but none holds either, the first
    file with key None (its op's built-in values serve); None when there is no file."""
    files = policy_files(op, device)
    for key in (bucket, "default"):
        for target, data in files:
            if key in data.get(section, {}):
                return target, data, key
    return (files[0][0], files[0][1], None) if files else None


_warned_untuned: set[tuple[str, str]] = set()


_NUM_WARPS = (1, 2, 4, 8, 16, 32)


def _ill_formed(p, vals: dict):
    """Why a merged config (fallback + a file's values) cannot run, whatever the op's own ``valid``
    says, or None: a key the op does not declare, a value of another type than the op's fallback (or
    space) uses, a string none of the op's choices, ``num_warps`` not a power of two up to 32, or
    ``num_stages`` below 1, or, for a key whose declared choices are all powers of two, a value that
    is not one (tile sizes, vector widths: a kernel's ``tl.arange`` needs them). (Other numbers outside
    the space are allowed: files may hold values found by a probe; the op's ``valid`` judges those.)"""
    unknown = sorted(set(vals) - set(p.fallback) - set(p.space))
    if unknown:
        return f"unknown keys {unknown}"
    for k, v in vals.items():
        choices = p.space.get(k) or []
        ref = p.fallback[k] if k in p.fallback else (choices[0] if choices else None)
        if isinstance(ref, str):
            if not isinstance(v, str) or (v not in choices and v != p.fallback.get(k)):
                return f"{k}={v!r} is none of {choices}"
        elif isinstance(ref, bool) or isinstance(ref, int):
            if not isinstance(v, int) or (isinstance(v, bool) and not isinstance(ref, bool)):
                return f"{k}={v!r} is not an int"
            if (not isinstance(ref, bool) and len(choices) >= 2 and v != p.fallback.get(k)
                    and all(isinstance(c, int) and not isinstance(c, bool) and c > 0 and c & (c - 1) == 0
                            for c in choices)
                    and not (v > 0 and v & (v - 1) == 0)):
                return f"{k}={v!r} is not a power of two (as every choice of {choices})"
        elif isinstance(ref, float):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return f"{k}={v!r} is not a number"
    if vals.get("num_warps") not in _NUM_WARPS:
        return f"num_warps={vals.get('num_warps')!r} is not one of {_NUM_WARPS}"
    ns = vals.get("num_stages")
    if isinstance(ns, bool) or not isinstance(ns, int) or ns < 1:
        return f"num_stages={ns!r} is not a positive int"
    return None


@functools.lru_cache(maxsize=None)
def _select_cached(op: str, device_key: str, bucket: str) -> Policy:
    p = op_policy(op)
    device = None if device_key == "" else torch.device(device_key)
    arch, name = device_target(device)
    found = find_policy_entry(op, device, bucket)
    base = p.fallback_for(bucket)
    if found is None:
        if arch != INTERPRETER_TARGET and (arch, op) not in _warned_untuned:
            _warned_untuned.add((arch, op))
            warnings.warn(f"tritoncub: no tuned policy for {op!r} on {name} ({arch}) or a lower "
                          f"architecture; using built-in defaults. Run `python -m autotune --ops {op}` "
                          f"once to tune this GPU.", stacklevel=3)
        src = "built-in fallback" + (" (interpreter)" if arch == INTERPRETER_TARGET else "")
        vals = base
    else:
        target, data, key = found
        vals = {**base, **(data["tuned"][key] if key is not None else {})}
        src = f"policies/{target}/{op}.json[{key if key is not None else 'default'}]"
        bad = _ill_formed(p, vals) or (None if p.valid is None or p.valid(vals) else "not valid")
        if bad:
            # a file older than the op's current space (or edited by hand): never let it break the op
            warnings.warn(f"tritoncub: {src} holds a config the op no longer accepts ({bad}); using built-in "
                          f"defaults. Re-run `python -m autotune --ops {op}`.", stacklevel=3)
            vals, src = base, f"built-in fallback ({src} is stale)"
        elif target != arch and target != device_slug(name):
            src += f" (fallback from {arch})"
            if (arch, op) not in _warned_untuned:
                _warned_untuned.add((arch, op))
                warnings.warn(f"tritoncub: no tuned policy for {op!r} on {name} ({arch}); using {target}'s. "
                              f"Run `python -m autotune --ops {op}` once to tune this GPU.", stacklevel=3)
    vals = dict(vals)
    nw = vals.pop("num_warps")
    ns = vals.pop("num_stages")
    return Policy(op, vals, nw, ns, src)


_DEVICE_KEYS: dict = {}


def _device_key(device) -> str:
    key = _DEVICE_KEYS.get(device)  # a tensor's device (index set) is looked up once, not re-parsed per call
    if key is not None:
        return key
    if device is None:
        return ""
    if isinstance(device, torch.device) and (device.type != "cuda" or device.index is not None):
        key = _DEVICE_KEYS[device] = str(device)
        return key
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return str(device)


def select(op: str, device=None, bucket: str = "default") -> Policy:
    """The policy ``op`` uses on ``device`` for problems of class ``bucket``.

    Inside an :func:`override` block for ``op`` (and this bucket) the forced values are returned;
    inside a :func:`trace` block the request is recorded."""
    if _TRACES:
        for t in _TRACES:
            t.append((op, bucket))
    if _OVERRIDES:
        key = (op, bucket) if (op, bucket) in _OVERRIDES else (op, None)
        forced = _OVERRIDES.get(key)
        if forced is not None:
            _OVERRIDE_HITS[key] = _OVERRIDE_HITS.get(key, 0) + 1
            return forced
    return _select_cached(op, _device_key(device), bucket)


# ----------------------------------------------------------------------------------------------
# Forcing a config for a region of code (``python -m autotune`` times each config this way)
# ----------------------------------------------------------------------------------------------

_OVERRIDES: dict[tuple[str, str | None], Policy] = {}
_OVERRIDE_HITS: dict[tuple[str, str | None], int] = {}
_TRACES: list[list] = []


@contextlib.contextmanager
def trace():
    """Record every ``(op, bucket)`` that :func:`select` is asked for inside the ``with`` block.

    Yields the list the requests are appended to (``python -m autotune`` uses it to learn which
    bucket a problem falls in, rather than trusting a copy of the op's bucketing rule)."""
    calls: list = []
    _TRACES.append(calls)
    try:
        yield calls
    finally:   # (by identity: nested traces' lists may compare equal)
        for i in range(len(_TRACES) - 1, -1, -1):
            if _TRACES[i] is calls:
                del _TRACES[i]
                break


def override_hits(op: str, bucket: str | None = None) -> int:
    """How many times :func:`select` returned the forced policy of ``override(op, ..., bucket)``
    since that override began (0: the code run never asked for it -- e.g. another bucket)."""
    return _OVERRIDE_HITS.get((op, bucket), 0)


@contextlib.contextmanager
def override(op: str, values: dict, bucket: str | None = None):
    """Within the ``with`` block, :func:`select` returns ``values`` for ``op`` on every device.

    ``values`` (meta-parameters plus ``num_warps``/``num_stages``) are merged over the op's fallback
    for the bucket and must pass the op's ``valid`` predicate; keys the op does not declare are a
    ``KeyError``. ``bucket=None`` forces every bucket; a bucket name forces only that one (a
    bucket-specific override wins over an all-bucket one). While an override for ``op`` is active,
    :func:`launch` uses it instead of runtime autotuning. Overrides nest and are restored on exit.
    Not thread-safe: meant for tuning and tests, not for concurrent production code.
    """
    p = op_policy(op)
    known = set(p.space) | set(p.fallback)
    unknown = sorted(set(values) - known)
    if unknown:
        raise KeyError(f"override for {op!r}: unknown keys {unknown}; the op declares {sorted(known)}")
    vals = {**p.fallback_for(bucket or (p.buckets[0] if p.buckets else "default")), **values}
    if p.valid is not None and not p.valid(vals):
        raise ValueError(f"override for {op!r}: config is not valid: {vals}")
    nw, ns = vals.pop("num_warps"), vals.pop("num_stages")
    key = (op, bucket)
    prev = _OVERRIDES.get(key)
    prev_hits = _OVERRIDE_HITS.get(key)
    _OVERRIDES[key] = Policy(op, vals, nw, ns, "override")
    _OVERRIDE_HITS[key] = 0
    try:
        yield _OVERRIDES[key]
    finally:
        if prev is None:
            _OVERRIDES.pop(key, None)
            _OVERRIDE_HITS.pop(key, None)
        else:
            _OVERRIDES[key] = prev
            _OVERRIDE_HITS[key] = prev_hits or 0


def overridden(op: str, bucket: str = "default") -> bool:
    """True while an :func:`override` block forces ``op`` (for ``bucket``)."""
    return (op, bucket) in _OVERRIDES or (op, None) in _OVERRIDES


#: configs runtime autotuning tries for an op whose space is too large to list and that has no shortlist
CANDIDATE_SAMPLE = 32


def candidates(op: str, device=None, bucket: str = "default") -> list[Policy]:
    """Configs for runtime autotuning: the file's shortlist if it has one, else the whole space when
    it is small (``OpPolicy.ENUMERATE_LIMIT``), else the bucket's fallback and
    :data:`CANDIDATE_SAMPLE` - 1 configs drawn from the space with a fixed seed."""
    p = op_policy(op)
    found = find_policy_entry(op, device, bucket, "candidates")
    raw = found[1]["candidates"][found[2]] if found is not None and found[2] is not None else None
    if not raw:
        fb = p.fallback_for(bucket)
        if p.raw_size() <= p.ENUMERATE_LIMIT:
            raw = p.enumerate(fb)
        else:
            raw = [fb] + [c for c in p.sample(CANDIDATE_SAMPLE, base=fb) if c != fb][: CANDIDATE_SAMPLE - 1]
    out = []
    for c in raw:
        vals = {**p.fallback_for(bucket), **c}
        if _ill_formed(p, vals) or not (p.valid is None or p.valid(vals)):
            continue   # (a shortlist entry the op cannot run: left out)
        nw, ns = vals.pop("num_warps"), vals.pop("num_stages")
        out.append(Policy(op, vals, nw, ns, "candidate"))
    if not out:   # (a shortlist none of whose entries the op accepts now: the fixed choice alone)
        out.append(select(op, device, bucket))
    return out


def autotune_enabled() -> bool:
    return os.environ.get("TRITONCUB_AUTOTUNE", "0") not in ("", "0") and not interpreter_active()


_AUTOTUNED: dict = {}


def launch(op: str, kernel, grid: Callable[[dict], tuple], *args, device=None, bucket: str = "default",
           autotune_key: tuple[str, ...] = (), reset_to_zero: tuple[str, ...] = (), **kwargs):
    """Launch ``kernel`` with ``op``'s policy for ``device``.

    ``grid`` is a function of the meta-parameter dict (as in ``triton.autotune``). With
    ``TRITONCUB_AUTOTUNE=1`` (and a real GPU) the kernel runs under ``triton.autotune`` over
    :func:`candidates`, keyed on ``autotune_key`` (kernel argument names) and the bucket; results
    persist in Triton's on-disk cache. Otherwise the fixed policy from :func:`select` is used.
    Returns the policy used (or None when autotuning).
    """
    dev = _tensor_device(args)
    if dev >= 0 and dev != torch.cuda.current_device():   # (Triton launches on the current device)
        with torch.cuda.device(dev):
            return launch(op, kernel, grid, *args, device=device, bucket=bucket, autotune_key=autotune_key,
                          reset_to_zero=reset_to_zero, **kwargs)
    if autotune_enabled() and not overridden(op, bucket):
        key = (op, bucket, kernel, _device_key(device))
        tuned = _AUTOTUNED.get(key)
        if tuned is None:
            configs = [c.config() for c in candidates(op, device, bucket)]
            tuned = triton.autotune(configs=configs, key=list(autotune_key),
                                    reset_to_zero=list(reset_to_zero) or None, cache_results=True)(kernel)
            _AUTOTUNED[key] = tuned
        _compile_and_launch(tuned, grid, args, kwargs)
        return None
    pol = select(op, device, bucket)
    _compile_and_launch(kernel, grid(pol.as_dict()), args, {**kwargs, **pol.launch_kwargs()})
    return pol


def describe(op: str | None = None, device=None) -> str:
    """A human-readable account of the policy chosen for ``op`` (or every op) on ``device``."""
    ops = [op] if op is not None else registered_ops()
    arch, name = device_target(device)
    order = lookup_order(device)
    lines = [f"device: {name} (target {arch}); files searched: "
             + (", ".join(f"{t}/<op>.json" for t in order) if order else "none (interpreter: fallbacks)")]
    for o in ops:
        p = op_policy(o)
        for b in p.buckets:
            pol = select(o, device, b)
            vals = ", ".join(f"{k}={v}" for k, v in pol.as_dict().items())
            lines.append(f"{o}[{b}]: {vals}  <- {pol.source}")
    return "\n".join(lines)
