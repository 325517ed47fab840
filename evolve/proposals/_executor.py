"""A worker loop's default executor that can close the model calls litellm left unawaited.

``litellm.acompletion()`` runs the synchronous ``completion()`` in the loop's default executor,
and that returns the provider's coroutine (``OpenAIChatCompletion.acompletion``,
``OfflineMutator.acompletion``, ...), which ``acompletion()`` then awaits. A call cancelled
while the executor job runs (a run that stops) never receives that coroutine: Python reports it
at garbage collection as "coroutine ... was never awaited". This executor remembers the
coroutines its jobs return until they start; when the worker stops, after every call has ended,
:meth:`close_unawaited` closes the ones that never started: a never-started coroutine has done
nothing, and closing it ends it cleanly.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class CoroutineTrackingExecutor(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` that keeps the coroutines its jobs return until they start.

    Cost: one done-callback per job and a list of the coroutines not started yet (jobs that
    return no coroutine, and started ones, are dropped at once).
    """

    def __init__(self, max_workers: int | None = None) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix="evoforge-proposals")
        self._lock = threading.Lock()
        self._made: list[Any] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        future.add_done_callback(self._note)
        return future

    def _note(self, future: Future[Any]) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        result = future.result()
        if not inspect.iscoroutine(result):
            return
        with self._lock:
            self._made = [c for c in self._made if _unstarted(c)]
            self._made.append(result)

    def close_unawaited(self) -> int:
        """Close every remembered coroutine that never started; returns how many.

        Call it when nothing will await them any more (every call has ended).
        """
        with self._lock:
            made, self._made = self._made, []
        closed = 0
        for coroutine in made:
            if _unstarted(coroutine):
                coroutine.close()
                closed += 1
        return closed


def _unstarted(coroutine: Any) -> bool:
    return inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED
