"""Shared launcher-side helpers: where a kernel may run, input validation, small integer maths.

Everything here is plain Python run by the launchers before a kernel starts. Errors are raised as
:class:`InputTypeError` (wrong dtype or type) or :class:`InputValueError` (wrong device, shape, range,
aliasing) with a message that names the argument and what was expected, so bad input never reaches
Triton.
"""
from __future__ import annotations

import functools
import numbers
import operator
import os
import threading
from typing import Iterable, Sequence

import torch
import triton.language as tl


class InputValueError(ValueError, RuntimeError):
    """A bad argument value (device, shape, range, aliasing) given to a tritoncub op. A ``ValueError``,
    and a ``RuntimeError`` as well: torch raises ``RuntimeError`` for the same mistakes, so code
    written against torch's ops (``except RuntimeError``) catches ours too."""


class InputTypeError(TypeError, RuntimeError):
    """A bad argument type or dtype given to a tritoncub op; a ``TypeError`` and, as torch's errors
    for unsupported dtypes are, a ``RuntimeError``."""


# dtype families, in torch's names. Triton has no uint16/uint32/uint64 *tensors* in torch before 2.3
# and no arithmetic on them in many torch ops, but it loads and stores them fine.
INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64)
UINT_DTYPES = tuple(
    d for d in (torch.uint8, getattr(torch, "uint16", None), getattr(torch, "uint32", None),
                getattr(torch, "uint64", None)) if d is not None
)
FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
ALL_NUMERIC_DTYPES = INT_DTYPES + UINT_DTYPES + FLOAT_DTYPES
#: complex dtypes the ops that take complex tensors accept (through their (real, imaginary) pairs)
COMPLEX_DTYPES = (torch.complex64, torch.complex128)


# Triton picks the interpreter or the compiler when a kernel is decorated, i.e. when tritoncub is
# imported, so the setting is read once then (launchers ask for it on every call).
_INTERPRETER = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0", "false", "False")


def interpreter_active() -> bool:
    """True when Triton runs kernels on the CPU through its interpreter (``TRITON_INTERPRET=1`` when
    tritoncub was imported)."""
    return _INTERPRETER


def smem_atomics_ok(device: torch.device) -> bool:
    """Whether kernels may use the shared-memory atomics of ``tritoncub.block.radix_rank`` (inline
    PTX through Gluon): compiled NVIDIA kernels on sm_80 and newer only."""
    if _INTERPRETER or device.type != "cuda" or torch.version.hip is not None:
        return False
    return _capability(device.index if device.index is not None else torch.cuda.current_device())[0] >= 8


def compile_target_is_cuda() -> bool:
    """In the compile-check mode: whether kernels are built for an NVIDIA target."""
    return os.environ.get("TRITONCUB_COMPILE_TARGET", "cuda").startswith("cuda")


def compile_target_capability() -> int:
    """In the compile-check mode: the NVIDIA target's compute capability as one number (``cuda:90``
    and ``cuda:90a`` -> 90; the default target, ``cuda:90``, when none is set), 0 for other targets."""
    backend, _, arch = os.environ.get("TRITONCUB_COMPILE_TARGET", "cuda:90").partition(":")
    digits = "".join(ch for ch in arch if ch.isdigit())
    return (int(digits) if digits else 90) if backend == "cuda" else 0


def inline_ptx_ok(device: torch.device) -> bool:
    """Whether a kernel for ``device`` may carry this package's inline PTX: :func:`smem_atomics_ok` on a
    GPU; in the compile-check mode, whether the kernels are built for an NVIDIA target."""
    if compile_only():
        return compile_target_is_cuda()
    return smem_atomics_ok(device)


def maxnreg_kwargs(cap: int) -> dict:
    """Launch keyword arguments for a register cap per thread of ``cap`` (0: none): ``maxnreg`` is an
    NVIDIA option (Triton's AMD backend refuses it; the interpreter ignores it)."""
    if not cap or torch.version.hip is not None or (compile_only() and not compile_target_is_cuda()):
        return {}
    return {"maxnreg": cap}


