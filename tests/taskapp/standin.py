"""An OpenAI-compatible chat-completions stand-in for the task app's policy to call (stdlib only).

Every ``POST .../v1/chat/completions`` is answered with one ``interact_many`` tool call. The
actions come from a seeded rule that reads the Crafter text observation in the last user message
(the task app sends ``Position``, ``Facing``, ``Inventory`` and a local map view):

1. with probability ``P_MOVE_RIGHT_DO`` exactly ``["move_right", "do"]``, which the task app's
   policy rewrites into ``["move_right"]`` before stepping;
2. facing a tree, or water while drink < 9 (at 9 only now and then): ``do`` two to four times
   (wood and drink counts rise repeatedly);
3. with wood in the inventory, now and then ``place_table`` / ``make_wood_pickaxe`` /
   ``make_wood_sword`` (more achievements, more count rises);
4. a tree or water in view: step towards the nearest one (trees first unless drink < 6), then ``do``;
5. otherwise two or three random moves and a ``do``.

The random draws are seeded by (seed, ``cid`` query parameter, call number of that cid), so a
rollout's decisions are a function of its states. Every call is recorded in ``calls``.

A rollout whose ``cid`` contains ``loose`` is answered as real models answer loosely
(``LOOSE_FORMS``, in turn by call number, every third call answered properly): tool calls named
after an action with JSON-string arguments, an empty action list, unknown names (``jump``,
``Move_Left``), integer ids (one out of range), more than 20 actions, and two calls at once.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

P_MOVE_RIGHT_DO = 0.15
#: The loose answers, in turn: what the model's message carries as ``tool_calls`` (name, arguments JSON text).
LOOSE_FORMS = ("named_after_action", "empty", "unknown_names", "integer_ids", "too_many", "two_calls")
#: Crafter's moves as (dx, dy) on the world grid (x right, y down).
MOVES = {"move_left": (-1, 0), "move_right": (1, 0), "move_up": (0, -1), "move_down": (0, 1)}
TARGETS = ("tree", "water")
_MAP_HEADER = re.compile(r"Local Map View \((\d+)x(\d+)\):")


@dataclass(frozen=True)
class ParsedObservation:
    """What the rule reads from the task app's text observation."""

    facing: tuple[int, int] | None
    inventory: dict[str, int]
    grid: list[list[str]]  # grid[row][col]; the task app's view: row = x offset, col = y offset


def parse_observation(text: str) -> ParsedObservation:
    """Read ``Facing``, ``Inventory`` and the local map view from a text observation."""
    facing = None
    found = re.search(r"^Facing:\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]", text, re.MULTILINE)
    if found:
        facing = (int(found.group(1)), int(found.group(2)))
    inventory: dict[str, int] = {}
    found = re.search(r"^Inventory:\s*(.*)$", text, re.MULTILINE)
    if found and found.group(1).strip() != "empty":
        for entry in found.group(1).split(","):
            name, _, amount = entry.strip().partition(":")
            if amount.strip().isdigit():
                inventory[name.strip()] = int(amount)
    grid: list[list[str]] = []
    header = _MAP_HEADER.search(text)
    if header:
        size = int(header.group(1))
        lines = text[header.end() :].strip("\n").splitlines()[:size]
        grid = [line.split() for line in lines if line.strip()]
    return ParsedObservation(facing, inventory, grid)


def _offsets(grid: list[list[str]], names: tuple[str, ...]) -> list[tuple[int, int]]:
    """(dx, dy) of every cell holding one of ``names``, nearest first. The task app's view is
    the transpose of its (dy, dx) matrix, so row index = dx + half and column index = dy + half."""
    if not grid:
        return []
    half = len(grid) // 2
    cells = [(r - half, c - half) for r, row in enumerate(grid) for c, name in enumerate(row) if name in names]
    return sorted(cells, key=lambda d: (abs(d[0]) + abs(d[1]), d))


def _towards(offset: tuple[int, int]) -> list[str]:
    """Moves that end adjacent to and facing ``offset`` (moving into a tree or water only turns)."""
    dx, dy = offset
    moves: list[str] = []
    moves += ["move_right" if dx > 0 else "move_left"] * abs(dx)
    moves += ["move_down" if dy > 0 else "move_up"] * abs(dy)
    return moves[:6] or ["noop"]


