"""The policy chain reading what the tool writes, ``policy.override``, progress and the CLI."""
import importlib.util
import io
import json
import sys
import warnings
from pathlib import Path

import pytest
import torch

from helpers import DEVICE
from tritoncub import policy

HERE = Path(__file__).parent
if "autotune_toy_op" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("autotune_toy_op", HERE / "autotune_toy_op.py")
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["autotune_toy_op"] = _mod
    _spec.loader.exec_module(_mod)
toy = sys.modules["autotune_toy_op"]

from autotune import policyfile  # noqa: E402
from autotune.__main__ import main  # noqa: E402
from autotune.progress import Progress  # noqa: E402

H100 = ("sm_90", "NVIDIA H100 80GB HBM3")


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    """The policy chain as it behaves on an H100, reading files from tmp_path only."""
    monkeypatch.setattr(policy, "device_target", lambda device=None: H100)
    monkeypatch.setattr(policy, "POLICY_DIR", tmp_path / "pkg")
    monkeypatch.setenv(policy.USER_POLICY_DIR_ENV, str(tmp_path / "user"))
    policy.clear_cache()
    policy._warned_untuned.discard(("sm_90", toy.OP))
    yield tmp_path
    policy.clear_cache()


def _put(root, target, tuned):
    policyfile.write(policyfile.path_for(root, target, toy.OP),
                     {"op": toy.OP, "target": target, "device_name": "x", "tuned": tuned, "candidates": {}})


def test_chain_uses_nearest_lower_architecture(fake_gpu):
    _put(fake_gpu / "pkg", "sm_80", {"default": {"BLOCK": 32, "num_warps": 2}})
    _put(fake_gpu / "pkg", "sm_75", {"default": {"BLOCK": 64}})
    with pytest.warns(UserWarning, match="using sm_80's"):
        pol = policy.select(toy.OP, "cuda:0", "big")
    assert pol["BLOCK"] == 32 and pol.num_warps == 2 and pol["BUG"] == 0
    assert "sm_80" in pol.source and "fallback from sm_90" in pol.source


def test_chain_prefers_device_slug_then_arch_and_user_dir(fake_gpu):
    _put(fake_gpu / "pkg", "sm_90", {"default": {"BLOCK": 32}})
    _put(fake_gpu / "pkg", "nvidia-h100-80gb-hbm3", {"big": {"BLOCK": 64, "num_warps": 2}})
    assert policy.select(toy.OP, "cuda:0", "big")["BLOCK"] == 64
    _put(fake_gpu / "user", "sm_90", {"big": {"BLOCK": 16}})
    policy.clear_cache()
    # the user dir is searched first for each target, but the device slug still comes before the arch
    assert policy.select(toy.OP, "cuda:0", "big")["BLOCK"] == 64
    # per bucket: a user-dir file lacking a bucket leaves it to the package's file of the same target
    _put(fake_gpu / "pkg", "sm_90", {"default": {"BLOCK": 32}, "small": {"BLOCK": 8}})
    policy.clear_cache()
    assert policy.select(toy.OP, "cuda:0", "small")["BLOCK"] == 8
    _put(fake_gpu / "user", "sm_90", {"big": {"BLOCK": 16}, "small": {"BLOCK": 4}})
    policy.clear_cache()
    assert policy.select(toy.OP, "cuda:0", "small")["BLOCK"] == 4


def test_no_file_warns_once_how_to_tune(fake_gpu):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a = policy.select(toy.OP, "cuda:0", "big")
        policy.select(toy.OP, "cuda:0", "small")
    msgs = [str(x.message) for x in w if "tune" in str(x.message)]
    assert len(msgs) == 1 and f"python -m autotune --ops {toy.OP}" in msgs[0]
    assert a.source == "built-in fallback"


