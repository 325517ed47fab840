"""The documentation's examples as tests: every fenced block of README.md and docs/**/*.md runs.

The root ``conftest.py`` hands those files to :data:`DOCS` (Sybil), so ``python -m pytest``
collects one test per block, and ``python -m pytest docs/native.md`` runs one page. A page's
blocks run in order, in one temporary folder that is their working directory and ``HOME``, with
one Python namespace. What a block does depends on its fence:

- a ``title="path"`` (any language): the file is written at that path in the page's folder
  (Python is parsed, TOML and YAML loaded). A folder that holds a ``problem.py`` and its seed is
  then loaded by the real loader and run for a few evaluations, before the next block that does
  not name the folder (a block that does, ``evoforge run ./my_problem``, runs it itself): its
  seed must come out ``ok``;
- ``python``: executed in the page's namespace;
- ``bash``: run by ``bash -e -o pipefail``. Install steps are checked, not run (they would need
  the network): ``pip install`` (its extras must exist in pyproject.toml, the files and folders it
  names must exist), ``python3 -m venv``, activating a venv, ``apt-get install`` (packages that
  ``.ci/run`` installs);
- ``text``: output or a picture; not run. An untagged fence, or an untitled one in a language
  that cannot run, fails: the tests must know what each block is.

Budgets run small: ``--budget N``, ``budget=N`` and ``budget = N`` run with ``N // 100``
evaluations, at least :data:`MIN_BUDGET` (the main job's 6000 runs 60). Directives, HTML comments
right above a fence (the page must say the same in its text, which readers see):

- ``<!-- skip: REASON -->``: parsed only (Python by ``ast``, TOML by ``tomllib``, YAML, shell by
  ``bash -n``): for blocks that need a GPU, a network, an API key or a server that never ends;
- ``<!-- requires: NAME ... -->``: skipped, after parsing, where a NAME is missing: ``py:torch`` a
  module this interpreter imports (the ``evoforge`` the blocks run is its), ``clang++-19`` a
  command on ``PATH``; CI installs them all. Modules are marked because a console script on
  ``PATH`` may belong to another environment (``ray`` from another venv) while the run lacks it.

``--8<-- "path"`` lines (pymdownx.snippets) are replaced by that repository file, as the site
shows them.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[2]
MIN_BUDGET = 5
SHELL_TIMEOUT_S = 240
NOT_RUN = {"text"}  # output, diagrams
RUN = {"python", "bash"}
PARSED = {"python", "bash", "toml", "yaml", "text", "c", "cpp", "rust", "diff"}

FENCES = RawFencedCodeBlockLexer(info_pattern=re.compile(r"(?P<info>[^\n]*)\n"))
# ```python title="path" or, where ruff format must leave the block alone (a snippet line is
# not Python), ```{.python title="path"}
INFO = re.compile(
    r'^(?P<brace>\{\.)?(?P<language>[\w+-]*)\s*(?:title="(?P<title>[^"]+)")?\s*(?(brace)\})$'
)
DIRECTIVE = re.compile(r"<!--\s*(?P<name>skip|requires):\s*(?P<arguments>.*?)\s*-->\s*$")
SNIPPET = re.compile(r'^(?P<indent>\s*)--8<--\s+"(?P<path>[^"]+)"\s*$', re.M)
BUDGET = re.compile(r"(?<![\w-])(?P<key>--budget[ =]|budget ?= ?)(?P<n>\d+)\b")
# Segments of a shell line (split at `&&`) that install software: checked, not run.
VENV = re.compile(r"^(python3? -m venv \S+|(\.|source) \S*bin/activate)$")
PIP = re.compile(r"^(?:python3? -m )?pip install (?P<args>.+)$")
APT = re.compile(r"^(?:sudo )?apt-get (?:update\b.*|install (?P<packages>.+))$")


@dataclass
class Block:
    """One fenced block: its language, its title (a file to write) and its directives."""

    language: str
    title: str | None
    source: str
    line: int
    skip: str | None = None
    requires: list[str] = field(default_factory=list)


def cut_budgets(text: str) -> str:
    """``text`` with every evaluation budget divided by 100 (at least :data:`MIN_BUDGET`)."""

    def cut(match: re.Match[str]) -> str:
        return f"{match['key']}{max(MIN_BUDGET, int(match['n']) // 100)}"

    return BUDGET.sub(cut, text)


def expand_snippets(text: str) -> str:
    """``--8<-- "path"`` lines replaced by the repository file they name (as the site does)."""

    def include(match: re.Match[str]) -> str:
        path = ROOT / match["path"]
        assert path.is_file(), f"snippet {match['path']!r}: no such file in the repository"
        return "".join(match["indent"] + line for line in path.read_text().splitlines(True))

    return SNIPPET.sub(include, text)


def directives_before(text: str, start: int) -> list[tuple[str, str]]:
    """The ``<!-- name: arguments -->`` lines right above position ``start`` (blank lines and
    other directives may come between)."""
    found = []
    for line in reversed(text[:start].splitlines()[-6:]):
        if not line.strip():
            continue
        match = DIRECTIVE.search(line.strip())
        if not match:
            break
        found.append((match["name"], match["arguments"]))
    return found


def parse_blocks(document: Document) -> list[Region]:
    """Sybil parser: a region per fenced block, and one at the end of the page (the page's own
    checks: problem folders not yet run)."""
    regions = []
    for region in FENCES(document):
        info = INFO.match(region.lexemes["info"].strip())
        line = document.text.count("\n", 0, region.start) + 1
        if info is None:
            raise ValueError(f"{document.path}:{line}: cannot read the fence {region.lexemes}")
        block = Block(
            language=info["language"],
            title=info["title"],
            source=expand_snippets(str(region.lexemes["source"])),
            line=line,
        )
        for name, arguments in directives_before(document.text, region.start):
            if name == "skip":
                block.skip = arguments
            else:
                block.requires += arguments.split()
        region.parsed, region.evaluator = block, evaluate_block
        regions.append(region)
    end = len(document.text)
    regions.append(Region(end, end, parsed=None, evaluator=check_page))
    return regions


# --- a page's state -------------------------------------------------------------------------


@dataclass
class Page:
    """What a page's blocks share: the folder they run in and the problem folders written."""

    folder: Path
    saved_cwd: str
    saved_env: dict[str, str]
    problems_to_run: set[Path] = field(default_factory=set)
    skipped_folders: set[Path] = field(default_factory=set)


