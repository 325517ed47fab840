"""Frames between the controller and its proposal workers: a length, then a pickle.

Both ends are evoforge processes of the same installation started by the controller itself
(never a network peer), so pickle is safe here and keeps dataclasses as they are; the length
prefix (4 bytes, big-endian) lets either side read one whole message at a time. A frame above
:data:`MAX_FRAME` is refused, so a corrupted length cannot make a reader allocate gigabytes.
"""

from __future__ import annotations

import asyncio
import pickle
import struct
from typing import Any

MAX_FRAME = 256 * 2**20
_HEADER = struct.Struct(">I")


class FrameError(RuntimeError):
    """A frame that cannot be read: truncated, oversized or not a pickle."""


def encode(message: Any) -> bytes:
    """One frame holding ``message``."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    if len(payload) > MAX_FRAME:
        raise FrameError(f"a message of {len(payload)} bytes exceeds the {MAX_FRAME} byte limit")
    return _HEADER.pack(len(payload)) + payload


async def read(reader: asyncio.StreamReader) -> Any:
    """The next message, or None at a clean end of the stream.

    Raises:
        FrameError: the stream ends inside a frame, or a frame is oversized or unreadable.
    """
    payload = await read_payload(reader)
    return None if payload is None else decode(payload)


async def read_payload(reader: asyncio.StreamReader) -> bytes | None:
    """The next frame's payload (undecoded), or None at a clean end of the stream."""
    try:
        header = await reader.readexactly(_HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise FrameError("the stream ended inside a frame header") from None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise FrameError(f"a frame of {size} bytes exceeds the {MAX_FRAME} byte limit")
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        raise FrameError(f"the stream ended inside a frame of {size} bytes") from None


def decode(payload: bytes) -> Any:
    """The message a frame's payload holds."""
    try:
        return pickle.loads(payload)
    except Exception as exc:
        raise FrameError(f"an unreadable frame ({type(exc).__name__}: {exc})") from None
