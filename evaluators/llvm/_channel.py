"""The host side of LLVM 19's ``InteractiveModelRunner`` channel (two named pipes).

LLVM (``opt -enable-ml-inliner=release -inliner-interactive-channel-base=BASE``, or ``llc
-regalloc-enable-priority-advisor=release -regalloc-priority-interactive-channel-base=BASE``)
writes observations to ``BASE.out`` and reads advice from ``BASE.in``; the host makes both
FIFOs before starting LLVM. On ``BASE.out``: one JSON header line (``{"features": [{"name",
"type", "shape"}, ...], "advice": {...}}``), then per decision an optional ``{"context": ...}``
line, an ``{"observation": N}`` line, the raw little-endian feature tensors in header order and
a newline. On ``BASE.in`` the host answers each observation with the raw bytes of the advice
tensor (``int64`` ``inlining_decision``; ``float`` ``priority``).

Every read has a deadline and every open is non-blocking, so an LLVM that dies or stalls
never hangs the host: a :class:`ChannelClosed` or :class:`TimeoutError` comes back instead.
Decoding one observation costs one ``struct.unpack`` (a few µs).
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import select
import struct
import time
from dataclasses import dataclass
from typing import Any

_CODES = {"int64_t": "q", "int32_t": "i", "float": "f", "double": "d", "uint8_t": "B"}


class ChannelClosed(EOFError):
    """LLVM closed its end: it finished (or died) and asks for no more advice."""


@dataclass(frozen=True)
class Spec:
    """The tensors of one channel, from LLVM's header line."""

    names: tuple[str, ...]
    shapes: tuple[int, ...]  # elements per feature
    features: struct.Struct  # all feature tensors of one observation
    advice_name: str
    advice: struct.Struct

    @classmethod
    def parse(cls, header: dict[str, Any]) -> Spec:
        try:
            features = header["features"]
            names = tuple(str(f["name"]) for f in features)
            shapes = tuple(max(1, math.prod(int(d) for d in f["shape"])) for f in features)
            fmt = "<" + "".join(
                f"{n}{_CODES[f['type']]}" for f, n in zip(features, shapes, strict=False)
            )
            advice = header["advice"]
            advice_fmt = f"<{max(1, math.prod(advice['shape']))}{_CODES[advice['type']]}"
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"LLVM's channel header is not as expected ({exc!r})") from None
        return cls(names, shapes, struct.Struct(fmt), advice["name"], struct.Struct(advice_fmt))

    def decode(self, data: bytes) -> dict[str, Any]:
        values = self.features.unpack(data)
        result, at = {}, 0
        for name, count in zip(self.names, self.shapes, strict=True):
            result[name] = values[at] if count == 1 else list(values[at : at + count])
            at += count
        return result


class Channel:
    """One LLVM process's channel: make the FIFOs, connect, read observations, answer.

    Example::

        channel = Channel(base)                    # makes BASE.in and BASE.out
        proc = subprocess.Popen([...,  f"-inliner-interactive-channel-base={base}"])
        spec = channel.connect(deadline, alive=lambda: proc.poll() is None)
        while (features := channel.observe(deadline)) is not None:
            channel.answer(decide(features))
    """

    def __init__(self, base: str) -> None:
        self.base = base
        self.to_llvm = base + ".in"
        self.from_llvm = base + ".out"
        os.mkfifo(self.to_llvm, 0o600)
        os.mkfifo(self.from_llvm, 0o600)
        self._in = self._out = -1
        self._buffer = bytearray()
        self.spec: Spec | None = None
        self.observations = 0

    def connect(self, deadline: float, alive: Any) -> Spec:
        """Open both pipes (waiting for LLVM to open its ends) and read the header.

        Raises:
            ChannelClosed: LLVM exited before connecting (``alive()`` turned false).
            TimeoutError: ``deadline`` (a ``time.perf_counter()`` value) passed.
        """
        self._out = os.open(self.from_llvm, os.O_RDONLY | os.O_NONBLOCK)
        while self._in < 0:
            try:
                self._in = os.open(self.to_llvm, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # ENXIO: LLVM has not opened its end yet
                    raise
                if not alive():
                    raise ChannelClosed("LLVM exited before opening the channel") from None
                if time.perf_counter() > deadline:
                    raise TimeoutError("LLVM did not open the channel in time") from None
                time.sleep(0.002)
        os.set_blocking(self._in, True)
        header = self._line(deadline)
        try:
            self.spec = Spec.parse(json.loads(header))
        except json.JSONDecodeError as exc:
            raise ValueError(f"LLVM's channel header is not JSON ({exc})") from None
        return self.spec

    def observe(self, deadline: float) -> dict[str, Any] | None:
        """The next observation's features by name, or None once LLVM has finished."""
        assert self.spec is not None, "connect() first"
        try:
            event = json.loads(self._line(deadline))
            if "context" in event:
                event = json.loads(self._line(deadline))
        except ChannelClosed:
            return None
        if "observation" not in event:
            raise ValueError(f"expected an observation from LLVM, got {event!r}")
        data = self._exact(self.spec.features.size + 1, deadline)
        if data[-1:] != b"\n":
            raise ValueError("an observation from LLVM did not end with a newline")
        self.observations += 1
        return self.spec.decode(bytes(data[:-1]))

    def answer(self, value: float | int) -> None:
        """Send one advice value (already validated) to LLVM."""
        assert self.spec is not None
        try:
            os.write(self._in, self.spec.advice.pack(value))
        except BrokenPipeError:
            raise ChannelClosed("LLVM closed its advice pipe") from None

    def close(self) -> None:
        for fd in (self._in, self._out):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._in = self._out = -1

    # -----------------------------------------------------------------------------------------

    def _fill(self, deadline: float) -> None:
        poller = select.poll()
        poller.register(self._out, select.POLLIN)
        remaining = math.ceil((deadline - time.perf_counter()) * 1000)
        if remaining <= 0 or not poller.poll(remaining):
            raise TimeoutError("LLVM sent nothing before the deadline")
        try:
            chunk = os.read(self._out, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            raise ChannelClosed("LLVM closed the channel")
        self._buffer += chunk

    def _line(self, deadline: float) -> bytes:
        while (end := self._buffer.find(b"\n")) < 0:
            self._fill(deadline)
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    def _exact(self, size: int, deadline: float) -> bytearray:
        while len(self._buffer) < size:
            self._fill(deadline)
        data = self._buffer[:size]
        del self._buffer[:size]
        return data
