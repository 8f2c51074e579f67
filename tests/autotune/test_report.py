"""``python -m bench --report``: markdown, plots and the README section from results files."""
import json

import pytest

from bench import report


def _results(tmp_path):
    rows = []
    for n in (1 << 20, 1 << 24):
        for impl, f in (("tritoncub", 1.0), ("torch", 2.0), ("cub", 0.5)):
            ms = n * 8 / 2e9 * f
            rows.append(dict(op="sum", impl=impl, dtype="float32", n=n, shape=None, variant="", ms=ms,
                             gbs=n * 4 / ms / 1e6, gkeys=n / ms / 1e6))
    rows.append(dict(op="sort", impl="tritoncub", dtype="float32", n=8192, shape=[64, 128], variant="rows",
                     ms=0.01, gbs=6.5, gkeys=0.8, gpu_ms=0.004))     # (host-bound: shown with its GPU time)
    rows.append(dict(op="sort", impl="torch", dtype="float32", n=8192, shape=[64, 128], variant="rows",
                     ms=0.05, gbs=1.3, gkeys=0.16, gpu_ms=0.045))    # (not: within 1.2x of its GPU time)
    rows.append(dict(op="cumsum", impl="tritoncub", dtype="int32", n=10, shape=None, variant="", ms=None,
                     error="ValueError: boom"))
    # a failure at a larger size than the successes of its case: the headline must show it
    rows.append(dict(op="sum", impl="tritoncub", dtype="float32", n=1 << 28, shape=None, variant="", ms=None,
                     error="RuntimeError: out of memory"))
    rows.append(dict(op="sum", impl="torch", dtype="float32", n=1 << 28, shape=None, variant="", ms=1.0,
                     gbs=1073.7, gkeys=268.4))
    (tmp_path / "gpu-x.json").write_text(json.dumps(
        {"device": "GPU X", "torch": "2.11", "triton": "3.6", "copy_gbs": 3000.0, "rows": rows}))
    (tmp_path / "autotune-compare-gpu-x.json").write_text(json.dumps(
        {"device": "GPU X", "rows": [{"op": "reduce", "bucket": "sum_4B", "problem": "float32 n=2^24",
                                      "fallback_ms": 0.2, "tuned_ms": 0.1, "speedup": 2.0,
                                      "tuned_source": "policies/sm_90/reduce.json[sum_4B]",
                                      "tuned": {"BLOCK": 4096}}]}))
    (tmp_path / "notes.json").write_text("[1, 2]")          # not a results file: ignored
    return tmp_path


def test_family_of():
    assert report.family_of({"op": "sum"}) == "reduce"
    assert report.family_of({"op": "cumsum"}) == "scan"
    assert report.family_of({"op": "sort_keys"}) == "sort"
    assert report.family_of({"op": "topk"}) == "topk"
    assert report.family_of({"op": "masked_select"}) == "select"
    assert report.family_of({"op": "histc"}) == "histogram"
    assert report.family_of({"op": "whatever", "family": "misc"}) == "misc"


def test_report_markdown(tmp_path):
    d = _results(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.MARK_START}\nold\n{report.MARK_END}\nrest\n")
    path = report.build(d, plots=False, readme=readme)
    md = path.read_text()
    # headline: the largest size only, speed-ups torch/tritoncub (2x, bold) and cub/tritoncub (0.5x)
    head = md.split("### Headline")[1].split("###")[0]
    assert "| reduce | sum | float32 | 2^28 |  | failed | | 1.000 ms |" in head
    assert "2^24" not in head and "2^20" not in head
    assert "| cumsum | int32 | 10 |  | failed |" in head
    assert "### reduce" in md and "| sum | float32 | 2^24 |" in md and "**2.00×**" in md and "0.50×" in md
    assert "| sort | sort | float32 | 64×128 | rows | 10.0 µs (GPU 4.0 µs) |" in head
    assert "| 50.0 µs | **5.00×** |" in head
    assert "### reduce" in md and "| sum | float32 | 2^20 |" in md
    assert "ValueError: boom" in md
    assert "Tuned policy vs the built-in fallback" in md and "2.00×" in md.split("Tuned policy")[1]
    text = readme.read_text()
    assert "old" not in text and "intro" in text and "rest" in text
    assert "| reduce | sum | float32 | 2^28 |  | failed |" in text


