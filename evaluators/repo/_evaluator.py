"""The ``repo`` evaluator: a repository's own check and measure commands, per candidate.

A problem for it (written by :mod:`evoforge.problems.adapters` from a folder with an
``evoforge.toml``) has a bundle as its program (:func:`~evoforge.problems.make_bundle`) and
declares in ``options``: ``repo_dir`` (the repository), ``files`` (the evolving paths),
``check`` and ``measure`` (shell commands run in the repository's root), and optionally
``setup`` (run once in each copy), ``setup_timeout_s`` and ``exclude`` (globs left out of the
copies), besides the sandbox's own options.

At :meth:`RepoEvaluator.start` each of the ``workers`` evaluation slots gets its own copy of
the repository (:class:`~evoforge.evaluators.repo._copies.Slot`); the base is only read. Per
candidate, a fresh runner (:mod:`evoforge.evaluators.repo.__main__`) resets a free slot's copy,
writes the candidate's files into it and runs ``check`` then ``measure`` in the shared
sandbox, the copy being the sandbox's working directory: an overlay whose writes go to the
candidate's disk quota (``sandbox_disk_mb``; a run that fills it ends ``disk_limit``) and are
gone after it, so the copy itself only ever holds the candidate's files; parallel candidates
therefore never see each other's files or outputs.

Verdicts: the check exits non-zero: ``incorrect``, with its last lines (the prompt shows
them); the measure exits non-zero or prints no JSON object on its last stdout line:
``runtime_error``; a command past ``timeout_s``: ``timeout`` (each command has the whole
``timeout_s``). The metrics are the measure's JSON numbers and booleans, checked against the
objectives.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.archive import EvalResult, Status
from evoforge.evaluators import Availability, Evaluator, run_cascade
from evoforge.evaluators.devices import cpu_fingerprint
from evoforge.evaluators.repo._copies import SetupError, Slot
from evoforge.evaluators.sandbox import SandboxOptions, call_runner, reply_result, server_env
from evoforge.problems import BundleError, ProblemSpecError, split_bundle

if TYPE_CHECKING:
    from evoforge.problems import Problem, Stage

log = logging.getLogger(__name__)

RUNNER = "evoforge.evaluators.repo"
RUNNER_MARGIN_S = 60.0  # interpreter start, reset, and the two commands' sandbox set-up


@dataclass(frozen=True)
class RepoOptions:
    """What a repository problem declares in ``options`` (see the module docstring)."""

    repo_dir: Path
    files: tuple[str, ...]
    check: str
    measure: str
    setup: str | None = None
    setup_timeout_s: float = 900.0
    exclude: tuple[str, ...] = ()
    stages: tuple[dict[str, Any], ...] = ()

    @classmethod
    def of(cls, problem: Problem) -> RepoOptions:
        """The options of ``problem``.

        Raises:
            ProblemSpecError: one is missing or has the wrong type, or the repository moved.
        """
        options, where = problem.options, problem.spec_path
        repo = options.get("repo_dir")
        if not isinstance(repo, str) or not Path(repo).is_dir():
            raise ProblemSpecError(
                where,
                "options['repo_dir']",
                f"{repo!r} is not a folder; run `evoforge run` on the repository again",
            )
        for key in ("check", "measure"):
            if not isinstance(options.get(key), str) or not options[key].strip():
                raise ProblemSpecError(where, f"options[{key!r}]", "missing; give a command")
        files = options.get("files")
        if not isinstance(files, list | tuple) or not files:
            raise ProblemSpecError(where, "options['files']", "missing; list the paths")
        setup = options.get("setup")
        return cls(
            Path(repo),
            tuple(str(f) for f in files),
            str(options["check"]),
            str(options["measure"]),
            str(setup) if setup else None,
            float(options.get("setup_timeout_s", 900.0)),
            tuple(str(p) for p in options.get("exclude") or ()),
            tuple(dict(stage) for stage in options.get("stages") or ()),
        )


class RepoEvaluator(Evaluator):
    """Runs a repository's check and measure commands on each candidate bundle."""

    name: ClassVar[str] = "repo"
    targets: ClassVar[tuple[str, ...]] = ("cpu",)

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        self.options = RepoOptions.of(problem)
        self._sandbox = SandboxOptions.of(problem)
        self._root: Path | None = None
        self._free: asyncio.Queue[Slot] = asyncio.Queue()
        self._slots: list[Slot] = []
        self._lifecycle = asyncio.Lock()  # start and close, one at a time

    @classmethod
    def availability(cls) -> Availability:
        if not sys.platform.startswith("linux"):
            return Availability(False, f"needs Linux (the shared sandbox), not {sys.platform}")
        if shutil.which("sh") is None:
            return Availability(False, "no `sh` on PATH to run the check and measure commands")
        return Availability(True)

    async def start(self) -> None:
        """Prepare one copy of the repository per worker (``setup`` runs in each).

        The copies are offered to evaluations only once all are ready; evaluations that
        arrive meanwhile (or during a :meth:`close`) wait for them.

        Raises:
            ProblemSpecError: ``setup`` failed in a copy.
        """
        async with self._lifecycle:
            if self._root is not None:
                return
            root = Path(tempfile.mkdtemp(prefix="evoforge-repo-"))
            root.chmod(0o711)
            try:
                slots = [
                    await asyncio.to_thread(self._prepare, root / f"slot{index}")
                    for index in range(max(1, self.workers))
                ]
            except BaseException as exc:  # a failed or cancelled start leaves nothing behind
                await asyncio.to_thread(shutil.rmtree, root, True)
                if isinstance(exc, SetupError):
                    raise ProblemSpecError(self.options.repo_dir, "setup", str(exc)) from None
                raise
            self._root, self._slots = root, slots
            for slot in slots:
                self._free.put_nowait(slot)

    def _prepare(self, root: Path) -> Slot:
        options = self.options
        return Slot.prepare(
            root,
            options.repo_dir,
            exclude=options.exclude,
            setup=options.setup,
            setup_timeout_s=options.setup_timeout_s,
            env=server_env(self._sandbox.sandbox_env),
        )

    async def evaluate(self, source: str) -> EvalResult:
        """Check and measure the bundle ``source``; never raises for a bad candidate."""
        try:
            files = split_bundle(source)
        except BundleError as exc:
            return _failed(Status.SYNTAX_ERROR, str(exc))
        if tuple(files) != self.options.files:
            return _failed(
                Status.SYNTAX_ERROR,
                f"the program holds the files {', '.join(files)}; this problem evolves "
                f"{', '.join(self.options.files)} (keep every '# === FILE: ... ===' line)",
            )
        if self._root is None:
            await self.start()
        free = self._free
        slot = await free.get()
        try:
            for _ in range(2):
                slot = await self._intact(slot)
                result = await self._run(slot, files)
                if slot.manifest.is_file():
                    return result
                # Removed from outside while the candidate ran (a candidate cannot reach it):
                # whatever the run said is not the candidate's verdict. Once more, on a new copy.
                log.warning(
                    "repo %s: the copy at %s was removed from outside the run during an "
                    "evaluation; evaluating the candidate again",
                    self.problem.name,
                    slot.root,
                )
            return _failed(
                Status.CRASHED,
                f"the repository's copy at {slot.root} was removed from outside the run "
                "during the evaluation, twice (a cleaner of temporary folders?); the "
                "candidate was not judged",
            )
        finally:
            free.put_nowait(slot)  # to the queue it came from: a close waits on that one

    async def _intact(self, slot: Slot) -> Slot:
        """``slot``, prepared again if its copy was removed from outside the run (a cleaner
        of temporary folders on a long run, say): one ``stat`` per evaluation, where a
        missing copy used to fail every evaluation after it (``manifest.json`` not found)."""
        if slot.manifest.is_file():
            return slot
        log.warning(
            "repo %s: the copy at %s was removed from outside the run; preparing it again",
            self.problem.name,
            slot.root,
        )

        def again() -> Slot:
            shutil.rmtree(slot.root, ignore_errors=True)
            if not slot.root.parent.is_dir():  # the whole root went: as start() made it
                slot.root.parent.mkdir(parents=True)
                slot.root.parent.chmod(0o711)
            return self._prepare(slot.root)

        try:
            return await asyncio.to_thread(again)
        except SetupError as exc:
            raise ProblemSpecError(self.options.repo_dir, "setup", str(exc)) from None

    async def _run(self, slot: Slot, files: dict[str, str]) -> EvalResult:
        problem, options = self.problem, self.options
        request: dict[str, Any] = {
            "slot": str(slot.root),
            "files": files,
            "check": options.check,
            "measure": options.measure,
            "timeout_s": problem.timeout_s,
            "memory_mb": problem.memory_mb,
            "disk_mb": self._sandbox.disk_mb(problem.memory_mb),
            "user": self._sandbox.sandbox_user,
            "network": self._sandbox.sandbox_network,
            "allow_root": self._sandbox.sandbox_allow_root,
        }
        cascade = bool(options.stages and problem.stages)
        commands_s = 2 * problem.timeout_s
        if cascade:
            request["stages"] = list(options.stages)
            commands_s = sum(float(stage["timeout_s"]) for stage in options.stages)
        start = time.perf_counter()
        reply = await call_runner(
            RUNNER,
            request,
            deadline_s=commands_s + RUNNER_MARGIN_S,
            env=server_env(self._sandbox.sandbox_env),
        )
        caller_s = time.perf_counter() - start
        if not cascade or reply.get("status") != "ok" or not reply.get("stages"):
            return reply_result(problem, reply, caller_s, cpu_fingerprint())
        return await self._fold(list(reply["stages"]), caller_s)

    async def _fold(self, replies: list[dict[str, Any]], caller_s: float) -> EvalResult:
        """The runner's per-stage replies through the engine's cascade (thresholds, metric
        names, ``stage_reached``): each stage reads its reply, in order."""
        problem, device = self.problem, cpu_fingerprint()
        pending = iter(enumerate(replies))

        async def run_stage(stage: Stage) -> EvalResult:
            index, reply = next(pending, (-1, None))
            if reply is None:  # the runner stopped earlier than the cascade: say so
                return _failed(Status.CRASHED, f"the runner did not run stage {stage.name!r}")
            waited = caller_s if index == 0 else 0.0  # the call's time, counted once
            return reply_result(problem, reply, waited, device, classify=False)

        return await run_cascade(problem.stages, run_stage, problem=problem)

    async def close(self) -> None:
        """Remove the copies once no evaluation uses them; safe to call twice.

        Evaluations in flight (and those already waiting for a copy) finish first, on the
        copies they hold; an evaluation that starts after the close prepares new copies
        (:meth:`start`). Removing the root under a running evaluation would end it, and every
        later one handed that copy, with ``manifest.json`` not found.
        """
        async with self._lifecycle:
            root, free, slots = self._root, self._free, self._slots
            self._root, self._free, self._slots = None, asyncio.Queue(), []
            for _ in slots:  # each evaluation in flight gives its copy back to `free`
                await free.get()
            if root is not None:
                await asyncio.to_thread(shutil.rmtree, root, True)


def _failed(status: Status, error: str) -> EvalResult:
    return EvalResult(status, {}, {}, {}, {"error": error}, {}, cpu_fingerprint())
