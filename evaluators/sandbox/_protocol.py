"""Wire format between an evaluator and its sandbox processes: length-prefixed JSON frames.

A frame is a 4-byte big-endian length followed by that many bytes (UTF-8 JSON unless said
otherwise). What a candidate produces is hostile, so it only ever travels as JSON, never as a
pickle, and every reader caps the sizes it accepts.
"""

from __future__ import annotations

import asyncio
import math
import os
import select
import struct
import time
from typing import Any

from evoforge import _json

_HEADER = struct.Struct("!I")
MAX_FRAME_BYTES = 256 * 2**20


class ProtocolError(RuntimeError):
    """A peer sent something that is not a frame, or hung up in the middle of one."""


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes (:func:`evoforge._json.dumps`); NaN and infinities are kept (checked
    later, not lost here)."""
    return _json.dumps(obj).encode()


def encode_frame(body: bytes) -> bytes:
    return _HEADER.pack(len(body)) + body


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to a blocking file descriptor."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_frame(fd: int, body: bytes) -> None:
    write_all(fd, encode_frame(body))


def read_frame(fd: int, deadline: float | None = None) -> bytes | None:
    """Read one frame from a blocking descriptor; ``None`` on a clean end of file.

    Args:
        fd: the descriptor to read.
        deadline: a ``time.perf_counter()`` value; past it, raise :class:`TimeoutError`.

    Raises:
        ProtocolError: the peer hung up inside a frame or announced an oversized one.
        TimeoutError: ``deadline`` passed first.
    """
    header = _read_exact(fd, _HEADER.size, deadline, eof_ok=True)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME_BYTES:
        raise ProtocolError(f"peer announced a {size}-byte frame; the limit is {MAX_FRAME_BYTES}")
    return _read_exact(fd, size, deadline, eof_ok=False) or b""


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
            raise ProtocolError(f"peer hung up after {size - missing} of {size} bytes")
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


async def read_frame_async(reader: asyncio.StreamReader) -> bytes:
    """Read one frame from an asyncio stream.

    Raises:
        asyncio.IncompleteReadError: the peer hung up (possibly before any byte).
        ProtocolError: the peer announced an oversized frame.
    """
    (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    if size > MAX_FRAME_BYTES:
        raise ProtocolError(f"peer announced a {size}-byte frame; the limit is {MAX_FRAME_BYTES}")
    return await reader.readexactly(size)