def test_readme_without_markers_is_untouched(tmp_path):
    d = _results(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    report.build(d, plots=False, readme=readme)
    assert readme.read_text() == "no markers here\n"


def test_report_plots(tmp_path):
    pytest.importorskip("matplotlib")
    d = _results(tmp_path)
    md = report.build(d, plots=True, readme=None).read_text()
    assert (d / "gpu-x-reduce.png").stat().st_size > 1000
    assert (d / "gpu-x-sort-batched.png").stat().st_size > 1000
    assert "![reduce](gpu-x-reduce.png)" in md


def test_report_with_no_results(tmp_path):
    md = report.build(tmp_path, plots=False, readme=None).read_text()
    assert "No results yet" in md


def test_policies_section_summarises_autotune_logs(tmp_path):
    (tmp_path / "res").mkdir()
    d = _results(tmp_path / "res")
    pol = tmp_path / "pol" / "sm_90"
    pol.mkdir(parents=True)
    (pol / "reduce.json").write_text(json.dumps({"op": "reduce", "tuned": {}, "log": {"autotune": {
        "decisions": {"sum_f4": "new"},
        "buckets": {"sum_f4": {"configs_timed": 12, "space": 1792, "seconds": 20.5, "speedup_vs_fallback": 1.3,
                               "problems": [{"problem": "sum float32 n=2^26", "fallback_ms": 0.13,
                                             "tuned_ms": 0.1}]}}}}}))
    (pol / "scan.json").write_text(json.dumps({"op": "scan", "tuned": {}, "log": {"by": "hand"}}))
    md = report.build(d, plots=False, readme=None, policies_dir=tmp_path / "pol").read_text()
    sec = md.split("## Shipped policies")[1]
    assert "| sm_90 | reduce[sum_f4] | 12 of 1792 | 20.5 s | 1.30× |" in sec and "| new |" in sec
    assert "| sm_90 | scan" not in sec and "sm_90/scan.json: buckets  (no tuning log)" in sec


def test_harness_subtracts_the_extra_work_and_replaces_old_rows_per_op(tmp_path, monkeypatch):
    """A case's ``subtract`` callable (e.g. the input copy cupy.sort makes) is timed alone and taken off;
    a save replaces every old row of the ops it measured (a case gone from the sweep leaves no stale
    row) and keeps other ops' rows; failing batched cases key like passing ones."""
    from bench import harness
    times = {"sort": 5.0, "copy": 0.75}
    monkeypatch.setattr(harness, "time_case", lambda c, **kw: times[c.fn()])
    monkeypatch.setattr(harness, "gpu_time_ms", lambda fn, **kw: {"sort": 4.0, "copy": 0.5}[fn()])
    monkeypatch.setattr(harness, "RESULTS_DIR", tmp_path)
    rows = harness.run_cases([harness.Case("sort_keys", "cub", "uint32", 8, lambda: "sort", 64,
                                           subtract=lambda: "copy"),
                              harness.Case("sort_rows", "tritoncub", "float32", 8, lambda: 1 / 0, 64, shape=(2, 4))],
                             verbose=False)
    assert rows[0]["ms"] == 4.25 and rows[0]["timed_ms"] == 5.0 and rows[0]["subtracted_ms"] == 0.75
    assert rows[0]["gpu_ms"] == 3.5   # (the GPU time of the subtracted work is taken off too)
    assert rows[1]["shape"] == [2, 4] and rows[1]["ms"] is None
    env = {"device": "GPU X", "date": "d1"}
    old = [dict(op="sort_keys", impl="cub", dtype="uint32", n=8, shape=None, variant="gone", ms=1.0),
           dict(op="sort_rows", impl="tritoncub", dtype="float32", n=8, shape=[2, 4], variant="", ms=1.0),
           dict(op="sum", impl="torch", dtype="float32", n=8, shape=None, variant="", ms=2.0)]
    harness.results_path("GPU X").write_text(json.dumps({"device": "GPU X", "rows": old}))
    data = json.loads(harness.save(rows, env, 3000.0).read_text())
    assert sorted((r["op"], r.get("variant"), r["ms"]) for r in data["rows"]) == [
        ("sort_keys", "", 4.25), ("sort_rows", "", None), ("sum", "", 2.0)]
    md = harness.results_path("GPU X", ".md").read_text()
    assert "| uint32 | 8 |  |  | 4.2500 |  |  | 3.5000 |" in md   # (the GPU ms column)
    assert "| float32 | 8 |  |  | 2.0000 |  |  |  |" in md        # (a row with no GPU time)


@pytest.mark.gpu
def test_gpu_time_counts_the_kernels_a_call_runs():
    """gpu_time_ms sums the device time of what a call launches: nothing for a call that launches
    nothing, about twice one kernel's time for a call that runs it twice."""
    import torch
    from bench import harness
    x = torch.zeros(1 << 26, device="cuda")
    assert harness.gpu_time_ms(lambda: None) == 0.0
    one = harness.gpu_time_ms(lambda: x.add_(1), reps=10)
    two = harness.gpu_time_ms(lambda: (x.add_(1), x.add_(1)), reps=10)
    assert 0.005 < one and 1.6 * one < two < 2.5 * one, (one, two)
    # (and about what CUDA events around the same kernels measure)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        x.add_(1)
    end.record()
    torch.cuda.synchronize()
    events = start.elapsed_time(end) / 10
    assert 0.7 * events < one < 1.3 * events, (one, events)
