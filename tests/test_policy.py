"""The policy chain (tritoncub.policy): architecture fallback through data files, buckets, invalid
files, describe(), the tuning space, and the interpreter's use of the built-in fallback.

Policy files are written to a temporary TRITONCUB_POLICY_DIR and the device is faked by replacing
``policy.device_target``, so these tests need no GPU."""
import json
import warnings

import pytest

from tritoncub import policy

OP = "test_policy_fake_op"


@pytest.fixture
def fake_op():
    p = policy.register(
        OP,
        space={"BLOCK": [256, 512, 1024], "ITEMS": [1, 2, 4], "num_warps": [4, 8], "num_stages": [1]},
        fallback={"BLOCK": 512, "ITEMS": 2, "LOAD": "direct", "num_warps": 4, "num_stages": 1},
        valid=lambda c: c["BLOCK"] * c["ITEMS"] <= 2048 and c["num_warps"] * 32 <= c["BLOCK"],
        buckets=("default", "2B", "8B"),
        bucket_fallbacks={"8B": {"ITEMS": 1}},
        doc="a fake op for the policy tests",
    )
    policy.clear_cache()
    yield p
    policy._REGISTRY.pop(OP, None)
    policy.clear_cache()


@pytest.fixture
def policy_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(policy.USER_POLICY_DIR_ENV, str(tmp_path))
    policy.clear_cache()
    yield tmp_path
    policy.clear_cache()


def _fake_device(monkeypatch, arch, name="NVIDIA Fake GPU 80GB"):
    monkeypatch.setattr(policy, "device_target", lambda device=None: (arch, name))
    policy.clear_cache()


def _write(root, target, tuned, candidates=None, op=OP):
    d = root / target
    d.mkdir(parents=True, exist_ok=True)
    data = {"op": op, "target": target, "tuned": tuned}
    if candidates is not None:
        data["candidates"] = candidates
    (d / f"{op}.json").write_text(json.dumps(data))


def test_arch_chain_order():
    assert policy.arch_chain("sm_90") == ["sm_90", "sm_89", "sm_87", "sm_86", "sm_80", "sm_75", "sm_70"]
    assert policy.arch_chain("sm_80")[:2] == ["sm_80", "sm_75"]
    assert policy.arch_chain("gfx942") == ["gfx942", "gfx941", "gfx940", "gfx90a", "gfx908"]
    # an architecture newer than the table falls back to every known lower one
    assert policy.arch_chain("sm_130")[:3] == ["sm_130", "sm_121", "sm_120"]
    assert policy.arch_chain("unknown") == ["unknown"]


def test_chain_falls_back_to_nearest_lower_arch(fake_op, policy_dir, monkeypatch):
    _write(policy_dir, "sm_80", {"default": {"BLOCK": 256, "num_warps": 8}})
    _write(policy_dir, "sm_89", {"default": {"BLOCK": 1024, "ITEMS": 1}})
    _fake_device(monkeypatch, "sm_90")
    pol = policy.select(OP)
    assert pol.values["BLOCK"] == 1024 and pol.values["ITEMS"] == 1
    assert pol.num_warps == 4  # not in the file: the op's fallback
    assert pol.source == f"policies/sm_89/{OP}.json[default] (fallback from sm_90)"
    # the sm_89 file goes away: the chain continues to sm_80
    (policy_dir / "sm_89" / f"{OP}.json").unlink()
    policy.clear_cache()
    pol = policy.select(OP)
    assert pol.values["BLOCK"] == 256 and pol.num_warps == 8
    assert "sm_80" in pol.source
    # an exact match needs no "fallback" note
    _fake_device(monkeypatch, "sm_80")
    assert policy.select(OP).source == f"policies/sm_80/{OP}.json[default]"


def test_device_name_file_wins_over_arch(fake_op, policy_dir, monkeypatch):
    _write(policy_dir, "sm_90", {"default": {"BLOCK": 1024, "ITEMS": 1}})
    _write(policy_dir, "nvidia-h100", {"default": {"BLOCK": 999}})             # a short slug: no target
    _write(policy_dir, "nvidia-h100-80gb-hbm3", {"default": {"BLOCK": 256}})
    _fake_device(monkeypatch, "sm_90", "NVIDIA H100 80GB HBM3")
    assert policy.lookup_order()[:2] == ["nvidia-h100-80gb-hbm3", "sm_90"]
    pol = policy.select(OP)
    assert pol.values["BLOCK"] == 256 and "nvidia-h100-80gb-hbm3" in pol.source