@functools.lru_cache(maxsize=None)
def _smem_optin(index: int) -> int:
    return getattr(torch.cuda.get_device_properties(index), "shared_memory_per_block_optin", 48 * 1024)


def smem_per_block(device: torch.device) -> int:
    """Shared memory one program may use on ``device`` (bytes, the opt-in maximum; asked once per
    device). In the compile-check mode (no GPU): the sm_90 limit."""
    if device.type != "cuda":
        return 227 * 1024
    return _smem_optin(device.index if device.index is not None else torch.cuda.current_device())


@functools.lru_cache(maxsize=None)
def _capability(index: int):
    """(major, minor) of CUDA device ``index``, asked once per process."""
    return torch.cuda.get_device_capability(index)


def compile_only() -> bool:
    """True in the test suite's compile-check mode (``TRITONCUB_COMPILE_ONLY=1``, see
    ``tests/compile_check.py``): kernels are compiled for a GPU target on a machine without one and
    not launched, so CPU tensors are accepted as stand-ins for GPU tensors."""
    return os.environ.get("TRITONCUB_COMPILE_ONLY", "0") not in ("", "0")


def dtype_names(dtypes: Iterable[torch.dtype]) -> str:
    return ", ".join(str(d).replace("torch.", "") for d in dtypes)


def check_tensor(x, name: str, dtypes: Sequence[torch.dtype] | None = None, *, ndim: int | None = None,
                 device: torch.device | None = None) -> None:
    """Validate one tensor argument of a device op.

    Checks that ``x`` is a tensor, that its dtype is one of ``dtypes`` (when given), its dimension
    count (when given), and that it lives where a Triton kernel can run: on a CUDA/HIP device, or on
    the CPU while the interpreter is active. ``device``, when given, must match ``x.device``. A view
    with torch's lazy negation bit (``x.is_neg()``) is refused: its memory holds the un-negated values.
    """
    if not isinstance(x, torch.Tensor):
        raise InputTypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if dtypes is not None and x.dtype not in dtypes:
        raise InputTypeError(f"{name} has dtype {str(x.dtype).replace('torch.', '')}; supported dtypes are "
                             f"{dtype_names(dtypes)}")
    if ndim is not None and x.dim() != ndim:
        raise InputValueError(f"{name} must have {ndim} dimension(s), got shape {tuple(x.shape)}")
    check_device(x, name)
    if device is not None and x.device != torch.device(device):
        raise InputValueError(f"{name} is on {x.device} but the other inputs are on {device}")
    if x.is_neg():   # (kernels read the memory, which holds the values before the lazy negation)
        raise InputValueError(f"{name} is a lazily negated view (e.g. the .imag of a conjugated complex tensor); "
                              f"pass {name}.resolve_neg()")


def check_device(x: torch.Tensor, name: str = "input") -> None:
    """Raise a clear error when ``x`` is somewhere no kernel of ours can run."""
    if x.device.type == "cuda":
        return
    if x.device.type == "cpu":
        if interpreter_active() or compile_only():
            return
        raise InputValueError(
            f"{name} is a CPU tensor, but tritoncub kernels need a GPU tensor; to run on the CPU "
            f"set TRITON_INTERPRET=1 before importing triton (slow, for testing only)")
    if x.device.type == "meta":
        if getattr(_FAKE, "depth", 0):   # (an operator's fake implementation: shapes only, no kernel runs)
            return
        raise InputValueError(
            f"{name} is on meta: a meta tensor holds no data for a kernel to read (the operators in "
            f"torch.ops.tritoncub take meta tensors and give the result's shape; the device functions need data)")
    raise InputValueError(f"{name} is on device {x.device}, which Triton cannot target")


