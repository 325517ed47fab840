"""Frames between the controller and its proposal workers: a length, then a pickle.

Both ends are evoforge processes of the same installation started by the controller itself
(never a network peer), so pickle is safe here and keeps dataclasses as they are; the frames
are :mod:`evoforge.base.frames` (a 4-byte big-endian length lets either side read one whole
message at a time). A frame above :data:`MAX_FRAME` is refused, by the reader and already by
the writer here, so a corrupted length cannot make a reader allocate gigabytes and an oversized
message fails where it was made.
"""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

from evoforge.base import frames
from evoforge.base.frames import MAX_FRAME_BYTES as MAX_FRAME, FrameError

__all__ = ["MAX_FRAME", "FrameError", "decode", "encode", "read", "read_payload"]


def encode(message: Any) -> bytes:
    """One frame holding ``message``.

    Raises:
        FrameError: the pickled message is over :data:`MAX_FRAME` bytes.
    """
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    if len(payload) > MAX_FRAME:
        raise FrameError(f"a message of {len(payload)} bytes exceeds the {MAX_FRAME} byte limit")
    return frames.encode(payload)


async def read(reader: asyncio.StreamReader) -> Any:
    """The next message, or None at a clean end of the stream.

    Raises:
        FrameError: the stream ends inside a frame, or a frame is oversized or unreadable.
    """
    payload = await read_payload(reader)
    return None if payload is None else decode(payload)


async def read_payload(reader: asyncio.StreamReader) -> bytes | None:
    """The next frame's payload (undecoded), or None at a clean end of the stream.

    Raises:
        FrameError: the stream ends inside a frame, or the frame is oversized.
    """
    return await frames.read_async(reader)


def decode(payload: bytes) -> Any:
    """The message a frame's payload holds.

    Raises:
        FrameError: the payload is not a pickle of this installation's classes.
    """
    try:
        return pickle.loads(payload)
    except Exception as exc:
        raise FrameError(f"an unreadable frame ({type(exc).__name__}: {exc})") from None