def test_no_file_uses_fallback_and_warns(fake_op, policy_dir, monkeypatch):
    _fake_device(monkeypatch, "sm_75")
    policy._warned_untuned.discard(("sm_75", OP))
    with pytest.warns(UserWarning, match="no tuned policy"):
        pol = policy.select(OP)
    assert pol.source == "built-in fallback"
    assert pol.values == {"BLOCK": 512, "ITEMS": 2, "LOAD": "direct"}


def test_bucket_lookup(fake_op, policy_dir, monkeypatch):
    _write(policy_dir, "sm_90", {"default": {"BLOCK": 1024, "ITEMS": 1}, "2B": {"BLOCK": 256, "ITEMS": 4}})
    _fake_device(monkeypatch, "sm_90")
    assert policy.select(OP, bucket="2B").values["ITEMS"] == 4
    assert policy.select(OP, bucket="2B").source.endswith("[2B]")
    # a bucket the file lacks uses the file's default on top of that bucket's own fallback
    p8 = policy.select(OP, bucket="8B")
    assert p8.values["BLOCK"] == 1024 and p8.source.endswith("[default]")
    assert policy.select(OP).values["BLOCK"] == 1024


def test_bucket_lookup_walks_the_chain_per_bucket(fake_op, policy_dir, monkeypatch):
    # a device file tuned for one bucket leaves the others to the architecture's file (exact buckets
    # first, along the whole chain; then the first "default")
    _write(policy_dir, "sm_90", {"default": {"BLOCK": 1024, "ITEMS": 1}, "2B": {"BLOCK": 256, "ITEMS": 4}})
    _write(policy_dir, "nvidia-fake-gpu-80gb", {"8B": {"BLOCK": 512, "ITEMS": 2}})
    _fake_device(monkeypatch, "sm_90")
    assert policy.lookup_order()[0] == "nvidia-fake-gpu-80gb"
    p8, p2, pd = policy.select(OP, bucket="8B"), policy.select(OP, bucket="2B"), policy.select(OP)
    assert (p8.values["ITEMS"], p8.source) == (2, f"policies/nvidia-fake-gpu-80gb/{OP}.json[8B]")
    assert (p2.values["ITEMS"], p2.source) == (4, f"policies/sm_90/{OP}.json[2B]")
    assert (pd.values["BLOCK"], pd.source) == (1024, f"policies/sm_90/{OP}.json[default]")
    # with a default of its own, the device file's default serves the buckets no file names
    _write(policy_dir, "nvidia-fake-gpu-80gb", {"8B": {"BLOCK": 512, "ITEMS": 2}, "default": {"BLOCK": 256}})
    policy.clear_cache()
    assert policy.select(OP, bucket="2B").values["ITEMS"] == 4
    assert policy.select(OP).source == f"policies/nvidia-fake-gpu-80gb/{OP}.json[default]"


def test_file_without_the_bucket_or_a_default_serves_the_built_in_values_quietly(fake_op, policy_dir, monkeypatch):
    # a file that names other buckets only: the bucket takes the op's built-in values, attributed to
    # that file, with no "untuned GPU" warning (the GPU is tuned; the file just leaves this bucket alone)
    _write(policy_dir, "sm_90", {"2B": {"BLOCK": 256, "ITEMS": 4}})
    _fake_device(monkeypatch, "sm_90")
    policy._warned_untuned.discard(("sm_90", OP))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p8 = policy.select(OP, bucket="8B")
    assert p8.as_dict() == fake_op.fallback_for("8B") and p8.source == f"policies/sm_90/{OP}.json[default]"


@pytest.mark.parametrize("text,why", [("{not json", "JSONDecodeError"), ("[1, 2]", "not a JSON object"),
                                      ('{"tuned": [1]}', "'tuned' is not an object"),
                                      ('{"tuned": {"default": 3}}', "'tuned' is not an object"),
                                      ('{"tuned": {}, "candidates": {"default": 5}}', "'candidates' is not")])
def test_unreadable_file_is_skipped_with_a_warning(fake_op, policy_dir, monkeypatch, text, why):
    # a corrupt or wrongly shaped file is named and skipped: the next file along the chain is used
    _write(policy_dir, "sm_89", {"default": {"BLOCK": 256}})
    (policy_dir / "sm_90").mkdir()
    bad = policy_dir / "sm_90" / f"{OP}.json"
    bad.write_text(text)
    _fake_device(monkeypatch, "sm_90")
    policy._warned_untuned.discard(("sm_90", OP))
    with pytest.warns(UserWarning) as rec:
        pol = policy.select(OP)
        cands = policy.candidates(OP)
    msgs = [str(w.message) for w in rec]
    assert any(str(bad) in m and why in m for m in msgs), msgs
    assert pol.values["BLOCK"] == 256 and "sm_89" in pol.source
    assert cands and all(c.values["BLOCK"] in (256, 512, 1024) for c in cands)


