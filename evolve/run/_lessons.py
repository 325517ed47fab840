"""What a run's model servers taught it, kept with the run so a resumed run starts from it.

A server teaches a session its real context window (a refusal that names it) and how many of
its own tokens a tiktoken token is (:mod:`evoforge.evolve.proposals._calibration`). Learned
again after every resume, each lesson would cost again: a refused call per call in flight for
a window, a prompt fitted too small until the ratio is known. So the controller stores them
as a ``model_learned`` event whenever a window or a ratio changes (the whole of it, the latest
last), inside the transaction of the call that taught it, and a session reads the latest back
before its proposal workers start (each worker starts from what the controller's process
knows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evoforge.evolve.proposals import restore_calibration, stored_calibration

if TYPE_CHECKING:
    from evoforge.archive import Archive
    from evoforge.evolve.models import ModelSpec

LEARNED_EVENT = "model_learned"
"""The event holding what the run's model servers taught it."""


def restore_lessons(archive: Archive, run_id: str) -> None:
    """Take in what the run's servers taught its earlier sessions (call before the proposal
    workers start)."""
    stored = archive.events(run_id, LEARNED_EVENT)
    if stored:
        restore_calibration(stored[-1].data.get("servers", []))


class Lessons:
    """Stores what a session's servers teach it (see the module docstring)."""

    def __init__(self, archive: Archive, run_id: str, specs: Sequence[ModelSpec]) -> None:
        self.archive, self.run_id, self.specs = archive, run_id, tuple(specs)
        self._kept = self._facts(stored_calibration(self.specs))

    def keep(self, seq: int) -> None:
        """Store what changed since the last time (inside the caller's transaction; a look
        at a few in-memory facts when nothing did)."""
        servers = stored_calibration(self.specs)
        facts = self._facts(servers)
        if facts != self._kept:
            self._kept = facts
            self.archive.record_event(
                self.run_id, LEARNED_EVENT, seq=seq, data={"servers": servers}
            )

    @staticmethod
    def _facts(servers: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``servers`` without their sample counts (one more sample is not worth an event)."""
        return [{k: v for k, v in server.items() if k != "samples"} for server in servers]