def no_host_data(*tensors) -> bool:
    """Whether ``tensors`` hold no data the host may read: tensor subclasses or a dispatch mode (a
    backward traced by torch.compile: fake tensors), or meta tensors. Backward formulas that look at
    their data on the host take a form without the read-back then."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode
    return (any(type(t) is not torch.Tensor or t.device.type == "meta" for t in tensors)
            or _get_current_dispatch_mode() is not None)


#: per thread: how many operators' fake implementations are running (see :func:`fake_impl`)
_FAKE = threading.local()


def fake_impl(fn):
    """``fn``, an operator's fake implementation, marked so that :func:`check_device` accepts meta
    tensors while it runs (elsewhere a meta tensor reaching a launcher would give the kernel null
    pointers)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        _FAKE.depth = getattr(_FAKE, "depth", 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            _FAKE.depth -= 1
    return run


def check_same_device(*named: tuple[str, torch.Tensor]) -> None:
    first_name, first = named[0]
    for name, t in named[1:]:
        if t.device != first.device:
            raise InputValueError(f"{name} is on {t.device} but {first_name} is on {first.device}")


def check_no_overlap(a: torch.Tensor, b: torch.Tensor, a_name: str, b_name: str) -> None:
    """Raise when two tensors share any storage bytes (an output must not alias an input)."""
    if a.numel() == 0 or b.numel() == 0:
        return
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return
    def span(t: torch.Tensor) -> tuple[int, int]:
        start = t.data_ptr() + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()) if stride < 0) \
            * t.element_size()
        extent = sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride())) + 1
        return start, start + extent * t.element_size()

    a0, a1 = span(a)
    b0, b1 = span(b)
    if a0 < b1 and b0 < a1:
        raise InputValueError(f"{a_name} and {b_name} overlap in memory; pass separate buffers")


def capturing(device: torch.device) -> bool:
    """Whether work queued now on ``device``'s current stream is being captured into a CUDA graph
    (then nothing may wait for the GPU or copy from pageable host memory)."""
    if device.type != "cuda":
        return False
    if device.index is None or device.index == torch._C._cuda_getDevice():
        return torch._C._cuda_isCurrentStreamCapturing()   # (is_current_stream_capturing without its Python layer)
    with torch.cuda.device(device):
        return torch._C._cuda_isCurrentStreamCapturing()


def refuse_capture(device: torch.device, op: str, instead: str = "") -> None:
    """Raise a clear error, before anything is queued, when ``op`` (which must read a count back to the
    host: its output's size depends on the data, as torch's own op) is called during a CUDA graph
    capture. Without it the read-back would break the capture with a CUDA error, or wait forever for
    a kernel the capture only records."""
    if capturing(device):
        raise RuntimeError(
            f"{op} cannot be captured in a CUDA graph: its output size depends on the data, so it reads a "
            f"count back to the host (as torch's op does); call it outside the capture"
            + (f", or {instead}" if instead else ""))


def persistent(device: torch.device, make):
    """``make()``'s tensors, for a cache that keeps them across calls (a ticket counter, a table of
    constants): made by a helper thread on ``device``'s default stream and waited for, so that they
    come from the ordinary allocator even while this thread allocates into a CUDA graph's private
    pool (torch.compile's CUDA-graph mode warms a function up so, and refuses pool memory that
    outlives the call). Never called during a capture (callers then allocate per call). Its memory
    belongs to the default stream while kernels on others use it: a cache drops such tensors through
    :func:`drop_persistent`, never by letting go of them alone."""
    if device.type != "cuda":
        return make()
    box: list = []

    def run():
        try:
            with torch.cuda.device(device):
                out = make()
                torch.cuda.current_stream().synchronize()   # (its contents written before any use)
            box.append(out)
        except BaseException as e:   # (re-raised by the caller's thread)
            box.append(e)

    t = threading.Thread(target=run, name="tritoncub-alloc")
    t.start()
    t.join()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def drop_persistent(cache: dict) -> None:
    """Empty a cache of :func:`persistent` tensors (values: tensors, tuples of them, or None): waits
    for every GPU they live on first (the allocator may hand their memory to the default stream at
    once, while a kernel on another stream still reads it). Caches overflow rarely; never called
    during a capture."""
    devices = set()
    for v in cache.values():
        for t in (v if isinstance(v, tuple) else (v,)):
            if isinstance(t, torch.Tensor) and t.is_cuda:
                devices.add(t.device)
    for d in devices:
        torch.cuda.synchronize(d)
    cache.clear()


#: what graphs captured by this process read at every replay and no cache may free: pinned host sources
#: of device constants made during a capture, and cached tensors a capture used
KEPT_FOR_GRAPHS: list = []


