"""Requests a session has sent: no request goes out identical to one already answered.

A deterministic or low-temperature model answers the same messages with the same text, so a
request identical to one already answered buys, at best, a copy of a child the run already
has: a paid call for nothing. The controller therefore keys every request
(:func:`request_key`) and, when the key was seen, varies what honestly varies before it
sends anything (:mod:`evoforge.evolve.search._asking`): the selection drawn anew (another parent
or other inspirations), then a focus instruction from the built-in bank
(:data:`~evoforge.evolve.prompts.FRAGMENTS`) added to the task.

The key hashes what a request's messages are made from, not the messages themselves: they
are built in the proposal workers (and fitted to the model's context window there), from the
prompt context, the templates and the session's prompt settings by a pure function
(:func:`~evoforge.evolve.prompts.build_messages`), so equal inputs give equal messages, and
the controller need not build every prompt twice. Programs are keyed by id (a hash of their
source; what a prompt shows of one never changes once it is stored). The model and every
parameter its request carries (:meth:`~evoforge.evolve.models.ModelSpec.request_params`: the
endpoint, the sampling settings) are in the key. The per-request ``seed`` is only where the
provider is known to answer by it (:data:`SEEDED_PROVIDERS`: the offline model, whose answers
are drawn from it): elsewhere a provider may ignore it (most local servers do), and a
greedy-decoding model answers alike whatever it is. So the offline model's requests never
repeat, and its runs draw exactly what they drew before this ledger existed.

The ledger lives in memory; every answered call's key is stored with the call
(``llm_calls.request_key``), and a resumed run's ledger starts from the run's stored keys, so a
request answered before a stop is not sent again after it.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evoforge.evolve.models import ModelSpec
    from evoforge.evolve.prompts import PromptContext

SEEDED_PROVIDERS = ("offline/",)
"""Model-string prefixes of providers whose answer is a function of the request's seed."""
MAX_ANSWERED = 200_000
"""Answered keys remembered (16 bytes each, oldest forgotten first): a long run's worth."""


def request_key(
    context: PromptContext,
    spec: ModelSpec,
    templates: Mapping[str, str],
    *,
    temperature: float,
    max_tokens: int,
    seed: int,
) -> bytes:
    """A 16-byte key that two requests share when their model would see the same messages
    with the same parameters (see the module docstring for what it covers and why)."""
    second = context.second_parent
    content = {
        "model": [
            spec.model,
            seed if spec.model.startswith(SEEDED_PROVIDERS) else None,
            spec.request_params({"temperature": temperature, "max_tokens": max_tokens}),
        ],
        "mode": str(context.mode),
        "parent": context.parent.id,
        "second": None if second is None else second.id,
        "inspirations": [p.id for p in context.inspirations],
        "foreign": [f.ref for f in context.foreign],
        "top": [p.id for p in context.top_programs],
        "failures": [f.program.id for f in context.lineage_failures],
        "nothing_new": [n.program.id for n in context.nothing_new],
        "memory": context.memory_digest,
        "parent_diff": context.parent_diff,
        "editable": context.editable_note,
        "templates": sorted(templates.items()),
    }
    data = json.dumps(content, sort_keys=True, default=str).encode()
    return hashlib.blake2b(data, digest_size=16).digest()


class RequestLedger:
    """The keys of the requests a session has sent: in flight, and answered.

    A key is *seen* from :meth:`begin` on. :meth:`answered` moves it to the answered set
    (bounded by :data:`MAX_ANSWERED`); :meth:`abandon` forgets it (the call failed: the model
    said nothing, so the same request may go out again).

    Attributes:
        varied: requests that were varied because their first form was seen.
        repeated: requests sent although every variation tried was seen (the last one is
            sent: the candidate is not dropped).
    """

    def __init__(self, answered: Iterable[bytes] = (), max_answered: int = MAX_ANSWERED) -> None:
        """``answered``: keys answered before (a resumed run's, oldest first)."""
        self._answered: OrderedDict[bytes, None] = OrderedDict.fromkeys(answered)
        self._in_flight: dict[bytes, int] = {}
        self._max = max_answered
        self.varied = 0
        self.repeated = 0
        while len(self._answered) > self._max:
            self._answered.popitem(last=False)

    def seen(self, key: bytes) -> bool:
        """Whether a request with this key was answered or is in flight."""
        return key in self._in_flight or key in self._answered

    def begin(self, key: bytes) -> None:
        """A request with this key is about to be sent."""
        self._in_flight[key] = self._in_flight.get(key, 0) + 1

    def answered(self, key: bytes) -> None:
        """The request begun with this key was answered."""
        self._settle(key)
        self._answered[key] = None
        self._answered.move_to_end(key)
        while len(self._answered) > self._max:
            self._answered.popitem(last=False)

    def abandon(self, key: bytes) -> None:
        """The request begun with this key got no answer (failed or cancelled)."""
        self._settle(key)

    def _settle(self, key: bytes) -> None:
        count = self._in_flight.get(key, 0)
        if count <= 1:
            self._in_flight.pop(key, None)
        else:
            self._in_flight[key] = count - 1
