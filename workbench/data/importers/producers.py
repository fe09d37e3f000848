"""Which synth-ai rollout loop produced a rollout or trace database, and the rules it played by.

Two loops serve Crafter (``../shared`` facts, measured on the real servers):

- ``synth-ai 0.2.14``: the full stepwise reward (``compute_stepwise_reward``, strategies,
  weights, k_limits, resource shaping), at most 20 actions a decision, lambda 0 read as x1.0,
  a ``metrics.details.stepwise`` summary echoing the config;
- ``synth-ai 0.2.16-0.2.24``: another copy of the loop (``examples/warming_up_to_rl``, served by
  0.2.23/0.2.24 through ``synth_ai.demos``): indicator-only (``lambda * any unlock``; lambda
  omitted or 0 pays 0.0; strategy, weights and k_limits read by nobody), every action of a
  decision played, no summary, and a trace database whose ``messages`` table stays empty.

``response_producer`` / ``trace_producer`` tell them apart by shape; ``producer_for_version``
reads ``--producer synth-ai==X``. An importer records ``metadata["producer"]`` (the profile's
name) and ``metadata["producer_basis"]`` (how it was told) on every episode.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.core.reward_rule import INDICATOR_ONLY_RULE, RewardRule, rule_for
from workbench.errors import WorkbenchError

#: The keys of the indicator-only loop's ``info.stepwise``, exactly.
INDICATOR_KEYS = frozenset({"decision_index", "indicator", "new_achievements", "reward"})
#: What the import report, ``verify``, ``audit`` and the Corpus page say when a run asked for
#: per_achievement but its producer paid indicator-only.
WEIGHTS_IGNORED = "this synth-ai ignored your step_rewards weights"


@dataclass(frozen=True)
class Producer:
    """One rollout loop's rules: its ``name`` (``metadata["producer"]``), the reward ``rule`` it
    pays by (``workbench.core.reward_rule``; None: the task app's rule for the table's strategy)
    and the most actions a decision plays (``action_cap``; None: every one).

    Attributes:
        name: The profile's name, as recorded in ``metadata["producer"]``
            (e.g. ``"synth-ai 0.2.14"``).
        rule: The reward rule the loop pays by whatever the table asks
            (``INDICATOR_ONLY_RULE``), or None when it runs the table's strategy (the full
            stepwise reward).
        action_cap: The most actions of a decision the loop plays (None: every one).
        summary: The rules in words, for reports.
    """

    name: str
    rule: RewardRule | None
    action_cap: int | None
    summary: str

    def rule_for(self, table: Mapping[str, Any] | None) -> RewardRule:
        """The rule this loop paid a run with step_rewards ``table`` by.

        Args:
            table: The run's step_rewards table as logged (None when absent).

        Returns:
            The loop's own rule, or the task app's rule for the table's strategy.
        """
        if self.rule is not None:
            return self.rule
        return rule_for((table or {}).get("strategy"))


STEPWISE = Producer(
    "synth-ai 0.2.14",
    None,
    20,
    "full stepwise reward, first 20 actions of a decision played, lambda 0 pays x1.0",
)
INDICATOR = Producer(
    "synth-ai 0.2.16-0.2.24",
    INDICATOR_ONLY_RULE,
    None,
    "indicator-only reward (lambda x any unlock; weights, k_limits and strategy ignored), "
    "every action of a decision played, lambda 0 pays 0",
)
PRODUCERS = {p.name: p for p in (STEPWISE, INDICATOR)}
_VERSION = re.compile(r"^(?:synth-ai\s*==\s*)?(\d+)\.(\d+)\.(\d+)$")


def producer_named(name: Any) -> Producer:
    """The profile an episode's ``metadata["producer"]`` names (0.2.14's when it names none:
    corpora imported before profiles were recorded).

    Args:
        name: The recorded ``metadata["producer"]`` (None or empty when absent).

    Returns:
        The named profile; 0.2.14's for an empty or unknown name.
    """
    return PRODUCERS.get(str(name), STEPWISE) if name else STEPWISE


def producer_for_version(spec: str) -> Producer:
    """The profile of ``--producer synth-ai==X`` (or ``X``).

    Args:
        spec: A version, ``synth-ai==0.2.14`` or ``0.2.14``.

    Returns:
        0.2.14's stepwise profile, or the indicator-only profile for 0.2.16 to 0.2.24.

    Raises:
        WorkbenchError: ``spec`` is not a version, or a release that serves no known Crafter
            loop (the message names the known ones).
    """
    found = _VERSION.match(spec.strip())
    if found:
        version = tuple(int(part) for part in found.groups())
        if version == (0, 2, 14):
            return STEPWISE
        if (0, 2, 16) <= version <= (0, 2, 24):
            return INDICATOR
    raise WorkbenchError(
        f"--producer {spec!r}: known producers are synth-ai==0.2.14 (full stepwise loop) and "
        "synth-ai==0.2.16 ... synth-ai==0.2.24 (indicator-only loop); 0.3 and later ship no Crafter app"
    )


def response_producer(response: Mapping[str, Any]) -> tuple[Producer, str]:
    """The loop that produced a rollout response, told from its shape, and how it was told.

    Args:
        response: One parsed rollout response (its ``metrics``, ``trajectories`` and
            ``trace`` are read).

    Returns:
        The profile and how it was told, in words (``"assumed: ..."`` when nothing in the
        response tells: then 0.2.14's).
    """
    details = response.get("metrics")
    details = details.get("details") if isinstance(details, Mapping) else None
    if isinstance(details, Mapping) and isinstance(details.get("stepwise"), Mapping):
        return STEPWISE, "told by its shape: a metrics.details.stepwise summary"
    for stepwise in _logged_stepwise(response):
        if set(stepwise) == INDICATOR_KEYS:
            return INDICATOR, "told by its shape: info.stepwise holds exactly the 4 indicator keys, no summary"
        if "base_reward" in stepwise:
            return STEPWISE, "told by its shape: info.stepwise holds base_reward"
    if _has_message_type(response.get("trace"), "policy_tool_call"):
        return INDICATOR, "told by its shape: its trace holds policy_tool_call messages"
    return STEPWISE, "assumed: nothing in the file tells the producer (no stepwise log, no trace); pass --producer"


def trace_producer(assistant_messages: int, llm_events: int) -> tuple[Producer, str]:
    """The loop that wrote a trace database session, told from its rows.

    Args:
        assistant_messages: How many assistant messages the session's ``messages`` table holds.
        llm_events: How many LLM (cais) events the session holds.

    Returns:
        The profile (indicator-only when there are events but no messages) and how it was
        told, in words.
    """
    if assistant_messages == 0 and llm_events > 0:
        return INDICATOR, "told by its shape: no messages, tool calls only in the cais events"
    return STEPWISE, "told by its shape: assistant messages hold the tool calls"


def chosen_producer(told: Producer | None, shape: tuple[Producer, str]) -> tuple[Producer, str]:
    """The producer an input is read with: the one the user named (``--producer``), unless the
    input's own shape tells another (then the user's would cut decisions or pay the wrong
    reward without a word: it is refused), else the one its shape tells.

    Args:
        told: The profile ``--producer`` named (None: not given).
        shape: ``response_producer`` / ``trace_producer``'s profile and basis for the input.

    Returns:
        The profile and how it was told, in words.

    Raises:
        WorkbenchError: ``told`` contradicts what the input's shape tells (names both).
    """
    producer, basis = shape
    if told is None:
        return shape
    if basis.startswith("told by its shape") and producer != told:
        raise WorkbenchError(
            f"--producer says {told.name}, but the input was made by {producer.name} ({basis}); "
            "drop --producer to read it as its shape says"
        )
    return told, "given: --producer" + (" (its shape agrees)" if basis.startswith("told by its shape") else "")


def weights_ignored(producer: Producer, table: Mapping[str, Any] | None) -> bool:
    """True when ``table`` (a step_rewards table) asks for per_achievement shaping that
    ``producer`` does not compute (the indicator-only loop reads no strategy or weights); a
    table that switches shaping off (not ``enabled``, or a mode other than
    ``decision_stepwise``) asks for nothing, under any producer.

    Args:
        producer: The loop that ran the episodes.
        table: The run's step_rewards table as logged (None when absent).

    Returns:
        Whether the run asked for per_achievement weights its producer never paid.
    """
    if producer.rule is None or not isinstance(table, Mapping):
        return False
    if not table.get("enabled") or str(table.get("mode") or "off").lower() != "decision_stepwise":
        return False
    return rule_for(table.get("strategy")).pays_credits and not producer.rule.pays_credits


def producer_lines(metadata: Iterable[Mapping[str, Any]]) -> list[str]:
    """Lines for a report: each producer profile with its episode count and rules, then the
    ``WEIGHTS_IGNORED`` line when some episode's run asked for weights it did not get.

    Args:
        metadata: Each episode's metadata (its ``producer`` and ``weights_ignored`` are read).

    Returns:
        One line per producer named, in first-seen order, then the ``WEIGHTS_IGNORED`` line
        if it applies (empty when no episode names a producer).
    """
    tally: dict[str, int] = {}
    ignored = 0
    for meta in metadata:
        name = meta.get("producer")
        if name:
            tally[str(name)] = tally.get(str(name), 0) + 1
        ignored += bool(meta.get("weights_ignored"))
    lines = [f"producer {name}: {n} episode(s) ({producer_named(name).summary})" for name, n in tally.items()]
    if ignored:
        lines.append(
            f"{WEIGHTS_IGNORED}: {ignored} episode(s) ran with a per_achievement table, "
            "but their producer paid indicator-only (lambda x any unlock)"
        )
    return lines


def weights_ignored_line(metadata: Iterable[Mapping[str, Any]], tables: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The ``WEIGHTS_IGNORED`` line for a user's configs (``tables``: name -> step_rewards
    table) over episodes with ``metadata``: when some config asks for per_achievement and some
    episode came from the indicator-only loop (its run never saw those weights); else None.

    Args:
        metadata: Each episode's metadata (its ``producer`` is read).
        tables: The user's configs by name, each a step_rewards table.

    Returns:
        The line naming the configs whose weights those episodes never saw, or None.
    """
    asking = [name for name, table in tables.items() if weights_ignored(INDICATOR, table)]
    produced = sum(producer_named(meta.get("producer")) is INDICATOR for meta in metadata)
    if not asking or not produced:
        return None
    return (
        f"{WEIGHTS_IGNORED}: {produced} episode(s) come from {INDICATOR.name}, which paid lambda x any unlock; "
        f"the per_achievement weights of {', '.join(asking)} are not what those runs were paid"
    )


def _logged_stepwise(response: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    """Every step's ``info.stepwise`` object in a response."""
    for trajectory in response.get("trajectories") or []:
        if not isinstance(trajectory, Mapping):
            continue
        for step in trajectory.get("steps") or []:
            info = step.get("info") if isinstance(step, Mapping) else None
            stepwise = info.get("stepwise") if isinstance(info, Mapping) else None
            if isinstance(stepwise, Mapping):
                yield stepwise


def _has_message_type(value: Any, kind: str, depth: int = 0) -> bool:
    """Whether a (structured trace) value holds a message object of ``message_type`` ``kind``."""
    if depth > 6:
        return False
    if isinstance(value, Mapping):
        if value.get("message_type") == kind:
            return True
        return any(_has_message_type(v, kind, depth + 1) for v in value.values() if isinstance(v, (Mapping, list)))
    if isinstance(value, list):
        return any(_has_message_type(v, kind, depth + 1) for v in value)
    return False