def test_tool_output_is_what_the_chain_loads(fake_gpu):
    from autotune.state import State
    from autotune.tuner import Tuner
    from autotune.search import config_key  # noqa: F401
    st = State(None, H100[1], "sm_90")
    tuner = Tuner({toy.OP: toy.AUTOTUNE[0]}, device=torch.device(DEVICE), target="sm_90", device_name=H100[1],
                  out_dir=fake_gpu / "pkg", state=st, timer=lambda fn, **kw: (fn(), toy.fake_time(kw["config"]))[1],
                  budget_s=1e6)
    tuner.run([toy.OP])
    pol = policy.select(toy.OP, "cuda:0", "big")
    assert pol["BLOCK"] == 64 and pol["BUG"] == 0 and pol.source.startswith("policies/sm_90/")
    assert [c.values["BUG"] for c in policy.candidates(toy.OP, "cuda:0", "big")] == [0] * len(
        policy.candidates(toy.OP, "cuda:0", "big"))


def test_tool_says_when_an_earlier_file_shadows_its_output(fake_gpu):
    # a device-name file holding the bucket decides it on this device: writing the architecture's file
    # changes nothing here, and the tool says so, naming the file that wins and the way out
    from autotune.state import State
    from autotune.tuner import Tuner
    _put(fake_gpu / "pkg", "nvidia-h100-80gb-hbm3", {"big": {"BLOCK": 32}})
    said = []
    tuner = Tuner({toy.OP: toy.AUTOTUNE[0]}, device=torch.device(DEVICE), target="sm_90", device_name=H100[1],
                  out_dir=fake_gpu / "pkg", state=State(None, H100[1], "sm_90"),
                  timer=lambda fn, **kw: (fn(), toy.fake_time(kw["config"]))[1], budget_s=1e6, log=said.append)
    tuner.run([toy.OP])
    shadowed = [m for m in said if "still decided by" in m]
    assert len(shadowed) == 1 and f"{toy.OP}[big]" in shadowed[0], said
    assert "policies/nvidia-h100-80gb-hbm3/" in shadowed[0] and "--target device" in shadowed[0]
    assert policy.select(toy.OP, "cuda:0", "big")["BLOCK"] == 32          # (still the device file's)
    assert policy.select(toy.OP, "cuda:0", "small").source.startswith("policies/sm_90/")


def test_override_forces_and_restores():
    before = policy.select(toy.OP, None, "big")
    with policy.override(toy.OP, {"BLOCK": 64, "num_warps": 2}) as forced:
        assert policy.select(toy.OP, None, "big") is forced
        assert forced["BLOCK"] == 64 and forced.num_warps == 2 and forced["BUG"] == 0
        with policy.override(toy.OP, {"BLOCK": 32}, bucket="small"):
            assert policy.select(toy.OP, None, "small")["BLOCK"] == 32
            assert policy.select(toy.OP, None, "big")["BLOCK"] == 64
        assert policy.select(toy.OP, None, "small")["BLOCK"] == 64
        x = torch.arange(100, dtype=torch.float32, device=DEVICE)
        torch.testing.assert_close(toy.scale(x), 2 * x)
    assert policy.select(toy.OP, None, "big") == before
    assert not policy.overridden(toy.OP, "big")


def test_override_rejects_unknown_and_invalid():
    with pytest.raises(KeyError, match="BLOK"):
        with policy.override(toy.OP, {"BLOK": 64}):
            pass
    with pytest.raises(ValueError, match="not valid"):
        with policy.override(toy.OP, {"BLOCK": 16, "num_warps": 2}):
            pass
    assert not policy.overridden(toy.OP)


def test_progress_line_shows_op_size_config_and_time_left():
    t = {"now": 0.0}
    out = io.StringIO()
    p = Progress(100.0, stream=out, clock=lambda: t["now"])
    t["now"] = 25.0
    p.update("reduce", "4B", "float32 n=2^24", 3, 40, force=True)
    line = out.getvalue()
    assert "reduce[4B]" in line and "float32 n=2^24" in line and "config 3/40" in line
    assert "01:15 left" in line and "25%" in line


