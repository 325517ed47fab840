"""Length-prefixed frames: the one wire format between evoforge's processes.

A frame is a 4-byte big-endian length followed by that many bytes. What the bytes hold is the
user's business: the sandbox sends JSON (:mod:`evoforge.evaluators.sandbox`; what a candidate
produces is hostile, so it never travels as a pickle), the proposal workers pickles
(:mod:`evoforge.evolve.proposals`; both ends are the controller's own processes). Every reader
refuses a frame over :data:`MAX_FRAME_BYTES`, so a corrupted or hostile length cannot make it
allocate gigabytes.

Readers: :func:`read` (a blocking descriptor, optionally with a deadline) and :func:`read_async`
(an asyncio stream), both ``None`` at a clean end of the stream. A user that wants another
end-of-stream policy reads the header itself and checks it with :func:`body_size`.
"""

from __future__ import annotations

import asyncio
import math
import os
import select
import struct
import time

_HEADER = struct.Struct("!I")
HEADER_BYTES = _HEADER.size
"""The length prefix's size: 4 bytes, big-endian, unsigned."""
MAX_FRAME_BYTES = 256 * 2**20
"""The largest body a reader accepts (256 MiB)."""


class FrameError(RuntimeError):
    """A stream that does not hold frames: one that ends inside a frame, or announces one over
    :data:`MAX_FRAME_BYTES` (a corrupted stream, or a peer that speaks another protocol)."""


def encode(body: bytes) -> bytes:
    """One frame holding ``body``.

    The size is not checked here: a writer that must fail before sending checks
    ``len(body) > MAX_FRAME_BYTES`` itself; otherwise the reader refuses the frame.
    """
    return _HEADER.pack(len(body)) + body


def body_size(header: bytes) -> int:
    """The body size a :data:`HEADER_BYTES`-byte header announces.

    Raises:
        FrameError: it is over :data:`MAX_FRAME_BYTES`.
    """
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME_BYTES:
        raise FrameError(f"peer announced a {size}-byte frame; the limit is {MAX_FRAME_BYTES}")
    return size


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to a blocking file descriptor."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write(fd: int, body: bytes) -> None:
    """Write one frame holding ``body`` to a blocking file descriptor."""
    write_all(fd, encode(body))


def read(fd: int, deadline: float | None = None) -> bytes | None:
    """Read one frame's body from a blocking descriptor; ``None`` on a clean end of file.

    Args:
        fd: the descriptor to read.
        deadline: a ``time.perf_counter()`` value; past it, raise :class:`TimeoutError`.

    Raises:
        FrameError: the peer hung up inside a frame or announced an oversized one.
        TimeoutError: ``deadline`` passed first.
    """
    header = _read_exact(fd, HEADER_BYTES, deadline, eof_ok=True)
    if header is None:
        return None
    return _read_exact(fd, body_size(header), deadline, eof_ok=False) or b""


async def read_async(reader: asyncio.StreamReader) -> bytes | None:
    """Read one frame's body from an asyncio stream; ``None`` at a clean end of the stream.

    Raises:
        FrameError: the stream ends inside a frame, or the frame is oversized.
    """
    try:
        header = await reader.readexactly(HEADER_BYTES)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise FrameError("the stream ended inside a frame header") from None
    size = body_size(header)
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        raise FrameError(f"the stream ended inside a frame of {size} bytes") from None


def _read_exact(fd: int, size: int, deadline: float | None, *, eof_ok: bool) -> bytes | None:
    chunks, missing = [], size
    while missing:
        if deadline is not None:
            remaining_ms = math.ceil((deadline - time.perf_counter()) * 1000)
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if remaining_ms <= 0 or not poller.poll(remaining_ms):
                raise TimeoutError("no answer before the deadline")
        chunk = os.read(fd, min(missing, 2**20))
        if not chunk:
            if eof_ok and missing == size:
                return None
            raise FrameError(f"peer hung up after {size - missing} of {size} bytes")
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)