def cached_persistent(cache: dict, key, device: torch.device, make, limit: int = 256):
    """``make()``'s tensors for ``key``, kept in ``cache`` from the key's second call on (made then by
    :func:`persistent`): a key seen once costs what ``make()`` costs (no helper thread for sizes or
    constants used once), a repeated one nothing. During a CUDA graph capture a cached value is kept
    alive for the graph (:data:`KEPT_FOR_GRAPHS`) and a missing one made fresh (the graph's), not
    cached."""
    t = cache.get(key, cache)   # (``cache`` itself: never seen)
    if t is not None and t is not cache:
        if capturing(device):
            KEPT_FOR_GRAPHS.append(t)
        return t
    if capturing(device):
        return make()
    if len(cache) >= limit:
        drop_persistent(cache)
    if t is cache:   # first call with this key: remembered as seen
        cache[key] = None
        return make()
    t = cache[key] = persistent(device, make)
    return t


def device_constant(values, dtype: torch.dtype, device: torch.device, cache: dict | None = None,
                    key=None) -> torch.Tensor:
    """A device tensor holding ``values`` (a list), kept in ``cache[key]`` when given (see
    :func:`cached_persistent`). During a CUDA graph capture (where a copy from pageable memory is
    refused) a new one is copied from pinned memory kept alive for the graph's replays."""
    def make():
        if capturing(device):
            src = torch.tensor(values, dtype=dtype).pin_memory()
            KEPT_FOR_GRAPHS.append(src)
            return src.to(device, non_blocking=True)
        return torch.tensor(values, dtype=dtype, device=device)
    if cache is None:
        return make()
    return cached_persistent(cache, key, device, make)


#: the integer dtype of each item size: raw-bits views of keys and values (sorts move bits, not values)
INT_OF_SIZE = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}

#: the Triton element type of each torch dtype a kernel takes as a ``tl.constexpr`` (bool storage is read
#: as uint8 and has no entry)
TL_DTYPE = {torch.int8: tl.int8, torch.int16: tl.int16, torch.int32: tl.int32, torch.int64: tl.int64,
            torch.uint8: tl.uint8, torch.float16: tl.float16, torch.bfloat16: tl.bfloat16,
            torch.float32: tl.float32, torch.float64: tl.float64}
for _d, _t in ((getattr(torch, "uint16", None), tl.uint16), (getattr(torch, "uint32", None), tl.uint32),
               (getattr(torch, "uint64", None), tl.uint64)):
    if _d is not None:
        TL_DTYPE[_d] = _t


def count_dtype(n: int, requested: torch.dtype | None = None, name: str = "counter_dtype") -> torch.dtype:
    """The dtype of counts of up to ``n`` items: ``requested`` (int32 or int64) when given, else int32
    (CUB's counters) while ``n < 2^31``, int64 from there on (a count that could wrap never does)."""
    if requested is None:
        return torch.int32 if n < 2 ** 31 else torch.int64
    if requested not in (torch.int32, torch.int64):
        raise InputTypeError(f"{name} must be int32 or int64, got {requested}")
    return requested


def check_flag(value, name: str) -> None:
    """A flag argument (``descending``, ``largest``, ``stable``...) must be a bool (torch's rule: an int,
    None or a string is refused, not read as true or false)."""
    if not isinstance(value, bool):
        t = type(value)
        raise InputTypeError(f"{name} must be a bool, got "
                             f"{t.__name__ if t.__module__ == 'builtins' else t.__module__ + '.' + t.__name__}")