def setup_page(namespace: dict[str, Any]) -> None:
    """A fresh folder, working directory and ``HOME`` for a page; the user's are never touched."""
    folder = Path(tempfile.mkdtemp(prefix="evoforge-docs-"))
    (folder / "home").mkdir()
    namespace["page"] = Page(folder, os.getcwd(), dict(os.environ))
    os.environ["HOME"] = str(folder / "home")
    os.environ.pop("EVOFORGE_DB", None)  # the default, ./evoforge.db, is in the page's folder
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # litellm's price map from disk
    for who in ("AUTHOR", "COMMITTER"):  # git commits in a fresh HOME: a reader has a name
        os.environ[f"GIT_{who}_NAME"] = "evoforge docs"
        os.environ[f"GIT_{who}_EMAIL"] = "docs@example.invalid"
    bin_dir = str(Path(sys.executable).parent)  # the `evoforge` command of this environment
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    os.chdir(folder)


def teardown_page(namespace: dict[str, Any]) -> None:
    page: Page = namespace["page"]
    os.chdir(page.saved_cwd)
    os.environ.clear()
    os.environ.update(page.saved_env)
    shutil.rmtree(page.folder, ignore_errors=True)


# --- evaluating blocks ----------------------------------------------------------------------


def evaluate_block(example: Example) -> None:
    """Check, then run, one block. A failure is one AssertionError that holds the whole story:
    Sybil's pytest integration cannot show a chained exception (its traceback filter fails)."""
    block: Block = example.parsed
    where = f"{Path(example.path).name}:{block.line}"
    try:
        run_block(example, block, where)
    except AssertionError as exc:
        raise AssertionError(str(exc)) from None
    except Exception:
        raise AssertionError(f"{where}: the block raised\n{traceback.format_exc()}") from None


def run_block(example: Example, block: Block, where: str) -> None:
    page: Page = example.namespace["page"]
    if not block.language:
        raise AssertionError(f"{where}: tag the fence with its language (python, bash, text, ...)")
    if block.language not in PARSED:
        raise AssertionError(f"{where}: the doc tests cannot check ```{block.language} blocks")
    if block.title is None and block.language not in RUN | NOT_RUN:
        raise AssertionError(
            f'{where}: a ```{block.language} block needs title="path" (the file it shows), '
            "or the tag text if it is output"
        )
    parse(block, where)
    if block.skip is not None:
        return
    missing = [name for name in block.requires if not available(name, where)]
    if missing:
        if block.title:
            page.skipped_folders.add((page.folder / block.title).parent)
        pytest.skip(f"{where} needs {', '.join(missing)}")
    if block.title is not None:
        write_file(page, block, where)
        return
    if block.language in NOT_RUN:
        return
    if block.language == "python":
        run_pending_problems(page, mentioned_in=block.source)
        source = cut_budgets(block.source)
        code = compile("\n" * (block.line) + source, example.path, "exec")
        try:
            exec(code, example.namespace)
        except Exception:  # an assert in the block too: the block's failure, with its traceback
            raise AssertionError(f"{where}: the block raised\n{traceback.format_exc()}") from None
        return
    script = "\n".join(shell_lines(block.source, where))
    if script.strip():  # not only install steps
        run_pending_problems(page, mentioned_in=block.source)
        run_shell(script, where)


def check_page(example: Example) -> None:
    """At the end of a page: the problem folders that no block ran are run now."""
    try:
        run_pending_problems(example.namespace["page"], mentioned_in="", last=True)
    except Exception:
        raise AssertionError(f"end of the page:\n{traceback.format_exc()}") from None


