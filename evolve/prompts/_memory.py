"""Optimization memory: a short digest of what has worked and what has failed in a run.

The digest goes into every prompt (until the size limit drops it first), so the model learns
from the run's history and not only from the programs in front of it: the largest improvements
over a parent with the change that made them, which edit kinds and models produce
improvements, and the most common failure reasons.

It is recomputed every ``refresh_every`` evaluations and cached in between. The work is
incremental: each refresh reads only the attempts stored since the last one (by insertion
order), so its cost does not grow with the run. The digest of refresh ``k`` covers exactly the
attempts up to the one that made ``k * refresh_every`` evaluations, so it is a pure function
of the archive: a fresh :class:`OptimizationMemory` (after a resume, even one far past the
last refresh) writes the same digest as one that followed the whole run, and a reproducible
run stays reproducible across resumes.

A writer's memory saves its state in the archive at each refresh (:meth:`Archive.save_memory_state
<evoforge.archive.Archive.save_memory_state>`), so a new session starts from the last checkpoint
and reads only the attempts stored since: starting no longer costs O(run) (about 1 s at 100k
programs). The checkpoint is the state of the same pure function at an earlier refresh, so the
digest is the same either way; one that cannot be used (another version, edited) is ignored.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evoforge.archive import ArchiveError, Status, attempt_outcomes
from evoforge.base.settings import ConfigError
from evoforge.evolve.mining import failure_reason

if TYPE_CHECKING:
    from evoforge.archive import Archive, AttemptOutcome
    from evoforge.problems import Problem

_TOP_IMPROVEMENTS = 3  # changes shown with their diff
_TOP_FAILURES = 5  # failure reasons listed
_PAGE = 2048  # attempts read per query
# of the checkpoint's JSON; another version is ignored (rebuilt). 2: failure reasons mask
# numbers as "#" (evoforge.evolve.mining.mask_numbers), no longer as "N".
_STATE_VERSION = 2


@dataclass
class _Tally:
    attempts: int = 0
    ok: int = 0
    improved: int = 0

    def text(self) -> str:
        return f"{self.improved} improved on their parent, {self.ok} ok, {self.attempts} attempts"


@dataclass
class _State:
    """What the attempts read so far add up to (one run)."""

    run_id: str
    last_rowid: int = 0
    attempts: int = 0
    evaluated: int = 0
    kinds: dict[str, _Tally] = field(default_factory=dict)
    models: dict[str, _Tally] = field(default_factory=dict)
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)
    # (gain, -seq, id, parent score, score, edit kind, model): the largest gains, best first;
    # equal gains keep the earliest
    best: list[tuple[float, int, str, float, float, str, str]] = field(default_factory=list)

    def add(self, outcome: AttemptOutcome) -> None:
        self.last_rowid = outcome.rowid
        self.attempts += 1
        # evaluations, as the run counts them: a tuned child's trials are evaluations too
        self.evaluated += outcome.evaluations if outcome.status.evaluated else 0
        if outcome.edit_kind == "seed":
            return
        improved = (
            outcome.score is not None
            and outcome.parent_score is not None
            and outcome.score > outcome.parent_score
        )
        model = outcome.model or "unknown model"
        for tallies, key in ((self.kinds, outcome.edit_kind), (self.models, model)):
            tally = tallies.setdefault(key, _Tally())
            tally.attempts += 1
            tally.ok += outcome.status is Status.OK
            tally.improved += improved
        if outcome.status is not Status.OK:
            self.failures[(str(outcome.status), failure_reason(outcome.error))] += 1
        if improved:
            assert outcome.score is not None and outcome.parent_score is not None
            gain = outcome.score - outcome.parent_score
            entry = (
                gain, -outcome.seq, outcome.id, outcome.parent_score, outcome.score,
                outcome.edit_kind, model,
            )  # fmt: skip
            self.best.append(entry)
            self.best.sort(reverse=True)
            del self.best[_TOP_IMPROVEMENTS:]

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": _STATE_VERSION,
                "last_rowid": self.last_rowid,
                "attempts": self.attempts,
                "evaluated": self.evaluated,
                "kinds": {k: [t.attempts, t.ok, t.improved] for k, t in self.kinds.items()},
                "models": {m: [t.attempts, t.ok, t.improved] for m, t in self.models.items()},
                "failures": [[s, r, n] for (s, r), n in self.failures.items()],
                "best": [list(entry) for entry in self.best],
            }
        )

    @classmethod
    def from_json(cls, run_id: str, text: str) -> _State | None:
        """The state a checkpoint holds, or None when it is not one this version wrote."""
        try:
            data = json.loads(text)
            if data["version"] != _STATE_VERSION:
                return None
            return cls(
                run_id,
                last_rowid=int(data["last_rowid"]),
                attempts=int(data["attempts"]),
                evaluated=int(data["evaluated"]),
                kinds={k: _Tally(*map(int, t)) for k, t in data["kinds"].items()},
                models={m: _Tally(*map(int, t)) for m, t in data["models"].items()},
                failures=Counter({(str(s), str(r)): int(n) for s, r, n in data["failures"]}),
                best=[
                    (float(g), int(q), str(i), float(b), float(a), str(k), str(m))
                    for g, q, i, b, a, k, m in data["best"]
                ],
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


class OptimizationMemory:
    """The digest of one run, refreshed every ``refresh_every`` evaluations.

    Args:
        refresh_every: evaluations between refreshes; the digest is empty before the first.
        max_chars: the digest's length limit (diffs are trimmed, then dropped, to fit).

    Example::

        memory = OptimizationMemory()
        text = memory.digest(archive, run.id, problem, snapshot.evaluations)
    """

    def __init__(self, refresh_every: int = 50, max_chars: int = 2000) -> None:
        if not (isinstance(refresh_every, int) and refresh_every >= 1):
            raise ConfigError(
                f"memory refresh_every = {refresh_every!r}: expected a whole number of "
                "evaluations >= 1"
            )
        if not (isinstance(max_chars, int) and max_chars >= 200):
            raise ConfigError(
                f"memory max_chars = {max_chars!r}: expected at least 200 characters; to "
                "go without memory, leave the digest out of the prompt context"
            )
        self.refresh_every, self.max_chars = refresh_every, max_chars
        self._state: _State | None = None
        self._epoch = -1
        self._text = ""

    def digest(self, archive: Archive, run_id: str, problem: Problem, evaluations: int) -> str:
        """The digest for a run that has spent ``evaluations`` evaluations.

        Recomputed when ``evaluations`` reaches a new multiple of ``refresh_every`` (or the run
        changes), otherwise the cached text; ``""`` before ``refresh_every`` evaluations.
        """
        epoch = evaluations // self.refresh_every
        if epoch == 0:
            return ""
        state = self._state
        if state is None or state.run_id != run_id:
            state, self._epoch = self._restore(archive, run_id, epoch), -1
        if epoch != self._epoch:
            target = epoch * self.refresh_every
            before = state.last_rowid
            _read_until(archive, state, target)
            self._state, self._epoch = state, epoch
            self._text = self._render(archive, problem, state, target)
            if state.last_rowid != before and state.evaluated >= target and not archive.read_only:
                archive.save_memory_state(run_id, self.refresh_every, epoch, state.to_json())
        return self._text

    def _restore(self, archive: Archive, run_id: str, epoch: int) -> _State:
        """The run's last checkpoint at or before ``epoch``, or an empty state."""
        saved = archive.memory_state(run_id, self.refresh_every)
        if saved is None or saved[0] > epoch:
            return _State(run_id)
        return _State.from_json(run_id, saved[1]) or _State(run_id)

    def _render(self, archive: Archive, problem: Problem, state: _State, evaluations: int) -> str:
        primary = problem.primary
        head = [f"After {evaluations} evaluations ({state.attempts} attempts):"]
        if state.kinds:
            head.append(
                "By edit kind: " + "; ".join(f"{k}: {t.text()}" for k, t in _ranked(state.kinds))
            )
        if len(state.models) > 1:
            head.append(
                "By model: " + "; ".join(f"{m}: {t.text()}" for m, t in _ranked(state.models))
            )
        if state.failures:
            common = sorted(state.failures.items(), key=lambda item: (-item[1], item[0]))
            head.append("Most common failures:")
            head += [
                f"- {status} x{count}: {reason}"
                for (status, reason), count in common[:_TOP_FAILURES]
            ]
        if state.best:
            head.append(
                f"Largest improvements of {primary.name} ({primary.direction}) over the parent:"
            )
        text = "\n".join(head)
        if len(text) > self.max_chars:
            return text[: self.max_chars - 1] + "…"
        changes = []
        for rank, (_, neg_seq, pid, before, after, kind, model) in enumerate(state.best, 1):
            changes.append(
                (
                    f"{rank}. seq {-neg_seq} ({kind}, {model}): {primary.name} "
                    f"{primary.oriented(before):.6g} -> {primary.oriented(after):.6g}",
                    _diff(archive, state.run_id, pid),
                )
            )
        return _fit(text, changes, self.max_chars)


