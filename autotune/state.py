"""The resume file: every timing and verification, appended as it happens (JSON lines).

An interrupted ``python -m autotune`` run (Ctrl-C, a crash, a machine taken away) loses at most the
config it was timing: ``--resume`` reloads the file, skips every (op, bucket, problem, config) it
holds, and skips whole buckets already finished. Records::

    {"t": "run", "device": ..., "target": ..., "date": ...}          one per run start
    {"t": "time", "op", "bucket", "problem", "config", "ms"|"error"}  one per timed config/problem
    {"t": "verify", "op", "bucket", "config", "ok", "error"}          one per output check
    {"t": "done", "op", "bucket", "result": {...}}                    one per finished bucket

A file written on another device is refused (its timings would mean nothing here). A torn last line
(the process killed mid-write) is ignored.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path


class State:
    def __init__(self, path: Path | str | None, device: str, target: str, resume: bool = False):
        self.path = Path(path) if path is not None else None
        self.device, self.target = device, target
        self.times: dict[tuple, dict] = {}
        self.verified: dict[tuple, dict] = {}
        self.done: dict[tuple, dict] = {}
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume and self.path.exists():
            self._load()
        elif self.path.exists():
            self.path.unlink()
        self._append({"t": "run", "device": device, "target": target,
                      "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")})

    def _load(self) -> None:
        with open(self.path) as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                if i == len(lines) - 1:
                    continue  # torn last write
                raise ValueError(f"{self.path}: line {i + 1} is not JSON; delete the file or run without --resume")
            t = r.get("t")
            if t == "run":
                if r.get("device") != self.device or r.get("target") != self.target:
                    raise ValueError(f"{self.path} was written for {r.get('device')} / {r.get('target')}, "
                                     f"not {self.device} / {self.target}; run without --resume to start over")
            elif t == "time":
                self.times[(r["op"], r["bucket"], r["problem"], r["config"])] = r
            elif t == "verify":
                self.verified[(r["op"], r["bucket"], r["config"])] = r
            elif t == "done":
                self.done[(r["op"], r["bucket"])] = r["result"]

    def _append(self, rec: dict) -> None:
        if self.path is None:
            return
        with open(self.path, "a") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    # --- queries -------------------------------------------------------------------------------
    def timing(self, op: str, bucket: str, problem: str, config: str) -> dict | None:
        return self.times.get((op, bucket, problem, config))

    def verification(self, op: str, bucket: str, config: str) -> dict | None:
        return self.verified.get((op, bucket, config))

    def finished(self, op: str, bucket: str) -> dict | None:
        return self.done.get((op, bucket))

    # --- records -------------------------------------------------------------------------------
    def record_time(self, op, bucket, problem, config, ms=None, error=None) -> dict:
        rec = {"t": "time", "op": op, "bucket": bucket, "problem": problem, "config": config,
               "ms": ms, "error": error}
        self.times[(op, bucket, problem, config)] = rec
        self._append(rec)
        return rec

    def record_verify(self, op, bucket, config, ok, error=None) -> dict:
        rec = {"t": "verify", "op": op, "bucket": bucket, "config": config, "ok": bool(ok), "error": error}
        self.verified[(op, bucket, config)] = rec
        self._append(rec)
        return rec

    def record_done(self, op, bucket, result) -> None:
        self.done[(op, bucket)] = result
        self._append({"t": "done", "op": op, "bucket": bucket, "result": result})
