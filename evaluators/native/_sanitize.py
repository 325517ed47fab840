"""Sanitizer builds as a cascade stage: ThreadSanitizer (data races), AddressSanitizer and
UndefinedBehaviorSanitizer.

A stage with ``"sanitize": "thread"`` compiles the candidate instrumented and runs its tests;
the first report halts the program (``halt_on_error``, exit code 66) and ends the evaluation
with ``runtime_error``, the report (its first lines, cut) as an artifact the model sees. Two
host facts shape it:

- TSan and ASan reserve terabytes of address space for their shadow memory and refuse to
  start under ``RLIMIT_AS`` ("Program is run with limited virtual address space"): their runs
  get no address-space limit (the wall-clock and CPU limits still hold, and the memory cgroup
  where the sandbox has one).
- libomp is not instrumented, so TSan alone reports a correct OpenMP ``reduction`` as a race;
  LLVM's Archer (``OMP_TOOL_LIBRARIES=libarcher.so``) tells it OpenMP's synchronisation.
"""

from __future__ import annotations

from collections.abc import Sequence

EXIT_CODE = 66
"""The exit code a sanitizer report ends the program with."""
REPORT_CHARS = 3000
"""How much of a report is kept (from its start: the first report is the one that matters)."""

_FLAGS = {
    "thread": ("-fsanitize=thread",),
    "address": ("-fsanitize=address",),
    "undefined": ("-fsanitize=undefined", "-fno-sanitize-recover=undefined"),
}
_OPTIONS = {
    "thread": ("TSAN_OPTIONS", "ignore_noninstrumented_modules=1"),
    "address": ("ASAN_OPTIONS", "detect_leaks=0"),  # LeakSanitizer needs ptrace
    "undefined": ("UBSAN_OPTIONS", "print_stacktrace=1"),
}
_MARKERS = {
    "WARNING: ThreadSanitizer: data race": "data_race",
    "WARNING: ThreadSanitizer:": "thread_sanitizer",
    "ERROR: ThreadSanitizer:": "thread_sanitizer",  # e.g. SEGV on unknown address
    "ERROR: AddressSanitizer:": "address_sanitizer",
    "runtime error:": "undefined_behaviour",
}


def sanitizer_flags(sanitizers: Sequence[str]) -> list[str]:
    """The compile flags of a build instrumented with ``sanitizers``."""
    flags = [flag for name in sanitizers for flag in _FLAGS[name]]
    return [*flags, "-fno-omit-frame-pointer"] if flags else []


def sanitizer_env(sanitizers: Sequence[str], archer: str) -> dict[str, str]:
    """The environment of an instrumented run: halt at the first report with exit code 66;
    Archer (``archer``, its path; "" when absent) with ThreadSanitizer."""
    env = {}
    for name in sanitizers:
        variable, extra = _OPTIONS[name]
        env[variable] = f"halt_on_error=1:exitcode={EXIT_CODE}:{extra}"
    if "thread" in sanitizers and archer:
        env["OMP_TOOL_LIBRARIES"] = archer
    return env


def first_report(stderr: str) -> tuple[str, str, str] | None:
    """``(kind, headline, report)`` of the first sanitizer report in ``stderr``: its kind
    (``data_race``, ``thread_sanitizer``, ``address_sanitizer``, ``undefined_behaviour``), its
    first line, and the report cut to :data:`REPORT_CHARS`; None without one."""
    found = [(stderr.find(marker), kind) for marker, kind in _MARKERS.items() if marker in stderr]
    if not found:
        return None
    start, kind = min(found)
    end_of_line = stderr.find("\n", start)
    headline = stderr[start : end_of_line if end_of_line >= 0 else len(stderr)].strip()
    begin = stderr.rfind("==================", 0, start)
    text = stderr[begin if begin >= 0 else start :]
    end = text.find("SUMMARY:")
    if end >= 0:
        text = text[: text.find("\n", end) if "\n" in text[end:] else len(text)]
    return kind, headline[:300], text[:REPORT_CHARS]