def test_candidates_never_empty(fake_op, policy_dir, monkeypatch):
    # a shortlist none of whose entries the op accepts now: runtime autotuning gets the fixed choice
    _write(policy_dir, "sm_90", {"default": {"BLOCK": 256}},
           candidates={"default": [{"BLOCK": 2048, "ITEMS": 4}, {"NOT_A_KEY": 1}]})
    _fake_device(monkeypatch, "sm_90")
    cands = policy.candidates(OP)
    assert [(c.values, c.num_warps) for c in cands] == [(policy.select(OP).values, policy.select(OP).num_warps)]
    assert cands[0].values["BLOCK"] == 256


def test_bucket_fallbacks_without_files(fake_op, monkeypatch):
    _fake_device(monkeypatch, policy.INTERPRETER_TARGET, "Triton interpreter (CPU)")
    assert policy.select(OP, bucket="8B").values["ITEMS"] == 1
    assert policy.select(OP, bucket="2B").values["ITEMS"] == 2


def test_invalid_file_config_rejected(fake_op, policy_dir, monkeypatch):
    """A file whose config the op's ``valid`` rejects (or with keys the op does not declare) is never
    used: select() warns that it is stale and falls back to the built-in values."""
    _write(policy_dir, "sm_90", {"default": {"BLOCK": 1024, "ITEMS": 4}, "2B": {"BLOCK": 256, "TILE_X": 3}})
    _fake_device(monkeypatch, "sm_90")
    with pytest.warns(UserWarning, match="no longer accepts"):
        pol = policy.select(OP)
    assert pol.values == {"BLOCK": 512, "ITEMS": 2, "LOAD": "direct"}  # 1024 * 4 > 2048 was rejected
    assert "stale" in pol.source
    with pytest.warns(UserWarning, match="unknown keys"):
        pol = policy.select(OP, bucket="2B")
    assert "TILE_X" not in pol.values and "stale" in pol.source


@pytest.mark.parametrize("field,value,why", [("op", "scan", "holds op 'scan'"),
                                              ("target", "sm_80", "written for target 'sm_80'")])
def test_file_naming_another_op_or_target_is_ignored(fake_op, policy_dir, monkeypatch, field, value, why):
    _write(policy_dir, "sm_90", {"default": {"BLOCK": 256}})
    f = policy_dir / "sm_90" / f"{OP}.json"
    data = json.loads(f.read_text())
    data[field] = value
    f.write_text(json.dumps(data))
    _fake_device(monkeypatch, "sm_90")
    with pytest.warns(UserWarning, match=why):
        pol = policy.select(OP)
    assert pol.values["BLOCK"] == 512   # (the built-in value, not the file's)


@pytest.mark.parametrize("cfg,why", [({"LOAD": "bogus"}, "none of"), ({"LOAD": 3}, "none of"),
                                     ({"BLOCK": "512"}, "not an int"), ({"BLOCK": 512.0}, "not an int"),
                                     ({"num_warps": 3}, "num_warps=3"), ({"num_stages": 0}, "num_stages=0"),
                                     ({"BLOCK": 384}, "not a power of two")])
def test_ill_formed_file_config_rejected(fake_op, policy_dir, monkeypatch, cfg, why):
    """A file value of the wrong type, a string none of the op's choices, a num_warps / num_stages no
    kernel can take, or a value that is not a power of two where every choice is one (BLOCK: a tile):
    stale (the op's own ``valid`` need not know), and left out of a shortlist."""
    _write(policy_dir, "sm_90", {"default": cfg}, candidates={"default": [cfg, {"BLOCK": 256}]})
    _fake_device(monkeypatch, "sm_90")
    with pytest.warns(UserWarning, match=why):
        pol = policy.select(OP)
    assert "stale" in pol.source and pol.values == {"BLOCK": 512, "ITEMS": 2, "LOAD": "direct"}
    assert [c.values["BLOCK"] for c in policy.candidates(OP)] == [256]


