"""Exclusive use of devices: :class:`DeviceSlots` hands out one device of a kind at a time.

Fair (first come, first served) within a process and exclusive across processes (a ``flock``
per device under :func:`default_lock_dir`), so two runs never time kernels on the same GPU at
once. Which devices exist is :mod:`~evoforge.evaluators.devices._inventory`'s concern.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import os
import tempfile
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from evoforge.evaluators.devices._inventory import Device

LOCK_DIR_ENV = "EVOFORGE_LOCK_DIR"
"""Directory of the per-device lock files shared by every evoforge process on the host."""


class DeviceError(RuntimeError):
    """A device cannot be claimed: the kind is unknown or none is present."""


class DeviceBusyError(DeviceError):
    """A claim with a deadline found every device of the kind in use until the deadline."""


def default_lock_dir() -> Path:
    """``$EVOFORGE_LOCK_DIR``, else a directory under the system temp dir shared by all users."""
    configured = os.environ.get(LOCK_DIR_ENV)
    return Path(configured) if configured else Path(tempfile.gettempdir(), "evoforge-devices")


class DeviceSlots:
    """Exclusive use of one device at a time per device, in this process and on this host.

    Within a process, waiters for a kind are served first come, first served. Across
    processes, each claim also holds an ``flock`` on a per-device file under ``lock_dir``;
    the kernel does not queue those fairly, so between processes the order is not FIFO. A
    blocking ``flock`` waits in a daemon thread, never in the event loop.

    Example::

        slots = DeviceSlots(inventory().of_kind("cuda"))
        async with slots.claim("cuda") as gpu:
            env["CUDA_VISIBLE_DEVICES"] = gpu.details.get("uuid", str(gpu.index))
    """

    def __init__(self, devices: Sequence[Device], *, lock_dir: Path | None = None) -> None:
        self._free: dict[str, list[Device]] = collections.defaultdict(list)
        for device in devices:
            self._free[device.kind].append(device)
        self._kinds = {d.kind: 0 for d in devices}
        for device in devices:
            self._kinds[device.kind] += 1
        self._waiters: dict[str, collections.deque[asyncio.Future[Device]]] = (
            collections.defaultdict(collections.deque)
        )
        self._lock_dir = lock_dir

    @property
    def lock_dir(self) -> Path:
        return self._lock_dir or default_lock_dir()

    @contextlib.asynccontextmanager
    async def claim(self, kind: str, *, timeout_s: float | None = None) -> AsyncIterator[Device]:
        """Hold one device of ``kind`` for the body of the ``async with``.

        Args:
            kind: a device kind this object was given devices of.
            timeout_s: give up after this many seconds (0: only if one is free right now);
                ``None`` waits as long as it takes.

        Raises:
            DeviceError: no device of ``kind`` was given to these slots.
            DeviceBusyError: ``timeout_s`` passed with every such device in use.
        """
        if kind not in self._kinds:
            have = ", ".join(f"{k} x{n}" for k, n in self._kinds.items()) or "no devices"
            raise DeviceError(
                f"no {kind!r} device to claim (these slots hold {have}); run on a host with "
                f"one (`evoforge devices` lists this host's) or choose another target"
            )
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        device, fd = await self._take(kind, deadline)
        try:
            if fd is None:
                fd = await self._lock(device, deadline)
            try:
                yield device
            finally:
                _unlock(fd)
        finally:
            self._give_back(device)

    async def _take(self, kind: str, deadline: float | None) -> tuple[Device, int | None]:
        """A device free in this process (FIFO among waiters), locked already if possible."""
        free, waiters = self._free[kind], self._waiters[kind]
        if free and not waiters:
            for i, device in enumerate(free):  # prefer one no other process holds
                fd = self._try_lock(device)
                if fd is not None:
                    return free.pop(i), fd
            return free.pop(0), None
        future: asyncio.Future[Device] = asyncio.get_running_loop().create_future()
        waiters.append(future)
        try:
            async with asyncio.timeout_at(deadline):
                return await future, None
        except BaseException as exc:
            if future.done() and not future.cancelled():
                self._give_back(future.result())  # handed over just as we gave up
            else:
                with contextlib.suppress(ValueError):
                    waiters.remove(future)
            if isinstance(exc, TimeoutError):
                raise self._busy(kind) from None
            raise

    def _give_back(self, device: Device) -> None:
        waiters = self._waiters[device.kind]
        while waiters:
            future = waiters.popleft()
            if not future.done():
                future.set_result(device)
                return
        self._free[device.kind].append(device)
        self._free[device.kind].sort(key=lambda d: d.index)

    def _lock_path(self, device: Device) -> Path:
        folder = self.lock_dir
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):
                folder.chmod(0o1777)  # shared by every user's runs, like /tmp
        return folder / f"{device.key}.lock"

    def _open(self, device: Device) -> int:
        path = self._lock_path(device)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o666)
        return fd

    def _try_lock(self, device: Device) -> int | None:
        fd = self._open(device)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    async def _lock(self, device: Device, deadline: float | None) -> int:
        fd = self._try_lock(device)
        if fd is not None:
            return fd
        if deadline is not None and asyncio.get_running_loop().time() >= deadline:
            raise self._busy(device.kind)
        fd = self._open(device)
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        abandoned = threading.Event()

        def wait_for_lock() -> None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                error: OSError | None = exc
            else:
                error = None
            if abandoned.is_set():  # the claim gave up before the lock came: let it go
                _unlock(fd)
                return
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(_settle, done, error)

        def release(future: asyncio.Future[None]) -> None:
            _unlock(fd)  # the lock (or the error) arrived after the claim gave up

        threading.Thread(target=wait_for_lock, name=f"flock {device.key}", daemon=True).start()
        try:
            async with asyncio.timeout_at(deadline):
                await asyncio.shield(done)
        except BaseException as exc:
            # Either the thread sees `abandoned` and unlocks, or it has already settled (or
            # will settle) `done`, and `release` unlocks: never both, never neither.
            abandoned.set()
            done.add_done_callback(release)
            if isinstance(exc, TimeoutError):
                raise self._busy(device.kind) from None
            raise
        return fd

    def _busy(self, kind: str) -> DeviceBusyError:
        return DeviceBusyError(
            f"every {kind!r} device stayed in use until the deadline (other evaluations in "
            f"this process or other processes on this host, see {self.lock_dir}); wait, or "
            "stop the run that holds it"
        )


def _settle(future: asyncio.Future[None], error: OSError | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


def _unlock(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    with contextlib.suppress(OSError):
        os.close(fd)
