"""Task-app observations read into the reward's state form.

Either raw observation dicts, or the text the real task app stores for Crafter (``Step:``,
``Health:``, ``Inventory:``, ``Achievements:`` lines and a local map view)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.importers.batch import BadInput
from workbench.data.importers.values import INT32_MIN, flag, integer, integer_text

#: The most characters of a text map view kept per state (a 5x5 view is about 150; a 9x9 one 500).
MAX_VIEW_CHARS = 4096


class Observed(NamedTuple):
    """One observation read into the task app's state form, with what else it told (a named
    tuple: made per decision, in a third of a frozen dataclass's time)."""

    state: dict[str, Any]
    position: tuple[int, int] | None
    step: int | None
    kind: str  # "raw" or "text"
    max_steps: int | None = None
    view: str | None = None  # the text's map view grid (rows of material names), when it had one


def observation(obs: Any, where: str) -> Observed:
    """A raw observation dict (``inventory``, ``achievements_status`` ...) or a ``{"text": ...}``.

    Raises ``BadInput`` naming ``where`` for anything else or for a malformed field.
    """
    if isinstance(obs, Mapping) and isinstance(obs.get("inventory"), Mapping):
        return raw_observation(obs, where)
    if isinstance(obs, Mapping) and isinstance(obs.get("text"), str):
        return text_observation(obs["text"], where)
    raise BadInput(where, "neither a raw observation (with 'inventory') nor a text observation (with 'text')")


def raw_observation(obs: Mapping[str, Any], where: str) -> Observed:
    """The task app's observation dict (Crafter's counts included when it has them); every
    count an integer in 0..2**31-1, every flag true/false (``BadInput`` naming the field)."""
    try:
        state: dict[str, Any] = {
            "inventory": {str(k): integer(v, where, f"inventory.{k}") for k, v in obs["inventory"].items()},
            "achievements_status": {
                str(k): flag(v, where, f"achievements_status.{k}")
                for k, v in _mapping_field(obs, "achievements_status", where).items()
            },
        }
        if isinstance(obs.get("achievements_counts"), Mapping):
            state["achievements_counts"] = {
                str(k): integer(v, where, f"achievements_counts.{k}") for k, v in obs["achievements_counts"].items()
            }
            if not state["achievements_status"]:
                state["achievements_status"] = {k: v > 0 for k, v in state["achievements_counts"].items()}
        position = obs.get("player_position")
        if position is not None:
            if not isinstance(position, (list, tuple)) or len(position) != 2:
                raise BadInput(where, f"player_position: {str(position)[:40]} is not [x, y]")
            position = tuple(integer(p, where, "player_position", low=INT32_MIN) for p in position)
        step = obs.get("num_steps_taken")
        max_steps = obs.get("max_steps_episode")
        return Observed(
            state,
            position,
            integer(step, where, "num_steps_taken") if step is not None else None,
            "raw",
            integer(max_steps, where, "max_steps_episode") if max_steps is not None else None,
        )
    except BadInput:
        raise  # already names the field
    except (TypeError, ValueError, IndexError, AttributeError, OverflowError) as error:
        raise BadInput(where, f"raw observation with a malformed field ({error})") from None


