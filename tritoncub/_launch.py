"""Kernel launches with less host work per call than ``kernel[grid](...)``.

``kernel[grid](*args, **kwargs)`` costs 11-26 us of host time per launch on an H100 host (an empty
kernel of 1 / 16 arguments: 10.8-14.7 / 20.3-26.3 us in bench/results/logs/host_overhead-*.log; Triton
3.6: binding the arguments, computing the specialisation key, looking the binary up, launch
metadata), several times the GPU time of a small kernel. :func:`launch` keeps, per kernel, a table
from a cheap key — the launch's keyword arguments (constexprs, ``num_warps``, ``num_stages``) and,
for each positional argument, exactly the properties Triton specialises on (a tensor's dtype and
16-byte alignment; an int's width class, whether it is 1 and whether it is divisible by 16; the
Python type of anything else) — to the compiled kernel. The first launch of a key goes through
Triton's own path (which compiles and launches); later launches with the same key call the compiled
kernel's launcher directly, on the current stream (its C function itself when the kernel needs no
scratch memory). Every launch goes to the GPU of the first tensor argument: when that is not the
current device, it becomes the current one for the launch (Triton launches on the current device).

The direct path is used only on a GPU with no launch hooks installed; under the interpreter, in
the compile-check mode, or when a profiler hook is set, every launch goes through ``kernel[grid]``.
Only positional arguments may be runtime values; keyword arguments must be compile-time ones
(constexprs and launch options), as in every launcher of this package.
"""
from __future__ import annotations

import contextlib
import numbers
import threading

import torch

from triton.language.core import constexpr as _CONSTEXPR
try:
    from triton.runtime.jit import JITCallable as _JIT_CALLABLE
except ImportError:   # (Triton before JITCallable: jit functions are JITFunctions)
    from triton.runtime.jit import JITFunction as _JIT_CALLABLE

_TABLES: dict = {}
_BY_TYPE = frozenset((bool, float, type(None)))
#: specialisations kept per kernel
MAX_ENTRIES = 256
_I32_MIN, _I32_MAX, _I64_MAX = -(1 << 31), (1 << 31) - 1, (1 << 63) - 1


def _spec(a):
    """The properties of one runtime argument that Triton specialises a kernel on."""
    if isinstance(a, torch.Tensor):
        return (a.dtype, a.data_ptr() & 15 == 0)
    if a.__class__ is int:
        if _I32_MIN <= a <= _I32_MAX:
            return (0, a == 1, a & 15 == 0)
        return (1 if a <= _I64_MAX else 2, a & 15 == 0)
    if isinstance(a, tuple):
        return tuple(_spec(b) for b in a)
    if a.__class__ is not bool and isinstance(a, numbers.Integral):   # a numpy integer: its value matters
        return (a.__class__,) + _spec(int(a))
    if a.__class__ in _BY_TYPE:   # bool, float, None: Triton specialises on their type alone
        return a.__class__
    if hasattr(a, "data_ptr"):   # a pointer that is not a torch tensor (triton.reinterpret's wrapper...)
        return (a.__class__, a.dtype, a.data_ptr() & 15 == 0)
    if isinstance(a, _JIT_CALLABLE):   # a jit function: a constexpr, compiled in (hash: its source)
        return (a.__class__, a)
    if isinstance(a, _CONSTEXPR):   # a tl.constexpr: its value is compiled in
        return (a.__class__, a.value)
    return a.__class__


_DIRECT: list = []


def _direct_ok() -> bool:
    """A real GPU, no interpreter or compile-check mode (decided once per process), no launch hooks, and
    neither Triton's debug mode nor an instrumentation mode on (Triton builds other kernels for those at
    each launch; the table would keep launching the kernels built before they were set)."""
    if not _DIRECT:
        from ._utils import compile_only, interpreter_active
        _DIRECT.append(torch.cuda.is_available() and not interpreter_active() and not compile_only())
    if not _DIRECT[0]:
        return False
    from triton import knobs
    if knobs.runtime.debug or knobs.compilation.instrumentation_mode:
        return False
    return _no_hook(knobs.runtime.launch_enter_hook) and _no_hook(knobs.runtime.launch_exit_hook)


