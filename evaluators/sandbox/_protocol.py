"""Wire format between an evaluator and its sandbox processes: length-prefixed JSON frames.

The frames are :mod:`evoforge.base.frames` (a 4-byte big-endian length, then the body, at
most :data:`MAX_FRAME_BYTES`); their bodies here are UTF-8 JSON unless said otherwise. What a
candidate produces is hostile, so it only ever travels as JSON, never as a pickle, and every
reader caps the sizes it accepts.
"""

from __future__ import annotations

import asyncio
from typing import Any

from evoforge.base import frames, jsonio
from evoforge.base.frames import MAX_FRAME_BYTES, write_all

__all__ = [
    "MAX_FRAME_BYTES",
    "ProtocolError",
    "dumps",
    "encode_frame",
    "read_frame",
    "read_frame_async",
    "write_all",
    "write_frame",
]

ProtocolError = frames.FrameError
"""A peer sent something that is not a frame, or hung up in the middle of one (the sandbox's
name for :class:`evoforge.base.frames.FrameError`)."""

encode_frame = frames.encode
write_frame = frames.write
read_frame = frames.read


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes (:func:`evoforge.base.jsonio.dumps`); NaN and infinities are kept (checked
    later, not lost here)."""
    return jsonio.dumps(obj).encode()


async def read_frame_async(reader: asyncio.StreamReader) -> bytes:
    """Read one frame from an asyncio stream.

    Unlike :func:`evoforge.base.frames.read_async`, an end of the stream is an error wherever
    it comes: a sandbox server that hangs up has died.

    Raises:
        asyncio.IncompleteReadError: the peer hung up (possibly before any byte).
        ProtocolError: the peer announced an oversized frame.
    """
    header = await reader.readexactly(frames.HEADER_BYTES)
    return await reader.readexactly(frames.body_size(header))
