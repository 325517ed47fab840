"""Repository programs stored by content: the files that differ from the run's base.

A repository problem's program is a bundle (:func:`evoforge.problems.make_bundle`): every
evolving file under a ``# === FILE: <path> ===`` line. A child usually changes one file of
several, so storing each attempt's whole bundle stores the unchanged files again and again.
Instead (schema ``m008_repository_files``):

- ``file_blobs``: each distinct file section (the text under a header, as the bundle holds it)
  once, found by the SHA-256 of its text: identical files in any program or run cost nothing
  (the file rows hold the blob's integer id);
- ``run_files``: the run's base, its first bundle (the seed): path and blob per file, in order;
- ``program_files``: per program, path -> blob of the files that differ from the base.

Such a program's row has ``source`` NULL and ``source_files`` 1. Every reader still gets the
bundle as ``Program.source``: :func:`source_sql` is the column every program ``SELECT`` reads
(:data:`~evoforge.archive._program.COLUMNS`), which rebuilds the text in SQL from the blobs.
The write side stores a program this way only when that rebuild gives back its exact text
(the same paths as the base, in order, each header on a line of its own); anything else (a
single-file program, a bundle of other files) keeps its text in ``source`` as before. Reading
one back costs one indexed probe per file of the base.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

from evoforge.problems import BundleError, file_sections, header, header_path

_BUNDLE_FLAG = 1


def _header_sql(path: str) -> str:
    """SQL building :func:`~evoforge.problems.header` of ``path`` plus its newline."""
    prefix, suffix = header("\x00").split("\x00")
    return f"'{_quoted(prefix)}' || {path} || '{_quoted(suffix)}' || char(10)"


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def source_sql(alias: str = "") -> str:
    """The ``source`` column as readers see it: the stored text, or the bundle rebuilt from
    ``program_files`` over ``run_files``. ``alias`` prefixes the program's own columns
    (``"p."`` in a join); the subquery's tables have their own column names, so the outer
    row's ``run_id`` and ``id`` resolve to the program row under any alias.

    ``group_concat`` over a subquery ordered by ``rf_ord``: SQLite does not flatten an
    ordered subquery into an aggregate, so the parts come in base order.
    """
    a = alias
    rebuilt = (
        f"(SELECT group_concat(part, '') FROM (SELECT {_header_sql('f.rf_path')} || "
        "b.blob_text AS part FROM run_files AS f LEFT JOIN program_files AS g "
        f"ON g.pf_run = f.rf_run AND g.pf_program = {a}id AND g.pf_path = f.rf_path "
        "JOIN file_blobs AS b ON b.blob_id = coalesce(g.pf_blob, f.rf_blob) "
        f"WHERE f.rf_run = {a}run_id ORDER BY f.rf_ord))"
    )
    return f"CASE WHEN {a}source_files IS NULL THEN {a}source ELSE {rebuilt} END"


def blob_hash(text: str) -> str:
    """The content key of a file section: the hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sections(source: str) -> list[tuple[str, str]] | None:
    """``(path, section text)`` of each file of the bundle ``source``, in order, when joining
    them back under their headers gives ``source`` exactly; None otherwise (not a bundle, a
    malformed one, or one that would not round-trip)."""
    if header_path(source.lstrip().partition("\n")[0]) is None:
        return None  # a bundle's first line is a header: most programs stop here, at once
    try:
        spans = file_sections(source)
    except BundleError:
        return None
    if not spans:
        return None
    parts = [(path, source[start:end]) for path, (start, end) in spans.items()]
    if "".join(f"{header(path)}\n{text}" for path, text in parts) != source:
        return None
    return parts


def _base(conn: sqlite3.Connection, run_id: str) -> list[tuple[str, int]]:
    rows = conn.execute(
        "SELECT rf_path, rf_blob FROM run_files WHERE rf_run = ? ORDER BY rf_ord", (run_id,)
    )
    return [(path, blob) for path, blob in rows]


def _blob_ids(conn: sqlite3.Connection, texts: list[str]) -> list[int]:
    """The id of each text's blob, adding the blobs not stored yet."""
    ids = []
    for text in texts:
        key = blob_hash(text)
        conn.execute(
            "INSERT OR IGNORE INTO file_blobs (blob_hash, blob_text) VALUES (?, ?)", (key, text)
        )
        (found,) = conn.execute(
            "SELECT blob_id FROM file_blobs WHERE blob_hash = ?", (key,)
        ).fetchone()
        ids.append(found)
    return ids


def store_files(conn: sqlite3.Connection, run_id: str, program_id: str, source: str) -> bool:
    """Store ``source`` of program ``program_id`` as blobs against the run's base, when it is a
    bundle of the base's files (the first bundle stored in a run becomes its base); returns
    whether it did (then write the program row with ``source`` NULL and ``source_files`` 1).

    Call inside the transaction that inserts the program row.
    """
    parts = sections(source)
    if parts is None:
        return False
    base = _base(conn, run_id)
    if not base:
        ids = _blob_ids(conn, [text for _, text in parts])
        base = [(path, blob) for (path, _), blob in zip(parts, ids, strict=True)]
        conn.executemany(
            "INSERT INTO run_files (rf_run, rf_ord, rf_path, rf_blob) VALUES (?, ?, ?, ?)",
            [(run_id, order, path, blob) for order, (path, blob) in enumerate(base)],
        )
    if [path for path, _ in base] != [path for path, _ in parts]:
        return False
    base_text = dict(
        conn.execute(
            "SELECT f.rf_path, b.blob_text FROM run_files AS f JOIN file_blobs AS b "
            "ON b.blob_id = f.rf_blob WHERE f.rf_run = ?",
            (run_id,),
        ).fetchall()
    )
    changed = [(path, text) for path, text in parts if text != base_text[path]]
    ids = _blob_ids(conn, [text for _, text in changed])
    conn.executemany(
        "INSERT OR REPLACE INTO program_files (pf_run, pf_program, pf_path, pf_blob) "
        "VALUES (?, ?, ?, ?)",
        [(run_id, program_id, path, blob) for (path, _), blob in zip(changed, ids, strict=True)],
    )
    return True


def stored_row(conn: sqlite3.Connection, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """``row`` (a program row in :data:`~evoforge.archive._program.COLUMNS` order) as it is
    inserted: its source moved to the blobs when :func:`store_files` takes it, and the
    ``source_files`` flag appended."""
    run_id, program_id, source = row[0], row[1], row[3]
    if isinstance(source, str) and store_files(conn, run_id, program_id, source):
        return (*row[:3], None, *row[4:], _BUNDLE_FLAG)
    return (*row, None)


def changed_files(conn: sqlite3.Connection, run_id: str, program_id: str) -> dict[str, str]:
    """The sections in which a program stored by files differs from its run's base (path ->
    text); empty for a program stored whole or equal to the base."""
    rows = conn.execute(
        "SELECT g.pf_path, b.blob_text FROM program_files AS g JOIN file_blobs AS b "
        "ON b.blob_id = g.pf_blob WHERE g.pf_run = ? AND g.pf_program = ?",
        (run_id, program_id),
    )
    return dict(rows.fetchall())
