"""One stored attempt: a candidate program and everything known about it."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evoforge.archive._outcome import Status, status_of
from evoforge.archive._stored_files import source_sql
from evoforge.base import jsonio

if TYPE_CHECKING:
    from evoforge.archive._outcome import EvalResult
    from evoforge.problems import Problem

ID_LENGTH = 16


def program_id(source: str) -> str:
    """The content id of a program: the first 16 hex digits of the SHA-256 of its source.

    The same source always gets the same id, so a run stores each program once and a
    re-proposed program is detected with :meth:`Archive.has_program`.
    """
    return hashlib.sha256(source.encode()).hexdigest()[:ID_LENGTH]


def attempt_id(seq: int) -> str:
    """Id for an attempt with no source (an edit that could not be applied).

    Derived from the attempt number, so such rows never collide with each other or (short of
    a SHA-256 collision) with a real program's content id.
    """
    return program_id(f"\x00edit-error-attempt:{seq}")


@dataclass(frozen=True)
class Program:
    """A candidate as stored in the ``programs`` table, failed attempts included.

    Attributes:
        run_id: the run it belongs to.
        id: :func:`program_id` of ``source`` (:func:`attempt_id` when ``source`` is None).
        seq: attempt number within the run, unique, in the order attempts were handed out.
        source: the full program text; None for ``edit_error`` rows and for ``duplicate``
            rows of an exact copy (the source is the one of ``artifacts["duplicate_of"]``).
        parent_id: id of the program it was derived from; None for the seed.
        island: the island that produced it.
        generation: parent's generation + 1; 0 for the seed.
        status: what happened when it was evaluated.
        edit: the model's raw answer.
        edit_kind: ``seed``, ``diff``, ``rewrite``, ``crossover``, ``repair`` (a fix of a
            failed parent) or ``carry`` (an answer that improved another program, applied
            again to the run's best: ``[search] carry_to_best``).
        score: the primary objective oriented so bigger is better; None unless ``status`` is
            ok and the objective was reported (never NaN).
        cell: MAP-Elites cell index; None unless ``status`` is ok.
        metrics, objectives, descriptors, artifacts, timings, device: as in
            :class:`~evoforge.evaluators.EvalResult`.
        inspiration_ids: ids of the other programs shown to the model.
        model: the model that wrote the edit.
        created_at: Unix time it was recorded.
        evaluations: evaluations of the budget it used if ``status`` says it was evaluated:
            1, plus its knob-tuning trials (each an evaluation too).
        edit_match: how the answer's SEARCH texts were found in the parent, the loosest rule
            any block needed: ``exact``, ``whitespace``, ``reindent`` or ``fuzzy``; None for a
            seed, a rewrite or an answer that could not be applied.
        prompt_variant: id of the prompt variant that asked for it (prompt co-evolution);
            None when prompts do not evolve.
        ast_key: hash of its syntax tree with names, comments and formatting erased (see
            :mod:`evoforge.islands`): equal keys are equivalent programs. None when unknown.
        transfer_from: ``run id/program id`` of the other task's elite its prompt offered
            (a suite run with cross-task transfer on); None when there was none.

    Example::

        with evoforge.open_archive("runs.db") as archive:
            run = archive.latest_run()
            for program in archive.top(run.id, k=3):
                print(program.seq, program.score, program.objectives, program.model)
    """

    run_id: str
    id: str
    seq: int
    source: str | None
    parent_id: str | None
    island: int
    generation: int
    status: Status
    edit: str | None = None
    edit_kind: str = "seed"
    score: float | None = None
    cell: int | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    objectives: dict[str, float] = field(default_factory=dict)
    descriptors: dict[str, float] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    device: dict[str, str] = field(default_factory=dict)
    inspiration_ids: tuple[str, ...] = ()
    model: str | None = None
    created_at: float = 0.0
    evaluations: int = 1
    edit_match: str | None = None
    prompt_variant: str | None = None
    ast_key: str | None = None
    transfer_from: str | None = None

    @classmethod
    def from_result(
        cls,
        result: EvalResult,
        problem: Problem,
        *,
        run_id: str,
        seq: int,
        source: str | None,
        parent_id: str | None,
        island: int,
        generation: int,
        edit: str | None = None,
        edit_kind: str = "seed",
        inspiration_ids: Sequence[str] = (),
        model: str | None = None,
        created_at: float | None = None,
        edit_match: str | None = None,
        prompt_variant: str | None = None,
        ast_key: str | None = None,
        transfer_from: str | None = None,
    ) -> Program:
        """Build the row for an evaluated (or failed) attempt.

        ``score`` and ``cell`` are filled only for an ok result: the score from
        ``problem.score`` (None when the primary objective is missing or NaN, so such a
        program cannot be offered to a grid), the cell from ``problem.cell_of`` (None when a
        descriptor is missing).
        """
        status = Status(result.status)
        score = cell = None
        if status is Status.OK:
            if problem.primary.name in result.objectives:
                score = problem.score(result.objectives)
                if math.isnan(score):
                    score = None
            if all(d.name in result.descriptors for d in problem.descriptors):
                cell = problem.cell_of(result.descriptors)
        return cls(
            run_id=run_id,
            id=program_id(source) if source is not None else attempt_id(seq),
            seq=seq,
            source=source,
            parent_id=parent_id,
            island=island,
            generation=generation,
            status=status,
            edit=edit,
            edit_kind=edit_kind,
            score=score,
            cell=cell,
            metrics=dict(result.metrics),
            objectives=dict(result.objectives),
            descriptors=dict(result.descriptors),
            artifacts=dict(result.artifacts),
            timings=dict(result.timings),
            device=dict(result.device),
            inspiration_ids=tuple(inspiration_ids),
            model=model,
            created_at=time.time() if created_at is None else created_at,
            evaluations=result.evaluations,
            edit_match=edit_match,
            prompt_variant=prompt_variant,
            ast_key=ast_key,
            transfer_from=transfer_from,
        )


# Column order shared by INSERT and SELECT, so rows map to Program positionally.
COLUMNS = (
    "run_id", "id", "seq", "source", "parent_id", "island", "generation", "status", "edit",
    "edit_kind", "score", "cell", "metrics_json", "objectives_json", "descriptors_json",
    "artifacts_json", "timings_json", "device_json", "inspirations_json", "model",
    "created_at", "evaluations", "edit_match", "prompt_variant", "ast_key", "transfer_from",
)  # fmt: skip


def select_list(alias: str = "") -> str:
    """:data:`COLUMNS` as a ``SELECT`` list, ``source`` rebuilt for programs stored by files
    (:func:`~evoforge.archive._stored_files.source_sql`); ``alias`` (``"p."``) prefixes them."""
    return ", ".join(
        f"{source_sql(alias)} AS source" if c == "source" else f"{alias}{c}" for c in COLUMNS
    )


SELECT_SQL = f"SELECT {select_list()} FROM programs"
# The row of to_row() plus the source_files flag (see archive._stored_files.stored_row).
INSERT_SQL = (
    f"INSERT INTO programs ({', '.join(COLUMNS)}, source_files) "
    f"VALUES ({', '.join('?' * (len(COLUMNS) + 1))})"
)


def to_row(p: Program) -> tuple[Any, ...]:
    """The ``programs`` row for ``p``, in :data:`COLUMNS` order."""
    if p.score is not None and math.isnan(p.score):
        raise ValueError(
            f"program {p.id} has a NaN score; store None for 'no score' "
            "(Program.from_result does this)"
        )
    dumps = jsonio.dumps
    return (
        p.run_id, p.id, p.seq, p.source, p.parent_id, p.island, p.generation, str(p.status),
        p.edit, p.edit_kind, None if p.score is None else float(p.score),
        None if p.cell is None else int(p.cell), dumps(p.metrics), dumps(p.objectives),
        dumps(p.descriptors), dumps(p.artifacts), dumps(p.timings), dumps(p.device),
        dumps(list(p.inspiration_ids)), p.model, p.created_at, int(p.evaluations),
        p.edit_match, p.prompt_variant, p.ast_key, p.transfer_from,
    )  # fmt: skip


_FIELDS = tuple(Program.__dataclass_fields__)
# The C scanner behind json.loads; typeshed does not declare the attribute.
_scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _decode_json_columns(texts: Sequence[str | None]) -> list[Any]:
    """The seven ``*_json`` columns of a row, decoded.

    All seven go through one call of the C scanner, as one array: ``json.loads`` adds a
    Python-level wrapper per call (two regex matches and a decoder lookup) that cost more than
    the scanning of these small texts.
    """
    if any(t is None for t in texts):  # written by hand: decode one by one, as stored
        return [None if t is None else jsonio.loads(t) for t in texts]
    joined = f"[{','.join(texts)}]"  # type: ignore[arg-type]
    try:
        decoded, end = _scan_json(joined, 0)
    except StopIteration:
        end = -1
    if end != len(joined):  # malformed, or a column held more than one value
        return jsonio.loads(joined)  # raises the JSONDecodeError that says where
    return decoded


def from_row(row: Sequence[Any]) -> Program:
    """The :class:`Program` for a row selected with :data:`SELECT_SQL`.

    Reading programs is the cost of a long lineage or a large top-k (a 2,000-generation
    lineage decodes 2,000 rows), so this skips the frozen dataclass's ``__init__``, which sets
    each of the 22 fields through ``object.__setattr__``: the instance's ``__dict__`` is filled
    at once with the same values (Program has no ``__post_init__`` to run). Half the cost.
    """
    metrics, objectives, descriptors, artifacts, timings, device, inspirations = (
        _decode_json_columns(row[12:19])
    )
    program = object.__new__(Program)
    program.__dict__.update(
        zip(
            _FIELDS,
            (
                *row[:7], status_of(row[7]), *row[8:12], metrics, objectives, descriptors,
                artifacts, timings, device, tuple(inspirations or ()), *row[19:26],
            ),
            strict=True,
        )
    )  # fmt: skip
    return program
