"""``python -m bench --report``: turn ``bench/results/*.json`` into ``bench/results/REPORT.md`` and plots.

Inputs: every results file the harness wrote (``{"device", "torch", "triton", "cupy", "copy_gbs",
"rows": [{op, impl, dtype, n, shape, variant, ms, gbs, gkeys, ...}]}``), and any
``autotune-compare-*.json`` written by ``python -m autotune --compare --json`` (tuned policy against
the built-in fallback, same GPU, same run).

Outputs, per device file:

* ``<device>-<family>.png``: throughput (GB/s of the fewest bytes the op must move) against input
  size, one panel per op of the family, tritoncub / torch / CUB (and any other impl) in the same
  panel, the measured copy bandwidth drawn as the roof; batched/row cases (rows with a ``shape``)
  as grouped bars in ``<device>-<family>-batched.png``;
* ``REPORT.md``: the headline table (largest size of each case, times and speed-ups), then per
  family the plot and the full table, the tuned-vs-fallback comparison, and failed cases;
* the README's benchmark section, between ``<!-- bench-headline:start -->`` and
  ``<!-- bench-headline:end -->`` (only if both markers are there), gets the headline table.

Plots need matplotlib (the ``bench`` extra); without it the markdown is still written.
"""
from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

RESULTS_DIR = Path(__file__).parent / "results"
POLICIES_DIR = Path(__file__).parent.parent / "tritoncub" / "policies"
README = Path(__file__).parent.parent / "README.md"
MARK_START, MARK_END = "<!-- bench-headline:start -->", "<!-- bench-headline:end -->"

#: op name -> family, by the first matching pattern (a row's own ``family`` field wins)
FAMILY_PATTERNS = [
    (r"^(segment(ed)?_?reduce|segment_\w+|segmented_(sum|min|max|arg\w+)|row_\w+)$", "reduce"),
    (r"^(sum|amax|amin|max|min|argmax|argmin|reduce|transform_reduce|mean|prod)$", "reduce"),
    (r"(topk|top_k)", "topk"),
    (r"^(sort_rows|segmented_sort|segmented_radix)", "segmented_sort"),
    (r"(sort|radix|argsort)", "sort"),
    (r"(cumsum|cumprod|cummax|cummin|logcumsumexp|scan|inclusive|exclusive|recurrence)", "scan"),
    (r"(hist|bincount)", "histogram"),
    (r"(select|nonzero|unique|partition|run_length|rle|reduce_by_key|diff|adjacent|flagged)", "select"),
]
IMPL_ORDER = ["tritoncub", "tritoncub.op", "torch", "cub", "torch.compile"]
IMPL_COLOR = {"tritoncub": "#1f77b4", "tritoncub.op": "#17becf", "torch": "#ff7f0e", "cub": "#2ca02c",
              "torch.compile": "#9467bd"}
DTYPE_MARKER = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]


def device_slug(name: str) -> str:
    """Same slug as ``tritoncub.policy.device_slug`` (not imported: the report needs no ops)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def family_of(row: dict) -> str:
    if row.get("family"):
        return str(row["family"])
    op = str(row["op"])
    for pat, fam in FAMILY_PATTERNS:
        if re.search(pat, op):
            return fam
    return op


def impl_rank(impl: str) -> tuple:
    return (IMPL_ORDER.index(impl) if impl in IMPL_ORDER else len(IMPL_ORDER), impl)


def fmt_n(n: int) -> str:
    if n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def fmt_shape(shape) -> str:
    return "×".join(str(s) for s in shape) if shape else ""


def fmt_ms(ms) -> str:
    if ms is None:
        return ""
    return f"{ms * 1000:.1f} µs" if ms < 0.1 else f"{ms:.3f} ms"


#: a time this much above its GPU time is shown with the GPU time beside it (the GPU waited for the host)
HOST_BOUND = 1.2


def fmt_time(row: dict | None) -> str:
    """A row's time, and its GPU time per call beside it when the time is well above that (host-bound)."""
    if not row:
        return ""
    gpu = row.get("gpu_ms")
    host_bound = gpu is not None and gpu > 0 and row["ms"] > HOST_BOUND * gpu
    return fmt_ms(row["ms"]) + (f" (GPU {fmt_ms(gpu)})" if host_bound else "")


