"""Guards that run inside a kernel candidate's process, around each call of its ``forward``.

Used by :mod:`evoforge.evaluators.kernels.kernelbench._harness`; imports torch (and triton) lazily.
Each guard catches an honest bug or a known cheat early and with a precise reason; none of them is
what makes a result trustworthy on its own. Values are judged in the trusted runner against a
reference the candidate never sees (:mod:`evoforge.evaluators.kernels.kernelbench._compare`). A
candidate that reaches into this module's objects can disable these checks in its own process; what
it cannot do is make wrong outputs compare equal to the reference.

- :class:`Canaries`: inputs live in the middle of a buffer whose ends hold a known byte
  pattern; a kernel that writes just past (or before) an input changes the pattern.
- :class:`InterpreterBounds`: the Triton interpreter has no bounds checks (an out-of-bounds
  store silently corrupts the heap); this checks every unmasked address of every load, store
  and atomic against the memory of the tensors passed to the kernel, before the access.
- :class:`TimerWatch`: the clocks, events and synchronisation functions the harness times with
  must still be the original objects after the candidate's code ran.
- :func:`new_threads`: ``forward`` must not return while threads it started still run (work
  deferred to a thread fills the output after it was read).
- :class:`PersistingL2Guard` (CUDA): the persisting-L2 limit stays 0, so no access-policy
  window can keep data in L2 across the flushes between timed runs.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib
import threading
from collections.abc import Iterable, Sequence
from typing import Any

CANARY_BYTES = 4096
"""Bytes of canary pattern on each side of every input (a multiple of every element size)."""


class Rejected(Exception):  # noqa: N818 - a verdict, not an error of the harness
    """The candidate broke a rule of the protocol: the evaluation is ``incorrect``."""


class Violation(Exception):  # noqa: N818
    """The candidate tampered with the measurement: the evaluation is ``sandbox_violation``."""


class OutOfBounds(RuntimeError):
    """Raised inside a Triton kernel (interpreter) before an out-of-bounds access happens."""


# ---------------------------------------------------------------------------------------------
# Canaries around inputs


class Canaries:
    """Copies of the inputs placed between canary bytes, and the check that they survived."""

    def __init__(self) -> None:
        self._padded: list[tuple[int, Any, Any, int]] = []  # (input index, buffer, pattern, n)

    def pad(self, inputs: Sequence[Any]) -> list[Any]:
        """The inputs as views into padded buffers (non-tensors and odd layouts as they are)."""
        import torch

        result = []
        for index, x in enumerate(inputs):
            if not isinstance(x, torch.Tensor) or not x.is_contiguous() or x.numel() == 0:
                result.append(x)
                continue
            nbytes = x.numel() * x.element_size()
            seed = hashlib.blake2b(b"canary%d" % index, digest_size=8).digest()
            pattern = torch.tensor(list(seed) * (CANARY_BYTES // 8), dtype=torch.uint8)
            pattern = pattern.to(x.device)
            buffer = torch.empty(nbytes + 2 * CANARY_BYTES, dtype=torch.uint8, device=x.device)
            buffer[:CANARY_BYTES] = pattern
            buffer[CANARY_BYTES + nbytes :] = pattern
            body = buffer[CANARY_BYTES : CANARY_BYTES + nbytes]
            body.copy_(x.detach().reshape(-1).view(torch.uint8))
            result.append(body.view(x.dtype).view(x.shape))
            self._padded.append((index, buffer, pattern, nbytes))
        return result

    def check(self) -> None:
        """Raises :class:`Rejected` naming the first input whose canaries changed."""
        import torch

        for index, buffer, pattern, nbytes in self._padded:
            for side, part in (
                ("before", buffer[:CANARY_BYTES]),
                ("after", buffer[CANARY_BYTES + nbytes :]),
            ):
                if not torch.equal(part, pattern):
                    changed = int((part != pattern).sum())
                    raise Rejected(
                        f"out-of-bounds write: {changed} canary bytes just {side} input {index} "
                        "were overwritten; mask every store with the tensor's size"
                    )


# ---------------------------------------------------------------------------------------------
# Bounds checks for the Triton interpreter


class InterpreterBounds:
    """Checks the addresses of interpreted loads, stores and atomics (``TRITON_INTERPRET=1``).

    Each kernel launch records the storage ranges of its tensor arguments; every access whose
    mask is on must fall inside one of them. A violation raises :class:`OutOfBounds` inside
    the kernel (so nothing is written) and is remembered in :attr:`violation`, because the
    interpreter wraps the exception and a candidate may catch it.
    """

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []
        self.kernel = ""
        self.violation = ""
        self.checked = 0

    def install(self) -> InterpreterBounds:
        from triton.runtime import interpreter

        guard = self
        executor = interpreter.GridExecutor
        builder = interpreter.InterpreterBuilder
        init_args = executor._init_args_hst
        masked_load, masked_store = builder.create_masked_load, builder.create_masked_store
        atomic_cas, atomic_rmw = builder.create_atomic_cas, builder.create_atomic_rmw

        def _init_args_hst(self: Any, args_dev: Any, kwargs: Any) -> Any:
            args, kwargs_hst = init_args(self, args_dev, kwargs)
            guard.ranges = _storage_ranges([*args, *kwargs_hst.values()])
            guard.kernel = getattr(getattr(self, "fn", None), "__name__", "kernel")
            return args, kwargs_hst

        def create_masked_load(self: Any, ptrs: Any, mask: Any, *rest: Any) -> Any:
            guard.check("load", ptrs, mask)
            return masked_load(self, ptrs, mask, *rest)

        def create_masked_store(self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
            guard.check("store", ptrs, mask)
            return masked_store(self, ptrs, value, mask, *rest)

        def create_atomic_cas(self: Any, ptr: Any, *rest: Any) -> Any:
            guard.check("atomic", ptr, None)
            return atomic_cas(self, ptr, *rest)

        def create_atomic_rmw(self: Any, op: Any, ptr: Any, val: Any, mask: Any, *rest: Any) -> Any:
            guard.check("atomic", ptr, mask)
            return atomic_rmw(self, op, ptr, val, mask, *rest)

        executor._init_args_hst = _init_args_hst
        builder.create_masked_load = create_masked_load
        builder.create_masked_store = create_masked_store
        builder.create_atomic_cas = create_atomic_cas
        builder.create_atomic_rmw = create_atomic_rmw
        return self

    def check(self, op: str, ptrs: Any, mask: Any) -> None:
        import numpy as np

        addresses = np.asarray(ptrs.data, dtype=np.uint64)
        if mask is not None:
            addresses = addresses[
                np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
            ]
        addresses = addresses.reshape(-1)
        if not addresses.size:
            return
        self.checked += int(addresses.size)
        size = max(1, int(getattr(ptrs.get_element_ty(), "primitive_bitwidth", 8)) // 8)
        inside = np.zeros(addresses.shape, dtype=bool)
        for low, high in self.ranges:
            inside |= (addresses >= low) & (addresses <= high - size)
        if inside.all():
            return
        bad = addresses[~inside]
        message = (
            f"out-of-bounds {op} in Triton kernel {self.kernel}(): {bad.size} of "
            f"{addresses.size} addresses lie outside every tensor passed to the kernel "
            f"({_where(int(bad[0]), self.ranges)}); mask the access with the tensor's size"
        )
        self.violation = self.violation or message
        raise OutOfBounds(message)


def _storage_ranges(args: Iterable[Any]) -> list[tuple[int, int]]:
    ranges = []
    for arg in args:
        if isinstance(arg, tuple | list):
            ranges.extend(_storage_ranges(arg))
            continue
        # A tensor, or what wraps one: a TensorDescriptor or a reinterpreted TensorWrapper.
        target = arg if hasattr(arg, "untyped_storage") else getattr(arg, "base", None)
        storage = getattr(target, "untyped_storage", None)
        if storage is None:
            continue
        with contextlib.suppress(Exception):  # a tensor without storage (meta): no range
            s = storage()
            ranges.append((int(s.data_ptr()), int(s.data_ptr()) + int(s.nbytes())))
    return ranges


def _where(address: int, ranges: Sequence[tuple[int, int]]) -> str:
    if not ranges:
        return "the kernel got no tensor arguments"
    distances = [
        (address - high if address >= high else low - address, i, address >= high)
        for i, (low, high) in enumerate(ranges)
    ]
    distance, index, after = min(distances)
    side = "past the end of" if after else "before the start of"
    return f"e.g. {distance} bytes {side} the memory of tensor argument {index}"


# ---------------------------------------------------------------------------------------------
# Timers, threads


TIMER_OBJECTS = (
    "time.perf_counter",
    "time.perf_counter_ns",
    "time.monotonic",
    "time.monotonic_ns",
    "time.time",
    "time.process_time",
    "torch.cuda.Event",
    "torch.cuda.Event.record",
    "torch.cuda.Event.elapsed_time",
    "torch.cuda.Event.synchronize",
    "torch.cuda.Event.query",
    "torch.cuda.Stream",
    "torch.cuda.Stream.synchronize",
    "torch.cuda.synchronize",
    "torch.cuda.current_stream",
    "torch.cuda.default_stream",
    "torch.allclose",
    "torch.equal",
)
"""What the harness measures and checks with; each must stay the original object."""


class TimerWatch:
    """A snapshot of :data:`TIMER_OBJECTS`, taken before any candidate code runs."""

    def __init__(self, names: Sequence[str] = TIMER_OBJECTS) -> None:
        self.original = {name: _resolve(name) for name in names}

    def check(self) -> None:
        """Raises :class:`Violation` naming every object that was replaced."""
        changed = [name for name, obj in self.original.items() if _resolve(name) is not obj]
        if changed:
            raise Violation(
                f"the candidate replaced {', '.join(changed)}: timers, events and "
                "synchronisation must stay the originals"
            )


def _resolve(name: str) -> Any:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute, None)
        return obj
    return None


def new_threads(before: set[threading.Thread]) -> list[str]:
    """Names of threads alive now that were not in ``before``."""
    return [t.name for t in threading.enumerate() if t not in before and t.is_alive()]


# ---------------------------------------------------------------------------------------------
# Persisting L2 (CUDA)

_CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06


class PersistingL2Guard:
    """Keeps the persisting-L2 set-aside at 0 bytes and checks it stays there (CUDA driver API).

    With no set-aside, an access-policy window cannot make lines persist, so the L2 flush
    before each timed run evicts everything. :attr:`note` says why the guard is off where the
    driver or the GPU does not support the limit.
    """

    def __init__(self) -> None:
        import torch

        self.note = ""
        self._cuda: Any = None
        torch.cuda.synchronize()  # the device's primary context exists and is current
        try:
            cuda = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            self.note = f"persisting-L2 guard off: libcuda.so.1 not loadable ({exc})"
            return
        code = cuda.cuCtxSetLimit(_CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(0))
        if code != 0:
            self.note = (
                f"persisting-L2 guard off: cuCtxSetLimit returned CUresult {code} (this GPU "
                "or driver has no persisting L2 limit)"
            )
            return
        self._cuda = cuda

    def value(self) -> int:
        if self._cuda is None:
            return 0
        size = ctypes.c_size_t(0)
        self._cuda.cuCtxGetLimit(ctypes.byref(size), _CU_LIMIT_PERSISTING_L2_CACHE_SIZE)
        return int(size.value)

    def check(self) -> None:
        """Raises :class:`Violation` when the persisting-L2 limit was raised."""
        size = self.value()
        if size:
            raise Violation(
                f"the candidate set a persisting-L2 limit of {size} bytes: data kept in L2 "
                "across the cache flushes would fake the timing"
            )

    def reset(self) -> None:
        """Demote any persisting lines to normal (before each timed run)."""
        if self._cuda is not None:
            self._cuda.cuCtxResetPersistingL2Cache()
