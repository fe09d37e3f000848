"""A corpus folder's derived tables checked against their source (``corpus check``) and rebuilt from it (``corpus events``).

The derived tables are what a part stores beside its decisions (the source) to open faster or
to index it: the episodes table's totals (``decisions``, ``steps``, ``env_return``,
``unlocked``, ``n_unlocked``, checked against the decisions whenever they are read) and the
events table (``workbench.data.storage.events_table``). The quick check runs every check of an
open and says, per part, whether its events table is used and why not (missing, stale, or
damaged: its values edited or out of range). The deep check also re-derives every part's events
from its decisions, as opening a part without an events table does, and compares them value by
value with the table: only this catches a table forged with its digests recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.data.episodes.events import DecisionEvents
from workbench.data.storage.columnar import live_episodes, read_parts
from workbench.data.storage.decode import Part
from workbench.data.storage.events_table import StoredEvents, file_digest, stored_events, write_events
from workbench.data.storage.layout import open_file, part_file, read_marker, refuse_symlinks, writing
from workbench.data.storage.stream import part_events
from workbench.errors import CorpusFormatError, UnsafeCorpusPathError


@dataclass(frozen=True)
class PartCheck:
    """What checking one part found.

    Attributes:
        part: The part's name.
        events: ``current`` (its events table is used), ``missing``, ``stale`` or ``damaged``.
        problems: Each disagreement or damage found, one line each (naming the file, column,
            episode and decision); empty when the part is sound.
        note: Why the events table is not used, when it is missing or stale (nothing is wrong:
            the part opens from its decisions, more slowly; ``workbench corpus events`` fixes it).
    """

    part: str
    events: str
    problems: tuple[str, ...] = ()
    note: str | None = None


def check_parts(root: Path, *, deep: bool = False) -> list[PartCheck]:
    """Check every committed part of the corpus folder ``root`` (see the module); a part's
    problems do not stop the others being checked.

    Args:
        root: The corpus folder.
        deep: Also re-derive each part's events from its decisions and compare them with its
            events table.

    Returns:
        One ``PartCheck`` per part, in commit order.

    Raises:
        CorpusFormatError: ``root`` is not a corpus folder, or an episodes table (the commit
            record every other table is checked against) does not read; names the file.
    """
    refuse_symlinks(root)
    read_marker(root)
    parts = read_parts(root, None)
    checks = [_check_part(root, part, deep) for part in parts]
    try:
        live_episodes(root, parts)  # ids unique across parts, every metadata document readable
    except CorpusFormatError as error:
        checks.append(PartCheck("(all parts)", "-", (str(error),)))
    return checks


def _check_part(root: Path, part: Part, deep: bool) -> PartCheck:
    """One part: its events table's state, and (when it is not used, or ``deep``) the decisions
    read and checked, their events compared with the table's."""
    stored = stored_events(root, part, 0)
    state = "current" if stored.events is not None else "damaged" if stored.damaged else "stale"
    if stored.events is None and stored.reason is None:
        state = "missing"
    problems = [stored.reason] if stored.damaged and stored.reason else []
    if deep or stored.events is None:
        try:
            derived = _derived_events(root, part)
        except UnsafeCorpusPathError:
            raise
        except CorpusFormatError as error:
            problems.append(str(error))
        else:
            if stored.events is not None:
                problems.extend(_disagreement(root, part, stored, derived))
    note = stored.reason if state == "stale" else None
    return PartCheck(part.name, state, tuple(problems), note)


def _derived_events(root: Path, part: Part) -> dict[str, np.ndarray]:
    """The part's events as its decisions give them (every value and total checked on the
    way), its batches joined, decisions numbered from 0, by field name."""
    path = part_file(root, "decisions", part.name)
    with open_file(path) as handle:
        batches = list(part_events(handle, path, root, part, 0))
    return DecisionEvents.join(batches).arrays() if batches else {}


def _disagreement(root: Path, part: Part, stored: StoredEvents, derived: dict[str, np.ndarray]) -> list[str]:
    """One line per events-table column that differs from what the decisions give, naming the
    first episode and decision (within the episode) where it differs."""
    assert stored.events is not None
    path = part_file(root, "events", part.name)
    ids = part.episodes.column("episode").to_pylist()
    starts = derived.get("starts", np.zeros(0, np.int64))
    lines = []
    found_arrays = stored.events.arrays()
    for key, expected in derived.items():
        found = found_arrays[key]
        if _same(found, expected):
            continue
        at = _first_difference(found, expected)
        if key in ("starts", "lengths", "env_return") or key.endswith("_status"):
            where = f"episode {ids[at]!r}" if at < len(ids) else f"row {at}"
        else:
            decisions = derived[f"{key.split('_')[0]}_decision"]
            decision = int(decisions[min(at, len(decisions) - 1)]) if len(decisions) else 0
            episode = max(int(np.searchsorted(starts, decision, side="right")) - 1, 0)
            where = f"episode {ids[episode]!r} decision {decision - int(starts[episode])} (event {at})"
            if len(found) != len(expected):
                where += f"; {len(found)} events where the decisions give {len(expected)}"
        lines.append(f"{path}: column {key!r} differs from what its decisions give, first at {where}")
    return lines


def _same(found: np.ndarray, expected: np.ndarray) -> bool:
    """Equal shape and values, floats bit for bit (a -0.0 is not a +0.0)."""
    if found.shape != expected.shape:
        return False
    if found.dtype.kind == "f" or expected.dtype.kind == "f":
        return bool(np.array_equal(found.astype(np.float64).view(np.int64), expected.astype(np.float64).view(np.int64)))
    return bool(np.array_equal(found, expected))


def _first_difference(found: np.ndarray, expected: np.ndarray) -> int:
    """The first index (row) where two arrays differ; the shorter one's length when one is a prefix."""
    n = min(len(found), len(expected))
    differs = np.flatnonzero((found[:n] != expected[:n]).reshape(n, -1).any(axis=1)) if n else np.zeros(0, np.int64)
    return int(differs[0]) if len(differs) else n


def add_events_tables(root: Path, *, rebuild: bool = False) -> tuple[list[str], int]:
    """Give each committed part of ``root`` without a current events table one (every part, with
    ``rebuild``), under the lock: parts written before events tables, whose decisions table
    changed since, made by another ``EVENTS_VERSION`` or damaged. Each is computed by the
    checked decisions read, as opening would. Returns the parts written and how many were left
    as they were."""
    refuse_symlinks(root)
    read_marker(root)  # never makes a corpus folder of another folder
    written: list[str] = []
    with writing(root):
        parts = read_parts(root, None)
        for part in parts:
            if not rebuild and stored_events(root, part, 0).events is not None:
                continue
            decisions = part_file(root, "decisions", part.name)
            digest = file_digest(decisions)  # under the lock: the table read next is this one
            with open_file(decisions) as handle:
                events = list(part_events(handle, decisions, root, part, 0))
            episodes = part.episodes
            steps = episodes.column("steps").to_numpy().astype(np.int64)  # checked against the actions
            write_events(
                part_file(root, "events", part.name), episodes.column("episode").to_pylist(), steps, events, digest
            )
            written.append(part.name)
    return written, len(parts) - len(written)
