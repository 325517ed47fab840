"""Prompt variants of a run (table ``prompt_variants``) and how their children fared.

A prompt variant is a set of template overrides (the system message and the task
instructions) that some of a run's candidates were asked with; ``programs.prompt_variant``
names the variant of each child. A variant's fitness is its children's improvement rate,
counted here from the programs themselves, so the numbers a bandit replays at a session's
start are the ones ``evoforge prompts`` shows, and no counter can drift from the archive.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from evoforge.archive._base import Store
from evoforge.archive._outcome import Status

VariantOrigin = Literal["default", "bank", "model", "recombination"]
"""How a variant came to be: the problem's own templates (``default``), the best variant with
an instruction from the built-in bank (``bank``), a model's rewrite of the best (``model``),
or two variants' templates combined (``recombination``)."""
ORIGINS: tuple[str, ...] = get_args(VariantOrigin)
_TEMPLATE_PREFIXES = ("system", "task_")  # answer formats never vary: parsing depends on them
_NOT_EVALUATED = ", ".join(f"'{s}'" for s in Status if not s.evaluated)


def variant_id(templates: Mapping[str, str]) -> str:
    """The content id of a variant: the first 16 hex digits of the SHA-256 of its templates
    (as sorted JSON), so the same templates are one variant however often they are written."""
    text = json.dumps(dict(templates), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class PromptVariant:
    """One prompt variant of a run (a row of ``prompt_variants``).

    Attributes:
        run_id: the run.
        id: :func:`variant_id` of ``templates``.
        parent_id: the variant it was derived from; None for the run's first (``default``).
        seq: the attempt number after which it was made (0: at the run's start).
        origin: see :data:`VariantOrigin`.
        templates: template overrides by name: ``system`` and ``task_*`` only.
        note: why it was made (the instruction added, the variants combined, the model's
            summary).
        created_at: Unix time it was made.

    Use :meth:`make` to build one: it computes the id.
    """

    run_id: str
    id: str
    parent_id: str | None
    seq: int
    origin: VariantOrigin
    templates: Mapping[str, str] = field(hash=False)
    note: str = ""
    created_at: float = 0.0

    @classmethod
    def make(
        cls,
        run_id: str,
        templates: Mapping[str, str],
        *,
        origin: VariantOrigin,
        parent_id: str | None = None,
        seq: int = 0,
        note: str = "",
        created_at: float | None = None,
    ) -> PromptVariant:
        """A variant of ``templates`` with its content id (and ``created_at`` now by default)."""
        templates = dict(sorted(templates.items()))
        return cls(
            run_id=run_id,
            id=variant_id(templates),
            parent_id=parent_id,
            seq=seq,
            origin=origin,
            templates=templates,
            note=note,
            created_at=time.time() if created_at is None else created_at,
        )


@dataclass(frozen=True)
class VariantStats:
    """What a variant's children did.

    Attributes:
        variant_id: the variant.
        children: stored attempts asked with it (any status).
        evaluated: those that used an evaluation (not edit errors, syntax errors, duplicates).
        improved: those that scored above their parent, or were scored while their parent
            (a failure being repaired) was not: the rule of :func:`~evoforge.archive.improved`,
            which the model ensemble uses too.
        improvement_rate: ``improved / evaluated``; None before the first evaluation.
        best_score: the best score of its children (oriented: bigger is better); None if none.
    """

    variant_id: str
    children: int = 0
    evaluated: int = 0
    improved: int = 0
    best_score: float | None = None

    @property
    def improvement_rate(self) -> float | None:
        return self.improved / self.evaluated if self.evaluated else None


_COLUMNS = "run_id, id, parent_id, seq, origin, templates_json, note, created_at"


class PromptVariants(Store):
    """The ``prompt_variants`` table (mixed into :class:`~evoforge.archive.Archive`)."""

    def add_prompt_variant(self, variant: PromptVariant) -> bool:
        """Store ``variant``; False (and nothing written) when the run already has it.

        Raises:
            ValueError: the id is not the templates' content id, a template name is not
                ``system`` or ``task_*``, or the origin is unknown.
            ArchiveError: the run does not exist.
        """
        if variant.id != variant_id(variant.templates):
            raise ValueError(
                f"prompt variant {variant.id} does not match its templates' content id "
                f"{variant_id(variant.templates)}; build it with PromptVariant.make"
            )
        wrong = sorted(n for n in variant.templates if not n.startswith(_TEMPLATE_PREFIXES))
        if wrong:
            raise ValueError(
                f"prompt variant {variant.id}: templates {', '.join(wrong)} cannot vary; a "
                "variant overrides only 'system' and 'task_*' templates"
            )
        if variant.origin not in ORIGINS:
            raise ValueError(
                f"prompt variant {variant.id}: origin {variant.origin!r} is not one of "
                f"{', '.join(ORIGINS)}"
            )
        if not self._run_exists(variant.run_id):
            raise self._no_run(variant.run_id)
        cursor = self.conn.execute(
            f"INSERT INTO prompt_variants ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, id) DO NOTHING",
            (
                variant.run_id,
                variant.id,
                variant.parent_id,
                variant.seq,
                variant.origin,
                json.dumps(dict(variant.templates), sort_keys=True, ensure_ascii=False),
                variant.note,
                variant.created_at,
            ),
        )
        return cursor.rowcount == 1

    def prompt_variants(self, run_id: str) -> list[PromptVariant]:
        """The run's variants, oldest first (by ``seq``, then time made, then id)."""
        # The primary key (run_id, id) bounds the scan to the run's few variants.
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM prompt_variants WHERE run_id = ? ORDER BY seq, created_at, id",
            (run_id,),
        )
        return [
            PromptVariant(
                run_id=r[0], id=r[1], parent_id=r[2], seq=r[3], origin=r[4],
                templates=json.loads(r[5]), note=r[6] or "", created_at=r[7],
            )
            for r in rows
        ]  # fmt: skip

    def prompt_variant_stats(self, run_id: str) -> list[VariantStats]:
        """Children, evaluations, improvements and best score of each stored variant of the
        run, in :meth:`prompt_variants` order (a variant with no child yet has zeros).

        One pass over the run's children that have a variant, through idx_programs_variant
        (run_id, prompt_variant, status, score); each parent's score is one primary-key probe.
        """
        rows = self.conn.execute(
            "SELECT c.prompt_variant, count(*), "
            f"sum(c.status NOT IN ({_NOT_EVALUATED})), "
            "sum(c.score IS NOT NULL AND (p.score IS NULL OR c.score > p.score)), "
            "max(c.score) "
            "FROM programs AS c LEFT JOIN programs AS p "
            "ON p.run_id = c.run_id AND p.id = c.parent_id "
            "WHERE c.run_id = ? AND c.prompt_variant IS NOT NULL GROUP BY c.prompt_variant",
            (run_id,),
        )
        counted = {r[0]: VariantStats(r[0], r[1], r[2], r[3], r[4]) for r in rows}
        return [counted.get(v.id, VariantStats(v.id)) for v in self.prompt_variants(run_id)]
