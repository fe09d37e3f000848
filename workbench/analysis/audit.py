"""``audit``: does a reward config show a hacking sign on a corpus? The gate ``workbench audit`` runs in CI.

Four checks per config, built on the diagnostics (same computations, same default thresholds):

- **farming** (``farming-loop``): an episode ran a loop the config pays for (stone mined and
  placed back, a counter refilled whenever allowed, the same tool made again:
  ``diagnostics.loops``) more often than honest players do; the loop signs, which list no loop
  (``diagnostics.loop_signs``, multi-scale scans of repeats per kind with thresholds set on
  honest play): ``count-at-cap`` (gathering counts paid while their item sits at its cap),
  ``spent-and-regained`` (materials spent and gathered back, stations and tools made again, in
  any order and at any distance), ``progress-free-pay`` (sustained pay with no new unlock against honest play's
  rate under the same config); (``repeats-outweigh-credits``): an episode whose loops (its
  repeats at the cap and of materials regained) paid more than its achievement credits. Each fires when at least
  ``farming_episodes`` episodes do.
- **dominance** (``resource-shaping-dominates``, ``component-dominates``): a policy's reward is
  mostly resource shaping (past ``dominance``) or one component (past ``component``). Not
  checked under ``consistent``, whose one component (the indicator) is the whole reward by design.
- **dead entries**: entries of the config that cannot change any return. ``dead_entries="written"``
  (the default) counts only what the config itself writes and is dead on any corpus (an unknown
  name, a k-limit that cannot act); ``"all"`` also the task app's own resource-table entries
  Crafter never produces and weights of achievements this corpus never unlocked; ``"off"`` none.
- **estimated counts** (``count-shaping-estimated``): the config pays achievement-count shaping
  and some episodes' counts are estimates (their returns are lower bounds, not the task app's).

Flags and notes: a detector whose precision measured on the labelled benchmark's held-out split
is below the bar (``detector_accuracy.TARGET``; ``detector_accuracy.gating``) raises **notes**,
which never make the audit unclean; the others raise flags. Alignment (rank agreement with
progress) is not a hacking sign by itself and is left to ``workbench diagnose``.
``Audit.to_json()`` is the documented, stable machine format (``AUDIT_SCHEMA``); each flag and
note in it carries ``measured``: its precision, recall and false-positive rate measured on the
benchmark (``detector_accuracy.measured``), and ``evidence``: what it saw in the episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.detector_accuracy import gating, measured
from workbench.analysis.diagnostics.components import component_totals, episode_facts
from workbench.analysis.diagnostics.dead_entries import dead_entries
from workbench.analysis.diagnostics.dominance import COMPONENT_THRESHOLD, DOMINANCE_THRESHOLD, dominance
from workbench.analysis.diagnostics.farming import farming_episodes, farming_events
from workbench.analysis.diagnostics.flags import FLAG_COLUMNS, Flag
from workbench.analysis.diagnostics.loop_signs import SIGN_CODES, sign_flags, sign_table
from workbench.analysis.diagnostics.loop_table import loop_table
from workbench.analysis.diagnostics.loops import evidence, loop_flags
from workbench.analysis.sign_gates import shipped_signs
from workbench.analysis.thresholds import AUDIT_SCHEMA, DEAD_ENTRIES, DEAD_ENTRY_SCOPES, FARMING_EPISODES
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.episodes.events import N_ITEMS
from workbench.errors import DiagnosisError
from workbench.scoring import score, slot_pay

#: The checks, in report order (``section`` of each flag).
SECTIONS = ("farming", "dominance", "dead entries", "estimated counts")
#: Columns of ``Audit.flags`` and ``Audit.notes``.
AUDIT_COLUMNS = ("config", *FLAG_COLUMNS, "evidence")
#: Columns of ``Audit.findings()``.
FINDING_COLUMNS = (
    "config",
    "kind",
    "section",
    "code",
    "subject",
    "precision",
    "episode",
    "loop",
    "laps",
    "first",
    "last",
    "paid",
    "replay",
)


@dataclass(frozen=True)
class AuditThresholds:
    """When each check fires (defaults are the diagnostics' own, see the module).

    Attributes:
        dominance: The share of a policy's reward resource shaping may have before
            ``resource-shaping-dominates`` fires (0..1, exclusive).
        component: The share one component may have before ``component-dominates`` fires.
        farming_episodes: How many episodes must farm before a farming check fires (at least 1).
        dead_entries: Which dead entries are flagged: ``written``, ``all`` or ``off``.
    """

    dominance: float = DOMINANCE_THRESHOLD
    component: float = COMPONENT_THRESHOLD
    farming_episodes: int = FARMING_EPISODES
    dead_entries: str = DEAD_ENTRIES

    def checked(self) -> AuditThresholds:
        """Check the thresholds.

        Returns:
            Itself, when every threshold is valid.

        Raises:
            DiagnosisError: A share outside 0..1 (exclusive), ``farming_episodes`` below 1 or an
                unknown ``dead_entries`` scope; names it.
        """
        for name in ("dominance", "component"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise DiagnosisError(f"{name} threshold must be between 0 and 1 (exclusive), not {value}")
        if self.farming_episodes < 1:
            raise DiagnosisError(f"farming_episodes must be at least 1, not {self.farming_episodes}")
        if self.dead_entries not in DEAD_ENTRY_SCOPES:
            raise DiagnosisError(
                f"dead_entries must be one of {', '.join(DEAD_ENTRY_SCOPES)}, not {self.dead_entries!r}"
            )
        return self


@dataclass(frozen=True)
class Audit:
    """What ``audit`` found.

    Attributes:
        configs: The configs audited, by name, in the order given.
        episodes: How many episodes the corpus holds.
        decisions: How many decisions it holds.
        thresholds: The thresholds used.
        flags: What makes the audit unclean: ``AUDIT_COLUMNS``, configs in the order given,
            sections in ``SECTIONS`` order.
        corpus: How the report names the corpus ("" for unnamed).
        extra: Further fields of ``to_json()`` (e.g. the CLI's ``follow`` state and notes).
        notes: The same columns: what detectors below the bar of ``detector_accuracy.gating``
            found (never unclean).
    """

    configs: dict[str, RewardConfig]
    episodes: int
    decisions: int
    thresholds: AuditThresholds
    flags: pd.DataFrame
    corpus: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    notes: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(AUDIT_COLUMNS), dtype=object))

    @property
    def clean(self) -> bool:
        """True when no flag fired under any config (notes do not count)."""
        return self.flags.empty

    def findings(self) -> pd.DataFrame:
        """Flags then notes, one tidy row each: ``config``, ``kind`` ("flag" or "note"),
        ``section``, ``code``, ``subject``, the measured ``precision`` (null when unmeasured or
        never fired on the benchmark) and the evidence (null when the finding has none):
        ``episode``, ``loop``, ``laps``, ``first`` and ``last`` decision, ``paid``, ``replay``
        (the dashboard's relative link to the Replayer at ``first``).

        Returns:
            One row per finding, flags first.
        """
        rows = []
        for kind, table in (("flag", self.flags), ("note", self.notes)):
            for row in table.to_dict("records"):
                seen = measured(row["code"], row["config"]) or {}
                evidence = row["evidence"] or {}
                first, last = evidence.get("decisions", (None, None))
                rows.append(
                    {
                        "config": row["config"],
                        "kind": kind,
                        **{c: row[c] for c in ("section", "code", "subject")},
                        "precision": seen.get("precision"),
                        "episode": evidence.get("episode"),
                        "loop": evidence.get("loop"),
                        "laps": evidence.get("laps"),
                        "first": first,
                        "last": last,
                        "paid": evidence.get("paid"),
                        "replay": evidence.get("replay", {}).get("link"),
                    }
                )
        table = pd.DataFrame(rows, columns=list(FINDING_COLUMNS))
        return table.astype({"laps": "Int64", "first": "Int64", "last": "Int64"})

    def to_json(self) -> dict[str, Any]:
        """The machine-readable report (``AUDIT_SCHEMA``; documented in docs/live.md).

        Returns:
            A JSON-able dict: ``schema``, ``corpus``, ``episodes``, ``decisions``, ``clean``,
            ``thresholds`` and per config its ``name``, ``strategy``, ``clean``, ``counts`` per
            section, ``flags`` and ``notes`` (each with ``measured`` and ``evidence``); then
            ``extra``'s fields.
        """
        configs = []
        for name, config in self.configs.items():
            rows = self.flags[self.flags["config"] == name]
            notes = self.notes[self.notes["config"] == name]
            configs.append(
                {
                    "name": name,
                    "strategy": config.rule.name,
                    "clean": rows.empty,
                    "counts": {section: int((rows["section"] == section).sum()) for section in SECTIONS},
                    "flags": _records(rows, name),
                    "notes": _records(notes, name),
                }
            )
        return {
            "schema": AUDIT_SCHEMA,
            "corpus": self.corpus,
            "episodes": self.episodes,
            "decisions": self.decisions,
            "clean": self.clean,
            "thresholds": asdict(self.thresholds),
            "configs": configs,
            **self.extra,
        }


def audit(
    corpus: Corpus,
    configs: Mapping[str, RewardConfig],
    thresholds: AuditThresholds | None = None,
    *,
    name: str = "",
) -> Audit:
    """Run the four checks (see the module) for each config on ``corpus``.

    Args:
        corpus: The episodes (at least one).
        configs: The configs to audit, by name.
        thresholds: When each check fires (None: ``AuditThresholds()``).
        name: How the report names the corpus.

    Returns:
        The flags (gating detectors) and notes (the others) of every config.

    Raises:
        DiagnosisError: No config, or a bad threshold.
        CorpusError: The corpus is empty.
        ConfigError: A config's rewards would not be finite (``score``).
    """
    thresholds = (thresholds or AuditThresholds()).checked()
    if not configs:
        raise DiagnosisError("audit needs at least one config")
    rows: list[tuple[str, Flag]] = []
    for config_name, config in configs.items():
        rows += [(config_name, flag) for flag in config_flags(corpus, config, thresholds)]
    gate = [gating(flag.code) for _, flag in rows]
    flags = _table([row for row, g in zip(rows, gate) if g])
    notes = _table([row for row, g in zip(rows, gate) if not g])
    return Audit(dict(configs), len(corpus), corpus.n_decisions, thresholds, flags, name, notes=notes)


def _table(rows: list[tuple[str, Flag]]) -> pd.DataFrame:
    values = [(c, f.section, f.code, f.subject, f.why, f.evidence) for c, f in rows]
    return pd.DataFrame(values, columns=list(AUDIT_COLUMNS), dtype=object)


def _records(rows: pd.DataFrame, config: str) -> list[dict[str, Any]]:
    """Flags or notes of one config as JSON records, each with ``measured`` and ``evidence``."""
    return [
        {**{c: row[c] for c in FLAG_COLUMNS}, "measured": measured(row["code"], config), "evidence": row["evidence"]}
        for row in rows.to_dict("records")
    ]


def empty_audit(configs: Mapping[str, RewardConfig], thresholds: AuditThresholds, *, name: str = "") -> Audit:
    """The (clean) audit of no episodes: what following a source that brought none reports.

    Args:
        configs: The configs that would be audited, by name.
        thresholds: The thresholds that would be used.
        name: How the report names the corpus.

    Returns:
        An audit of 0 episodes with no flag and no note.

    Raises:
        DiagnosisError: A bad threshold.
    """
    return Audit(dict(configs), 0, 0, thresholds.checked(), _table([]), name)


def config_flags(corpus: Corpus, config: RewardConfig, thresholds: AuditThresholds) -> list[Flag]:
    """The flags one config raises on ``corpus``, in ``SECTIONS`` order (gating or not: ``audit``
    splits them into flags and notes).

    Args:
        corpus: The episodes (at least one).
        config: The config to check.
        thresholds: When each check fires (already ``checked``).

    Returns:
        Every finding of the four checks.

    Raises:
        CorpusError: The corpus is empty.
        ConfigError: The config's rewards would not be finite.
    """
    scores = score(corpus, config)
    facts = episode_facts(scores, corpus, "policy")
    totals = component_totals(scores)
    loops = loop_table(corpus, config, facts.returns)
    looping = loop_flags(loops)
    signs_seen = sign_table(corpus, scores.reward, scores.prepared.n_first, slot_pay(config), facts.returns)
    loop_paid = (signs_seen.episodes["cap_paid"] + signs_seen.episodes["regained_paid"]).to_numpy()
    _, farming = farming_episodes(totals, facts, farming_events(totals, facts), loop_paid)
    top = _top_paid_loops(loops)
    farming = [_with_loop(flag, top) for flag in farming]
    signs = sign_flags(signs_seen, shipped_signs(config))
    by_sign = [[flag for flag in signs if flag.code == code] for code in SIGN_CODES]
    found_lists = (looping, farming, *by_sign)
    flags = [flag for found in found_lists if len(found) >= thresholds.farming_episodes for flag in found]
    _, _, heavy = dominance(totals, facts, threshold=thresholds.dominance, component_threshold=thresholds.component)
    if config.rule.pays_indicator:
        heavy = []  # the indicator is the one component (consistent): all of the reward by design
    flags += heavy
    if thresholds.dead_entries != "off":
        table, dead = dead_entries(config, scores)
        if thresholds.dead_entries == "written":
            written = [
                _written(config, key) and judged == "config" for key, judged in zip(table["key"], table["judged"])
            ]
            dead = [flag for flag, keep in zip(dead, written) if keep]
        flags += dead
    flags += _estimated_counts(config, scores.estimated_episodes)
    return flags


def _top_paid_loops(loops: pd.DataFrame) -> dict[str, Any]:
    """Each episode's most-lapped paid loop (the largest laps - allowed; the first such row in
    table order on a tie, as ``idxmax``), as a ``loop_table`` row: one pass, not one per flag."""
    paid = loops[loops["paid"] > 0]
    excess = paid["laps"] - paid["allowed"]
    top = paid.assign(excess=excess).sort_values("excess", ascending=False, kind="stable")
    return {row.episode: row for row in top.drop_duplicates("episode").itertuples(index=False)}


def _with_loop(flag: Flag, top: Mapping[str, Any]) -> Flag:
    """``flag`` (about one episode) with the evidence of that episode's most-lapped paid loop."""
    row = top.get(flag.subject)
    return flag if row is None else replace(flag, evidence=evidence(row))


def _written(config: RewardConfig, key: str) -> bool:
    """Whether the dotted ``key`` names an entry the config itself sets (not a task-app default)."""
    head, _, rest = key.partition(".")
    if head == "weights":
        return rest in config.weights
    if head == "k_limits":
        return rest in config.k_limits
    if head == "resource_weights":
        table, _, entry = rest.partition(".")
        value = config.resource_overrides.get(table)
        return isinstance(value, Mapping) and entry in value if entry else table in config.resource_overrides
    return True  # strategy, lambda and the like: always the config's own


def _estimated_counts(config: RewardConfig, estimated: list[str]) -> list[Flag]:
    """A flag when ``config`` pays count shaping and some episodes' counts are estimated."""
    if not config.rule.reads_counts or not estimated:
        return []
    if not np.any(config.rule.slot_pay(config.resource_weights)[N_ITEMS:] != 0):
        return []
    shown = ", ".join(estimated[:3]) + (f" and {len(estimated) - 3} more" if len(estimated) > 3 else "")
    why = (
        f"the config pays achievement-count shaping, but {len(estimated)} episode(s) carry estimated counts "
        f"({shown}): their returns are lower bounds, not what the task app paid"
    )
    return [Flag("estimated counts", "count-shaping-estimated", f"{len(estimated)} episode(s)", why)]
