"""New problem folders to start from: ``evoforge new NAME --kind KIND``.

Each kind's files are templates under ``problems/templates/<kind>/`` (installed as package
data; ``.tmpl`` so that no linter, type checker or test collector mistakes them for the
package's own modules). Writing one replaces ``__NAME__`` (in file names and texts) by the
problem's name and ``__FOLDER__`` by the folder as given, and drops the ``.tmpl``. Every
kind's folder runs as written (``evoforge run FOLDER``) and holds a test that runs it
(``python -m pytest FOLDER``):

* ``python``: ``problem.py`` with ``evaluate(output)``, ``seed.py`` (its ``main()``);
* ``native``: a C program with tests (stdin, expected stdout), measured by callgrind;
* ``repo``: a small repository with an ``evoforge.toml`` (files, check and measure commands);
* ``kernel``: a KernelBench-format task (``task.py``) and a Triton seed, which runs in
  Triton's interpreter on a CPU.
"""

from __future__ import annotations

import keyword
import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

SCAFFOLD_KINDS = ("python", "native", "repo", "kernel")
"""The kinds of problem :func:`scaffold` writes, the default first."""

_NAME = "__NAME__"
_FOLDER = "__FOLDER__"
_SUFFIX = ".tmpl"


class ScaffoldError(ValueError):
    """A problem folder cannot be written there; the message says why and what to do."""


def scaffold(folder: Path | str, kind: str = "python", *, name: str | None = None) -> list[Path]:
    """Write a new ``kind`` problem into ``folder``; the paths written, in order.

    Args:
        folder: a folder that does not exist yet (or is empty); its parents are made.
        kind: one of :data:`SCAFFOLD_KINDS`.
        name: the problem's name (an identifier); default: made from the folder's name
            (``my-problem`` gives ``my_problem``).

    Raises:
        ScaffoldError: an unknown kind, a name that is not an identifier, or a folder that
            exists and is not empty (nothing is written then).
    """
    if kind not in SCAFFOLD_KINDS:
        raise ScaffoldError(f"unknown kind {kind!r}; choose one of {', '.join(SCAFFOLD_KINDS)}")
    target = Path(folder)
    name = problem_name(target) if name is None else name
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ScaffoldError(
            f"problem name {name!r} is not an identifier; use letters, digits and underscores"
        )
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        what = "exists and is not empty" if target.is_dir() else "is a file"
        raise ScaffoldError(
            f"{target} {what}; `evoforge new` writes a new folder: give a path that does not "
            "exist yet (or remove what is there)"
        )
    texts = {
        _rename(relative, name): _fill(template.read_text(encoding="utf-8"), name, str(folder))
        for relative, template in _templates(
            resources.files("evoforge.problems") / "templates" / kind
        )
    }
    written = []
    for relative, text in texts.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def problem_name(folder: Path) -> str:
    """The identifier a folder's name makes: other characters become ``_``, and a name that
    starts with a digit gets a ``p_`` in front (``2d-packing`` gives ``p_2d_packing``)."""
    base = re.sub(r"\W", "_", folder.resolve().name) or "problem"
    return f"p_{base}" if base[0].isdigit() else base


def _templates(top: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    """``(relative path, template)`` of every template file under ``top``, sorted."""
    found = []
    for entry in sorted(top.iterdir(), key=lambda e: e.name):
        relative = f"{prefix}{entry.name}"
        if entry.is_dir():
            found += _templates(entry, f"{relative}/")
        elif entry.name.endswith(_SUFFIX):
            found.append((relative, entry))
    return found


def _rename(relative: str, name: str) -> str:
    return relative.removesuffix(_SUFFIX).replace(_NAME, name)


def _fill(text: str, name: str, folder: str) -> str:
    return text.replace(_NAME, name).replace(_FOLDER, folder)