def test_override_forces_and_restores(fake_op, monkeypatch):
    _fake_device(monkeypatch, policy.INTERPRETER_TARGET, "Triton interpreter (CPU)")
    with policy.override(OP, {"BLOCK": 256, "num_warps": 8}) as forced:
        assert policy.select(OP).values["BLOCK"] == 256 and policy.select(OP).num_warps == 8
        assert forced.source == "override"
        with policy.override(OP, {"ITEMS": 1}, bucket="2B"):  # a bucket-specific override wins
            assert policy.select(OP, bucket="2B").values["ITEMS"] == 1
        assert policy.select(OP, bucket="2B").values["BLOCK"] == 256
    assert policy.select(OP).values["BLOCK"] == 512
    with pytest.raises(ValueError, match="not valid"):
        with policy.override(OP, {"BLOCK": 1024, "ITEMS": 4}):
            pass
    with pytest.raises(KeyError, match="unknown keys"):
        with policy.override(OP, {"NOPE": 1}):
            pass


def test_register_rejects_invalid_fallback():
    with pytest.raises(ValueError, match="not valid"):
        policy.register(OP + "_bad", space={"BLOCK": [1]}, fallback={"BLOCK": 1, "num_warps": 4, "num_stages": 1},
                        valid=lambda c: c["BLOCK"] > 1)
    with pytest.raises(ValueError, match="num_warps"):
        policy.register(OP + "_bad", space={}, fallback={"BLOCK": 1, "num_stages": 1})
    assert OP + "_bad" not in policy.registered_ops()


def test_unknown_op():
    with pytest.raises(KeyError, match="no policy registered"):
        policy.select("no_such_op_anywhere")


def test_describe(fake_op, policy_dir, monkeypatch):
    _write(policy_dir, "sm_86", {"default": {"BLOCK": 256}})
    _fake_device(monkeypatch, "sm_90", "NVIDIA H100 80GB HBM3")
    text = policy.describe(OP)
    lines = text.splitlines()
    assert lines[0].startswith("device: NVIDIA H100 80GB HBM3 (target sm_90); files searched: nvidia-h100-80gb-hbm3/<op>.json, sm_90/<op>.json")
    assert len(lines) == 1 + 3  # one line per bucket
    assert f"{OP}[default]: BLOCK=256, ITEMS=2, LOAD=direct, num_warps=4, num_stages=1  <- policies/sm_86/{OP}.json[default] (fallback from sm_90)" in lines
    assert any(line.startswith(f"{OP}[8B]: BLOCK=256, ITEMS=1") for line in lines)


def test_describe_interpreter(fake_op, monkeypatch):
    _fake_device(monkeypatch, policy.INTERPRETER_TARGET, "Triton interpreter (CPU)")
    text = policy.describe(OP)
    assert "none (interpreter: fallbacks)" in text
    assert f"{OP}[default]: BLOCK=512, ITEMS=2, LOAD=direct, num_warps=4, num_stages=1  <- built-in fallback (interpreter)" in text


def test_enumerate_applies_valid(fake_op):
    configs = fake_op.enumerate()
    assert configs, "the space has valid points"
    for c in configs:
        assert c["BLOCK"] * c["ITEMS"] <= 2048 and c["num_warps"] * 32 <= c["BLOCK"]
        assert c["LOAD"] == "direct"  # fallback values fill keys outside the space
    full = 3 * 3 * 2 * 1
    expected = sum(1 for b in (256, 512, 1024) for i in (1, 2, 4) for w in (4, 8)
                   if b * i <= 2048 and w * 32 <= b)
    assert len(configs) == expected < full
    assert {"BLOCK": 1024, "ITEMS": 4} not in [{k: c[k] for k in ("BLOCK", "ITEMS")} for c in configs]


def test_candidates_file_shortlist_or_space(fake_op, policy_dir, monkeypatch):
    _fake_device(monkeypatch, "sm_90")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert len(policy.candidates(OP)) == len(fake_op.enumerate())
    _write(policy_dir, "sm_90", {"default": {"BLOCK": 256}},
           candidates={"default": [{"BLOCK": 256, "num_warps": 8}, {"BLOCK": 1024, "ITEMS": 1}]})
    policy.clear_cache()
    cands = policy.candidates(OP)
    assert [(c.values["BLOCK"], c.num_warps) for c in cands] == [(256, 8), (1024, 4)]
    assert cands[0].config().kwargs == {"BLOCK": 256, "ITEMS": 2, "LOAD": "direct"}


