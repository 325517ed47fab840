"""The one frame codec (evoforge.base.frames) and the two wire formats built on it."""

from __future__ import annotations

import asyncio
import os
import struct
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given, strategies as st

from evoforge.base import frames
from evoforge.evaluators.sandbox import ProtocolError, read_frame_async
from evoforge.evolve.proposals import _frames as proposal_frames

OVERSIZED = struct.pack("!I", frames.MAX_FRAME_BYTES + 1)


def _pipe_with(data: bytes) -> int:
    """A read end holding ``data`` and then the end of the stream."""
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return r


def _read_async(read: Callable[[asyncio.StreamReader], Awaitable[Any]], data: bytes) -> Any:
    """``read`` applied to an asyncio stream holding ``data`` and then its end."""

    async def main() -> Any:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        return await read(reader)

    return asyncio.run(main())


@given(st.lists(st.binary(max_size=300), max_size=5))
def test_bodies_come_back_whole_and_in_order(bodies):
    stream = b"".join(frames.encode(body) for body in bodies)
    r = _pipe_with(stream)
    try:
        assert [frames.read(r) for _ in bodies] == bodies
        assert frames.read(r) is None  # then a clean end
    finally:
        os.close(r)

    async def read_all(reader: asyncio.StreamReader) -> list[bytes | None]:
        return [await frames.read_async(reader) for _ in range(len(bodies) + 1)]

    assert _read_async(read_all, stream) == [*bodies, None]


@pytest.mark.parametrize(
    "data",
    [frames.encode(b"body")[:2], frames.encode(b"body")[:6], OVERSIZED + b"x"],
    ids=["inside-the-header", "inside-the-body", "oversized"],
)
def test_both_readers_refuse_what_is_not_a_whole_frame(data):
    r = _pipe_with(data)
    try:
        with pytest.raises(frames.FrameError):
            frames.read(r)
    finally:
        os.close(r)
    with pytest.raises(frames.FrameError):
        _read_async(frames.read_async, data)


def test_an_oversized_header_is_refused_before_its_body_is_read():
    with pytest.raises(frames.FrameError, match="limit is 268435456"):
        frames.body_size(OVERSIZED)
    assert frames.body_size(struct.pack("!I", frames.MAX_FRAME_BYTES)) == frames.MAX_FRAME_BYTES


def test_a_deadline_ends_the_wait_for_a_silent_peer():
    r, w = os.pipe()
    try:
        with pytest.raises(TimeoutError):
            frames.read(r, deadline=time.perf_counter())
    finally:
        os.close(r)
        os.close(w)


def test_the_sandbox_reader_treats_any_hang_up_as_the_peer_dying():
    # Its callers (the Python and LLVM evaluators) catch IncompleteReadError as a dead server.
    for data in (b"", frames.encode(b"body")[:6]):
        with pytest.raises(asyncio.IncompleteReadError):
            _read_async(read_frame_async, data)
    with pytest.raises(ProtocolError):
        _read_async(read_frame_async, OVERSIZED)
    assert _read_async(read_frame_async, frames.encode(b"{}")) == b"{}"


def test_proposal_frames_carry_objects_and_refuse_oversized_ones_when_written(monkeypatch):
    message = ("proposal", {"diff": "x", "n": 3})
    assert _read_async(proposal_frames.read, proposal_frames.encode(message)) == (message)
    monkeypatch.setattr(proposal_frames, "MAX_FRAME", 16)
    with pytest.raises(proposal_frames.FrameError, match="exceeds the 16 byte limit"):
        proposal_frames.encode("x" * 100)
    with pytest.raises(proposal_frames.FrameError, match="unreadable frame"):
        proposal_frames.decode(b"not a pickle")
