"""Archive records as pandas DataFrames, for mining in a notebook.

pandas is optional (``pip install "evoforge[pandas]"``); it is imported only here, when a frame
is asked for.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas

__all__ = ["to_frame"]

# Record fields holding one mapping each: flattened to one column per key ("objectives.score").
_NESTED = ("metrics", "objectives", "descriptors", "artifacts", "timings", "device", "data")


def to_frame(records: Iterable[Any], *, index: str | None = "id") -> pandas.DataFrame:
    """A DataFrame with one row per record: programs, runs, elites, events, model calls.

    Mapping fields are spread over columns named ``field.key`` (``objectives.sum_radii``,
    ``metrics.correct``); enums become their values; ``index`` (``id`` by default, when the
    records have one) becomes the index.

    Example::

        with evoforge.open_archive("runs.db") as archive:
            run = archive.latest_run()
            top = evoforge.to_frame(archive.top(run.id, k=3))
            top[["score", "objectives.sum_radii", "model"]]

    Raises:
        ImportError: pandas is not installed, with the command that installs it.
        TypeError: a record is not a dataclass or a mapping.
    """
    try:
        import pandas
    except ImportError:
        raise ImportError(
            'evoforge.to_frame needs pandas: pip install "evoforge[pandas]" (or pandas)'
        ) from None
    rows = [_row(record) for record in records]
    frame = pandas.DataFrame(rows)
    if index and index in frame.columns:
        frame = frame.set_index(index)
    return frame


def _row(record: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    elif isinstance(record, Mapping):
        fields = dict(record)
    else:
        raise TypeError(
            f"to_frame takes archive records (dataclasses such as Program or RunInfo) or "
            f"mappings, found {type(record).__name__}"
        )
    row: dict[str, Any] = {}
    for name, value in fields.items():
        if name in _NESTED and isinstance(value, Mapping):
            row.update({f"{name}.{key}": _plain(item) for key, item in value.items()})
        else:
            row[name] = _plain(value)
    return row


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value