def case_key(r: dict) -> tuple:
    return (r["op"], r["dtype"], str(r.get("variant") or ""), json.dumps(r.get("shape")), int(r["n"]))


def load_results(results_dir: Path = RESULTS_DIR) -> tuple[list[tuple[Path, dict]], list[tuple[Path, dict]]]:
    """(benchmark result files, autotune comparison files), each as (path, data)."""
    bench, compare = [], []
    for p in sorted(Path(results_dir).glob("*.json")):
        try:
            data = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as e:
            print(f"report: skipping {p.name}: {e}", file=sys.stderr)
            continue
        if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
            continue
        if p.name.startswith("autotune-compare"):
            compare.append((p, data))
        elif data.get("device"):
            bench.append((p, data))
    return merge_by_device(bench), compare


def merge_by_device(files: list[tuple[Path, dict]]) -> list[tuple[Path, dict]]:
    """One dataset per device: rows of every file of that device (a family may write its own file),
    the newest row winning where two files hold the same case; the copy roof is the highest
    measured; the environment is the newest file's."""
    by_dev: dict[str, list[tuple[Path, dict]]] = {}
    for p, d in files:
        by_dev.setdefault(str(d["device"]), []).append((p, d))
    out = []
    for dev, items in by_dev.items():
        items.sort(key=lambda pd: str(pd[1].get("date", "")))
        rows: dict[tuple, dict] = {}
        for p, d in items:
            for r in d["rows"]:
                k = case_key(r) + (r["impl"],)
                old = rows.get(k)
                if old is None or str(r.get("date", d.get("date", ""))) >= str(old.get("date", "")):
                    rows[k] = {**r, "date": r.get("date", d.get("date", ""))}
        merged = {**items[-1][1], "rows": list(rows.values()),
                  "copy_gbs": max((d.get("copy_gbs") or 0 for _, d in items), default=0) or None,
                  "files": [p.name for p, _ in items]}
        out.append((items[-1][0], merged))
    return out


def group_cases(rows: list[dict]) -> dict[tuple, dict[str, dict]]:
    """case key -> impl -> row (only rows that have a time)."""
    out: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        if r.get("ms") is None:
            continue
        out.setdefault(case_key(r), {})[r["impl"]] = r
    return out


def failed_cases(rows: list[dict]) -> dict[tuple, dict]:
    """case key -> the tritoncub row of a case whose run failed (no time, an error)."""
    return {case_key(r): r for r in rows if r.get("impl") == "tritoncub" and r.get("ms") is None}


def headline_cases(cases: dict[tuple, dict[str, dict]], failed: dict | None = None) -> list[tuple]:
    """The largest n of each (op, dtype, variant, shape) that tritoncub ran, or failed to run (a
    failure at a larger size than every success is the headline: it is not hidden behind a smaller
    size's result)."""
    best: dict[tuple, tuple] = {}
    keys = [key for key, impls in cases.items() if "tritoncub" in impls] + list(failed or ())
    for key in keys:
        k = key[:4]
        if k not in best or key[4] > best[k][4]:
            best[k] = key
    return sorted(best.values(), key=lambda k: (family_of({"op": k[0]}), k[0], k[3], k[1], k[2]))


def _speedup(impls: dict, other: str) -> str:
    t, o = impls.get("tritoncub"), impls.get(other)
    if not t or not o:
        return ""
    x = o["ms"] / t["ms"]
    return f"**{x:.2f}×**" if x >= 1 else f"{x:.2f}×"