def _no_hook(h) -> bool:
    """Triton 3.6 keeps launch hooks in a ``HookChain`` (empty: no hook); older ones a callable or None."""
    return h is None or (hasattr(h, "calls") and not h.calls)


class _Entry:
    __slots__ = ("kernel", "tail", "prefix")

    def __init__(self, kernel, tail):
        self.kernel = kernel
        self.tail = tail
        self.prefix = _launcher_prefix(kernel)


def _launcher_prefix(k):
    """``(launch, args)`` to call the compiled kernel's C launcher directly as
    ``launch(gx, gy, gz, stream, *args, *kernel_args)``, skipping the Python wrapper around it
    (Triton 3.6's ``CudaLauncher.__call__``: 5-15 us per launch on an H100 host), when the kernel needs
    no global or profile scratch memory (the wrapper's only other work); None otherwise."""
    run = k.run
    c_launch = getattr(run, "launch", None)
    if (c_launch is None or getattr(run, "global_scratch_size", 1) != 0
            or getattr(run, "profile_scratch_size", 1) != 0
            or not hasattr(run, "launch_cooperative_grid") or not hasattr(run, "launch_pdl")):
        return None
    return c_launch, (k.function, run.launch_cooperative_grid, run.launch_pdl, None, None, k.packed_metadata,
                      None, None, None)


#: per kernel: the number of leading parameters that are runtime values (not constexprs)
_RUNTIME_PARAMS: dict = {}


def _key(kernel, device, args, kwargs):
    n_rt = _RUNTIME_PARAMS.get(kernel)
    if n_rt is None:
        n_rt = 0
        for p in kernel.params:
            if p.is_constexpr:
                break
            n_rt += 1
        _RUNTIME_PARAMS[kernel] = n_rt
    if len(args) <= n_rt:
        specs = tuple(_spec(a) for a in args)
    else:  # constexprs passed by position: their values are part of the key
        specs = tuple(_spec(a) for a in args[:n_rt]) + tuple(args[n_rt:])
    return (device, specs, tuple(kwargs.items()))


def _tensor_device(args) -> int:
    """CUDA device index of the first tensor argument (or first tensor of a leading tuple); -1 for
    none or a CPU tensor."""
    for a in args:
        if isinstance(a, torch.Tensor):
            return a.get_device()
        if isinstance(a, tuple) and a and isinstance(a[0], torch.Tensor):
            return a[0].get_device()
    return -1


#: this thread's active :func:`record_launches` recordings (``.stack``, innermost last)
_RECORDING = threading.local()


def _user_functions(kwargs) -> list:
    """The ``@triton.jit`` functions among a launch's compile-time arguments that are not this
    package's (the user's operators), also those bound inside our wrappers (``bind_jit``)."""
    from triton.runtime import JITFunction
    from triton.runtime.interpreter import InterpretedFunction   # (what triton.jit makes under the interpreter)
    found, todo = [], list(kwargs.values())
    while todo:
        v = todo.pop()
        if not isinstance(v, (JITFunction, InterpretedFunction)):
            continue
        bound = getattr(v, "bound_functions", None)
        if bound is not None:
            todo.extend(bound)
        elif not (getattr(v.fn, "__module__", None) or "").startswith("tritoncub"):
            found.append(v)
    return found


