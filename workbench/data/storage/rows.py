"""The episodes table's rows: built from an episode and checked against one schema, when written and when read.

``EPISODE_RULES`` says, column by column, what a value of the episodes table may be (beyond its
Arrow type, ``schema.EPISODE_SCHEMA``): whether it may be null, its range, finiteness, the
names it may hold; ``metadata`` and ``logged`` are JSON objects of valid UTF-8 nested at most
``MAX_JSON_DEPTH`` deep. A write checks each episode's row before anything is written
(``check_storable``, which importers also call episode by episode, so one odd episode is that
episode's problem); a read checks every row of every part (``check_episodes_table``) and each
JSON text where it is parsed (``parse_json``), naming the file, the row and the column.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes import COUNT_SOURCES, DecisionArrays, Episode, EpisodeExtras, check_values
from workbench.errors import CorpusFormatError, CorpusValueError, EpisodeValueError
from workbench.util import jsonsafe

#: The deepest nesting a stored metadata or logged document may have (the workbench writes 4).
MAX_JSON_DEPTH = 32
INT64 = (-(2**63), 2**63 - 1)
INT32_MAX = 2**31 - 1
#: column -> (nullable, (low, high) or None); every column not listed as nullable must hold a value.
EPISODE_RULES: dict[str, tuple[bool, tuple[float, float] | None]] = {
    "episode": (False, None),
    "source": (False, None),
    "policy": (True, None),
    "seed": (True, None),
    "decisions": (False, (1, INT32_MAX)),
    "steps": (False, (1, 2**40)),
    "env_return": (False, None),  # finite: checked apart
    "unlocked": (False, None),
    "n_unlocked": (False, (0, len(ACHIEVEMENTS))),
    "has_frames": (False, None),
    "has_logged": (False, None),
    "counts": (False, None),
    "metadata": (False, None),
    "logged": (True, None),
    "has_views": (False, None),
    "has_messages": (False, None),
    "frames_group": (False, (-1, INT32_MAX)),
    "replaces": (False, None),
}


# -- writing ----------------------------------------------------------------------------------
def json_text(value: Any, where: str, name: str) -> str:
    """``value`` (metadata or logged: numpy scalars and arrays allowed) as JSON text; NaN,
    infinity, strings that are not valid UTF-8 (lone surrogates), non-string keys of odd types
    and nesting past ``MAX_JSON_DEPTH`` are ``EpisodeValueError`` naming ``where`` and the key path.

    The text is the C encoder's (``_ENCODER``), checked after it: the walk in Python
    (``_walked_text``, 12x slower: it was 0.6 s of a 1.4 s rollout import) runs only when the
    encoder refused the value (NaN, infinity, an odd type or key), when the text may hold a lone
    surrogate, a key the walk writes otherwise (``True``, ``None``) or nesting near the limit;
    then it names the problem or gives the same text the encoder would have.
    """
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return _walked_text(value, where, name)
    # Fewer opening brackets than MAX_JSON_DEPTH (strings' own counted too) prove every value
    # shallower than the limit: no orjson re-writing of the value to look (a per-episode cost).
    deep = text.count("[") + text.count("{") >= MAX_JSON_DEPTH and jsonsafe.may_nest_past(value, MAX_JSON_DEPTH)
    if _SURROGATE_ESCAPE.search(text) or _ODD_KEY.search(text) or deep:
        return _walked_text(value, where, name)
    return text


def _numpy_value(item: Any) -> Any:
    """What the encoder writes for a numpy value (the walk's conversion); TypeError for the rest."""
    if isinstance(item, np.ndarray):
        return item.tolist()
    if isinstance(item, np.generic):
        return item.item()
    raise TypeError(f"{type(item).__name__} is not a JSON value")


#: ``json.dumps``'s settings (so the text is the walk's), refusing NaN and infinity itself.
_ENCODER = json.JSONEncoder(allow_nan=False, default=_numpy_value)
#: A key the encoder writes as ``true``/``false``/``null`` where the walk writes ``str(key)``
#: (a string key "true" matches too: then the walk, which writes the same text, decides).
_ODD_KEY = re.compile(r'"(?:true|false|null)": ')


def _walked_text(value: Any, where: str, name: str) -> str:
    """``json_text`` by a walk in Python, which names the key path of what cannot be stored."""

    def convert(item: Any, path: str, depth: int) -> Any:
        if depth > MAX_JSON_DEPTH:
            raise EpisodeValueError(f"{where}: {path} is nested more than {MAX_JSON_DEPTH} deep")
        if isinstance(item, dict):
            return {_utf8(str(k), where, path): convert(v, f"{path}.{k}", depth + 1) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [convert(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(item)]
        if isinstance(item, np.ndarray):
            return convert(item.tolist(), path, depth)
        if isinstance(item, np.generic):
            item = item.item()
        if isinstance(item, float) and not math.isfinite(item):
            raise EpisodeValueError(f"{where}: {path} is {item!r}; NaN and infinity are not stored")
        if isinstance(item, str):
            return _utf8(item, where, path)
        if item is None or isinstance(item, (bool, int, float)):
            return item
        raise EpisodeValueError(f"{where}: {path} is a {type(item).__name__}; only JSON values are stored")

    return json.dumps(convert(value, name, 1))


def _utf8(text: str, where: str, name: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise EpisodeValueError(
            f"{where}: {name} holds {text[error.start : error.end]!r}, not valid UTF-8 (a lone surrogate)"
        ) from None
    return text


def episode_row(
    index_row: dict[str, Any], extras: EpisodeExtras, group: int, replaces: bool, logged_text: Any = None
) -> dict[str, Any]:
    """The episodes-table row of one episode (``index_row``: its ``Corpus.index`` row), checked
    (``EpisodeValueError`` naming the episode and the column). A seed outside int64 is kept in
    the metadata only (the column is null: a read takes it from there). ``logged_text``: the
    ``logged`` column's text, when a check of this same episode made it already (a string
    for a logged document; anything else: made here)."""
    where = f"episode {extras.id!r}"
    if extras.logged is None:
        logged = None
    elif isinstance(logged_text, str):
        logged = logged_text  # json_text's, made by check_storable: not encoded twice
    else:
        logged = json_text(extras.logged, where, "logged")
    seed = index_row["seed"]
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        seed = int(seed) if INT64[0] <= int(seed) <= INT64[1] else None
    else:
        seed = None
    row = {
        **index_row,
        "seed": seed,
        "unlocked": list(index_row["unlocked"]),
        "metadata": json_text(extras.metadata, where, "metadata"),
        "logged": logged,
        "has_frames": group >= 0,
        "has_views": extras.views is not None,
        "has_messages": extras.messages is not None,
        "frames_group": group,
        "replaces": replaces,
    }
    for column in ("episode", "source", "policy", "counts"):
        value = row[column]
        if EPISODE_RULES[column][0] and not isinstance(value, (str, list, dict)) and pd.isna(value):
            row[column] = None  # the index holds a missing policy as NaN
            continue
        if not isinstance(value, str):
            raise EpisodeValueError(f"{where}: {column} is {_show(value)}, not a string")
        _utf8(value, where, column)
    for name in ("views", "messages", "calls"):
        texts = getattr(extras, name) or []
        try:  # one encode of them all (a lone surrogate fails it); the loop names the first bad one
            "".join(texts).encode("utf-8")
        except (UnicodeEncodeError, TypeError):
            for i, text in enumerate(texts):
                _utf8(text, where, f"{name}[{i}]")
    return row


def check_storable(episode: Episode, *, values: bool = True) -> dict[str, Any]:
    """``EpisodeValueError`` naming ``episode`` and what cannot be stored (a value outside
    Crafter's ranges, a metadata value of no JSON type, an id that is not UTF-8...); what a save
    would refuse, found before it, so a batch can leave this episode out and save the rest.

    Args:
        episode: The episode a save would write.
        values: Check its decisions' value ranges too (``check_values``); False when the caller
            has checked them already, for a batch of episodes at once.

    Returns:
        The episodes-table row checked (its ``logged`` text may be handed to the save that
        writes this episode unchanged: ``columnar.append``'s ``logged_texts``).

    Raises:
        EpisodeValueError: Something in it cannot be stored (named with the episode and column).
    """
    _utf8(episode.id, f"episode {episode.id!r}", "id")
    extras = EpisodeExtras.of(episode)
    row = episode_row(episode.index_row(), extras, -1, False)
    if row["counts"] not in COUNT_SOURCES:
        raise EpisodeValueError(f"episode {episode.id!r}: counts is {row['counts']!r}, expected one of {COUNT_SOURCES}")
    if values:
        check_values(DecisionArrays.from_episodes([episode]))
    return row


# -- reading ----------------------------------------------------------------------------------
def check_episodes_table(table: pa.Table, path: Path) -> None:
    """Every row of a part's episodes table (its schema already checked) against
    ``EPISODE_RULES`` and with itself (``n_unlocked`` is ``unlocked``'s length, ``has_frames``
    is ``frames_group >= 0``, ``has_logged`` is ``logged`` not null, ids and frame groups
    unique); ``CorpusValueError`` naming ``path``, the row and the column."""
    try:
        table.validate(full=True)  # UTF-8 of every string, offsets of every list
    except pa.ArrowInvalid as error:
        raise CorpusFormatError(f"{path}: not a readable corpus table ({error})") from None

    def fail(mask: Any, column: str, why: str) -> None:
        rows = np.flatnonzero(np.asarray(mask, dtype=bool))
        if len(rows):
            row = int(rows[0])
            value = table.column(column)[row].as_py()
            raise CorpusValueError(f"{path}: row {row}, column {column!r}: {_show(value)} {why}")

    for column, (nullable, limits) in EPISODE_RULES.items():
        values = table.column(column)
        if not nullable and values.null_count:
            fail(values.is_null().to_numpy(zero_copy_only=False), column, "is missing (null)")
        if limits is not None:
            numbers = values.to_numpy(zero_copy_only=False).astype(np.float64)
            fail(~((numbers >= limits[0]) & (numbers <= limits[1])), column, f"is outside {limits[0]}..{limits[1]}")
    returns = table.column("env_return").to_numpy(zero_copy_only=False)
    fail(~np.isfinite(returns), "env_return", "is not a finite number")
    fail(~_is_in(table.column("counts"), COUNT_SOURCES), "counts", f"is not one of {list(COUNT_SOURCES)}")
    unlocked = table.column("unlocked")
    items = pc.list_flatten(unlocked)
    if len(items) and (items.null_count or not pc.all(pc.is_in(items, pa.array(ACHIEVEMENTS))).as_py()):
        fail(~_is_in_lists(unlocked), "unlocked", "holds a name that is not a Crafter achievement")
    lengths = pc.list_value_length(unlocked).to_numpy(zero_copy_only=False)
    fail(lengths != table.column("n_unlocked").to_numpy(), "n_unlocked", "is not the number of achievements unlocked")
    groups = table.column("frames_group").to_numpy()
    fail(
        table.column("has_frames").to_numpy(zero_copy_only=False) != (groups >= 0),
        "has_frames",
        "disagrees with frames_group",
    )
    logged = table.column("logged").is_valid().to_numpy(zero_copy_only=False)
    fail(table.column("has_logged").to_numpy(zero_copy_only=False) != logged, "has_logged", "disagrees with logged")
    fail(_repeats(groups, groups >= 0), "frames_group", "is another episode's frames entry too")
    ids = table.column("episode").to_numpy(zero_copy_only=False)
    fail(_repeats(ids, np.ones(len(ids), bool)), "episode", "is in this part twice")


def _is_in(column: Any, names: tuple[str, ...]) -> np.ndarray:
    return pc.fill_null(pc.is_in(column, pa.array(list(names))), False).to_numpy(zero_copy_only=False)


def _is_in_lists(column: Any) -> np.ndarray:
    return np.array([all(n in ACHIEVEMENTS for n in names or []) for names in column.to_pylist()], dtype=bool)


def _repeats(values: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """True at each counted value seen before (in row order)."""
    seen: set[Any] = set()
    repeated = np.zeros(len(values), bool)
    for i, (value, count) in enumerate(zip(values.tolist(), counted.tolist())):
        if count:
            repeated[i] = value in seen
            seen.add(value)
    return repeated


def parse_json(text: Any, path: Path, row: int, column: str) -> dict[str, Any] | None:
    """A stored metadata / logged document: a JSON object of at most ``MAX_JSON_DEPTH`` levels
    (null ``logged`` is None); ``CorpusValueError`` naming ``path``, the row and the column."""
    if text is None and column == "logged":
        return None
    if isinstance(text, str) and text.startswith("{"):
        # The usual text, an object with nothing around it, parsed without ``decode``'s two
        # whitespace scans (3,030 metadata texts: 4.6 against 6.8 ms); anything else, an error
        # included, goes through ``decode`` below, which names it.
        try:
            value, end = _DECODER.raw_decode(text)
        except (ValueError, RecursionError):
            end = -1
        if end == len(text):
            return _checked_object(value, text, path, row, column)
    where = f"{path}: row {row}, column {column!r}"
    if not isinstance(text, str):
        raise CorpusValueError(f"{where}: {_show(text)} is not JSON text")
    try:
        if text.startswith("\ufeff"):  # what json.loads refuses before decoding
            raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
        value = _DECODER.decode(text)  # json.loads(text, parse_constant=...) without a decoder per call
    except _Constant as error:
        raise CorpusValueError(f"{where}: holds {error}; NaN and infinity are not stored") from None
    except RecursionError:
        raise CorpusValueError(f"{where}: JSON nested more than {MAX_JSON_DEPTH} deep") from None
    except ValueError as error:  # JSONDecodeError, or an integer of thousands of digits
        raise CorpusValueError(f"{where}: not valid JSON ({str(error)[:120]})") from None
    return _checked_object(value, text, path, row, column)


def _checked_object(value: Any, text: str, path: Path, row: int, column: str) -> dict[str, Any]:
    """``value`` (parsed from ``text``) if it is a JSON object whose walk finds no problem."""
    if not isinstance(value, dict):
        raise CorpusValueError(
            f"{path}: row {row}, column {column!r}: a JSON {type(value).__name__}, expected an object"
        )
    # The walk only where it can find something: deep enough to nest past the limit, or a
    # surrogate escape (parsing caught NaN and infinity; the text itself is valid UTF-8).
    deep = text.count("{") + text.count("[") > MAX_JSON_DEPTH
    problem = _problem(value, 1) if deep or _SURROGATE_ESCAPE.search(text) else None
    if problem:
        raise CorpusValueError(f"{path}: row {row}, column {column!r}: {problem}")
    return value


class _Constant(ValueError):
    """NaN, Infinity or -Infinity met while parsing."""


def _no_constant(name: str) -> Any:
    raise _Constant(name)


#: One decoder for every text (``json.loads`` with a keyword builds one per call: 3,000 rows
#: of metadata parsed in 8 against 20 ms).
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _problem(value: Any, depth: int) -> str | None:
    """What is wrong with a parsed document (NaN, infinity, nesting past ``MAX_JSON_DEPTH``), or None."""
    if depth > MAX_JSON_DEPTH:
        return f"JSON nested more than {MAX_JSON_DEPTH} deep"
    if isinstance(value, float) and not math.isfinite(value):
        return f"holds {value!r}; NaN and infinity are not stored"
    if isinstance(value, str) and not _encodes(value):
        return f"holds {_show(value)}, not valid UTF-8 (a lone surrogate)"
    if isinstance(value, dict) and not all(_encodes(key) for key in value):
        return "holds a key that is not valid UTF-8 (a lone surrogate)"
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        problem = _problem(child, depth + 1)
        if problem:
            return problem
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