# --------------------------------------------------------------------------------------------------
def test_cli_dry_run_lists_space(capsys, tmp_path):
    assert main(["--dry-run", "--specs", "autotune_toy_op", "--ops", "autotune_toy*", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{toy.OP}" in out and "10 valid configs of 12" in out
    assert "bucket 'small'" in out and "float32 n=50" in out and "float32 n=100, float32 n=130" in out
    assert not any(tmp_path.iterdir())


def test_cli_dry_run_of_a_space_too_large_to_list(capsys):
    # radix sort's space has ~10^8 combinations: the dry run estimates, it does not list them
    assert main(["--dry-run", "--ops", "radix_sort"]) == 0
    out = capsys.readouterr().out
    p = policy.op_policy("radix_sort")
    raw = p.raw_size()
    assert raw > policy.OpPolicy.ENUMERATE_LIMIT
    assert "radix_sort" in out and "searched by sampling, not listed" in out and f" valid configs of {raw}" in out
    # the estimate agrees with an independent one (other draws) to within 10%
    est = int(out.split(" valid configs of")[0].rsplit("~", 1)[1])
    assert abs(est - p.estimate_size(draws=20000, seed=9)) < 0.1 * est


def test_cli_unknown_op_is_a_clear_error():
    with pytest.raises(SystemExit, match="no registered op matches 'nope'"):
        main(["--dry-run", "--ops", "nope"])


def test_cli_empty_op_list_and_negative_numbers_are_clear_errors(capsys):
    with pytest.raises(SystemExit, match="names no op"):
        main(["--ops", ",", "--dry-run"])
    for flag in ("--time-budget", "--margin"):
        with pytest.raises(SystemExit):
            main([flag, "-5", "--dry-run"])
        assert f"{flag} must be a non-negative number" in capsys.readouterr().err


def test_cli_refuses_a_path_as_target_an_empty_op_list_and_json_without_compare(capsys):
    for bad in ("../../tmp/evil", "a/b", ".."):
        with pytest.raises(SystemExit, match="not a target name"):
            main(["--dry-run", "--target", bad])
    with pytest.raises(SystemExit, match="names no op"):
        main(["--dry-run", "--ops", ""])
    with pytest.raises(SystemExit):
        main(["--dry-run", "--json", "x.json"])
    assert "pass --compare too" in capsys.readouterr().err


def test_default_output_is_where_the_library_reads_first(tmp_path, monkeypatch):
    # (TRITONCUB_POLICY_DIR is read before the package's files: writing the package would be shadowed)
    from autotune.__main__ import _default_out
    monkeypatch.setenv("TRITONCUB_POLICY_DIR", str(tmp_path / "mine"))
    assert _default_out() == tmp_path / "mine"


@pytest.mark.skipif(torch.cuda.is_available(), reason="--fake-timer is refused where a GPU exists")
def test_cli_quick_run_writes_where_the_library_does_not_read(tmp_path, monkeypatch, capsys):
    # a --quick smoke run without --out: its files under the cache's policies-quick, its own state file
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITONCUB_POLICY_DIR", str(tmp_path / "mine"))
    args = ["--fake-timer", "--quick", "--specs", "autotune_toy_op", "--ops", toy.OP, "--target", "sm_test",
            "--no-progress"]
    assert main(args) == 0
    assert (tmp_path / "cache" / "tritoncub" / "policies-quick" / "sm_test" / f"{toy.OP}.json").exists()
    assert not (tmp_path / "mine").exists()
    states = [p.name for p in (tmp_path / "cache" / "tritoncub").glob("autotune-state-*")]
    assert states and all(n.endswith("-quick.jsonl") for n in states), states
    capsys.readouterr()


@pytest.mark.skipif(torch.cuda.is_available(), reason="--fake-timer is refused where a GPU exists")
def test_cli_runs_and_resumes(tmp_path, capsys):
    args = ["--fake-timer", "--specs", "autotune_toy_op", "--ops", toy.OP, "--out", str(tmp_path / "out"),
            "--state", str(tmp_path / "state.jsonl"), "--target", "sm_test", "--no-progress"]
    assert main(args) == 0
    data = json.loads((tmp_path / "out" / "sm_test" / f"{toy.OP}.json").read_text())
    assert data["tuned"]["big"]["BUG"] == 0 and data["tuned"]["small"]["BUG"] == 0
    out = capsys.readouterr().out
    assert "speed-up vs fallback" in out and f"{toy.OP}[big]" in out
    assert main(args + ["--resume"]) == 0
    assert "finished in an earlier run" in capsys.readouterr().err


def test_compare_times_tuned_against_fallback(fake_gpu, tmp_path):
    from autotune.__main__ import compare_run
    _put(fake_gpu / "pkg", "sm_90", {"big": {"BLOCK": 64}})
    times = {16: 2.0, 64: 1.0}
    rc = compare_run([toy.OP], {toy.OP: toy.AUTOTUNE[0]}, torch.device(DEVICE), False, tmp_path / "c.json",
                     timer=lambda fn, **kw: (fn(), times.get(kw["config"]["BLOCK"], 3.0))[1])
    assert rc == 0
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    big = [r for r in rows if r["bucket"] == "big"]
    assert len(big) == 2 and all(r["speedup"] == 2.0 and "sm_90" in r["tuned_source"] for r in big)
    small = [r for r in rows if r["bucket"] == "small"]
    assert small[0]["speedup"] == 1.0          # no tuned value for "small": the fallback both times


def test_lower_architecture_file_warns_once_how_to_tune(fake_gpu):
    _put(fake_gpu / "pkg", "sm_80", {"default": {"BLOCK": 32}})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert policy.select(toy.OP, "cuda:0", "big")["BLOCK"] == 32
        policy.select(toy.OP, "cuda:0", "small")
    msgs = [str(x.message) for x in w if "autotune" in str(x.message)]
    assert len(msgs) == 1 and "using sm_80's" in msgs[0] and "sm_90" in msgs[0]


def test_stale_file_never_breaks_the_op(fake_gpu):
    _put(fake_gpu / "pkg", "sm_90", {"big": {"BLOCK": 16, "num_warps": 2},        # not valid any more
                                     "small": {"BLOCK": 32, "RENAMED": 1}})       # unknown key
    with pytest.warns(UserWarning, match="no longer accepts"):
        pol = policy.select(toy.OP, "cuda:0", "big")
    assert pol.as_dict() == policy.op_policy(toy.OP).fallback and "stale" in pol.source
    with pytest.warns(UserWarning, match="RENAMED"):
        assert "RENAMED" not in policy.select(toy.OP, "cuda:0", "small").values


@pytest.mark.gpu
def test_runtime_autotune_over_the_files_shortlist(monkeypatch, tmp_path):
    """TRITONCUB_AUTOTUNE=1: policy.launch autotunes over the file's (verified) candidates."""
    import triton
    arch, _ = policy.device_target("cuda")
    policyfile.write(policyfile.path_for(tmp_path, arch, toy.OP),
                     {"op": toy.OP, "tuned": {"big": {"BLOCK": 32}},
                      "candidates": {"big": [{"BLOCK": 32, "BUG": 0, "num_warps": 1, "num_stages": 1},
                                             {"BLOCK": 64, "BUG": 0, "num_warps": 2, "num_stages": 1}]}})
    monkeypatch.setenv(policy.USER_POLICY_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("TRITONCUB_AUTOTUNE", "1")
    policy.clear_cache()
    try:
        x = torch.randn(1000, device="cuda")
        y = torch.empty_like(x)
        assert len(policy.candidates(toy.OP, x.device, "big")) == 2
        policy.launch(toy.OP, toy._scale_kernel, lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),), x, y,
                      x.numel(), device=x.device, bucket="big", autotune_key=("n",))
        torch.testing.assert_close(y, 2 * x)
    finally:
        policy.clear_cache()
