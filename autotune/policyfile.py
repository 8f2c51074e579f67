"""Reading, merging and writing policy data files (``<dir>/<target>/<op>.json``).

The format is the one ``tritoncub.policy`` loads (see its module docstring)::

    {"op": ..., "target": ..., "device_name": ...,
     "tuned": {bucket: {values..., "num_warps": w, "num_stages": s}},
     "candidates": {bucket: [config, ...]},      # shortlist for TRITONCUB_AUTOTUNE=1
     "log": {...}}

**Merging** with a file already there (written by hand, by an op's own sweep, or by an earlier run):
buckets this run did not tune are kept as they are. For a tuned bucket the file's current value was
timed in the same run (it is a priority config of the search), so the new winner replaces it only
where it measured faster; otherwise the file's value stays. Either way ``log.autotune.buckets``
records both configs and their times, and the file's earlier log is kept under ``log.previous``.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

FORMAT_KEYS = ("op", "target", "device_name", "tuned", "candidates", "log")


class PolicyFileError(ValueError):
    """A file that cannot be read as a policy file (its path and the reason in the message)."""


def path_for(out_dir: Path | str, target: str, op: str) -> Path:
    return Path(out_dir) / target / f"{op}.json"


def read(path: Path | str) -> dict | None:
    p = Path(path)
    if not p.is_file():
        return None
    try:
        with open(p) as f:
            data = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PolicyFileError(f"{p}: not a JSON policy file ({type(e).__name__}: {e})") from None
    validate(data, str(p))
    return data


def validate(data: dict, where: str = "policy file") -> None:
    """Raise ``ValueError`` unless ``data`` has the policy file shape."""
    if not isinstance(data, dict):
        raise PolicyFileError(f"{where}: top level must be an object")
    for k in ("op", "tuned"):
        if k not in data:
            raise PolicyFileError(f"{where}: missing key {k!r}")
    if not isinstance(data["tuned"], dict):
        raise PolicyFileError(f"{where}: 'tuned' must map bucket -> config")
    for b, cfg in data["tuned"].items():
        if not isinstance(cfg, dict):
            raise PolicyFileError(f"{where}: tuned[{b!r}] must be an object")
    cands = data.get("candidates", {})
    if not isinstance(cands, dict) or not all(isinstance(v, list) for v in cands.values()):
        raise PolicyFileError(f"{where}: 'candidates' must map bucket -> list of configs")


def write(path: Path | str, data: dict) -> Path:
    """Write atomically (a reader never sees half a file)."""
    validate(data, str(path))
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    with os.fdopen(fd, "w") as f:
        f.write(dumps(data) + "\n")
    os.replace(tmp, p)
    return p


def dumps(obj, indent: int = 0) -> str:
    """JSON with one line per config: objects and lists of scalars stay on one line."""
    pad, inner = " " * indent, " " * (indent + 1)
    scalar = (str, int, float, bool, type(None))
    if isinstance(obj, dict) and obj and not all(isinstance(v, scalar) for v in obj.values()):
        items = [f"{inner}{json.dumps(str(k))}: {dumps(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and not all(isinstance(v, scalar) for v in obj):
        items = [f"{inner}{dumps(v, indent + 1)}" for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(obj)


def merge(existing: dict | None, *, op: str, target: str, device_name: str, results: dict[str, dict],
          run_log: dict, keys=None) -> dict:
    """The file to write for ``op``: ``existing`` (may be None) updated with this run's ``results``.

    ``results[bucket]`` holds ``winner`` (config), ``winner_score``, ``candidates`` (list of
    configs, best first) and, when the file's previous value was timed in this run,
    ``previous_score`` (``inf`` when it failed or was not verified). With ``keys`` (the op's searched
    parameters plus num_warps/num_stages), only those are written: values the search did not vary
    keep following the op's built-in fallback.
    """
    def strip(cfg):
        return {k: v for k, v in cfg.items() if keys is None or k in keys}

    data = {"op": op, "target": target, "device_name": device_name, "tuned": {}, "candidates": {}, "log": {}}
    if existing:
        data.update({k: v for k, v in existing.items() if k in FORMAT_KEYS or k not in data})
        data["tuned"] = dict(existing.get("tuned", {}))
        data["candidates"] = dict(existing.get("candidates", {}))
    data["op"], data["target"], data["device_name"] = op, target, device_name
    decisions = {}
    for bucket, r in results.items():
        prev = data["tuned"].get(bucket)
        # the file's value stays unless this run timed it and measured the winner faster
        keep_prev = prev is not None and (r.get("previous_score") is None
                                          or r["previous_score"] <= r["winner_score"])
        if r.get("winner") is None:
            decisions[bucket] = "no verified config; file value kept" if prev else "no verified config"
            continue
        if keep_prev:
            decisions[bucket] = ("kept the file's value (measured as fast or faster than the search's best)"
                                 if r.get("previous_score") is not None else
                                 "kept the file's value (not timed in this run)")
        else:
            data["tuned"][bucket] = strip(r["winner"])
            decisions[bucket] = ("replaced the file's value (measured slower)" if prev is not None
                                 else "new")
        if r.get("candidates"):
            data["candidates"][bucket] = [strip(c) for c in r["candidates"]]
    data["log"] = _next_log((existing or {}).get("log"), {**run_log, "decisions": decisions})
    return data


def _next_log(old_log, run: dict) -> dict:
    """The file's log after a run: this run's record, the previous run's record under ``previous``,
    and every other entry of the old log (notes written by hand: why a value was set, what a probe
    measured) kept as it was."""
    log = {"autotune": run}
    if isinstance(old_log, dict):
        log.update({k: v for k, v in old_log.items() if k not in ("autotune", "previous")})
        if "autotune" in old_log:
            log["previous"] = {"autotune": old_log["autotune"]}
    elif old_log:
        log["previous"] = old_log
    return log


def install(src: dict, dst: dict | None) -> tuple[dict, list[str]]:
    """Merge a policy file tuned elsewhere (``src``, e.g. brought back from a GPU machine) into the
    file in place now (``dst``), without undoing changes made to ``dst`` since ``src`` was tuned.

    A bucket that the run set (decision "new" or "replaced...") is taken from ``src`` only if
    ``dst``'s value for it is still the one that run compared against (``log.autotune.buckets[b]
    .previous``, which for a bucket without a value of its own is the file's ``default`` one; absent
    then and now counts as unchanged); otherwise ``dst``'s value stays and a
    message says so. Everything else in ``dst`` is kept. Returns (file to write, messages).
    """
    validate(src, "source file")
    if dst is None:
        return src, [f"{src.get('op')}: new file"]
    log = ((src.get("log") or {}).get("autotune") or {})
    decisions = log.get("decisions") or {}
    buckets = log.get("buckets") or {}
    out = {**dst, "tuned": dict(dst.get("tuned", {})), "candidates": dict(dst.get("candidates", {}))}
    msgs = []
    for b, decision in decisions.items():
        if not (decision.startswith("new") or decision.startswith("replaced")) or b not in src.get("tuned", {}):
            continue
        before = (buckets.get(b) or {}).get("previous")
        # (a bucket without a value of its own ran against the file's "default" one, as the tuner reads it)
        now = out["tuned"].get(b, out["tuned"].get("default"))
        unchanged = (now is None and before is None) or (
            now is not None and before is not None and all(before.get(k) == v for k, v in now.items()))
        if unchanged:
            out["tuned"][b] = src["tuned"][b]
            if b in src.get("candidates", {}):
                out["candidates"][b] = src["candidates"][b]
            msgs.append(f"{src.get('op')}[{b}]: installed ({decision})")
        else:
            msgs.append(f"{src.get('op')}[{b}]: kept the current value (the file changed since the run compared "
                        f"against it); re-run python -m autotune --ops {src.get('op')} to compare again")
    out["log"] = _next_log(dst.get("log"), log)
    out["device_name"] = src.get("device_name", dst.get("device_name"))
    return out, msgs
