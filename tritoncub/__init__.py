"""tritoncub: NVIDIA CUB's layered GPU primitives written as Triton programs.

Layers (CUB's): ``tritoncub.thread`` holds element-wise ``@triton.jit`` helpers (the radix key
traits), ``tritoncub.warp`` and ``tritoncub.block`` the tile primitives, ``tritoncub.agent`` the
per-program tile loops (grid mapping, look-back), ``tritoncub.device`` the device-wide ops as
Python functions, each also registered as a torch operator (``torch.ops.tritoncub.*``) with a fake
implementation so ``torch.compile`` can trace it.
``tritoncub.policy`` chooses per-GPU tuning (``tritoncub.policy.describe()`` says what and why).
Bad arguments raise :class:`InputValueError` / :class:`InputTypeError`: ``ValueError`` / ``TypeError``
that are also ``RuntimeError``, the class torch's ops raise for the same mistakes.
"""
import importlib
import pkgutil

from . import _triton_compat  # noqa: F401  (before any kernel is compiled; see the module)
from . import policy  # noqa: F401
from . import device as _device_pkg

__version__ = "0.1.0"

# Import every device op module so that its torch operators are registered.
for _mod in sorted(m.name for m in pkgutil.iter_modules(_device_pkg.__path__)):
    if not _mod.startswith("_"):
        importlib.import_module(f"{__name__}.device.{_mod}")

from ._utils import InputTypeError, InputValueError  # noqa: E402,F401
from .policy import describe  # noqa: E402,F401