def _compile_and_launch(kernel, grid, args, kwargs):
    """``kernel[grid](*args, **kwargs)`` (its first launch of a specialisation compiles it). A kernel
    that fails to compile (or, under the interpreter, to run) while it calls a user's function gets a
    ValueError naming that function and the kernel (the original error, with the failing source line,
    chained below it); errors of other kinds (resources, the assembler) pass unchanged."""
    from triton.compiler.errors import CompilationError
    from triton.runtime.errors import InterpreterError
    try:
        return kernel[grid](*args, **kwargs)
    except (CompilationError, InterpreterError) as e:
        users = _user_functions(kwargs)
        if not users:
            raise
        from ._utils import InputValueError
        unique_names = sorted({f.fn.__name__ for f in users})
        names = ", ".join(unique_names)
        inner = e   # (each level of nesting wraps the error once: name the innermost cause)
        while isinstance(inner, (CompilationError, InterpreterError)) and inner.__cause__ is not None:
            inner = inner.__cause__
        # (the last line: a compilation error's message follows the failing source line)
        text = next((ln.strip() for ln in reversed(str(inner).splitlines()) if ln.strip()), "")
        first = f"{type(inner).__name__}: {text}" if inner is not e else (text or type(e).__name__)
        which = "function" if len(unique_names) == 1 else "functions"
        raise InputValueError(f"{getattr(kernel, '__name__', 'a kernel')} failed with the user {which} {names} "
                              f"(check its arguments, its return value(s) and their types): {first}") from e


def launch(kernel, grid: tuple, *args, **kwargs) -> None:
    """``kernel[grid](*args, **kwargs)``, through the compiled-kernel table when possible, on the GPU
    of the first tensor argument (Triton launches on the current device: tensors on another GPU
    switch it for the launch, as torch's own ops do)."""
    stack = getattr(_RECORDING, "stack", None)
    if stack:   # (bound here, so the launch is recorded once: bind launches through this function)
        rec = stack.pop()
        try:
            rec.append((bind(kernel, grid, *args, **kwargs), args))
        finally:
            stack.append(rec)
        return
    dev = _tensor_device(args)
    if dev >= 0:   # (a CUDA tensor: CUDA is initialised, torch.cuda.current_device() without its Python layer)
        device = torch._C._cuda_getDevice()
        if dev != device:
            with torch.cuda.device(dev):
                launch(kernel, grid, *args, **kwargs)
            return
    if not _direct_ok():
        _compile_and_launch(kernel, grid, args, kwargs)
        return
    if dev < 0:
        device = torch.cuda.current_device()
    try:
        key = _key(kernel, device, args, kwargs)
        table = _TABLES.get(kernel)
        entry = table.get(key) if table is not None else None
    except TypeError:  # an unhashable argument: no table for this launch
        _compile_and_launch(kernel, grid, args, kwargs)
        return
    if entry is None:
        compiled = _compile_and_launch(kernel, grid, args, kwargs)
        if compiled is not None and hasattr(compiled, "result"):
            compiled = compiled.result()
        if compiled is None or not hasattr(compiled, "packed_metadata"):
            return
        # the values of the parameters after the positional ones (constexprs, defaults), in order
        params = kernel.params
        tail = []
        for p in params[len(args):]:
            name = p.name
            tail.append(kwargs[name] if name in kwargs else p.default)
        if table is None:
            table = _TABLES[kernel] = {}
        elif len(table) >= MAX_ENTRIES:  # e.g. a new jit function passed on every call: stay bounded
            table.clear()
        table[key] = _Entry(compiled, tuple(tail))
        return
    k = entry.kernel
    g1 = grid[1] if len(grid) > 1 else 1
    g2 = grid[2] if len(grid) > 2 else 1
    stream = torch._C._cuda_getCurrentRawStream(device)
    if entry.prefix is not None:
        c_launch, prefix = entry.prefix
        c_launch(grid[0], g1, g2, stream, *prefix, *args, *entry.tail)
    else:
        k.run(grid[0], g1, g2, stream, k.function, k.packed_metadata, None, None, None, *args, *entry.tail)