def test_large_space_is_drawn_not_listed(monkeypatch):
    # 10^10 combinations, half of them valid: listing them would never finish
    space = {f"K{i}": list(range(10)) for i in range(10)}
    p = policy.register("policy_test_huge", space={**space, "num_warps": [4], "num_stages": [1]},
                        fallback={**{k: 0 for k in space}, "EXTRA": 0, "num_warps": 4, "num_stages": 1},
                        valid=lambda c: (c["K0"] + c["K1"]) % 2 == 0, buckets=("default", "b2"),
                        bucket_fallbacks={"b2": {"EXTRA": 5}})
    try:
        assert p.raw_size() == 10 ** 10
        with pytest.raises(ValueError, match="policy_test_huge.*10000000000 combinations"):
            p.enumerate()
        assert 0.4e10 < p.estimate_size() < 0.6e10
        drawn = p.sample(300, seed=5)
        assert len(drawn) == 300 and len({json.dumps(c, sort_keys=True) for c in drawn}) == 300
        assert all(p.valid(c) for c in drawn) and p.sample(300, seed=5) == drawn
        nbs = p.neighbours(p.fallback)
        # K0 and K1 move by even steps only (4 values each), the other 8 keys to any of 9 values
        assert len(nbs) == 4 + 4 + 8 * 9
        assert all(sum(c[k] != p.fallback[k] for k in c) == 1 and p.valid(c) for c in nbs)
        # runtime autotuning without a shortlist: the fallback and a fixed sample, not the space
        _fake_device(monkeypatch, "sm_90")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cands = policy.candidates("policy_test_huge")
            cands_b2 = policy.candidates("policy_test_huge", bucket="b2")
        assert len(cands) == policy.CANDIDATE_SAMPLE and cands[0].values == {**{k: 0 for k in space}, "EXTRA": 0}
        assert len({json.dumps(c.as_dict(), sort_keys=True) for c in cands}) == len(cands)
        assert all(p.valid(c.as_dict()) for c in cands)
        # the bucket's fallback under every candidate of that bucket (its non-space keys)
        assert all(c.values["EXTRA"] == 5 for c in cands_b2) and all(c.values["EXTRA"] == 0 for c in cands)
    finally:
        policy._REGISTRY.pop("policy_test_huge", None)
        policy.clear_cache()


def test_rare_valid_configs_are_still_drawn():
    # 10^12 combinations of which 1 in 10^4 is valid: the draws adapt how long they search
    space = {f"K{i}": list(range(10)) for i in range(12)}
    p = policy.OpPolicy("policy_test_rare", {**space, "num_warps": [4], "num_stages": [1]},
                        {**{k: 0 for k in space}, "num_warps": 4, "num_stages": 1},
                        valid=lambda c: c["K0"] == c["K1"] == c["K2"] == c["K3"] == 0)
    got = p.sample(30, seed=4)
    assert len(got) == 30 and len({json.dumps(c, sort_keys=True) for c in got}) == 30
    assert all(p.valid(c) for c in got)


def test_register_refuses_malformed_spaces():
    with pytest.raises(ValueError, match="fallback must set B"):
        policy.register("policy_test_bad", space={"A": [1, 2], "B": [1], "num_warps": [4], "num_stages": [1]},
                        fallback={"A": 1, "num_warps": 4, "num_stages": 1})
    with pytest.raises(ValueError, match="values for A must be distinct"):
        policy.register("policy_test_bad", space={"A": [1, 1, 2], "num_warps": [4], "num_stages": [1]},
                        fallback={"A": 1, "num_warps": 4, "num_stages": 1})
    assert "policy_test_bad" not in policy._REGISTRY


def test_candidates_of_a_small_space_take_the_bucket_fallback(monkeypatch):
    p = policy.register("policy_test_small", space={"A": [1, 2, 3], "num_warps": [4], "num_stages": [1]},
                        fallback={"A": 1, "EXTRA": 0, "num_warps": 4, "num_stages": 1}, buckets=("default", "b2"),
                        bucket_fallbacks={"b2": {"EXTRA": 7}})
    try:
        _fake_device(monkeypatch, "sm_90")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c2 = policy.candidates("policy_test_small", bucket="b2")
        assert sorted(c.values["A"] for c in c2) == [1, 2, 3] and all(c.values["EXTRA"] == 7 for c in c2)
        assert len(p.enumerate()) == 3
    finally:
        policy._REGISTRY.pop("policy_test_small", None)
        policy.clear_cache()


def test_small_space_draw_lists_every_valid_config_once(fake_op):
    import random
    drawn = list(fake_op.draw(random.Random(3)))
    key = lambda c: json.dumps(c, sort_keys=True)  # noqa: E731
    assert sorted(map(key, drawn)) == sorted(map(key, fake_op.enumerate()))
    assert fake_op.estimate_size() == len(drawn)