def choose_actions(text: str, rng: random.Random) -> list[str]:
    """The rule's actions for one observation (see the module docstring)."""
    if rng.random() < P_MOVE_RIGHT_DO:
        return ["move_right", "do"]
    seen = parse_observation(text)
    facing_cell = None
    if seen.facing and seen.grid:
        half = len(seen.grid) // 2
        r, c = half + seen.facing[0], half + seen.facing[1]
        if 0 <= r < len(seen.grid) and 0 <= c < len(seen.grid[r]):
            facing_cell = seen.grid[r][c]
    if facing_cell == "tree" or (facing_cell == "water" and (seen.inventory.get("drink", 0) < 9 or rng.random() < 0.3)):
        return ["do"] * rng.randint(2, 4)
    wood = seen.inventory.get("wood", 0)
    if wood >= 1 and rng.random() < 0.25:
        return [rng.choice(["place_table", "make_wood_pickaxe", "make_wood_sword"]), "do"]
    # Thirsty: trees and water alike; else trees first (water only when no tree is in view).
    thirsty = seen.inventory.get("drink", 0) < 6
    targets = (
        _offsets(seen.grid, TARGETS) if thirsty else (_offsets(seen.grid, ("tree",)) or _offsets(seen.grid, TARGETS))
    )
    if targets and rng.random() < 0.85:
        return _towards(targets[0])[:5] + ["do"]
    return [rng.choice(list(MOVES)) for _ in range(rng.randint(2, 3))] + ["do"]


def loose_calls(actions: list[str], number: int) -> list[tuple[str, Any]]:
    """The (name, arguments) tool calls of a loose answer to call ``number`` (see ``LOOSE_FORMS``)."""
    if number % 3 == 2:
        return [("interact_many", {"actions": actions})]
    form = LOOSE_FORMS[(number - number // 3) % len(LOOSE_FORMS)]
    if form == "named_after_action":
        return [(actions[0], {})]
    if form == "empty":
        return [("interact_many", {"actions": []})]
    if form == "unknown_names":
        return [("interact_many", {"actions": ["jump", *actions, "Move_Left"]})]
    if form == "integer_ids":
        return [("interact_many", {"actions": [5, 3, 99, *actions]})]  # 99: past Crafter's 0..16
    if form == "too_many":
        return [("interact_many", {"actions": (actions * 30)[:25]})]
    return [("move_left", {"action": "do"}), ("interact_many", {"actions": actions})]


def _last_user_text(messages: Any) -> str:
    """The text of the last user message (content as a string or a list of text parts)."""
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(
                p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    return ""


@dataclass
class StandIn:
    """The stand-in server: ``start()`` it, point ``inference_url(cid)`` at it, ``stop()`` it."""

    seed: int = 0
    host: str = "127.0.0.1"
    calls: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stand-in is not started")
        return int(self._server.server_address[1])

    def inference_url(self, cid: str) -> str:
        """The ``inference_url`` a rollout request names: this server with ``?cid=<cid>``."""
        return f"http://{self.host}:{self.port}?cid={cid}"

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The chat-completion response for one request (and record the call)."""
        cid = (parse_qs(urlparse(path).query).get("cid") or [""])[0]
        with self._lock:
            number = sum(1 for call in self.calls if call["cid"] == cid)
            rng = random.Random(f"{self.seed}|{cid}|{number}")
            actions = choose_actions(_last_user_text(body.get("messages")), rng)
            calls = loose_calls(actions, number) if "loose" in cid else [("interact_many", {"actions": actions})]
            self.calls.append({"cid": cid, "call": number, "actions": actions, "tool_calls": calls})
        created = int(time.time())
        return {
            "id": f"chatcmpl-standin-{cid}-{number}",
            "object": "chat.completion",
            "created": created,
            "model": body.get("model") or "standin",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": f"call_{number}_{k}",
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)},
                            }
                            for k, (name, arguments) in enumerate(calls)
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        }

    def start(self) -> StandIn:
        """Bind a free port on ``host`` and serve in a daemon thread."""
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self.send_error(400, "body is not JSON")
                    return
                if not urlparse(self.path).path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404, "only /v1/chat/completions is served")
                    return
                payload = json.dumps(standin.answer(self.path, body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                return  # quiet: the calls are recorded in ``calls``

        self._server = ThreadingHTTPServer((self.host, 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="chat-standin", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