def _read_until(archive: Archive, state: _State, evaluations: int) -> None:
    """Add the attempts stored up to the one that made ``evaluations`` evaluations.

    Attempts after it are left for the next refresh: when a run is resumed, or its memory is
    rebuilt at any later point, each refresh sees exactly the attempts an uninterrupted run's
    memory saw at that refresh, so prompts (and a reproducible run) replay exactly.
    """
    while state.evaluated < evaluations:
        page = attempt_outcomes(archive, state.run_id, after_rowid=state.last_rowid, limit=_PAGE)
        for outcome in page:
            state.add(outcome)
            if state.evaluated >= evaluations:
                return
        if len(page) < _PAGE:
            return  # fewer evaluated attempts stored than counted: take what there is


def _ranked(tallies: dict[str, _Tally]) -> list[tuple[str, _Tally]]:
    return sorted(tallies.items(), key=lambda item: (-item[1].improved, -item[1].attempts, item[0]))


def _diff(archive: Archive, run_id: str, program_id: str) -> str:
    try:
        diff = archive.diff(run_id, program_id)
    except ArchiveError:
        return ""
    return "".join(diff.splitlines(keepends=True)[2:])  # without the ---/+++ file header


def _fit(text: str, changes: list[tuple[str, str]], max_chars: int) -> str:
    """Add each change's line and as much of its diff as the remaining room allows."""
    lines = [line for line, _ in changes]
    room = max_chars - len(text) - sum(len(line) + 1 for line in lines)
    if room < 0:  # not even every change's line fits: as many lines as do, no diffs
        for line in lines:
            if len(text) + len(line) + 1 > max_chars:
                break
            text += "\n" + line
        return text
    share = room // max(1, len(changes))
    out = [text]
    for line, diff in changes:
        out.append(line)
        fence_cost = len("```diff\n\n```") + 1
        if diff and share > fence_cost + 40:
            body = diff if len(diff) <= share - fence_cost else _cut(diff, share - fence_cost)
            out.append(f"```diff\n{body.rstrip()}\n```")
    return "\n".join(out)


def _cut(diff: str, chars: int) -> str:
    """Whole lines of ``diff`` within ``chars``, ending with a marker saying more was cut."""
    marker = "… (diff cut)\n"
    kept, used = [], len(marker)
    for line in diff.splitlines(keepends=True):
        if used + len(line) > chars:
            break
        kept.append(line)
        used += len(line)
    return "".join(kept) + marker