def test_registered_spaces_are_searchable():
    # every op's space can be drawn from, and its fallback is a valid point of it
    import tritoncub.device  # noqa: F401  (registers every op's policy)
    for op, p in policy._REGISTRY.items():
        fb = p.fallback
        assert p.valid is None or p.valid(fb), op
        assert set(p.space) <= set(fb), op          # (a drawn config never adds a key to it)
        got = p.sample(20, seed=1)
        assert len(got) == min(20, p.estimate_size()) and all(p.valid is None or p.valid(c) for c in got), op
        assert all(set(c) == set(fb) for c in got), op


def test_policy_object():
    p = policy.Policy("x", {"A": 1}, num_warps=8, num_stages=3)
    assert p["A"] == 1 and p["num_warps"] == 8 and p.get("B", 5) == 5
    assert p.launch_kwargs() == {"A": 1, "num_warps": 8, "num_stages": 3}


def test_device_slugs():
    assert policy.device_slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"


def _shipped_configs():
    import tritoncub  # noqa: F401  (registers every op)
    for path in sorted(policy.POLICY_DIR.glob("*/*.json")):
        data = json.loads(path.read_text())
        for section in ("tuned", "candidates"):
            for bucket, entry in data.get(section, {}).items():
                for i, cfg in enumerate(entry if isinstance(entry, list) else [entry]):
                    yield pytest.param(data["op"], bucket, cfg, id=f"{path.parent.name}/{path.stem}/{section}/{bucket}/{i}")


@pytest.mark.parametrize("op,bucket,cfg", list(_shipped_configs()))
def test_shipped_policy_configs_are_accepted(op, bucket, cfg):
    """Every config in the policy files shipped with the package declares only the op's keys and
    passes its ``valid`` predicate (select() would otherwise drop it as stale)."""
    p = policy.op_policy(op)
    assert bucket in p.buckets, f"{op}: bucket {bucket!r} not declared ({p.buckets})"
    unknown = set(cfg) - set(p.space) - set(p.fallback)
    assert not unknown, f"{op}[{bucket}]: unknown keys {sorted(unknown)}"
    full = {**p.fallback_for(bucket), **cfg}
    assert p.valid is None or p.valid(full), f"{op}[{bucket}]: config rejected by the op: {full}"
    assert policy._ill_formed(p, full) is None, f"{op}[{bucket}]: {policy._ill_formed(p, full)}"


@pytest.mark.parametrize("op,bucket,cfg", [("adjacent_difference", "default", {"TILE": -4}),
                                           ("adjacent_difference", "default", {"TILE": 1000}),
                                           ("histogram", "default", {"TILE": 3000}),
                                           ("histogram", "default", {"SMEM_COPIES": 3}),
                                           ("topk", "rows", {"ROW_MAX_BLOCK": 0}),
                                           ("topk", "long", {"CAND_K_MAX": 24})])
def test_file_values_a_kernel_cannot_take_fall_back(op, bucket, cfg, policy_dir, monkeypatch):
    # numbers outside the space are allowed in files, but not ones the kernels cannot run (a tile that
    # is not a power of two): the op's valid refuses them, so the op uses its fallback (with a warning),
    # never a wrong result or a compile error on every call
    import tritoncub  # noqa: F401  (registers the ops)
    p = policy.op_policy(op)
    _write(policy_dir, "sm_90", {bucket: {**p.fallback_for(bucket), **cfg}}, op=op)
    _fake_device(monkeypatch, "sm_90")
    with pytest.warns(UserWarning, match="no longer accepts"):
        pol = policy.select(op, bucket=bucket)
    assert pol.source.startswith("built-in fallback") and pol.as_dict() == p.fallback_for(bucket)


def test_nested_traces_each_see_their_own_calls(fake_op, monkeypatch):
    # two traces' lists compare equal while they hold the same calls: the inner one's exit must remove
    # the inner list, not the outer one (which then raised on its own exit and left a list recording
    # every later select for good)
    _fake_device(monkeypatch, policy.INTERPRETER_TARGET, "Triton interpreter (CPU)")
    with policy.trace() as outer:
        with policy.trace() as inner:
            policy.select(OP)
        policy.select(OP, bucket="8B")
    assert inner == [(OP, "default")] and outer == [(OP, "default"), (OP, "8B")]
    assert not policy._TRACES