def parse(block: Block, where: str) -> None:
    """Every block parses, the skipped ones too."""
    text = block.source
    try:
        if block.language == "python":
            ast.parse(text)
        elif block.language == "toml":
            tomllib.loads(text)
        elif block.language == "yaml":
            yaml.safe_load(text)
        elif block.language == "bash":
            subprocess.run(["bash", "-n"], input=text, text=True, check=True, capture_output=True)
    except subprocess.CalledProcessError as exc:
        raise AssertionError(f"{where}: bash -n refuses the block:\n{exc.stderr}") from None
    except (SyntaxError, tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise AssertionError(f"{where}: the {block.language} block does not parse: {exc}") from exc


def available(name: str, where: str) -> bool:
    """``py:module`` importable here, or a command on PATH. A bare name that is no command but
    a module here is refused: it would skip wherever it is installed (``torch`` has no command)."""
    module = name.removeprefix("py:")
    if module != name:
        return importlib.util.find_spec(module) is not None
    if shutil.which(name) is not None:
        return True
    if module.isidentifier() and importlib.util.find_spec(module) is not None:
        raise AssertionError(f"{where}: requires {name!r} is a module, not a command: py:{name}")
    return False


def write_file(page: Page, block: Block, where: str) -> None:
    path = (page.folder / block.title).resolve()
    assert path.is_relative_to(page.folder), f"{where}: title {block.title!r} leaves the folder"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cut_budgets(block.source))
    if (path.parent / "problem.py").is_file() and path.parent not in page.skipped_folders:
        page.problems_to_run.add(path.parent)


def run_pending_problems(page: Page, mentioned_in: str, last: bool = False) -> None:
    """Load and run (a few evaluations) each written problem folder the block does not name;
    one whose seed is not written yet waits for it, until the ``last`` call (the page's end)."""
    import evoforge
    from evoforge.problems import ProblemSpecError, load_problem

    for folder in sorted(page.problems_to_run):
        if folder.name in mentioned_in:
            page.problems_to_run.discard(folder)  # this block runs it
            continue
        if folder in page.skipped_folders:
            continue
        try:
            load_problem(folder)
        except ProblemSpecError as exc:
            if exc.field == "seed_file" and not last:
                continue  # its seed comes in a later block
            raise
        page.problems_to_run.discard(folder)
        result = evoforge.run(folder, budget=MIN_BUDGET, db=page.folder / ".doc-checks.db")
        assert result.evaluations >= 1, f"{folder.name}: nothing was evaluated ({result.status})"


def run_shell(script: str, where: str) -> None:
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        timeout=SHELL_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        tail = (done.stdout[-3000:] + "\n" + done.stderr[-3000:]).strip()
        raise AssertionError(
            f"{where}: the shell block exited {done.returncode}; it ran:\n{script}\n\n{tail}"
        )


def shell_lines(source: str, where: str) -> list[str]:
    """The block's lines with budgets cut and install steps taken out (after checking them)."""
    lines = []
    for line in cut_budgets(source).splitlines():
        kept = []
        for segment in line.split(" && "):
            if install_step(segment.strip(), where):
                continue
            kept.append(segment)
        if kept:
            lines.append(" && ".join(kept))
    return lines


def install_step(segment: str, where: str) -> bool:
    """Whether ``segment`` installs software; if it does, what it names must exist."""
    if VENV.match(segment):
        return True
    if pip := PIP.match(segment):
        check_pip_install(pip["args"], where)
        return True
    if apt := APT.match(segment):
        if apt["packages"]:
            from tests.packaging.test_readme_packages import ci_packages

            named = {word for word in apt["packages"].split() if not word.startswith("-")}
            unknown = named - ci_packages()
            assert not unknown, f"{where}: apt-get installs {unknown}, which .ci/run does not"
        return True
    return False


def check_pip_install(args: str, where: str) -> None:
    """The extras of evoforge named exist; the files (-c, -r) and folders (-e) exist."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    words = shlex.split(args)
    for flag, value in zip(["", *words], words, strict=False):
        if value.startswith("-"):
            continue
        requirement = re.match(r"^(?P<name>[\w.\-/]+)(?:\[(?P<extras>[\w,\-]+)\])?$", value)
        assert requirement, f"{where}: pip install {value!r}: not a requirement this test reads"
        name = requirement["name"]
        for extra in (requirement["extras"] or "").split(","):
            if extra and name in (".", "evoforge"):
                assert extra in extras, f"{where}: pip install {value}: no extra {extra!r}"
        if flag in ("-c", "-r"):
            assert (ROOT / name).is_file(), f"{where}: pip install {flag} {name}: no such file"
        elif flag == "-e" or name.startswith(("./", ".")):
            assert (ROOT / name / "pyproject.toml").is_file(), f"{where}: {name}: no project"
        else:
            assert name == "evoforge", f"{where}: pip install {name}: only evoforge is checked"


DOCS = Sybil(
    parsers=[parse_blocks],
    patterns=["README.md", "docs/**/*.md", "docs/*.md"],
    path=str(ROOT),
    setup=setup_page,
    teardown=teardown_page,
)
