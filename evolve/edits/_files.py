"""File-headed SEARCH/REPLACE blocks: where a block may apply in a repository bundle.

A repository problem's program is a bundle of files (:func:`evoforge.problems.make_bundle`).
A model answers, as aider's format has it, with blocks headed by the file they change::

    slowstats/core.py
    <<<<<<< SEARCH
    ...
    >>>>>>> REPLACE

A block headed by a file of the bundle applies only inside that file's section; a block with
no line between it and the previous block applies to the same file; a block headed by prose
applies anywhere in the bundle (still only where it matches unambiguously). A heading that
names a file the problem does not evolve is refused with the list of those it does, so a
model learns which files it may change. For a program that is not a bundle, headings are
ignored: the single-file behaviour is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evoforge.evolve.edits._parse import EditBlock, EditError
from evoforge.problems import Block, BundleError, file_sections, header_path

_PREFIXES = ("file:", "path:", "filename:", "in ", "edit ", "changes to ")
_STRIP = " \t`*#:'\""


def heading_path(heading: str) -> str | None:
    """The file path a block's heading line names, or None when it reads as prose.

    Accepts what models write: ``slowstats/core.py``, ```` `slowstats/core.py` ````,
    ``**slowstats/core.py**``, ``File: slowstats/core.py``, ``### slowstats/core.py:`` and
    the bundle's own header line.
    """
    text = heading.strip()
    if (path := header_path(text)) is not None:
        return path
    text = text.strip(_STRIP)
    lowered = text.lower()
    for prefix in _PREFIXES:
        if lowered.startswith(prefix):
            text = text[len(prefix) :].strip(_STRIP)
            break
    if not text or any(c.isspace() for c in text):
        return None
    if "/" not in text and "." not in text.strip("."):
        return None
    return text.removeprefix("./")


@dataclass
class FileScope:
    """The files of the parent bundle, and the file the previous block was headed by."""

    paths: tuple[str, ...] = ()
    _previous: str | None = field(default=None, init=False)

    @classmethod
    def of(cls, parent: str) -> FileScope:
        try:
            return cls(tuple(file_sections(parent)))
        except BundleError:
            return cls()

    def file_of(self, block: EditBlock) -> str | None:
        """The file ``block`` must apply in; None: anywhere.

        Raises:
            EditError: its heading names a file outside the bundle.
        """
        if not self.paths:
            return None
        if not block.heading:
            return self._previous
        path = heading_path(block.heading)
        if path is not None and path not in self.paths:
            raise EditError(
                f"block {block.number} is headed by {path!r}, which is not one of the files "
                f"this problem evolves ({', '.join(self.paths)}); head each block with one of "
                "those paths, exactly as in the program's '# === FILE: <path> ===' lines"
            )
        self._previous = path
        return path

    @property
    def current(self) -> str | None:
        """The file the last block looked at applies in (None: anywhere)."""
        return self._previous if self.paths else None

    def regions(self, block: EditBlock, text: str, regions: list[Block]) -> list[Block]:
        """The EVOLVE-BLOCK regions of ``text`` that ``block`` may apply in."""
        path = self.file_of(block)
        if path is None:
            return regions
        start, end = file_sections(text)[path]
        return [r for r in regions if start <= r.start and r.end <= end]