def headline_table(data: dict, compact: bool = False) -> str:
    """The headline rows; ``compact`` (the README's) drops input-distribution variants of a case."""
    cases = group_cases(data["rows"])
    failed = failed_cases(data["rows"])
    copy = data.get("copy_gbs") or 0
    keys = headline_cases(cases, failed)
    if compact:
        keys = [k for k in keys if k[2] in ("", "uniform")]
    if not keys:
        return "_no tritoncub results yet_\n"
    lines = ["| family | op | dtype | size | variant | tritoncub | GB/s (% of copy) | torch | vs torch | CUB | vs CUB |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in keys:
        impls = cases.get(key, {})
        if "tritoncub" not in impls:   # (its run failed at this size: see the report's failed cases)
            t = failed[key]
            size = fmt_shape(t.get("shape")) or fmt_n(int(t["n"]))
            lines.append(f"| {family_of(t)} | {t['op']} | {t['dtype']} | {size} | {t.get('variant') or ''} | "
                         f"failed | | {fmt_time(impls.get('torch'))} | | {fmt_time(impls.get('cub'))} | |")
            continue
        t = impls["tritoncub"]
        size = fmt_shape(t.get("shape")) or fmt_n(int(t["n"]))
        gbs = t.get("gbs")
        gbs_s = f"{gbs:,.0f}" + (f" ({100 * gbs / copy:.0f}%)" if copy and gbs else "") if gbs else ""
        lines.append(f"| {family_of(t)} | {t['op']} | {t['dtype']} | {size} | {t.get('variant') or ''} | "
                     f"{fmt_time(t)} | {gbs_s} | {fmt_time(impls.get('torch'))} | "
                     f"{_speedup(impls, 'torch')} | {fmt_time(impls.get('cub'))} | {_speedup(impls, 'cub')} |")
    return "\n".join(lines) + "\n"


def family_table(cases: dict, family: str) -> str:
    keys = sorted((k for k in cases if family_of(next(iter(cases[k].values()))) == family),
                  key=lambda k: (k[0], k[3], k[1], k[2], k[4]))
    impls = sorted({i for k in keys for i in cases[k]}, key=impl_rank)
    others = [i for i in impls if i != "tritoncub"]
    lines = ["| op | dtype | size | variant | " + " | ".join(impls) + " | tritoncub GB/s | "
             + " | ".join(f"vs {i}" for i in others) + " |",
             "|" + "---|" * (4 + len(impls) + 1 + len(others))]
    for k in keys:
        c = cases[k]
        size = fmt_shape(next(iter(c.values())).get("shape")) or fmt_n(k[4])
        t = c.get("tritoncub")
        cells = [k[0], k[1], size, k[2]] + [fmt_time(c.get(i)) for i in impls]
        cells.append(f"{t['gbs']:,.0f}" if t and t.get("gbs") else "")
        cells += [_speedup(c, i) for i in others]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# plots
# ----------------------------------------------------------------------------------------------

def _plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except Exception:
        return None


def _bars(ax, op: str, ordered: list, copy) -> None:
    """One horizontal bar per (impl, dtype, variant) for an op measured at a single size."""
    labels = [f"{impl} {dtype}" + (f" {variant}" if variant else "") for (impl, dtype, variant), _ in ordered]
    vals = [max(r["gbs"] for r in pts) for _, pts in ordered]
    ys = list(range(len(ordered)))[::-1]
    ax.barh(ys, vals, color=[IMPL_COLOR.get(k[0], "#7f7f7f") for k, _ in ordered], height=0.7)
    ax.set_yticks(ys)
    ax.set_yticklabels([lb if len(lb) <= 48 else lb[:45] + "..." for lb in labels], fontsize=5.5)
    if copy:
        ax.axvline(copy, color="black", linestyle=":", linewidth=1)
        ax.set_xlim(0, copy * 1.12)
    n = ordered[0][1][0]["n"]
    ax.set_title(f"{op} (n = {fmt_n(int(n))})", fontsize=10)
    ax.set_xlabel("GB/s (minimal bytes moved); dotted: copy roof")
    ax.grid(True, axis="x", alpha=0.3)


def plot_family(plt, data: dict, family: str, rows: list[dict], path: Path) -> Path | None:
    """Throughput vs size, one panel per op; returns the path written (None if nothing to draw)."""
    rows = [r for r in rows if r.get("ms") is not None and r.get("gbs") and not r.get("shape")]
    ops = sorted({r["op"] for r in rows})
    if not ops:
        return None
    ncol = min(3, len(ops))
    nrow = math.ceil(len(ops) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol, 3.9 * nrow), squeeze=False)
    copy = data.get("copy_gbs")
    dtypes = sorted({r["dtype"] for r in rows})
    for ax, op in zip(axes.flat, ops):
        series: dict[tuple, list] = {}
        for r in rows:
            if r["op"] == op:
                series.setdefault((r["impl"], r["dtype"], r.get("variant") or ""), []).append(r)
        ordered = sorted(series.items(), key=lambda kv: (impl_rank(kv[0][0]), kv[0][1:]))
        if len({r["n"] for pts in series.values() for r in pts}) == 1:
            _bars(ax, op, ordered, copy)                      # one size only: bars read better than points
            continue
        for (impl, dtype, variant), pts in ordered:
            pts.sort(key=lambda r: r["n"])
            label = f"{impl} {dtype}" + (f" {variant}" if variant else "")
            ax.plot([r["n"] for r in pts], [r["gbs"] for r in pts], label=label,
                    color=IMPL_COLOR.get(impl, "#7f7f7f"), marker=DTYPE_MARKER[dtypes.index(dtype) % len(DTYPE_MARKER)],
                    linestyle="-" if impl == "tritoncub" else "--", linewidth=2 if impl == "tritoncub" else 1.2,
                    markersize=4)
        if copy:
            ax.axhline(copy, color="black", linestyle=":", linewidth=1)
            ax.annotate(f"copy roof {copy:,.0f} GB/s", xy=(0.02, copy), xycoords=("axes fraction", "data"),
                        va="bottom", fontsize=7)
            ax.set_ylim(0, copy * 1.12)
        ax.set_xscale("log", base=2)
        ax.set_title(op, fontsize=10)
        ax.set_xlabel("items")
        ax.set_ylabel("GB/s (minimal bytes moved)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6, loc="best")
    for ax in list(axes.flat)[len(ops):]:
        ax.axis("off")
    fig.suptitle(f"{family}: throughput vs size on {data.get('device')}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_batched(plt, data: dict, family: str, rows: list[dict], path: Path) -> Path | None:
    """Grouped bars of GB/s for the batched/row cases (rows with a shape)."""
    rows = [r for r in rows if r.get("ms") is not None and r.get("gbs") and r.get("shape")]
    if not rows:
        return None
    cases = sorted({(r["op"], fmt_shape(r["shape"]), r["dtype"], r.get("variant") or "") for r in rows})
    impls = sorted({r["impl"] for r in rows}, key=impl_rank)
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(cases) * len(impls) / 2 + 2), 4.2))
    width = 0.8 / len(impls)
    for j, impl in enumerate(impls):
        vals = []
        for c in cases:
            m = [r for r in rows if (r["op"], fmt_shape(r["shape"]), r["dtype"], r.get("variant") or "") == c
                 and r["impl"] == impl]
            vals.append(m[0]["gbs"] if m else 0)
        ax.bar([i + j * width for i in range(len(cases))], vals, width, label=impl,
               color=IMPL_COLOR.get(impl, "#7f7f7f"))
    copy = data.get("copy_gbs")
    if copy:
        ax.axhline(copy, color="black", linestyle=":", linewidth=1, label=f"copy roof {copy:,.0f} GB/s")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cases))])
    ax.set_xticklabels([f"{c[0]}\n{c[1]} {c[2]}" + (f"\n{c[3]}" if c[3] else "") for c in cases], fontsize=7)
    ax.set_ylabel("GB/s (minimal bytes moved)")
    ax.set_title(f"{family}, batched rows: throughput on {data.get('device')}", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ----------------------------------------------------------------------------------------------
# the report
# ----------------------------------------------------------------------------------------------

def compare_section(compare: list[tuple[Path, dict]]) -> str:
    if not compare:
        return ""
    lines = ["## Tuned policy vs the built-in fallback", "",
             "Same GPU, same run (`python -m autotune --compare`): each op with the policy file the chain "
             "selects, and with its built-in (untuned) fallback.", ""]
    for p, data in compare:
        lines += [f"### {data.get('device')}", "",
                  "| op[bucket] | problem | fallback | tuned | speed-up | tuned config (source) |",
                  "|---|---|---|---|---|---|"]
        for r in data["rows"]:
            sp = f"{r['speedup']:.2f}×" if r.get("speedup") else ""
            cfg = ", ".join(f"{k}={v}" for k, v in (r.get("tuned") or {}).items())
            lines.append(f"| {r['op']}[{r['bucket']}] | {r['problem']} | {fmt_ms(r.get('fallback_ms'))} | "
                         f"{fmt_ms(r.get('tuned_ms'))} | {sp} | {cfg} ({r.get('tuned_source', '')}) |")
        lines.append("")
    return "\n".join(lines) + "\n"


def policies_section(policies_dir: Path = POLICIES_DIR) -> str:
    """A table of the shipped policy files' tuning logs (what ``python -m autotune`` measured)."""
    files = sorted(Path(policies_dir).glob("*/*.json")) if Path(policies_dir).is_dir() else []
    lines, notes, others = [], [], []
    for f in files:
        try:
            data = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        log = (data.get("log") or {}).get("autotune") if isinstance(data.get("log"), dict) else None
        if not log:
            src = (data.get("log") or {}).get("source", "") if isinstance(data.get("log"), dict) else ""
            others.append(f"- {f.parent.name}/{f.name}: buckets {', '.join(data.get('tuned', {}))}"
                          + (f" -- {src}" if src else " (no tuning log)"))
            continue
        for b, r in (log.get("buckets") or {}).items():
            probs = "; ".join(f"{p['problem']}: {fmt_ms(p.get('fallback_ms'))} → {fmt_ms(p.get('tuned_ms'))}"
                              for p in r.get("problems", []))
            sp = r.get("speedup_vs_fallback")
            lines.append(f"| {f.parent.name} | {data.get('op')}[{b}] | {r.get('configs_timed', '')} of "
                         f"{r.get('space', '')} | {r.get('seconds', '')} s | "
                         f"{f'{sp:.2f}×' if sp else ''} | {probs} | "
                         f"{(log.get('decisions') or {}).get(b, '')} |")
            if r.get("note"):
                notes.append(f"- {data.get('op')}[{b}] ({f.parent.name}): {r['note']}")
            now, won = (data.get("tuned") or {}).get(b), r.get("winner") or {}
            if now is not None and any(won.get(k) != v for k, v in now.items()):
                notes.append(f"- {data.get('op')}[{b}] ({f.parent.name}): the file's value was edited after this "
                             f"run (now {', '.join(f'{k}={v}' for k, v in now.items())})"
                             + (f" -- {data['log']['source']}" if isinstance(data.get("log"), dict)
                                and data["log"].get("source") else ""))
    if not lines and not others:
        return ""
    if others:
        notes += ["", "Policy files written by other means (an op's own sweep), not by `python -m autotune`:", ""] + others
    return "\n".join(["## Shipped policies (`python -m autotune` logs)", "",
                      "Per tuned bucket: configs timed (of the valid space), search time, speed-up of the "
                      "winner over the op's built-in fallback (geometric mean over the bucket's problems, GPU "
                      "time, same run), and what the merge with an existing file decided.", "",
                      "| target | op[bucket] | configs timed | time | speed-up | fallback → tuned | decision |",
                      "|---|---|---|---|---|---|---|"] + lines + ([""] + notes if notes else [])) + "\n"


def build(results_dir: Path = RESULTS_DIR, *, plots: bool = True, readme: Path | None = README,
          policies_dir: Path | None = POLICIES_DIR) -> Path:
    results_dir = Path(results_dir)
    bench, compare = load_results(results_dir)
    plt = _plt() if plots else None
    out = ["# tritoncub benchmark report", "",
           "Generated by `python -m bench --report` from `bench/results/*.json`. Times are medians of "
           "`triton.testing.do_bench` (L2 flushed between runs); GB/s counts the fewest bytes each op must "
           "read and write, so the copy bandwidth measured in the same run is the roof. Speed-ups are "
           "other-impl time / tritoncub time (bold: tritoncub faster). CUB is reached through CuPy. "
           "\"(GPU t)\" beside a time: the kernels of one call ran for t (torch.profiler), so the GPU spent the "
           "rest waiting for the host to queue the work (host-bound; runs from 2026-11-28 on).", ""]
    headline_md = []
    if not bench:
        out.append("_No results yet: run `python -m bench` on a GPU._\n")
    if plots and plt is None and bench:
        out.append("_matplotlib is not installed (`pip install -e .[bench]`): no plots._\n")
    for path, data in bench:
        slug = device_slug(str(data["device"]))
        if plt is not None:
            for old_png in results_dir.glob(f"{slug}-*.png"):   # plots of families no longer present
                old_png.unlink()
        cases = group_cases(data["rows"])
        fams: dict[str, list[dict]] = {}
        for r in data["rows"]:
            fams.setdefault(family_of(r), []).append(r)
        copy = data.get("copy_gbs")
        env = (f"{data.get('device')}: torch {data.get('torch')}, triton {data.get('triton')}, "
               f"CuPy {data.get('cupy', 'n/a')}, CUDA {data.get('cuda', 'n/a')}; "
               f"copy bandwidth {copy or 0:,.0f} GB/s (read+write); results "
               f"{', '.join(f'`{n}`' for n in data.get('files', [path.name]))}, "
               f"last run {data.get('date', '?')}")
        head = headline_table(data)
        headline_md.append((data.get("device"), env, headline_table(data, compact=True), slug, sorted(fams)))
        out += [f"## {data.get('device')}", "", env, "", "### Headline (largest size of each case)", "", head]
        for fam in sorted(fams):
            out += [f"### {fam}", ""]
            if plt is not None:
                for suffix, fn in (("", plot_family), ("-batched", plot_batched)):
                    png = results_dir / f"{slug}-{fam}{suffix}.png"
                    if fn(plt, data, fam, fams[fam], png) is not None:
                        out += [f"![{fam}{suffix}]({png.name})", ""]
            out += [family_table(cases, fam), ""]
        errors = [r for r in data["rows"] if r.get("ms") is None]
        if errors:
            out += ["### Failed cases", ""] + [
                f"- {r['op']} {r['impl']} {r['dtype']} n={r['n']} {r.get('variant') or ''}: {r.get('error', '')}"
                for r in errors] + [""]
    out.append(compare_section(compare))
    if policies_dir is not None:
        out.append(policies_section(policies_dir))
    report = results_dir / "REPORT.md"
    results_dir.mkdir(parents=True, exist_ok=True)
    report.write_text("\n".join(out).rstrip() + "\n")
    if readme is not None and headline_md:
        update_readme(Path(readme), headline_md)
    return report


def update_readme(readme: Path, headline_md: list) -> bool:
    """Replace the text between the README's headline markers; False when the markers are absent."""
    if not readme.is_file():
        return False
    text = readme.read_text()
    i, j = text.find(MARK_START), text.find(MARK_END)
    if i < 0 or j < i:
        return False
    parts = []
    for device, env, head, slug, fams in headline_md:
        links = ", ".join(f"[{f}{suffix.replace('-', ' ')}](bench/results/{slug}-{f}{suffix}.png)"
                          for f in fams for suffix in ("", "-batched")
                          if (RESULTS_DIR / f"{slug}-{f}{suffix}.png").exists())
        parts += [f"**{env}**", "", head, ""]
        if links:
            parts += [f"Plots (throughput vs size, copy roof drawn): {links}. Full tables: "
                      f"[bench/results/REPORT.md](bench/results/REPORT.md).", ""]
    new = text[: i + len(MARK_START)] + "\n" + "\n".join(parts).rstrip() + "\n" + text[j:]
    if new != text:
        readme.write_text(new)
    return True


def main(argv=None) -> int:
    path = build()
    print(f"wrote {path}")
    for p in sorted(path.parent.glob("*.png")):
        print(f"  plot {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
