"""Archive size of repository programs: stored by content (changed files against the run's
base) against the same programs stored whole.

    python bench/archive_files.py [--files 5] [--kib 4] [--programs 200]

Each child changes one file of its parent (as a repository edit usually does). The whole-text
archive stores the same bundles with one line before the first header, which makes them
single texts (stored as before m008). Prints both file sizes after VACUUM.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
from pathlib import Path

from evoforge.archive import Archive, Program, Status, program_id
from evoforge.problems import Objective, Problem, make_bundle


def fill(path: Path, bundles: list[str], prefix: str) -> int:
    problem = Problem(
        name="bench", spec_path=Path("/bench/problem.py"), seed_source="x",
        objectives=(Objective("score"),),
    )  # fmt: skip
    with Archive(path) as archive:
        run = archive.create_run(problem, config={}, seed=0).id
        with archive.transaction():
            for seq, text in enumerate(bundles):
                source = prefix + text
                archive.add_program(
                    Program(
                        run_id=run,
                        id=program_id(source),
                        seq=seq,
                        source=source,
                        parent_id=None,
                        island=0,
                        generation=0,
                        status=Status.OK,
                        score=float(seq),
                        cell=0,
                    )  # fmt: skip
                )
    conn = sqlite3.connect(path)
    conn.execute("VACUUM")
    conn.close()
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--kib", type=float, default=4.0)
    parser.add_argument("--programs", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(0)
    line = "value = compute(value) + {n}  # a line of a source file\n"
    lines = max(1, int(args.kib * 1024 / len(line)))
    files = {f"pkg/m{i}.py": "".join(line.format(n=rng.randrange(10**6)) for _ in range(lines))
             for i in range(args.files)}  # fmt: skip
    bundles = []
    for n in range(args.programs):
        path = rng.choice(list(files))
        body = files[path].splitlines(keepends=True)
        body[rng.randrange(len(body))] = line.format(n=n)
        files = {**files, path: "".join(body)}
        bundles.append(make_bundle(files))
    raw = sum(len(b) for b in bundles)
    with tempfile.TemporaryDirectory() as tmp:
        by_files = fill(Path(tmp) / "files.db", bundles, "")
        whole = fill(Path(tmp) / "whole.db", bundles, "# not a bundle\n")
    print(f"{args.programs} programs of {args.files} files x {args.kib:g} KiB "
          f"({raw / 2**20:.2f} MiB of program text)")  # fmt: skip
    print(f"stored whole:       {whole / 2**20:8.2f} MiB")
    print(f"stored by content:  {by_files / 2**20:8.2f} MiB  ({by_files / whole:.2f}x)")


if __name__ == "__main__":
    main()