def check_init_value(v, dtype: torch.dtype, name: str = "init") -> None:
    """A Python number as an initial value of ``dtype``: refused (:class:`InputValueError`) when the dtype
    cannot hold it -- out of range, or a fraction (or NaN, inf) for an integer dtype -- instead of
    wrapped or truncated. A bool dtype takes any number (``v != 0``). A one-item tensor is checked by
    its value on the host; on a GPU (whose value is not read here: no sync) by its dtype, which
    ``dtype`` must hold without loss (``torch.promote_types``). Anything else is refused."""
    if isinstance(v, torch.Tensor):
        if v.numel() != 1:
            raise InputValueError(f"{name} must be a number or a one-item tensor, got shape {tuple(v.shape)}")
        if dtype == torch.bool:
            return
        if v.device.type != "cpu":
            if torch.promote_types(v.dtype, dtype) != dtype:
                raise InputTypeError(f"{name} of dtype {str(v.dtype).replace('torch.', '')} does not fit "
                                     f"{str(dtype).replace('torch.', '')} without loss: pass a number or a tensor "
                                     "of a dtype it holds")
            return
        v = v.item()
    if not isinstance(v, numbers.Number):
        raise InputTypeError(f"{name} must be a number or a one-item tensor, got {type(v).__name__}")
    if dtype == torch.bool or isinstance(v, bool):
        return
    if isinstance(v, complex) and not dtype.is_complex:
        raise InputTypeError(f"{name} {v!r} is complex; the accumulator is {str(dtype).replace('torch.', '')}")
    if not dtype.is_floating_point and not dtype.is_complex and isinstance(v, float) and not v.is_integer():
        raise InputValueError(f"{name} {v!r} is not an integer; the accumulator is {str(dtype).replace('torch.', '')}")
    try:
        held = torch.tensor(v, dtype=dtype)
    except (RuntimeError, OverflowError) as e:
        raise InputValueError(f"{name} {v!r} does not fit {str(dtype).replace('torch.', '')}: {e}") from None
    if not dtype.is_floating_point and not dtype.is_complex and held.item() != v:
        # (torch.tensor wraps some integers without complaint, e.g. -1 into uint8 as 255)
        raise InputValueError(f"{name} {v!r} does not fit {str(dtype).replace('torch.', '')}: it would become "
                              f"{held.item()}")
    if dtype.is_floating_point and not isinstance(v, complex) and abs(v) < float("inf") and held.isinf():
        # (torch.tensor rounds a finite number past the dtype's range to inf without complaint)
        raise InputValueError(f"{name} {v!r} does not fit {str(dtype).replace('torch.', '')}: it would become "
                              f"{held.item()}")


def check_jit_function(fn, name: str, num_args: int | None = None, takes: str = "") -> None:
    """A user function (combine, predicate, difference, transform) must be a ``@triton.jit`` function
    (an interpreted one under the interpreter) that takes ``num_args`` positional arguments
    (``takes`` says which, for the message): a wrong one would otherwise fail inside Triton's compiler
    with a message about our kernel, not the user's function."""
    from triton.runtime.jit import JITFunction
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover
        InterpretedFunction = JITFunction
    if not isinstance(fn, (JITFunction, InterpretedFunction)):
        raise InputTypeError(f"{name} must be a @triton.jit function, got {type(fn).__name__}")
    if num_args is None:
        return
    import inspect
    try:
        params = list(inspect.signature(getattr(fn, "fn", fn)).parameters.values())
    except (TypeError, ValueError):  # pragma: no cover  (no signature to read: let Triton judge)
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in positional)
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    if not required <= num_args <= (len(positional) if not varargs else num_args):
        got = f"{required}" if required == len(positional) or varargs else f"{required} to {len(positional)}"
        raise InputTypeError(f"{name} must take {num_args} positional argument{'s' if num_args != 1 else ''}"
                             f"{' (' + takes + ')' if takes else ''}; {getattr(fn, '__name__', name)} takes {got}")


def as_int(v, name: str) -> int:
    """An integer argument as a Python int: ints and what torch also takes as one (numpy integers, a
    0-d integer tensor: anything with ``__index__``); a bool, float or anything else is a TypeError."""
    if isinstance(v, bool) or (isinstance(v, torch.Tensor) and v.dtype == torch.bool):
        raise InputTypeError(f"{name} must be an int, got {type(v).__name__}")
    try:
        return operator.index(v)
    except TypeError:
        raise InputTypeError(f"{name} must be an int, got {type(v).__name__}") from None


def wrap_dim(dim, ndim: int) -> int:
    """``dim`` made non-negative by torch's rule (``[-max(ndim, 1), max(ndim, 1))``; a 0-d tensor takes 0
    and -1), else torch's IndexError; a non-int ``dim`` is a TypeError (see :func:`as_int`)."""
    dim = as_int(dim, "dim")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