def bind(kernel, grid: tuple, *args, **kwargs):
    """Launch as :func:`launch` does, then return ``run(*new_args)``: a launch of the same compiled
    kernel on the same grid with new runtime arguments of the same specialisation (same dtypes,
    16-byte alignment, int classes: the caller guarantees it, e.g. by keying its own cache on them).
    Returns None off the direct path (interpreter, compile check, launch hooks), where callers keep
    using :func:`launch`. The returned function launches on the GPU it was bound on, whatever the
    current device is then."""
    dev = _tensor_device(args)
    if dev >= 0 and dev != torch.cuda.current_device():
        with torch.cuda.device(dev):
            return bind(kernel, grid, *args, **kwargs)
    launch(kernel, grid, *args, **kwargs)
    if not _direct_ok():
        return None
    device = torch.cuda.current_device()
    table = _TABLES.get(kernel)
    try:
        entry = table.get(_key(kernel, device, args, kwargs)) if table is not None else None
    except TypeError:
        return None
    if entry is None:
        return None
    k, tail = entry.kernel, entry.tail
    g0 = grid[0]
    g1 = grid[1] if len(grid) > 1 else 1
    g2 = grid[2] if len(grid) > 2 else 1
    run, function, meta = k.run, k.function, k.packed_metadata
    stream = torch._C._cuda_getCurrentRawStream
    current = torch._C._cuda_getDevice   # (torch.cuda.current_device without its Python layer)
    if entry.prefix is not None:
        c_launch, prefix = entry.prefix

        def bound_c_run(*new_args):
            if current() != device:
                with torch.cuda.device(device):
                    return bound_c_run(*new_args)
            c_launch(g0, g1, g2, stream(device), *prefix, *new_args, *tail)
        return bound_c_run

    def bound_run(*new_args):
        if current() != device:
            with torch.cuda.device(device):
                return bound_run(*new_args)
        run(g0, g1, g2, stream(device), function, meta, None, None, None, *new_args, *tail)
    return bound_run


def direct_ok() -> bool:
    """Whether launches may call compiled kernels directly now (a GPU, no launch hooks)."""
    return _direct_ok()


def replays_ok(x: torch.Tensor, *unchanged: tuple) -> bool:
    """Whether calls on ``x`` may be remembered and replayed (:func:`record_launches`,
    :func:`relocatable`, :func:`replay`): a GPU tensor, launches that call compiled kernels directly,
    and each ``(current, original)`` pair of ``unchanged`` the same object (a module's ``launch`` and
    launch helpers: a test's stand-in for one may launch outside what a recording sees)."""
    return x.is_cuda and all(a is b for a, b in unchanged) and _direct_ok()


@contextlib.contextmanager
def record_launches():
    """``with record_launches() as rec:`` every :func:`launch` inside appends ``(bound, args)`` to
    ``rec`` (``bound`` as :func:`bind` returns it: None off the direct path). For :func:`relocatable`.
    Only :func:`launch` calls are seen: launches through bound functions (:func:`bind`,
    :class:`LaunchPlan` steps, :func:`replay`) or ``kernel[grid]`` are not, so record only code whose
    every launch goes through :func:`launch`."""
    rec: list = []
    stack = getattr(_RECORDING, "stack", None)
    if stack is None:
        stack = _RECORDING.stack = []
    stack.append(rec)
    try:
        yield rec
    finally:   # (by identity: two empty recordings compare equal)
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is rec:
                del stack[i]
                break


def recording_launches() -> bool:
    """Whether a :func:`record_launches` recording is active in this thread (a caller replaying its own
    remembered launches inside one would hide them from it)."""
    return bool(getattr(_RECORDING, "stack", None))


def relocatable(launches, roots) -> tuple | None:
    """A replay of ``launches`` (``(bound, args)`` pairs, e.g. from :func:`record_launches`) on other
    buffers: every tensor argument becomes ``(i, byte offset)`` into ``roots[i]``, every other argument
    stays as it is. None when a launch was not bound, a tensor lies in no root, or the roots overlap
    (a pointer inside two of them could be recorded against the wrong one, and a later call whose
    roots lie apart would then read or write the wrong buffer): the caller then keeps launching
    normally. Replay with :func:`replay` and the new roots' addresses, in the same order; the caller's
    key must fix everything else (sizes, dtypes, alignments, policy), as for :func:`bind`."""
    spans = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in roots]
    live = sorted((lo, hi) for lo, hi in spans if hi > lo)
    if any(b_lo < a_hi for (_, a_hi), (b_lo, _) in zip(live, live[1:])):
        return None
    out = []
    for fn, args in launches:
        if fn is None:
            return None
        spec = []
        for a in args:
            if isinstance(a, torch.Tensor):
                p = a.data_ptr()
                found = [i for i, (lo, hi) in enumerate(spans) if lo <= p < hi or p == lo]
                if len(found) != 1:   # (in no root, or at an empty root's address inside another)
                    return None
                root = found[0]
                spec.append((root, p - spans[root][0]))
            elif isinstance(a, tuple):   # (a tuple argument: not relocated)
                return None
            else:
                spec.append((-1, a))
        out.append((fn, tuple(spec)))
    return tuple(out) if out else None


