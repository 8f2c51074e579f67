"""Validation helpers of tritoncub._utils: the errors users see for bad input."""
import pytest
import torch

from helpers import DEVICE
from tritoncub import _utils


def test_check_tensor_rejects_non_tensor_and_dtype():
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        _utils.check_tensor([1, 2], "x")
    with pytest.raises(TypeError, match="supported dtypes are float32"):
        _utils.check_tensor(torch.zeros(3, dtype=torch.int32, device=DEVICE), "x", (torch.float32,))
    with pytest.raises(ValueError, match="must have 2 dimension"):
        _utils.check_tensor(torch.zeros(3, device=DEVICE), "x", ndim=2)


def test_cpu_tensor_without_interpreter(monkeypatch):
    monkeypatch.setattr(_utils, "_INTERPRETER", False)
    with pytest.raises(ValueError, match="TRITON_INTERPRET=1"):
        _utils.check_device(torch.zeros(3), "keys")


def test_overlap_detection():
    base = torch.zeros(16)
    with pytest.raises(ValueError, match="overlap"):
        _utils.check_no_overlap(base[:8], base[4:12], "in", "out")
    _utils.check_no_overlap(base[:8], base[8:], "in", "out")
    _utils.check_no_overlap(base, torch.zeros(16), "in", "out")


@pytest.mark.parametrize("n,expected", [(0, 1), (1, 1), (2, 2), (3, 4), (1000, 1024), (1024, 1024)])
def test_next_power_of_2(n, expected):
    assert _utils.next_power_of_2(n) == expected


def test_cdiv():
    assert [_utils.cdiv(a, 4) for a in (0, 1, 4, 5)] == [0, 1, 1, 2]