#: the largest grid size on axes 1 and 2 of a CUDA launch (axis 0 takes 2^31 - 1)
MAX_GRID_Y = 65535


def grid_y_batches(n: int):
    """``(start, stop)`` batches of ``n`` items (segments, rows) for launches that put them on grid
    axis 1, at most :data:`MAX_GRID_Y` per launch."""
    step = MAX_GRID_Y
    for start in range(0, n, step):
        yield start, min(n, start + step)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def is_pow2(v) -> bool:
    """``v`` is a positive int power of two (not a bool)."""
    return isinstance(v, int) and not isinstance(v, bool) and v > 0 and v & (v - 1) == 0


def next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def num_sms(device: torch.device) -> int:
    """Multiprocessor count of a GPU (a fixed small number under the interpreter), asked once per GPU
    (``get_device_properties`` costs microseconds of host time, and launchers ask per call)."""
    if device.type == "cuda":
        return _sm_count(device.index if device.index is not None else torch.cuda.current_device())
    return 4


@functools.lru_cache(maxsize=None)
def _sm_count(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


#: the value of a :class:`Mailbox` no kernel has written yet
MAILBOX_EMPTY = -(1 << 63)


class Mailbox:
    """One int64 word that a kernel stores a result to (a count, say) and the host polls.

    On a GPU the word is pinned host memory, which unified addressing maps into the GPU's address
    space: ``tensor`` (a CPU tensor) is a valid kernel pointer argument, and the kernel's store lands
    in host memory without a copy. :meth:`read` returns as soon as the store has arrived, while work
    queued after the kernel keeps the GPU busy: the host's reaction to the sync overlaps GPU work,
    and no copy, event or stream call is issued (each costs the host microseconds). Under the
    interpreter (CPU tensors, kernels run as they are launched) the word is ordinary memory.
    Mailboxes are reused per thread once read. Use: ``box = Mailbox.take(device)``, pass
    ``box.tensor`` to the kernel, ``value = box.read()``."""
    __slots__ = ("tensor", "word", "device", "free")

    @staticmethod
    def take(device: torch.device) -> "Mailbox":
        free = _MAILBOXES.__dict__.setdefault(device, [])
        box = free.pop() if free else Mailbox(device, free)
        box.word[0] = MAILBOX_EMPTY
        return box

    def __init__(self, device: torch.device, free: list):
        self.tensor = torch.empty(1, dtype=torch.int64, pin_memory=device.type == "cuda")
        self.word = self.tensor.numpy()
        self.device, self.free = device, free
        # never freed: a mailbox dropped unread (an exception between launch and read) may still get
        # its kernel's store, which must not land in pinned memory handed to anything else
        _EVERY_MAILBOX.append(self)

    def read(self) -> int:
        """The value the kernel stored: waits (polling) until it has arrived. Raises if the device's
        current stream has finished without a store (a kernel that never wrote)."""
        word = self.word
        if word[0] == MAILBOX_EMPTY and self.device.type != "cuda":   # (kernels ran at launch)
            raise RuntimeError("internal: no kernel stored to the mailbox")
        spins = 0
        while word[0] == MAILBOX_EMPTY:
            spins += 1
            if spins % 1024 == 0 and torch.cuda.current_stream(self.device).query() and word[0] == MAILBOX_EMPTY:
                raise RuntimeError("internal: the stream finished but no kernel stored to the mailbox")
        value = int(word[0])
        self.free.append(self)
        return value

    def poll(self) -> int | None:
        """The stored value if it has arrived (the mailbox is then done, as after :meth:`read`), else
        None without waiting."""
        value = int(self.word[0])
        if value == MAILBOX_EMPTY:
            return None
        self.free.append(self)
        return value

    def set(self, value: int) -> None:
        """Store ``value`` from the host (when no kernel runs: an empty problem)."""
        self.word[0] = value


#: per thread: mailboxes already read, by device
_MAILBOXES = threading.local()
#: every mailbox made (see :meth:`Mailbox.__init__`)
_EVERY_MAILBOX: list = []