def replay(launches: tuple, bases: tuple) -> None:
    """Re-launch :func:`relocatable`'s ``launches`` with its roots at addresses ``bases`` (pointer
    arguments go to Triton's launcher as plain addresses, which it takes for pointers)."""
    for fn, spec in launches:
        fn(*[a if root < 0 else bases[root] + a for root, a in spec])


def _plans_ok() -> bool:
    """Whether :class:`LaunchPlan` may remember launch sequences (its steps are bound launches: the
    direct path; tests switch this on under the interpreter with a stand-in for :func:`bind`)."""
    return _direct_ok()


class LaunchPlan:
    """The launches of one call, remembered per problem: the first call with a ``key`` launches as
    :func:`launch` does and keeps each launch's bound form (:func:`bind`); later calls with the same
    key re-launch them with their new runtime arguments, skipping the per-launch bookkeeping (the
    specialisation key of every argument). Calls without a key, or off the direct launch path,
    launch normally.

    The caller's ``key`` must determine the whole sequence: which kernels run, in which order, on
    which grids, with which constexprs, and the specialisation of every runtime argument (tensor
    dtypes and 16-byte alignments, int classes) — e.g. the sizes, dtypes and alignments the launcher
    branches and computes on. Use::

        plan = LaunchPlan(_MEMO, key, tag=pol)
        plan(kernel, grid, *args, **constexprs)   # instead of launch(...), for every launch
        plan.done()                               # remember the sequence (if it was recorded)
    """
    __slots__ = ("memo", "key", "tag", "steps", "recording", "step")

    def __init__(self, memo: dict, key, tag=None):
        """``tag``: an object the remembered sequence was made under (e.g. the policy), compared by
        identity: a sequence made under another is made again."""
        self.memo, self.key, self.tag, self.step = memo, key, tag, 0
        self.steps = self.recording = None
        if key is not None and _plans_ok() and not recording_launches():
            # (inside a caller's recording, launches go through launch(), which the recording sees)
            entry = memo.get(key)
            if entry is not None and entry[0] is tag:
                self.steps = entry[1]
            else:
                self.recording = []

    def __call__(self, kernel, grid: tuple, *args, **kwargs) -> None:
        if self.steps is not None:
            if (self.step >= len(self.steps) or self.steps[self.step][0] is not kernel
                    or self.steps[self.step][2] != grid):
                self._mismatch()
            self.steps[self.step][1](*args)
            self.step += 1
        elif self.recording is not None:
            self.recording.append((kernel, bind(kernel, grid, *args, **kwargs), grid))
        else:
            launch(kernel, grid, *args, **kwargs)

    def _mismatch(self):
        # the key does not fix the sequence: forget it (later calls record afresh) and say so
        self.memo.pop(self.key, None)
        raise RuntimeError(f"internal: a remembered launch sequence does not match this call (launch {self.step} "
                           f"of {len(self.steps)}): its key is incomplete")

    def done(self) -> None:
        if self.steps is not None and self.step != len(self.steps):
            self._mismatch()
        if self.recording is not None and self.recording and all(r is not None for _, r, _ in self.recording):
            if len(self.memo) >= MAX_ENTRIES:
                self.memo.clear()
            self.memo[self.key] = (self.tag, self.recording)
        self.recording = None