def _mapping_field(obs: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = obs.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise BadInput(where, f"{key}: expected an object, got {type(value).__name__}")
    return value


_TEXT_LINE = re.compile(r"^\s*(Step|Health|Position|Inventory|Achievements):[ \t]*(.*?)\s*$", re.MULTILINE)
_PAIR = re.compile(r"^[\[\(]\s*(-?\d+)\s*[,\s]\s*(-?\d+)\s*[\]\)]$")
_MAP_HEADER = re.compile(r"^\s*Local Map View[^\n]*:\s*$", re.MULTILINE)
_TEXT_ITEMS = frozenset(INVENTORY_ITEMS) - {"health"}


def text_observation(text: str, where: str) -> Observed:
    """Parse the task app's text observation (``Step: i/max``, ``Health: h``, ``Position: [x, y]``,
    ``Inventory: wood:2, sapling:1`` or ``empty``, ``Achievements: a, b`` or ``none``, then
    ``Local Map View (NxN):`` and N rows of material names). Counts are not in the text."""
    return _task_app_text(text) or _any_text(text, where)


#: The task app's own layout, exactly (numbers of at most 9 digits are within int32, so no
#: range check is needed); anything else goes through ``_any_text``'s general parse.
_TASK_APP_TEXT = re.compile(
    r"=== CRAFTER GAME STATE ===\nStep: ([0-9]{1,9})/([0-9]{1,9})\nHealth: ([0-9]{1,9})\n"
    r"Position: \[(-?[0-9]{1,9}), (-?[0-9]{1,9})\]\n(?:Facing: [^\n]*\n)?"
    r"Inventory: ((?:[a-z_]+:[0-9]{1,9})(?:, [a-z_]+:[0-9]{1,9})*|empty)\n"
    r"Achievements: ((?:[a-z_]+)(?:, [a-z_]+)*|none)\n\nLocal Map View \([0-9]+x[0-9]+\):\n"
)
_GRID = re.compile(r"[a-z_]+(?: [a-z_]+)*(?:\n[a-z_]+(?: [a-z_]+)*)*")
_ACHIEVEMENT_NAMES = frozenset(ACHIEVEMENTS)
_NO_ITEMS = dict.fromkeys(INVENTORY_ITEMS, 0)
_NONE_UNLOCKED = dict.fromkeys(ACHIEVEMENTS, False)


def _task_app_text(text: str) -> Observed | None:
    """``text_observation`` of a text in the task app's exact layout, in a third of the time
    (one match, no per-number checks); None for anything else (``_any_text`` then reads it, and
    names what is wrong). Every value is what ``_any_text`` reads from the same text."""
    match = _TASK_APP_TEXT.match(text)
    if match is None:
        return None
    step, max_steps, health, x, y, items, unlocked = match.groups()
    inventory = _NO_ITEMS.copy()  # a copy of a small dict: faster than dict.fromkeys
    inventory["health"] = int(health)
    if items != "empty":
        seen = set()
        for entry in items.split(", "):
            name, _, amount = entry.partition(":")
            if name not in _TEXT_ITEMS or name in seen:
                return None  # an unknown or repeated item: the general parse names it
            seen.add(name)
            inventory[name] = int(amount)
    status = _NONE_UNLOCKED.copy()
    if unlocked != "none":
        for name in unlocked.split(", "):
            if name not in _ACHIEVEMENT_NAMES:
                return None
            status[name] = True
    rest = text[match.end() :]
    cut = rest.find("\n\n")
    grid = (rest if cut < 0 else rest[:cut]).rstrip("\n")
    if not _GRID.fullmatch(grid):
        return None
    state = {"inventory": inventory, "achievements_status": status}
    return Observed(state, (int(x), int(y)), int(step), "text", int(max_steps), grid[:MAX_VIEW_CHARS])


def _any_text(text: str, where: str) -> Observed:
    """``text_observation`` of any text: its lines found wherever they are, each checked."""
    fields: dict[str, str] = {}
    for name, value in _TEXT_LINE.findall(text):
        fields.setdefault(name, value)
    missing = [name for name in ("Health", "Inventory", "Achievements") if name not in fields]
    if missing:
        raise BadInput(where, f"text observation without a {', '.join(repr(m + ':') for m in missing)} line")
    health = integer_text(fields["Health"], where, "Health")
    inventory = {item: 0 for item in INVENTORY_ITEMS} | {"health": health} | _text_inventory(fields["Inventory"], where)
    status = {name: False for name in ACHIEVEMENTS} | {
        name: True for name in _text_achievements(fields["Achievements"], where)
    }
    step = max_steps = None
    if "Step" in fields:
        counter = re.fullmatch(r"(\d+)\s*/\s*(\d+)", fields["Step"])
        if not counter:
            raise BadInput(where, f"Step: {fields['Step']!r} is not 'i/max'")
        step = integer_text(counter.group(1), where, "Step")
        max_steps = integer_text(counter.group(2), where, "Step (max)")
    position = None
    if "Position" in fields:
        pair = _PAIR.match(fields["Position"])
        if not pair:
            raise BadInput(where, f"Position: {fields['Position']!r} is not '[x, y]'")
        position = (
            integer_text(pair.group(1), where, "Position", low=INT32_MIN),
            integer_text(pair.group(2), where, "Position", low=INT32_MIN),
        )
    state = {"inventory": inventory, "achievements_status": status}
    return Observed(state, position, step, "text", max_steps, map_view(text))


def map_view(text: str) -> str | None:
    """The grid under a text observation's ``Local Map View`` header (rows of material names,
    one row a line, at most ``MAX_VIEW_CHARS``), or None when the text has no map view."""
    header = _MAP_HEADER.search(text)
    if header is None:
        return None
    rows = []
    for line in text[header.end() :].lstrip("\n").splitlines():
        if not line.strip():
            break  # the grid ends at the first blank line ("Choose your next actions." follows)
        rows.append(line.strip())
    return "\n".join(rows)[:MAX_VIEW_CHARS] or None


def _text_inventory(value: str, where: str) -> dict[str, int]:
    if value.lower() == "empty":
        return {}
    items = {}
    for entry in value.split(","):
        name, sep, amount = entry.strip().partition(":")
        if not sep or name.strip() not in _TEXT_ITEMS:
            raise BadInput(where, f"Inventory entry {entry.strip()[:60]!r} is not '<item>:<count>' with a Crafter item")
        if name.strip() in items:
            raise BadInput(where, f"Inventory {name.strip()}: given twice")
        items[name.strip()] = integer_text(amount, where, f"Inventory {name.strip()}")
    return items


def _text_achievements(value: str, where: str) -> list[str]:
    if value.lower() == "none":
        return []
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in ACHIEVEMENTS]
    if unknown:
        raise BadInput(where, f"Achievements line names unknown achievement(s) {unknown}")
    return names
